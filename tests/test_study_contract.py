"""A study is one contract: its parameters are one dataclass (a field added there is in ``probekit list``, in
``probekit check`` and on the executed page, with no other edit), it sits in one table of studies, and every table of
named things is a registry of lazy ``module:object`` entries."""

from __future__ import annotations

import nbformat
import pytest

from conftest import copy_project, scratch_chapter
from probekit import chapters as ch
from probekit.cli import main
from probekit.registry import Registry, load
from probekit.scorers.base import Scorer
from probekit.scorers.registry import FAMILIES, FAMILY_CAPABILITIES, adapter
from probekit.studies import STUDIES, Study

THROWAWAY = '''from dataclasses import dataclass

from probekit.parameters import param
from probekit.studies.verbs.params import Params as VerbsParams


@dataclass(frozen=True)
class Params(VerbsParams):
    answer: int = param(42, "the one field this test adds")
'''
PAGE = scratch_chapter("A throwaway study", ":tags: [remove-cell]\n\nfrom probekit import report, results\n"
                       "from throwaway_study import Params", 'print(f"the study got answer = {Params.of(globals()).answer}")',
                       ":tags: [remove-cell]\n\nreport.export(results.frame([]))")


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """A project with a throwaway study (the verbs study's parameters plus one field) and its chapter."""
    project = copy_project(tmp_path / "project")
    (project / "throwaway_study.py").write_text(THROWAWAY)
    (project / "book" / "src" / "throwaway.md").write_text(PAGE)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.setenv("PROBEKIT_DATA", str(tmp_path / "data"))
    monkeypatch.setitem(STUDIES, "throwaway", Study("throwaway", ("verbs",), "throwaway_study",
                                                    "throwaway_study:Params"))
    return project


def test_a_field_added_to_a_study_is_listed_checked_and_on_the_page(throwaway, capsys):
    assert main(["--root", str(throwaway), "list"]) == 0
    assert "  answer = 42    # the one field this test adds" in capsys.readouterr().out.splitlines()
    assert main(["--root", str(throwaway), "check", "throwaway", "-p", "answer", "7", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["--root", str(throwaway), "check", "throwaway", "-p", "answer", "many", "--quiet"]) == 2
    assert "throwaway: parameter 'answer': must be an integer" in capsys.readouterr().err
    out = ch.execute(throwaway, "throwaway", ch.resolve("throwaway", {"answer": 7}), progress=False,
                     log=lambda msg: None)
    cells = nbformat.read(out, as_version=4).cells
    parameters = next(c for c in cells if "parameters" in c.metadata.get("tags", []))
    assert "answer = 42" in parameters.source.splitlines()[-1]      # the cell written from the dataclass
    printed = [o["text"] for c in cells if c.cell_type == "code" for o in c.get("outputs", []) if "text" in o]
    assert printed == ["the study got answer = 7\n"]                  # the value given reached the study


def test_the_table_of_studies_loads_each_studys_parts():
    for study in STUDIES.values():
        assert study.parameters().models and study.headlines and study.unit
        assert study.lab is None or study.lab_lines.CHECKS   # a study may have no lab, paper or findings
        assert study.paper is None or load(study.paper).PAPER
        assert study.findings is None or callable(load(study.findings))
        assert all(where in study.headlines for where in study.controls)
    assert [s.name for s in STUDIES.values()] == list(ch.CHAPTERS)
    assert list(STUDIES)[:4] == ["verbs", "prednoun", "masking", "conceptual"]


def test_a_study_with_a_lab_has_it_judged_by_its_run():
    """A lab's lines are judged once, pooled over seeds, by ``@pooled_over_seeds`` on the study's run (its Holm
    family, ``StudyResult.lab_lines``): a study declaring a lab whose run lacks it would leave its page's lab tables
    and findings without verdicts."""
    from probekit.studies.lab_pooling import pooled_over_seeds

    judged = pooled_over_seeds(lambda params: None).__code__
    for study in STUDIES.values():
        assert study.lab is None or load(study.module).run.__code__ is judged, \
            f"{study.name} declares a lab: decorate its run with @pooled_over_seeds"
    assert load("probekit.studies.verbs.study").run.__wrapped__.__code__ is not judged   # the test can fail


def test_a_registry_loads_its_entries_lazily_and_names_the_nearest_unknown():
    reg = Registry("thing", {"dumps": "json:dumps", "path": "pathlib"})
    assert reg.load("dumps")([1]) == "[1]" and reg.load("path").Path
    with pytest.raises(KeyError, match="unknown thing 'dump' \\(did you mean 'dumps'\\?\\); valid: dumps, path"):
        reg.load("dump")


def test_each_familys_capabilities_are_written_once():
    """Built-in adapters do not repeat their family's capabilities: the registry's line is what they can do."""
    for family in FAMILIES:
        cls = adapter(family)
        assert cls.family == family
        assert not [k for k in cls.__mro__ if k is not Scorer and "family_capabilities" in vars(k)], family
        assert Scorer.family_capabilities.fget(cls.__new__(cls)) == FAMILY_CAPABILITIES[family]
