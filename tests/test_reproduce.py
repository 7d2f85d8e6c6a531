"""A rebuild that reproduces a page keeps it byte for byte, a rebuild that does not (its numbers, or a sentence)
rewrites it, and the count of equal result values and identical cells: on hand-made rows and on a scratch chapter
executed four times."""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np
import pandas as pd

from conftest import copy_project, scratch_chapter
from probekit import book as bk
from probekit import chapters as ch
from probekit import results
from probekit.chapters import reproduce

IMPORTS = """:tags: [remove-cell]

from probekit import report, results"""
BODY = """rows = results.frame([results.row(study="verbs", probe="svo", model=m, metric="pairwise", value=v * scale,
                                  ci=(v * scale - 0.05, v * scale + 0.05), n=limit, chance=0.5)
                      for m, v in (("toy-vilt", 0.61), ("toy-clip", 0.72))])
result = results.StudyResult("verbs", {}, rows)
report.show_table(report.table(rows, "probe", "model"))"""
NOTE = 'print(open("note.txt").read())'   # a sentence from outside the sources: their fingerprint stays
EXPORT = """:tags: [remove-cell]

report.export(result)"""


def _rows(values, n=60):
    return results.frame([results.row(study="verbs", probe="svo", model=m, metric="pairwise", value=v,
                                      ci=(v - 0.05, v + 0.05), n=n, chance=0.5) for m, v in values])


def test_the_tally_counts_values_shown_alike_and_misses_rows_that_are_gone():
    old = _rows([("a", 0.5), ("b", 0.25)])
    assert reproduce.tally(old, _rows([("a", 0.5), ("b", 0.25)])) == (8, 8)
    assert reproduce.tally(old, _rows([("a", 0.5 * (1 + 5e-5)), ("b", 0.25)])) == (8, 8)   # 50.00 both
    assert reproduce.tally(old, _rows([("a", 0.5 * (1 + 1e-3)), ("b", 0.25)])) == (5, 8)   # value and interval
    assert reproduce.tally(old, _rows([("a", 0.5), ("c", 0.25)])) == (4, 8)                # a row not there before
    assert reproduce.tally(None, _rows([("a", 0.5)])) == (0, 4)


def test_lab_lines_rows_are_the_same_within_the_tolerance_only():
    """A lab line's ``rows`` are JSON text: a rebuild's float noise in them (a fine-tune's μ(c), 1e-7 relative) is
    the same line; a change a page would show is not."""
    from probekit.studies.lab import deciding
    def line(value):
        return pd.DataFrame({"what": ["claim"], "verdict": ["holds"], "rows": [deciding(
            {"model": "m", "metric": "mu_c_diff", "value": value, "ci_low": 0.0024, "ci_high": 0.0072, "n": 139.0})]})
    assert reproduce.same_table(line(0.004589294633456585), line(0.0045892921106378635))
    assert not reproduce.same_table(line(0.0046), line(0.0047))


def test_item_tables_are_the_same_within_the_tolerance_only():
    a = pd.DataFrame({"item_id": ["x", "y"], "score": [0.1, 0.2], "correct": [True, False]})
    assert reproduce.same_table(a, a.assign(score=[0.1 + 1e-9, 0.2]))
    assert not reproduce.same_table(a, a.assign(score=[0.1 + 1e-3, 0.2]))
    assert not reproduce.same_table(a, a.assign(correct=[True, True]))
    assert not reproduce.same_table(a, a.iloc[:1])
    words = a.assign(top5=[["run", "walk"], ["sit"]])   # a column of lists, as parquet gives arrays back
    assert reproduce.same_table(words, words.assign(top5=[np.array(["run", "walk"]), np.array(["sit"])]))
    assert not reproduce.same_table(words, words.assign(top5=[["run", "jump"], ["sit"]]))
    paths = a.assign(image=["/root/.cache/probekit/data/toy/svo/1.png", "/root/.cache/probekit/data/toy/svo/2.png"])
    moved = paths.assign(image=paths["image"].str.replace("/root/.cache/probekit/data", "/home/ana/data"))
    assert reproduce.same_table(paths, moved)                       # another data folder: paths left out
    assert not reproduce.same_table(paths, moved.assign(score=[0.5, 0.2]))


