"""Adding a parameter to one study is one edit: a field added to its parameters dataclass (with its bounds and what
its value means) is in ``probekit list``, checked by ``probekit check``, written into its page's parameters cell
and handed by the page to the study's run, with nothing else changed."""

from __future__ import annotations

import ast
import dataclasses
import sys
import types

import jupytext
import pytest

from conftest import REPO
from probekit import chapters as ch
from probekit.chapters import check
from probekit.cli import main
from probekit.parameters import DEVICE, param
from probekit.registry import load
from probekit.studies import STUDIES
from probekit.studies.verbs.params import Params as VerbsParams

#: the verbs study's parameters with two fields added, as one edit of its params.py would add them
Wider = dataclasses.make_dataclass("Params", [
    ("pairs_per_verb", int, param(8, "at most this many pairs per verb", bounds=(1, 64))),
    ("probe_device", str, param("cpu", "where the extra probe runs", means=DEVICE)),
], bases=(VerbsParams,), frozen=True)


@pytest.fixture
def wider(tmp_path, monkeypatch):
    """The verbs study declared with :data:`Wider` and a run that keeps the parameters it is given."""
    given = []
    module = types.ModuleType("one_edit_study")
    module.Params, module.run = Wider, given.append
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(STUDIES, "verbs", dataclasses.replace(STUDIES["verbs"], module=module.__name__,
                                                              params=f"{module.__name__}:Params"))
    monkeypatch.setenv("PROBEKIT_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PROBEKIT_CACHE", str(tmp_path / "scores"))
    monkeypatch.setattr(check, "cuda_devices", lambda: 1)
    return given


def _verbs_lines(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("verbs: "))
    return lines[start + 1:lines.index("", start)]


def test_a_field_added_to_a_study_is_listed(wider, capsys):
    assert main(["--root", str(REPO), "list"]) == 0
    listed = _verbs_lines(capsys.readouterr().out)
    assert "  pairs_per_verb = 8    # at most this many pairs per verb" in listed
    assert "  probe_device = 'cpu'    # where the extra probe runs" in listed


@pytest.mark.parametrize("value, why", [("0", "must lie in [1, 64], got 0 (default 8)"),
                                         ("65", "must lie in [1, 64], got 65 (default 8)"),
                                         ("many", "must be an integer, got 'many' (default 8)")])
def test_a_field_added_to_a_study_is_checked_against_its_bounds(wider, capsys, value, why):
    assert main(["--root", str(REPO), "check", "--quiet", "verbs", "-p", "pairs_per_verb", value]) == 2
    assert capsys.readouterr().err.splitlines() == [f"probekit: error: verbs: parameter 'pairs_per_verb': {why}"]
    assert main(["--root", str(REPO), "check", "--quiet", "verbs", "-p", "pairs_per_verb", "64"]) == 0


def test_a_device_field_added_to_a_study_is_checked_as_a_device(wider, capsys, monkeypatch):
    """Its meaning, not its name, makes it a device: a malformed one refused, and one this machine lacks."""
    for value, why in [("gpu", "unknown device 'gpu'; valid: auto, cpu, cuda, cuda:N, mps"),
                       ("cuda:1", "'cuda:1' requested but this machine has 1 CUDA device(s); "
                                  "fix: -p probe_device cuda:0..cuda:0")]:
        assert main(["--root", str(REPO), "check", "--quiet", "verbs", "-p", "probe_device", value]) == 2
        assert capsys.readouterr().err.splitlines() == [f"probekit: error: verbs: parameter 'probe_device': {why}"]
    monkeypatch.setattr(check, "cuda_devices", lambda: 0)
    problems, _, _ = check.check_chapter("verbs", {"probe_device": "cuda"})
    assert [(p.parameter, "-p probe_device cpu" in p.text) for p in problems] == [("probe_device", True)]


def test_a_field_added_to_a_study_is_in_its_pages_parameters_cell_and_reaches_its_run(wider):
    nb = ch.read_source(ch.source_path(REPO, "verbs"))
    ch.write_parameters(nb, "verbs")
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    lines = {line.split(" = ")[0]: line for line in cell.source.splitlines()}
    assert lines["pairs_per_verb"].startswith("pairs_per_verb = 8 ")
    assert lines["pairs_per_verb"].endswith(" # at most this many pairs per verb")
    namespace: dict = {}
    exec(cell.source, namespace)            # the kernel runs the cell ...
    namespace["pairs_per_verb"] = 3         # ... and then the values papermill injects
    study = STUDIES["verbs"]
    study.run(study.parameters.of(namespace))
    assert [(p.pairs_per_verb, p.probe_device, p.threshold) for p in wider] == [(3, "cpu", 0.5)]


@pytest.mark.parametrize("chapter", list(ch.CHAPTERS))
def test_each_page_hands_its_run_the_declared_parameters(chapter):
    """The page calls ``<study>.run(<study>.Params.of(globals()))`` on the run module its declaration names, whose
    ``Params`` is the class the declaration names: the fields ``list``, ``check`` and the cell read."""
    study = STUDIES[chapter]
    assert load(study.module).Params is study.parameters
    code = "\n".join(c.source for c in jupytext.read(ch.source_path(REPO, chapter), fmt="md:myst").cells
                     if c.cell_type == "code")
    tree = ast.parse(code)
    bound = {a.asname or a.name: f"{node.module}.{a.name}" for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) for a in node.names}
    calls = [ast.unparse(node) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and ast.unparse(node.func) == f"{chapter}.run"]
    assert calls == [f"{chapter}.run({chapter}.Params.of(globals()))"]
    assert bound[chapter] == study.module
