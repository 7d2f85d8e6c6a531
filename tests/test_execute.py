"""Executing a chapter for readers, on a scratch chapter (a hand-made StudyResult, no models): its code folded,
nothing from warnings or stderr on the page, its rows saved beside the notebook, and nothing written when it
fails or exports nothing."""

from __future__ import annotations

import nbformat
import pytest

from conftest import copy_project, scratch_chapter
from probekit import chapters as ch
from probekit import results

IMPORTS = """:tags: [remove-cell]

import sys
import warnings

import tqdm.auto  # what transformers imports: in a kernel without ipywidgets, tqdm warns "IProgress not found"
from probekit import report, results"""
BODY = """warnings.warn("a library's deprecation Warning")
print("a library's log line", file=sys.stderr)
rows = results.frame([results.row(study="verbs", probe="svo", model=m, subset="verb", metric="pairwise", value=v,
                                  ci=(v - 0.05, v + 0.05), n=limit, chance=0.5)
                      for m, v in (("toy-vilt", 0.61), ("toy-clip", 0.72))])
result = results.StudyResult("verbs", {}, rows)
report.show_table(report.table(rows, "probe", "model"))"""
EXPORT = """:tags: [remove-cell]

report.export(result)"""
CHAPTER = scratch_chapter("A scratch chapter", IMPORTS, BODY)
EXPORTING = scratch_chapter("A scratch chapter", IMPORTS, BODY, EXPORT)


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path / "project")


def _outputs(nb):
    return [out for cell in nb.cells for out in cell.get("outputs", [])]


def test_chapter_is_folded_quiet_and_saves_its_rows(project):
    (project / "book" / "src" / "verbs.md").write_text(EXPORTING)
    log = []
    out = ch.execute(project, "verbs", ch.resolve("verbs", {"limit": 7}), progress=False, log=log.append)
    nb = nbformat.read(out, as_version=4)
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        tags = set(cell.metadata.get("tags", []))
        assert tags & {"remove-cell", "hide-input"}, cell.source   # every cell folded, the parameters too
    shown = [c for c in nb.cells if c.cell_type == "code" and "hide-input" in c.metadata["tags"] and c.outputs]
    assert len(shown) == 1 and shown[0].outputs[0]["data"]["text/html"]       # the table, its code folded
    assert not [o for o in _outputs(nb) if o.get("name") == "stderr"]
    assert not [o for o in _outputs(nb) if "Warning" in str(o)]
    assert any("a library's log line" in line for line in log)                  # told on the terminal instead
    saved = results.load(ch.results_path(project, "verbs"))
    assert list(saved["model"]) == ["toy-vilt", "toy-clip"] and list(saved["n"]) == [7.0, 7.0]
    assert nb.metadata["probekit"]["rows"] == 2


def test_chapter_that_exports_nothing_changes_nothing(project):
    (project / "book" / "src" / "verbs.md").write_text(EXPORTING)
    ch.execute(project, "verbs", {}, progress=False, log=lambda msg: None)
    before = {p: p.read_bytes() for p in (ch.output_path(project, "verbs"), ch.results_path(project, "verbs"))}
    (project / "book" / "src" / "verbs.md").write_text(CHAPTER)
    with pytest.raises(ch.ChapterFailed, match=r"report\.export\(result\)"):
        ch.execute(project, "verbs", {"seed": 1}, progress=False, log=lambda msg: None)
    assert {p: p.read_bytes() for p in before} == before
    (project / "book" / "src" / "verbs.md").write_text(scratch_chapter("A scratch chapter", IMPORTS, BODY, "1 / 0", EXPORT))
    with pytest.raises(ch.ChapterFailed, match="ZeroDivisionError"):
        ch.execute(project, "verbs", {"seed": 2}, progress=False, log=lambda msg: None)
    assert {p: p.read_bytes() for p in before} == before


def test_fold_code_folds_the_parameters_too_and_leaves_removed_cells_and_markdown_alone():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# T"),
                nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import a", metadata={"tags": ["remove-cell"]}),
                nbformat.v4.new_code_cell("show()", metadata={"tags": ["remove-input"]}),
                nbformat.v4.new_code_cell("table()"),
                nbformat.v4.new_code_cell("figure()", metadata={"tags": ["hide-input"]})]
    ch.fold_code(nb)
    assert [c.metadata.get("tags") for c in nb.cells] == [
        None, ["parameters", "hide-input"], ["remove-cell"], ["remove-input"], ["hide-input"], ["hide-input"]]


def test_drop_stderr_keeps_other_outputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("f()", execution_count=3, outputs=[
        nbformat.v4.new_output("stream", name="stderr", text="oops\n"),
        nbformat.v4.new_output("stream", name="stdout", text="fine\n")])]
    log = []
    ch.drop_stderr(nb, "verbs", log.append)
    assert [o["name"] for o in nb.cells[0].outputs] == ["stdout"]
    assert len(log) == 1 and "[3]" in log[0] and "oops" in log[0]


def test_book_no_execute_builds_from_the_executed_notebooks(project):
    from probekit.cli import main
    (project / "book" / "src" / "verbs.md").write_text(EXPORTING)
    ch.execute(project, "verbs", {}, progress=False, log=lambda msg: None)
    ch.execute_summary(project, progress=False, log=lambda msg: None)
    executed = {p.name: p.read_bytes() for p in (project / "book" / "chapters").iterdir()}
    (project / "book" / "src" / "verbs.md").write_text(scratch_chapter("A scratch chapter", IMPORTS, BODY, "1 / 0"))
    assert main(["--root", str(project), "book", "--no-execute"]) == 0  # would fail if it executed anything
    after = {p.name: p.read_bytes() for p in (project / "book" / "chapters").iterdir()}
    assert {k: v for k, v in after.items() if k in executed} == executed
    assert set(after) - set(executed) == {f"{c}.ipynb" for c in ch.CHAPTERS if c != "verbs"} | {
        "built_with.md"}   # placeholders, and the start page's note on what the executed pages were built with
    assert "verbs: " in after["built_with.md"].decode() and "device `cpu`" in after["built_with.md"].decode()
    html = project / "_build" / "html" / "book" / "chapters"
    assert "toy-clip" in (html / "summary.html").read_text() and (html / "masking.html").exists()