def test_a_normalised_notebook_has_positional_ids_and_no_timestamps():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_markdown_cell("x")])
    nb.cells[0].metadata["execution"] = {"iopub.execute_input": "2026-11-27T18:30:16Z"}
    nb.cells[0].metadata["papermill"] = {"duration": 0.1}
    nb.metadata["papermill"] = {"input_path": "/tmp/x/source.ipynb"}
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": "<table></table>", "text/plain": "<pandas.io.formats.style.Styler at 0x7f55186e2bd0>"})]
    reproduce.normalise(nb)
    assert nb.cells[0].outputs[0]["data"] == {"text/html": "<table></table>"}
    assert [c["id"] for c in nb.cells] == ["cell-0", "cell-1"]
    assert "execution" not in nb.cells[0].metadata and "papermill" not in nb.metadata
    nbformat.validate(nb)


def test_a_rebuild_that_reproduces_the_page_keeps_it_and_one_that_does_not_rewrites_it(tmp_path):
    project = copy_project(tmp_path / "project")
    src = project / "book" / "src" / "verbs.md"
    src.write_text(scratch_chapter("A scratch chapter", IMPORTS, "scale = 1.0\n" + BODY, NOTE, EXPORT))
    (project / "note.txt").write_text("Two models scored.")
    files = ch.output_path(project, "verbs"), ch.results_path(project, "verbs")
    log = []
    bk.execute_all(project, {"verbs": {}}, progress=False, log=log.append)
    first = [p.read_bytes() for p in files]
    nb = nbformat.read(files[0], as_version=4)
    assert nb.metadata["probekit"]["built_with"]["versions"]["torch"] and "papermill" not in nb.metadata
    assert "0 of 8 result values equal" in log[-1]                                  # nothing before this build
    cells = sum(c.cell_type == "code" for c in nb.cells)
    assert f"probekit: verbs: 0 of 8 result values equal; 0 of {cells} cell outputs identical" in log[-2]
    built_with = (project / reproduce.BUILT_WITH).read_text()
    assert nb.metadata["probekit"]["built_with"]["sources"] in built_with

    log.clear()
    bk.execute_all(project, {"verbs": {}}, progress=False, log=log.append)
    assert [p.read_bytes() for p in files] == first                                # kept byte for byte
    assert any("reproduced its page" in line for line in log) and "8 of 8 result values equal" in log[-1]
    assert log[-2] == f"probekit: verbs: 8 of 8 result values equal; {cells} of {cells} cell outputs identical " \
        "(images aside)"

    (project / "note.txt").write_text("Three models scored.")                      # a sentence, the same numbers
    log.clear()
    bk.execute_all(project, {"verbs": {}}, progress=False, log=log.append)
    assert files[0].read_bytes() != first[0] and "Three models" in files[0].read_text()   # rewritten
    assert log[-2].startswith(f"probekit: verbs: 8 of 8 result values equal; {cells - 1} of {cells} cell outputs "
                              "identical (images aside) (differ: cell-")
    assert "text: 'Three models scored.', was 'Two models scored.'" in log[-2]
    first = [p.read_bytes() for p in files]

    src.write_text(scratch_chapter("A scratch chapter", IMPORTS, "scale = 1.01\n" + BODY, NOTE, EXPORT))
    log.clear()
    bk.execute_all(project, {"verbs": {}}, progress=False, log=log.append)
    assert [p.read_bytes() for p in files] != first                                # another source: rewritten
    assert "2 of 8 result values equal" in log[-1]                                 # only the two n's
    assert results.load(files[1])["value"].round(4).tolist() == [0.6161, 0.7272]


