"""The dress rehearsal of paper mode (issue 56): ``probekit book`` with the paper profile, every model a tiny
stand-in under its own hub id and every dataset served from 127.0.0.1 in its real format, renders every chapter
offline (a few minutes on 2 cores).  The numbers mean nothing; every code path between the pieces runs."""

from __future__ import annotations

import os
import urllib.error
import urllib.request

import nbformat
import pandas as pd
import pytest
from conftest import notebook_text

from probekit import chapters as ch
from probekit.datasets import load_dataset
from probekit.environ import environment, mirrored
from probekit.rehearsal import prepare, rehearse
from probekit.rehearsal.models import HUB
from probekit.rehearsal.serve import Server
from probekit.scorers import REGISTRY


@pytest.fixture(scope="module")
def rehearsed(tmp_path_factory):
    work = tmp_path_factory.mktemp("rehearsal")
    rehearsal = prepare(work)
    # nothing but 127.0.0.1 answers: any request that escapes the mirror fails
    with environment({"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}):
        code = rehearse(rehearsal)
    return code, rehearsal, work


def test_every_chapter_of_the_paper_profile_renders(rehearsed):
    code, rehearsal, _ = rehearsed
    assert code == 0
    html = rehearsal.project / "_build" / "html" / "book" / "chapters"
    for chapter in [*ch.CHAPTERS, ch.SUMMARY]:
        nb = nbformat.read(ch.output_path(rehearsal.project, chapter), as_version=4)
        assert not nb.metadata.get("probekit", {}).get("placeholder"), chapter
        text = notebook_text(nb)
        for word in ("Traceback", "Warning"):
            assert word not in text, (chapter, text[max(0, text.find(word) - 300):][:2000])
        assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"], chapter
        assert (html / f"{chapter}.html").is_file(), chapter


def _page(rehearsal, chapter: str) -> str:
    return notebook_text(nbformat.read(ch.output_path(rehearsal.project, chapter), as_version=4))


def test_every_model_of_the_profile_was_scored(rehearsed):
    _, rehearsal, _ = rehearsed
    profile = ch.load_profile(rehearsal.project, "paper")
    for chapter in ch.CHAPTERS:
        scored = {*pd.read_parquet(ch.items_path(rehearsal.project, chapter))["model"],
                  *pd.read_parquet(ch.results_path(rehearsal.project, chapter))["model"]}
        wanted = {m for p, v in profile.params[chapter].items() if p.endswith("models") for m in v}
        assert wanted <= scored, (chapter, wanted - scored)


def test_the_papers_own_paths_ran(rehearsed):
    _, rehearsal, work = rehearsed
    conceptual = _page(rehearsal, "conceptual")
    assert "`train_data`" not in conceptual and "imagenet_dir" not in conceptual   # fine-tuned, on ImageNet
    assert "CTRL_LXMERT" in _page(rehearsal, "prednoun")                            # the released outputs
    manifests = pd.concat([pd.read_csv(p) for p in (work / "data").rglob("manifest.csv")])
    errors = manifests["error"].fillna("")
    assert errors.str.startswith("HTTP 404").any() and errors.str.startswith("placeholder").any()
    assert (work / "models" / "vilt_200k_mlm_itm-hf").is_dir()                     # the authors' ViLT, converted


def test_v_coco_comes_through_the_mirror(rehearsed):
    """The masking chapter's other dataset (the paper's Table 3), loaded as the chapter would: V-COCO's annotations,
    COCO's annotation zip and photos, all from the rehearsal's server."""
    _, rehearsal, work = rehearsed
    with Server(rehearsal.served, rehearsal.redirects) as server, environment({"PROBEKIT_MIRROR": server.url,
                                                                                 "PROBEKIT_SKIP_SHA256": "1"}):
        items = load_dataset("masking", "v-coco", data_dir=work / "data", limit=8)
    assert len(items) == 8 and items["image"].notna().all() and items.attrs["unlocated"]
    assert (work / "data" / "coco" / "annotations" / "captions_val2014.json").is_file()


def test_every_registry_model_can_be_rehearsed():
    """A profile naming any registry model (not only the paper profile's) gets a stand-in: its hub id has the real
    checkpoint's settings, or its open_clip tag downloads from the hub."""
    import open_clip

    for name, spec in REGISTRY.items():
        if spec.family == "open_clip":
            assert open_clip.get_pretrained_cfg(*spec.source.split(":")).get("hf_hub"), name
        elif not spec.source.startswith(("toy:", "https://")):
            assert spec.source in HUB, name


def test_the_mirror_serves_urls_by_host_and_redirects(tmp_path):
    (tmp_path / "example.org" / "a").mkdir(parents=True)
    (tmp_path / "example.org" / "a" / "b.csv").write_text("x\n1\n")
    (tmp_path / "example.org" / "photo_unavailable.png").write_bytes(b"png")
    with Server(tmp_path, {"/example.org/gone.jpg": "/example.org/photo_unavailable.png"}) as server:
        with environment({"PROBEKIT_MIRROR": server.url + "/"}):
            assert mirrored("https://example.org/a/b.csv?v=2") == f"{server.url}/example.org/a/b.csv?v=2"
            assert mirrored("file:///x/y") == "file:///x/y"
            assert urllib.request.urlopen(mirrored("https://example.org/a/b.csv")).read() == b"x\n1\n"
            moved = urllib.request.urlopen(mirrored("https://example.org/gone.jpg"))
            assert moved.url == f"{server.url}/example.org/photo_unavailable.png"
            with pytest.raises(urllib.error.HTTPError, match="404"):
                urllib.request.urlopen(mirrored("https://example.org/dead.jpg"))
        assert "PROBEKIT_MIRROR" not in os.environ
        assert mirrored("https://example.org/a/b.csv") == "https://example.org/a/b.csv"
