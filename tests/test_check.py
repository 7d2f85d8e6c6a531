"""``probekit check``: the shipped paper profile passes; each seeded mistake is one line naming the chapter, the
parameter and the fix (exit 2), offline, without loading a model; ``run`` refuses the same mistakes before any
cell runs; read-only or full directories are one line naming the directory."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import REPO, copy_project
from probekit.cache import DiskError, ScoreCache
from probekit.chapters import check, model_files
from probekit.chapters.params import parameters
from probekit.cli import main
from probekit import checksums
from probekit.data import download
from probekit.scorers import REGISTRY, can_answer
from probekit.scorers.heads import QUESTIONS

RELEASE = ("relation_eval_subject.json", "data_compositional_switch.json", "data_object_switch.json",
           "prompt_classes.csv", "background_context_dataset.json")


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine with one CUDA device, the Probe-R/C/B release unpacked (files the check only looks for) and
    empty data and cache directories."""
    data = tmp_path / "data"
    for name in RELEASE:
        (data / "probe-rcb" / "annotations").mkdir(parents=True, exist_ok=True)
        (data / "probe-rcb" / "annotations" / name).write_text("[]")
    monkeypatch.setenv("PROBEKIT_DATA", str(data))
    monkeypatch.setenv("PROBEKIT_CACHE", str(tmp_path / "scores"))
    monkeypatch.setattr(check, "cuda_devices", lambda: 1)
    monkeypatch.setattr(model_files, "offline", lambda: False)   # the paper's models: downloads, listed as notes
    return tmp_path


def _check(capsys, *argv) -> tuple[int, list[str]]:
    code = main(["--root", str(REPO), "check", "--quiet", *argv])
    return code, capsys.readouterr().err.strip().splitlines()


def test_the_shipped_paper_profile_passes(machine, capsys):
    code, lines = _check(capsys, "--profile", "paper")
    assert (code, lines) == (0, [])


@pytest.mark.parametrize("argv, chapters, parameter, must_name", [
    # a model lacking the head its chapter needs
    (["verbs", "-p", "models", "toy-bert"], "verbs", "models", ["toy-bert", "'threshold' or 'choice'", "toy-clip"]),
    (["--profile", "paper", "verbs", "-p", "models", "vilt-itm,bert-base"], "verbs", "models", ["bert-base"]),
    (["--profile", "paper", "masking", "-p", "models", "vilt-mlm,vilt-coco"], "masking", "models",
     ["vilt-coco", "not calibrated"]),
    # a toy model left in place under the paper profile
    (["--profile", "paper", "prednoun", "-p", "perplexity_model", "toy-bert"], "prednoun", "perplexity_model",
     ["toy-bert", "eval-set", "--allow-toy"]),
    # an unknown dataset
    (["--profile", "paper", "verbs", "-p", "dataset", "svo-probs"], "verbs", "dataset", ["'svo-probs'", "svo-probes"]),
])
def test_each_seeded_mistake_is_one_line(machine, capsys, argv, chapters, parameter, must_name):
    code, lines = _check(capsys, *argv)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"probekit: error: {chapters}: parameter {parameter!r}: "), lines[0]
    for word in must_name:
        assert word in lines[0], lines[0]


def test_cuda_absent_is_one_line_for_every_chapter(machine, capsys, monkeypatch):
    monkeypatch.setattr(check, "cuda_devices", lambda: 0)
    code, lines = _check(capsys, "--profile", "paper")
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("probekit: error: verbs, prednoun, masking, conceptual: parameter 'device': ")
    assert "CUDA is not available" in lines[0] and "-p device cpu" in lines[0]
    monkeypatch.setattr(check, "cuda_devices", lambda: 2)
    assert "cuda:0..cuda:1" in check.device_problem("cuda:2") and check.device_problem("cuda:1") is None


def test_allow_toy_lets_toy_models_run_on_real_data(machine, capsys):
    assert _check(capsys, "--profile", "paper", "prednoun", "-p", "perplexity_model", "toy-bert",
                  "--allow-toy") == (0, [])


def test_missing_release_that_cannot_be_downloaded_is_one_line(machine, capsys, tmp_path):
    code, lines = _check(capsys, "--profile", "paper", "conceptual", "-p", "data_dir", str(tmp_path / "empty"))
    assert code == 2 and len(lines) == 1, lines
    assert "conceptual: parameter 'dataset'" in lines[0] and "relation_eval_subject.json" in lines[0]
    assert str(tmp_path / "empty" / "probe-rcb") in lines[0]


def test_downloadable_and_present_files_are_notes_or_problems(machine, capsys, monkeypatch):
    problems, notes = check.check({"verbs": {"dataset": "svo-probes", "models": ["vilt-itm"]}})
    assert problems == [] and any("downloaded at run time" in str(n) and "svo_probes.csv" in str(n) for n in notes)
    csv = machine / "data" / "svo-probes" / "svo_probes.csv"
    csv.parent.mkdir(parents=True)
    csv.write_bytes(b"x" * 3000)   # not the authors' file: the run would refuse it, so check does
    problems, _ = check.check({"verbs": {"dataset": "svo-probes", "models": ["vilt-itm"]}})
    assert len(problems) == 1 and f"{csv}: present, does not match" in str(problems[0])
    monkeypatch.setitem(checksums.GIT_BLOB, checksums.SVO_CSV_URL, checksums._blob(b"x" * 3000))
    problems, notes = check.check({"verbs": {"dataset": "svo-probes", "models": ["vilt-itm"]}})
    assert problems == [] and any(f"present, verified, {csv} (3 kB)" in str(n) for n in notes)
    _, notes = check.check({"conceptual": {"dataset": "paper"}})   # the Probe-R/C/B release: no hash published
    assert any("relation_eval_subject.json: present, not verifiable (no known hash)" in str(n) for n in notes)