def _git(repo, *args) -> str:
    import subprocess
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def _sources_repo(repo, page: str) -> str:
    """A git repository at ``repo`` with sources (``pkg/``, ``book/src/``) and an executed page ``page`` committed
    once; that commit's first 12 hex digits."""
    for path, text in (("pkg/a.py", "x = 1\n"), ("book/src/verbs.md", "# verbs\n"), (page, "{}")):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "sources")
    return _git(repo, "rev-parse", "HEAD")[:12]


def test_the_start_page_names_the_commit_of_the_sources_the_pages_were_executed_from(tmp_path, monkeypatch):
    """Issue 65: the start page said "executed from commit `4767677-dirty`" (the checkout with the new pages not
    yet committed) while the pages were built at another commit.  It names the last commit of the sources the
    fingerprint reads, which the commit of the executed pages leaves as it is, and "-dirty" only for the sources."""
    repo = tmp_path / "repo"
    sources = _sources_repo(repo, "book/chapters/verbs.ipynb")
    (repo / "book/chapters/verbs.ipynb").write_text('{"executed": true}')
    assert reproduce.sources_commit(repo, (repo / "pkg", repo / "book/src")) == sources   # a new page: not dirty
    _git(repo, "commit", "-qam", "pages")
    monkeypatch.setattr(reproduce, "sources", lambda root: (repo / "pkg", repo / "book/src"))
    assert reproduce.sources_commit(repo) == sources                                      # nor a later commit

    built = {"sources": reproduce.fingerprint(repo), "versions": {"torch": "2"}, "python": "3.11",
             "machine": "Linux", "device": "cpu"}
    text = reproduce.write_built_with(repo, {"verbs": built, "masking": {**built, "sources": "0123"}}).read_text()
    assert f"the sources of commit `{sources}`" in text
    assert "- verbs: torch 2;" in text and "- masking: torch 2; Python 3.11 on Linux, device `cpu`; sources " \
        "fingerprint `0123` (executed from other sources than this commit's)." in text

    (repo / "pkg/b.py").write_text("y = 2\n")                                            # a new source file
    assert reproduce.sources_commit(repo) == sources + "-dirty"
    assert reproduce.sources_commit(tmp_path) == reproduce.NO_COMMIT                      # not a checkout


def test_a_shallow_clone_keeps_the_commit_the_start_page_names(tmp_path, monkeypatch):
    """In a shallow clone the one commit fetched seems to change every file, so the last commit of the sources is
    not known there: it is marked "-shallow"; with the sources those of the paragraph already there (its pages'
    fingerprint), the paragraph keeps the commit it names, so that a rebuild leaves ``git status`` clean."""
    repo, clone = tmp_path / "repo", tmp_path / "clone"
    sources = _sources_repo(repo, "book/chapters/v.ipynb")
    monkeypatch.setattr(reproduce, "sources", lambda root: (Path(root) / "pkg", Path(root) / "book/src"))
    built = {"sources": reproduce.fingerprint(repo), "versions": {"torch": "2"}, "python": "3.11",
             "machine": "Linux", "device": "cpu"}
    (repo / "book/chapters/v.ipynb").write_text('{"executed": true}')
    paragraph = reproduce.write_built_with(repo, {"verbs": built}).read_text()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "pages")
    _git(tmp_path, "clone", "-q", "--depth", "1", repo.as_uri(), str(clone))
    pages = _git(clone, "rev-parse", "HEAD")[:12]
    assert pages != sources and reproduce.sources_commit(repo) == sources
    assert reproduce.sources_commit(clone) == pages + reproduce.SHALLOW                 # that commit or an earlier
    reproduce.write_built_with(clone, {"verbs": built})
    assert (clone / reproduce.BUILT_WITH).read_text() == paragraph and _git(clone, "status", "--porcelain") == ""
    (clone / reproduce.BUILT_WITH).unlink()                                              # no paragraph to keep
    text = reproduce.write_built_with(clone, {"verbs": built}).read_text()
    assert f"the sources of commit `{pages}{reproduce.SHALLOW}`" in text
