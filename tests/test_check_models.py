"""``probekit check`` resolves every model the way ``run`` loads it, offline: each case where ``check`` once passed
and ``run`` failed 20-70 s later is now exit 2 from ``check``, in one line; an offline hub id fails in one line at
once; numeric parameters out of their declared bounds are refused."""

from __future__ import annotations

import shutil
import time

import huggingface_hub.constants
import pytest

from conftest import REPO
from probekit import environ
from probekit.chapters import check, model_files, params
from probekit.cli import main
from probekit.scorers.testing import save_tiny


@pytest.fixture
def offline_machine(tmp_path, monkeypatch):
    """No network, an empty hub cache and open_clip cache, one CUDA device."""
    monkeypatch.setenv("PROBEKIT_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PROBEKIT_CACHE", str(tmp_path / "scores"))
    monkeypatch.setenv("PROBEKIT_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(model_files, "offline", lambda: True)
    monkeypatch.setattr(environ, "offline", lambda: True)
    monkeypatch.setattr(check, "cuda_devices", lambda: 1)
    return tmp_path


def _check(capsys, *argv) -> tuple[int, list[str]]:
    code = main(["--root", str(REPO), "check", "--quiet", *argv])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return save_tiny("clip", tmp_path_factory.mktemp("ckpt") / "my-clip")


@pytest.mark.parametrize("models, words", [
    ("clip-vit-b32", ["openai/clip-vit-base-patch32", "not in the local cache", "HF_HUB_OFFLINE"]),  # registry
    ("vilt:dandelin/vilt-b32-mlm", ["hub model dandelin/vilt-b32-mlm", "not in the local cache"]),  # FAMILY:hub id
    ("RN50:openai", ["open_clip weights timm/resnet50_clip.openai", "not in the local cache"]),  # open_clip tag
    ("vilt-itm", ["dandelin/vilt-b32-mlm's processor", "not in the local cache"]),   # converted with it
])
def test_uncached_downloads_offline_are_one_line(offline_machine, capsys, models, words):
    code, lines = _check(capsys, "--profile", "paper", "verbs", "-p", "models", models)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("probekit: error: verbs: parameter 'models': ") and all(w in lines[0] for w in words)


def test_uncached_downloads_online_are_listed(offline_machine, monkeypatch):
    monkeypatch.setattr(model_files, "offline", lambda: False)
    problems, notes = check.check({"verbs": {"dataset": "svo-probes", "models": ["clip-vit-b32", "RN50:openai"]}})
    assert problems == []
    assert [n.text.split(":")[0] for n in notes if "downloaded at run time (size" in n.text] == ["clip-vit-b32",
                                                                                                  "RN50"]


def test_incomplete_or_mismatched_checkpoint_directories_are_one_line(offline_machine, capsys, clip_dir, tmp_path):
    bare = shutil.copytree(clip_dir, tmp_path / "bare")
    (bare / "preprocessor_config.json").unlink()   # model.save_pretrained only: "Can't load image processor" later
    for models, words in ((str(bare), ["no image processor", "preprocessor_config.json"]),
                          (f"vilt:{clip_dir}", ["family vilt given", "model_type 'clip'", f"clip:{clip_dir}"])):
        code, lines = _check(capsys, "verbs", "-p", "models", models)
        assert code == 2 and len(lines) == 1, lines
        assert all(w in lines[0] for w in words), lines[0]
    assert _check(capsys, "verbs", "-p", "models", str(clip_dir)) == (0, [])


def test_an_offline_hub_id_is_one_line_at_once(offline_machine, capsys):
    start = time.perf_counter()
    code, lines = _check(capsys, "verbs", "-p", "models", "my-org/my-clip")
    assert time.perf_counter() - start < 5 and code == 2 and len(lines) == 1, lines
    assert "my-org/my-clip" in lines[0] and "FAMILY:my-org/my-clip" in lines[0] and "vilt:" not in lines[0]


def test_numeric_parameters_have_declared_bounds_that_are_checked(offline_machine, capsys):
    unbounded = {f"{chapter}.{name}" for chapter in params.CHAPTERS
                 for name, p in params.parameters(chapter).items() if p.kind in (int, float) and p.bounds is None}
    assert not unbounded, unbounded
    code, lines = _check(capsys, "verbs", "-p", "threshold", "1.5")
    assert code == 2 and len(lines) == 1 and "must lie in [0.0, 1.0], got 1.5" in lines[0], lines
    assert _check(capsys, "verbs", "-p", "threshold", "1.0") == (0, [])


def test_a_parameters_meaning_is_read_from_its_field_not_its_name():
    """A path is made absolute and a model name checked because the field says so (``means``), whatever it is
    called: a ``*_dir`` field that is no path stays as given."""
    from probekit.parameters import MODELS, PATH, Parameter
    where = Parameter("where", None, "", str, means=PATH)
    made = params._absolute(where, "rel/dir")
    assert made.endswith("/rel/dir") and made.startswith("/")
    assert params._absolute(Parameter("scene_dir", None, "", str), "rel/dir") == "rel/dir"
    assert Parameter("zoo", [], "", list, means=MODELS).is_models
    assert not Parameter("text_model", "", "", str).is_models


def test_the_toy_worlds_default_size_and_the_bound_of_limit_are_each_in_one_place(offline_machine, capsys):
    from probekit.toyworld.items import target_size
    from probekit.toyworld.sizes import DEFAULT_SIZE
    assert target_size("masking", None) == DEFAULT_SIZE["masking"] and target_size("masking", 7) == 7
    with pytest.raises(ValueError, match="limit must be at least 1 item or None, got 0"):
        target_size("masking", 0)
    code, lines = _check(capsys, "masking", "-p", "limit", "0")
    assert code == 2 and "must be at least 1, got 0" in lines[0], lines
    assert f"{DEFAULT_SIZE['masking']} on the toy world" in params.parameters("masking")["limit"].help