def test_roles_read_from_the_registry_agree_with_loaded_toy_models():
    from probekit.scorers import load_scorer
    for name in ("toy-clip", "toy-vilt", "toy-bert", "toy-bert-blind"):
        scorer = load_scorer(name, device="cpu", cache_dir=False)
        stand_in = check._stand_in(REGISTRY[name])
        for question in QUESTIONS:
            assert can_answer(stand_in, question) == can_answer(scorer, question), (name, question)
    roles = {name: p.role for name, p in parameters("verbs").items() if p.role}
    assert roles == {"models": ("threshold", "choice"), "lab_models": ("threshold", "choice")}


def test_run_refuses_a_model_without_the_head_before_any_cell(tmp_path, capsys):
    project = copy_project(tmp_path / "project")
    code = main(["--root", str(project), "run", "verbs", "-p", "models", "toy-vilt,toy-bert", "--no-build"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "toy-bert cannot answer" in err[0], err
    assert not list((project / "book" / "chapters").iterdir())


def test_check_is_fast_and_offline(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PROBEKIT_DATA": str(tmp_path),
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "probekit.cli", "--root", str(REPO), "check", "verbs", "-p",
                           "models", "toy-bert"], capture_output=True, text=True, env=env, timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert cpu < 5, f"probekit check took {cpu:.1f} s of CPU"


# ------------------------------------------------------------------------------------------- disk trouble

def _refuse(code: int, where: Path, real):
    def fake(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == where:
            raise OSError(code, os.strerror(code))
        return real(*args, dir=dir, **kwargs)
    return fake


@pytest.mark.parametrize("code, word", [(errno.EROFS, "is not writable"), (errno.ENOSPC, "is full")])
def test_read_only_or_full_cache_directory_is_one_line(machine, capsys, monkeypatch, code, word):
    (machine / "scores").mkdir()
    monkeypatch.setattr(check.tempfile, "TemporaryFile", _refuse(code, machine / "scores",
                                                                 check.tempfile.TemporaryFile))
    status, lines = _check(capsys, "--profile", "paper")
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith("probekit: error: verbs, prednoun, masking, conceptual: parameter 'cache_dir': ")
    assert f"the score cache {machine / 'scores'} {word}" in lines[0] and "PROBEKIT_CACHE" in lines[0]


def test_a_directory_short_of_space_counts_as_full(machine, monkeypatch):
    monkeypatch.setattr(check.shutil, "disk_usage", lambda path: SimpleNamespace(free=1))
    assert "is full" in check.disk_problem(machine / "data", "the data directory", "data_dir")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories: chmod cannot refuse it")
def test_read_only_directory_really_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert "not writable" in check.disk_problem(ro / "scores", "the score cache", "cache_dir")
        cache = ScoreCache(ro, "m", "match", 1)
        cache.put("k", b"v")
        with pytest.raises(DiskError, match=f"the score cache {ro} is not writable"):
            cache.flush()
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_cache_flush_on_a_full_or_read_only_disk_names_the_directory(tmp_path, monkeypatch, code):
    cache = ScoreCache(tmp_path, "m-1", "match", 1)
    cache.put_array("k", np.array([0.5]))

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr("probekit.cache.pq.write_table", refuse)
    with pytest.raises(DiskError) as err:
        cache.flush()
    assert str(err.value).startswith(f"the score cache {tmp_path} ") and "cache_dir" in str(err.value)
    assert "\n" not in str(err.value) and err.value.errno == code
    assert not list(cache.dir.glob(".*tmp"))  # nothing half-written left behind
    monkeypatch.undo()
    cache.flush()  # the entries are still pending: written once the disk has room
    assert ScoreCache(tmp_path, "m-1", "match", 1).get_array("k")[0] == np.float32(0.5)


def test_download_into_a_full_data_directory_names_it(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(download.os, "replace", refuse)
    with pytest.raises(DiskError, match=f"the data directory {tmp_path} is full"):
        download._atomic_write(tmp_path / "a.jpg", b"x")


def test_lab_models_stay_toy_models_on_real_data(machine):
    """The lab sections run the toy zoo on the toy world only (they skip themselves on real data), so a chapter's
    toy lab_models are no problem under a real dataset, while toy main models still are."""
    problems, _ = check.check({"prednoun": {"dataset": "eval-set", "models": ["vilt-coco"],
                                                  "clip_models": ["clip-vit-b32"], "perplexity_model": "bert-base"}})
    assert not [p for p in problems if p.parameter == "lab_models"]
    problems, _ = check.check({"prednoun": {"dataset": "eval-set", "models": ["toy-vilt"]}})
    assert sorted(p.parameter for p in problems if "toy model" in p.text) == ["clip_models", "models", "perplexity_model"]
