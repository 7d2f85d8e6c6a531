"""Any model by name: checkpoint directories (family from their config), FAMILY:SOURCE, open_clip ARCH:TAG and hub
ids, resolved before any work; each bad one is one line naming the input and the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from PIL import Image

from conftest import copy_project
from probekit.chapters.check import check
from probekit.cli import main
from probekit.scorers import UnknownModelError, load_scorer, model_spec
from probekit.scorers.testing import save_tiny


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {family: save_tiny(family, root / family) for family in ("clip", "vilt", "bert", "open_clip")}


@pytest.mark.parametrize("family, caps", [("clip", ("similarity",)), ("vilt", ("match", "fill_mask")),
                                          ("bert", ("fill_mask",)), ("open_clip", ("similarity",))])
def test_a_directory_resolves_to_the_family_its_config_names(tiny, family, caps):
    spec = model_spec(str(tiny[family]))
    assert (spec.family, spec.source, spec.capabilities) == (family, str(tiny[family]), caps)


def test_a_two_head_checkpoint_has_only_the_heads_its_config_lists(tiny, tmp_path):
    mlm_only = shutil.copytree(tiny["vilt"], tmp_path / "mlm-only")
    config = json.loads((mlm_only / "config.json").read_text())
    config["architectures"] = ["ViltForMaskedLM"]
    (mlm_only / "config.json").write_text(json.dumps(config))
    assert model_spec(str(mlm_only)).capabilities == ("fill_mask",)
    # the chapter check reads it from the config, before loading anything: verbs needs a match or similarity head
    problems, _ = check({"verbs": {"models": [str(mlm_only)]}})
    assert [p.parameter for p in problems] == ["models"] and "cannot answer" in problems[0].text


def test_a_directory_loads_without_a_family_and_scores(tiny):
    scorer = load_scorer(str(tiny["vilt"]), cache_dir=False)
    assert scorer.family == "vilt" and scorer.source == str(tiny["vilt"])
    probs = scorer.match([Image.new("RGB", (32, 32), "red")], ["a dog"])
    assert probs.shape == (1,) and 0 < probs[0] < 1


def test_family_prefix_overrides_detection(tiny):
    spec = model_spec(f"blind:{tiny['bert']}")
    assert (spec.family, spec.source) == ("blind", str(tiny["bert"]))
    assert model_spec(f"vilt:{tiny['vilt']}").capabilities == ("match", "fill_mask")


def test_open_clip_arch_and_tag_are_checked_offline(tmp_path):
    assert model_spec("RN50:yfcc15m").family == "open_clip"
    with pytest.raises(UnknownModelError, match="no pretrained tag 'nosuch' for RN50.*openai"):
        model_spec("RN50:nosuch")
    weights = tmp_path / "w.pt"
    with pytest.raises(UnknownModelError, match="does not exist"):
        model_spec(f"ViT-B-32:{weights}")
    weights.write_bytes(b"x")
    assert model_spec(f"ViT-B-32:{weights}").source == f"ViT-B-32:{weights}"


def _hub_cache(root, repo: str, files: dict) -> None:
    """A huggingface_hub cache holding ``files`` of ``repo`` at ``main``, as a download would leave it."""
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text("0" * 40)
    snapshot = folder / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for name, text in files.items():
        (snapshot / name).write_text(text)


def test_a_hub_id_resolves_from_its_config_and_an_unreadable_one_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    _hub_cache(tmp_path, "my-org/my-vilt", {"config.json": json.dumps(
        {"model_type": "vilt", "architectures": ["ViltForImageAndTextRetrieval"]})})
    spec = model_spec("my-org/my-vilt")
    assert (spec.family, spec.source, spec.capabilities) == ("vilt", "my-org/my-vilt", ("match",))
    with pytest.raises(UnknownModelError) as err:
        model_spec("my-org/not-cached")
    text = str(err.value)   # the fix names no family: the id may be any model's
    assert "FAMILY:my-org/not-cached" in text and "vilt:" not in text and "\n" not in text


@pytest.mark.parametrize("make, must_name", [
    (lambda d: d / "nosuch", ["no such directory"]),
    (lambda d: d.mkdir() or d, ["no config.json", "save_pretrained"]),
    (lambda d: shutil.copytree(d.parent / "tiny-clip", d) and (d / "open_clip_config.json").write_text("{}") and d,
     ["ambiguous", "clip:", "open_clip:"]),
    (lambda d: d.mkdir() or (d / "config.json").write_text('{"model_type": "gpt2"}') and d, ["'gpt2'", "vilt:"]),
])
def test_a_bad_model_is_one_line_and_exit_2_before_any_work(tiny, tmp_path, capsys, make, must_name):
    shutil.copytree(tiny["clip"], tmp_path / "tiny-clip")
    bad = make(tmp_path / "bad")
    project = copy_project(tmp_path / "project")
    assert main(["--root", str(project), "run", "verbs", "-p", "models", f"toy-vilt,{bad}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err, err
    for word in must_name:
        assert word in err, err
    assert not list((project / "book" / "chapters").iterdir())   # nothing executed


def test_a_malformed_params_file_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "p.yaml"
    bad.write_text("limit: [1, 2\nseed: 3\n")
    assert main(["--root", str(copy_project(tmp_path / "project")), "run", "verbs", "--params", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "p.yaml" in err and "not valid YAML" in err, err


def test_own_checkpoints_run_in_a_chapter_and_the_page_names_them(executed_book, executed_chapter, tiny, tmp_path):
    """Done-when of 'your own model in any chapter': two saved checkpoints, named by directory on the command line
    (relative to the caller), scored by the verbs chapter, and the rendered page's coverage table names each
    checkpoint with its family and head."""
    from bs4 import BeautifulSoup

    executed_chapter("verbs")
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    mine = tmp_path / "mine"
    for family in ("clip", "vilt"):
        shutil.copytree(tiny[family], mine / f"my-{family}")
    data = executed_book / "data"
    cmd = [sys.executable, "-m", "probekit.cli", "--root", str(project), "run", "verbs", "--quiet",
           "-p", "models", "my-clip,my-vilt", "-p", "data_dir", str(data / "data"),
           "-p", "cache_dir", str(data / "scores"), "--profile", "toy"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=mine,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = BeautifulSoup((project / "_build" / "html" / "book" / "chapters" / "verbs.html").read_text(),
                         "html.parser")
    rows = {}   # the coverage table: a box with its caption above the table
    for box in page.select("div.pk-table"):
        caption = box.select_one(".pk-caption")
        if caption is None or "that answered" not in caption.get_text():
            continue
        table = box.select_one("table")
        head = [" ".join(th.get_text(" ", strip=True).split()) for th in table.select("thead tr")[0].select("th")]
        for tr in table.select("tbody tr"):
            cells = [" ".join(c.get_text(" ", strip=True).split()) for c in tr.find_all(["th", "td"])]
            rows[cells[0]] = dict(zip(head[-len(cells):], cells))
    for family, head in (("clip", "similarity"), ("vilt", "match")):
        path = str(mine / f"my-{family}")
        answered = rows[path]["head (checkpoint; family; scored as)"]   # "<head>: how; checkpoint <path>; <family> ..."
        assert answered.startswith(f"{head}:") and f"; checkpoint {path}; {family} family; scored as " in answered


def test_fine_tuning_takes_a_clip_by_any_name_and_refuses_another_family(tiny):
    from probekit.studies.conceptual.finetune import require_clip

    require_clip(str(tiny["clip"]))
    require_clip(f"clip:{tiny['clip']}")
    with pytest.raises(ValueError, match="is a vilt model; fine-tuning needs a Hugging Face CLIPModel"):
        require_clip(str(tiny["vilt"]))
