"""The probekit command: parameter parsing and validation, bad input, failing chapters."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, copy_project, scratch_chapter
from probekit import chapters as ch
from probekit.cli import main
from probekit.parameters import Parameters, cell, describe, param


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv, must_name", [
    (["run", "nosuch"], ["'nosuch'", "verbs", "prednoun", "masking", "conceptual"]),
    (["run", "verbs", "-p", "nosuch", "1"], ["'nosuch'", "verbs", "limit", "seed"]),
    (["run", "verbs", "-p", "limit", "banana"], ["'limit'", "'banana'", "integer"]),
    (["run", "verbs", "-p", "dataset", "svo-probs"], ["'svo-probs'", "svo-probes", "toy"]),
    (["run", "verbs", "-p", "models", "toy-vilt,nosuch-model"], ["'nosuch-model'", "toy-clip", "directory"]),
    (["run", "verbs", "-p", "models", "clip:/nonexistent/ckpt"], ["'clip:/nonexistent/ckpt'", "no such directory"]),
    (["run", "verbs", "-p", "device", "gpu"], ["'gpu'", "cuda"]),
    (["run", "verbs", "-p", "limit", "0"], ["'limit'", "at least 1"]),
    (["run", "conceptual", "-p", "alphas", "0.1,high"], ["'alphas'", "'high'"]),
    (["run", "conceptual", "-p", "finetune_triplets", "0"], ["'finetune_triplets'", "at least 1"]),
    (["run", "conceptual", "-p", "finetune_batch", "1"], ["'finetune_batch'", "at least 2", "1"]),
    (["book", "--profile", "nosuch"], ["'nosuch'", "paper", "toy"]),
])
def test_bad_input_is_one_line_and_exit_2_before_any_work(project, capsys, argv, must_name):
    code = main(["--root", str(project), *argv])
    line = _error_line(capsys)
    assert code == 2
    for word in must_name:
        assert word in line, line
    assert line.count(must_name[0]) == 1, line                   # what is wrong is named once
    assert not list((project / "book" / "chapters").iterdir())  # nothing executed


def test_an_error_line_names_the_chapters_and_the_parameter_once(project, capsys):
    assert main(["--root", str(project), "check", "verbs", "-p", "threshold", "1.5"]) == 2
    assert _error_line(capsys) == ("probekit: error: verbs: parameter 'threshold': must lie in [0.0, 1.0], got 1.5 "
                                   "(default 0.5)")
    assert main(["--root", str(project), "check", "-p", "limit", "0"]) == 2   # one problem of every chapter: one line
    line = _error_line(capsys)
    assert line.startswith("probekit: error: verbs, prednoun, masking, conceptual: parameter 'limit': must be at least")
    assert line.count("limit") == 1 and line.count("verbs") == 1


def test_bad_params_file(project, tmp_path, capsys):
    bad = tmp_path / "p.yaml"
    bad.write_text("threshold: [1, 2]\n")
    assert main(["--root", str(project), "run", "verbs", "--params", str(bad)]) == 2
    assert "'threshold'" in _error_line(capsys)
    assert main(["--root", str(project), "run", "verbs", "--params", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml" in _error_line(capsys)


def test_console_script_exits_2_on_unknown_chapter(project):
    exe = Path(sys.executable).with_name("probekit")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "probekit.cli"]
    proc = subprocess.run([*cmd, "--root", str(project), "run", "nosuch"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "unknown chapter 'nosuch'" in proc.stderr


def test_train_toy_delegates_to_the_toy_trainer(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train-toy", "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("usage: probekit train-toy")


def test_list_shows_parameters_with_help_and_datasets(capsys):
    assert main(["--root", str(REPO), "list"]) == 0
    out = capsys.readouterr().out
    assert "verbs: Verb understanding" in out and "datasets: toy, svo-probes" in out
    assert "limit = None    # " in out and "toy-vilt" in out


def test_parameters_come_from_the_studys_dataclass():
    for chapter in ch.CHAPTERS:
        params = ch.parameters(chapter)
        # the contract's common parameters, in every chapter
        for name in ("models", "dataset", "data_dir", "limit", "seed", "device", "batch_size", "cache_dir"):
            assert name in params, (chapter, name)
        assert params["limit"].kind is int and params["data_dir"].kind is str


@dataclass(frozen=True)
class Knobs(Parameters):
    models: list[str] = param(["a", "b"], "registry names", ("choice",))
    limit: int | None = param(None, "max items (None = all)")
    alpha: float = param(0.5)
    flag: bool = param(True)


def test_a_parameters_dataclass_gives_defaults_types_help_roles_and_the_cell():
    params = describe(Knobs)
    assert list(params) == ["models", "limit", "alpha", "flag"]
    assert params["models"].default == ["a", "b"] and params["models"].help == "registry names"
    assert params["models"].role == ("choice",) and params["alpha"].role == ()
    assert params["limit"].help == "max items (None = all)" and params["limit"].kind is int
    assert [params[n].kind for n in ("models", "alpha", "flag")] == [list, float, bool]
    assert ch.coerce("x", params["alpha"], "1") == 1.0
    assert ch.coerce("x", params["models"], "c, d") == ["c", "d"]
    assert ch.coerce("x", params["models"], "[c, d]") == ["c", "d"]
    assert ch.coerce("x", params["limit"], "None") is None
    assert ch.coerce("x", params["flag"], "false") is False
    with pytest.raises(ch.ParameterError, match="'flag'"):
        ch.coerce("x", params["flag"], "maybe")
    namespace = {}
    exec(cell(Knobs), namespace)   # the parameters cell is Python that sets every field to its default
    assert Knobs.of(namespace) == Knobs() and Knobs().models is not Knobs().models


def test_dataset_choices_come_from_the_registry():
    assert ch.dataset_choices("verbs") == ["toy", "svo-probes"]
    assert ch.dataset_choices("conceptual") == ["toy", "paper"]


def test_profiles_are_valid():
    toy = ch.load_profile(REPO, "toy")
    paper = ch.load_profile(REPO, "paper")
    assert all(toy.params[c]["device"] == "cpu" for c in ch.CHAPTERS)
    assert toy.env["HF_HUB_OFFLINE"] == "1"
    assert paper.params["verbs"]["dataset"] == "svo-probes" and paper.params["prednoun"]["dataset"] == "eval-set"
    assert paper.params["conceptual"]["dataset"] == "paper"
    assert all(paper.params[c]["device"] == "cuda" for c in ch.CHAPTERS)


FAILING_SOURCE = scratch_chapter("A chapter that fails", 'print("fine")',
                                 'raise RuntimeError(f"boom at seed {seed}")')


def test_failing_chapter_names_cell_and_error_and_keeps_other_outputs(project, capsys):
    other = project / "book" / "chapters" / "prednoun.ipynb"
    ch.write_placeholder(project, "prednoun")
    before = other.read_bytes()
    (project / "book" / "src" / "verbs.md").write_text(FAILING_SOURCE)
    code = main(["--root", str(project), "run", "verbs", "-p", "seed", "4", "--no-build"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1
    assert "chapter 'verbs' failed in cell" in err and "RuntimeError: boom at seed 4" in err, err
    assert "raise RuntimeError" in err
    assert not (project / "book" / "chapters" / "verbs.ipynb").exists()
    assert not ch.results_path(project, "verbs").exists()
    assert (project / "_build" / "failed" / "verbs.ipynb").exists()
    assert other.read_bytes() == before



def test_a_chapter_kernel_keeps_the_kernels_own_shutdown_log_off_the_terminal():
    """ipykernel's shutdown race ends in a tornado log line with a traceback: without quiet_kernel it reaches the
    terminal, with it nothing does."""
    code = ("import logging, probekit.progress as p; {}"
            "logging.getLogger('tornado.general').error('Uncaught exception in ZMQStream callback')")
    plain = subprocess.run([sys.executable, "-c", code.format("")], capture_output=True, text=True, timeout=120)
    quiet = subprocess.run([sys.executable, "-c", code.format("p.quiet_kernel(); ")], capture_output=True, text=True,
                           timeout=120)
    assert "ZMQStream" in plain.stderr and quiet.returncode == 0 and quiet.stderr == ""


def test_terminal_shows_scoring_bars_and_no_kernel_warning_and_the_page_none(project):
    import shlex
    source = FAILING_SOURCE.replace('print("fine")', 'import time\nfrom probekit.progress import bar\n'
                                    'for _ in bar(range(40), desc="scoring job", unit="pair"):\n'
                                    '    time.sleep(0.02)\nprint("fine")')
    (project / "book" / "src" / "verbs.md").write_text(source)
    cmd = [sys.executable, "-m", "probekit.cli", "--root", str(project), "run", "verbs", "--no-build"]
    # on a terminal (a pseudo-terminal from util-linux's script: stdout and stderr both on it)
    on_tty = subprocess.run(["script", "-qefc", "stty cols 120 rows 40; " + shlex.join(cmd), "/dev/null"],
                            capture_output=True, text=True, timeout=300)
    logged = subprocess.run(cmd, capture_output=True, text=True, timeout=300,   # stderr to a pipe, as to a log file
                            env={**os.environ, "PROBEKIT_LINE_SECONDS": "0"})   # every job's line, however short
    short = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert "scoring job" not in short.stderr   # a job shorter than progress.LINE_SECONDS writes no line
    quiet = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, timeout=300)
    assert on_tty.returncode == logged.returncode == quiet.returncode == 1
    for err in (on_tty.stdout, logged.stderr, quiet.stderr):
        assert "without encryption" not in err and "Traceback" not in err, err
        assert "RuntimeError: boom" in err.strip().splitlines()[-1]
    assert "scoring job: 100%" in on_tty.stdout and "pair/s" in on_tty.stdout  # the job's bar, with its rate
    assert "verbs: cell " in on_tty.stdout  # the chapter's bar (cells, time so far: no ETA)
    job_lines = [line for line in logged.stderr.splitlines() if "scoring job" in line]
    assert len(job_lines) == 1 and job_lines[0].startswith("scoring job: 40/40 pair in ")   # one line, no frames
    assert "\r" not in logged.stderr and "verbs: cell" not in logged.stderr
    assert "scoring job" not in quiet.stderr and "verbs: cell" not in quiet.stderr
    import nbformat
    failed = nbformat.read(project / "_build" / "failed" / "verbs.ipynb", as_version=4)
    outputs = [out for cell in failed.cells for out in cell.get("outputs", [])]
    assert any("fine" in out.get("text", "") for out in outputs)
    assert not any("scoring job" in str(out) for out in outputs)  # no bar on the page
