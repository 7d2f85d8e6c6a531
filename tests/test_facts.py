"""Each study's facts are a frozen dataclass, and every ``facts.<name>`` the chapter source and the study's report
helpers read is one of its fields: a misspelt name fails here, in a unit test, not when the page executes."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from probekit.studies.prednoun import page as prednoun_report
from probekit.studies.conceptual.facts import ConceptualFacts
from probekit.studies.masking.study import MaskingFacts
from probekit.studies.prednoun.study import PrednounFacts
from probekit.studies.verbs.study import VerbsFacts

ROOT = Path(__file__).resolve().parents[1]
FACTS = {"verbs": VerbsFacts, "prednoun": PrednounFacts, "masking": MaskingFacts, "conceptual": ConceptualFacts}
READ = re.compile(r"\bfacts\.(\w+)")


def _read(study: str) -> set[str]:
    """The names read as ``facts.<name>`` in the chapter source and the study's report helpers."""
    sources = [ROOT / "book" / "src" / f"{study}.md", ROOT / "probekit" / "studies" / study / "page.py"]
    return {name for path in sources for name in READ.findall(path.read_text())}


@pytest.mark.parametrize("study", list(FACTS))
def test_every_fact_a_page_reads_is_a_field(study):
    fields = {f.name for f in dataclasses.fields(FACTS[study])}
    read = _read(study)
    assert read, f"no facts.<name> read for {study}: the pattern no longer finds the readers"
    assert read <= fields, f"{study}: read but not a field of {FACTS[study].__name__}: {sorted(read - fields)}"


def test_the_prednoun_tables_name_fields():   # the prednoun page module reads these with getattr
    fields = {f.name for f in dataclasses.fields(PrednounFacts)}
    assert {layout[-1] for layout in prednoun_report._LAYOUT.values()} <= fields


@pytest.mark.parametrize("cls", list(FACTS.values()), ids=lambda c: c.__name__)
def test_facts_are_frozen_and_a_misspelt_field_fails(cls):
    facts = cls(**{f.name: None for f in dataclasses.fields(cls)})
    with pytest.raises(AttributeError):
        facts.lab_model   # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.lab = "changed"
