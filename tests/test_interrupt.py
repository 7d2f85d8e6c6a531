"""Interruption: a real scoring run signalled mid-scoring leaves a consistent cache whose shards the next run reuses
(recomputing only what is missing, with the same final scores); a chapter signalled mid-run leaves the page
rendered before untouched; a toy model signalled mid-training resumes from its last resume file to the weights of
an uninterrupted run, also when it was one of the members of a parallel run (``--jobs``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from conftest import copy_project, scratch_chapter
from probekit import chapters as ch
from probekit.scorers import load_scorer
from scoring_job import make_images, pairs, score

JOB = str(Path(__file__).with_name("scoring_job.py"))
N = 240  # pairs; 4 per batch, a shard every 32


def _shards(cache: Path) -> list[Path]:
    return sorted(cache.rglob("part-*.parquet"))


def _wait_for(condition, timeout: float = 120, what: str = "") -> None:
    end = time.time() + timeout
    while not condition():
        if time.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _as_from_a_terminal() -> None:
    """Run in the child before exec: SIGINT back to its default. A shell starts a background job (``pytest &``) with
    SIGINT ignored and children inherit that, so Ctrl-C would never reach the run under test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _keys(shards: list[Path]) -> set[str]:
    return {k for s in shards for k in pq.read_table(s).column("key").to_pylist()}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signalled_scoring_resumes_from_its_shards(tmp_path, sig):
    cache, images = tmp_path / "scores", tmp_path / "images"
    proc = subprocess.Popen([sys.executable, JOB, "toy-vilt", str(cache), str(images), "0", str(N),
                             "--delay", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_as_from_a_terminal)
    try:
        _wait_for(lambda: len(_shards(cache)) >= 2 or proc.poll() is not None, what="two shards")
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0, "the job finished before it was signalled: slow it down"
    before = {s: s.read_bytes() for s in _shards(cache)}
    assert not list(cache.rglob(".*tmp")), "a half-written shard was left behind"
    done = _keys(list(before))
    assert 64 <= len(done) < N

    torch.set_num_threads(1)
    scorer = load_scorer("toy-vilt", device="cpu", cache_dir=cache, batch_size=4)
    forward, computed = scorer._match_probs, []

    def counted(inputs):
        computed.append(len(inputs["input_ids"]))
        return forward(inputs)

    scorer._match_probs = counted
    ims, texts = pairs(make_images(images), 0, N)
    resumed = score(scorer, ims, texts)
    assert sum(computed) == N - len(done)  # only what was missing
    assert all(s.read_bytes() == data for s, data in before.items())  # the first shards kept, as they were
    assert set(before) < set(_shards(cache)) and len(_keys(_shards(cache))) == N
    reference = score(load_scorer("toy-vilt", device="cpu", cache_dir=False, batch_size=4), ims, texts)
    np.testing.assert_allclose(resumed, reference, atol=1e-6)


SLOW_CELL = 'import os, time\nopen({marker!r}, "w").write(str(os.getpid()))\ntime.sleep(120)'


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signalled_chapter_leaves_the_previous_page_untouched(tmp_path, sig):
    project = copy_project(tmp_path / "project")
    page = ch.write_placeholder(project, "verbs")
    page_bytes = page.read_bytes()
    marker = tmp_path / "kernel.pid"
    slow = scratch_chapter("A chapter that takes its time", SLOW_CELL.format(marker=str(marker)))
    (project / "book" / "src" / "verbs.md").write_text(slow)
    proc = subprocess.Popen([sys.executable, "-m", "probekit.cli", "--root", str(project), "run", "verbs",
                             "--no-build", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_as_from_a_terminal)
    try:
        _wait_for(lambda: marker.exists() and marker.read_text() or proc.poll() is not None, what="the kernel")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("probekit: interrupted; no page was changed"), err
    assert page.read_bytes() == page_bytes and nbformat.read(page, as_version=4).metadata["probekit"]["placeholder"]
    assert not ch.results_path(project, "verbs").exists()
    assert not list(page.parent.glob(".*partial"))
    kernel = int(marker.read_text())
    _wait_for(lambda: not _alive(kernel), timeout=20, what="the kernel to stop")
    assert "Traceback" not in err


TRAIN = ["train-toy", "--models", "toy-bert", "--steps", "60", "--pool", "64", "--no-eval", "--threads", "1",
         "--save-every", "10"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    from probekit.cli import main
    out = tmp_path_factory.mktemp("whole")
    assert main(TRAIN + ["--out", str(out)]) == 0
    return out


def _weights(member: Path) -> dict:
    from safetensors.torch import load_file
    return load_file(member / "model.safetensors")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_signalled_training_resumes_to_the_uninterrupted_weights(tmp_path, sig, uninterrupted):
    import json
    from probekit.cli import main
    from probekit.toymodels.loop import resume_path
    out = tmp_path / "zoo"
    resume = resume_path(out / "toy-bert")
    proc = subprocess.Popen([sys.executable, "-m", "probekit.cli", *TRAIN, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal)
    try:
        _wait_for(lambda: resume.exists() or proc.poll() is not None, what="the first resume file")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "--models toy-bert" in err.strip().splitlines()[-1]
    assert resume.exists() and not (out / "toy-bert" / "model.safetensors").exists()
    assert main(TRAIN + ["--out", str(out)]) == 0                       # the same command goes on
    assert not resume.exists()
    whole, resumed = _weights(uninterrupted / "toy-bert"), _weights(out / "toy-bert")
    assert whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)
    hist = [json.loads((d / "training.json").read_text())["models"]["toy-bert"]["history"] for d in (uninterrupted, out)]
    assert hist[0]["step"] == hist[1]["step"] and hist[0]["loss"] == hist[1]["loss"]


def _stop_at_step_100(line: str) -> None:
    """A training log that interrupts the run at its line of step 100 (Ctrl-C there)."""
    if "step 100/" in line:
        raise KeyboardInterrupt


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_training_stopped_on_cuda_resumes_to_the_uninterrupted_weights(tmp_path):
    """The resume file holds the CPU generator's state as a CPU tensor: loading it onto the GPU broke every resume
    on CUDA (``RNG state must be a torch.ByteTensor``; seen on an H200, 2026-11-26)."""
    from probekit.toymodels import train

    kw = dict(steps=120, models=["toy-clip"], evaluate=False, pool=64, save_every=30, device="cuda")
    train.train(tmp_path / "whole", log=lambda *_: None, **kw)
    with pytest.raises(train.Interrupted):
        train.train(tmp_path / "stopped", log=_stop_at_step_100, **kw)
    lines: list[str] = []
    train.train(tmp_path / "stopped", log=lines.append, **kw)
    assert any("resuming at step 91" in line for line in lines)
    whole, resumed = _weights(tmp_path / "whole" / "toy-clip"), _weights(tmp_path / "stopped" / "toy-clip")
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)


def test_a_resume_file_of_another_seed_is_set_aside_not_used(tmp_path):
    from probekit.toymodels import train
    from probekit.toymodels.loop import resume_path

    kw = dict(steps=120, models=["toy-bert"], threads=1, evaluate=False, pool=64, save_every=10)
    with pytest.raises(train.Interrupted) as stopped:
        train.train(tmp_path, seed=0, log=_stop_at_step_100, **kw)
    assert stopped.value.left == ["toy-bert"]
    resume = resume_path(tmp_path / "toy-bert")
    saved = torch.load(resume, weights_only=False)
    assert saved["step"] == 90 and saved["key"]["seed"] == 0
    lines: list[str] = []
    record = train.train(tmp_path, seed=1, log=lines.append, **kw)
    assert resume.with_suffix(".stale").exists() and not resume.exists()
    assert not any("resuming" in line for line in lines)
    assert record["models"]["toy-bert"]["history"]["step"][:2] == [25, 50]     # from step 1, its own curve
    assert torch.load(resume.with_suffix(".stale"), weights_only=False)["step"] == 90   # kept as it was


def test_a_signalled_parallel_run_stops_every_member_and_the_same_command_goes_on(tmp_path):
    from probekit.cli import main
    from probekit.toymodels.loop import resume_path
    out, alone = tmp_path / "zoo", tmp_path / "alone"
    both = TRAIN[:2] + ["toy-bert", "toy-clip"] + TRAIN[3:] + ["--jobs", "2", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "probekit.cli", *both], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal)
    try:   # toy-clip starts first and is the slower: toy-bert may have finished by then, or not
        _wait_for(lambda: resume_path(out / "toy-clip").exists() or proc.poll() is not None, what="a resume file")
        proc.send_signal(signal.SIGINT)
        stdout, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    left = [m for m in ("toy-bert", "toy-clip") if not (out / m / "model.safetensors").exists()]
    assert proc.returncode == 130 and "toy-clip" in left, err
    assert "Traceback" not in err + stdout and stdout.strip().splitlines()[-1].endswith(
        f"run the same command with --models {' '.join(left)} (a member stopped mid-training resumes from its "
        "last resume file)")
    assert resume_path(out / "toy-clip").exists() and "interrupted in" in (out / "toy-clip.log").read_text()
    assert main(both) == 0
    assert main(TRAIN[:2] + ["toy-clip"] + TRAIN[3:] + ["--out", str(alone)]) == 0
    whole, resumed = _weights(alone / "toy-clip"), _weights(out / "toy-clip")
    assert whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)
