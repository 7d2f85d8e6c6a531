"""Adding a fifth study is one new package, one line in ``STUDIES`` and its source page ``book/src/<name>.md``: a
study package built here (reusing the verbs probe on the toy world), put in the table, is listed and checked by the
CLI, has its chapter in the book's table of contents, and its page's findings and its headline on the summary page,
with no other file edited."""

from __future__ import annotations

import pytest

from conftest import REPO, copy_project
from probekit import book
from probekit.cli import main
from probekit.registry import load
from probekit.report import findings, summary
from probekit.results import save
from probekit.studies import STUDIES

PACKAGE = {
    "__init__.py": '''from probekit.studies.declaration import Study

STUDY = Study("fifth", ("verbs",), "fifth.study", "fifth.params:Params", unit="the sentence",
              findings="fifth.findings:findings")
''',
    "params.py": '''from dataclasses import dataclass

from probekit.parameters import CommonParams, common, param


@dataclass(frozen=True)
class Params(CommonParams):
    models: list[str] = common("models", ["toy-clip"], "registry names", ("choice",))
    limit: int | None = common("limit", 8, "max sentence x negative-image rows")
    n_resamples: int = param(200, "bootstrap resamples", bounds=(1, None))
''',
    "study.py": '''from dataclasses import asdict

from probekit.datasets import load_dataset
from probekit.metrics import itm
from probekit.results import StudyResult, concat
from probekit.scorers import head_for, load_scorer
from probekit.studies.pair_scores import score_pairs

HEADLINES = [dict(probe=itm.PROBE, subset="verb", metric="pairwise")]
CONTROLS = []
FROM_ITEMS = []


def run(params):
    items = load_dataset("verbs", params.dataset, data_dir=params.data_dir, limit=params.limit, seed=params.seed)
    parts = []
    for name in params.models:
        scorer = load_scorer(name, device=params.device, batch_size=params.batch_size, cache_dir=params.cache_dir)
        pos, neg = score_pairs(scorer, items, head_for(scorer, "choice"))
        parts.append(itm.pairwise_accuracy(items, pos, neg, name, params.n_resamples, params.seed))
    return StudyResult("fifth", asdict(params), concat(parts).assign(study="fifth"))
''',
    "findings.py": '''from probekit.report.finding import kept, of_row


def findings(rows, lines=None):
    return kept([of_row(rows, "**toy-clip** tells the verb negatives apart", headline=True, model="toy-clip",
                        probe="svo", subset="verb", metric="pairwise")])
''',
}
SOURCE = "# A fifth study\n"


@pytest.fixture
def fifth(tmp_path, monkeypatch):
    """A project whose table of studies holds a fifth study: its package (on ``sys.path``), its one line in
    ``STUDIES`` and its source page; nothing else."""
    package = tmp_path / "pkgs" / "fifth"
    package.mkdir(parents=True)
    for name, text in PACKAGE.items():
        (package / name).write_text(text)
    project = copy_project(tmp_path / "project")
    (project / "book" / "src" / "fifth.md").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.setenv("PROBEKIT_DATA", str(tmp_path / "data"))
    monkeypatch.setitem(STUDIES, "fifth", load("fifth:STUDY"))
    return project


def test_the_cli_lists_and_checks_the_fifth_study(fifth, capsys):
    assert main(["--root", str(fifth), "list"]) == 0
    listed = capsys.readouterr().out.split("\n\n")[-1].splitlines()
    assert listed[:3] == ["fifth: A fifth study  [not executed]", "  datasets: toy, svo-probes",
                          "  models = ['toy-clip']    # registry names"]
    assert "  n_resamples = 200    # bootstrap resamples" in listed
    assert main(["--root", str(fifth), "check", "--quiet"]) == 0
    assert capsys.readouterr().out == "probekit: check passed: verbs, prednoun, masking, conceptual, fifth\n"
    assert main(["--root", str(fifth), "check", "fifth", "-p", "n_resamples", "0", "--quiet"]) == 2
    assert "fifth: parameter 'n_resamples'" in capsys.readouterr().err


def test_the_table_of_contents_gets_the_fifth_chapter_and_is_left_as_it_was_without_it(fifth):
    committed = (REPO / "_toc.yml").read_text()
    toc = book.write_toc(fifth)
    chapters = [f"      - file: book/chapters/{c}\n" for c in ("summary", "verbs", "prednoun", "masking", "conceptual")]
    assert toc.read_text() == committed.replace("".join(chapters), "".join(chapters)
                                                + "      - file: book/chapters/fifth\n")
    del STUDIES["fifth"]
    assert book.write_toc(fifth).read_text() == committed   # the committed file is what the table writes


def test_the_fifth_studys_findings_and_summary_headline_come_from_its_run(fifth, tmp_path, monkeypatch):
    study = STUDIES["fifth"]
    result = study.run(study.parameters(device="cpu", data_dir=str(tmp_path / "data"),
                                        cache_dir=str(tmp_path / "scores")))
    [verb] = result.rows[result.rows["subset"] == "verb"].to_dict("records")
    [found] = findings.of_result(result)
    assert found.headline and (found.value, found.n) == (verb["value"], verb["n"]) and 0 < verb["n"] <= 8
    chapters = tmp_path / "chapters"
    save(result.rows, chapters / "fifth.results.parquet")
    shown: list = []
    for name in ("show_table", "show_text", "show_figure"):
        monkeypatch.setattr(summary, name, lambda what, **kw: shown.append(what))
    summary.show(chapters)
    table, *_, listing = shown
    assert list(table.index) == ['<a href="fifth.html">fifth: svo · verb · pairwise</a>'] and list(table.columns) == [
        "chance", "toy-clip"]
    assert "- [fifth](fifth.html): executed, 4 result rows" in listing.splitlines()
    assert "- [verbs](verbs.html): **not executed** (run `probekit run verbs`)" in listing.splitlines()
