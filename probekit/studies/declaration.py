"""What a study declares, once, in its package's ``__init__.py`` (``STUDY = Study(...)``): its name, the probes its
``dataset`` parameter names sources of, and as lazy ``"module[:object]"`` entries (:mod:`probekit.registry`) its
parameters, its run, its lab, its paper and its page's findings (its package's ``findings`` module, which sits in
the report layer, :mod:`probekit.report.findings`).  Reading a declaration imports nothing heavy: the checks read a
study's parameters without importing its run.

The run module holds ``run(params) -> probekit.results.StudyResult`` (no display code) and the rows the summary
page shows (``HEADLINES``, of which ``CONTROLS`` are controls; ``WHOLE``, where a headline is a part of a probe only
the toy world splits, the row shown instead on other data; ``FROM_ITEMS``, how each of them is rebuilt from the
study's item rows); the lab module holds the lab's ``CHECKS`` and ``CLAIMS`` (:mod:`probekit.studies.lab`),
judged by the run, which a study with a lab decorates with :func:`probekit.studies.lab_pooling.pooled_over_seeds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from probekit.registry import load

if TYPE_CHECKING:
    from probekit.parameters import CommonParams
    from probekit.results import FromItems, StudyResult, Where


@dataclass(frozen=True)
class Study:
    name: str
    probes: tuple[str, ...]   # the probes whose dataset sources its ``dataset`` parameter names
    module: str               # run(params), HEADLINES, CONTROLS, FROM_ITEMS (and WHOLE)
    params: str               # "module:class" of its parameters dataclass
    lab: str | None = None    # the module of its lab's CHECKS and CLAIMS; None: no lab
    paper: str | None = None  # the module of its paper's reported numbers (:mod:`probekit.papers`)
    unit: str = ""            # what its 95% intervals resample whole (:func:`probekit.stats.bootstrap_ci`'s clusters)
    findings: str | None = None  # "module:function" of (rows, lab lines) -> the findings its page opens with

    @property
    def parameters(self) -> type[CommonParams]:
        found: type[CommonParams] = load(self.params)
        return found

    def run(self, params: CommonParams) -> StudyResult:
        result: StudyResult = load(self.module).run(params)
        return result

    @property
    def lab_lines(self) -> ModuleType:
        """The lab's module: its ``CHECKS`` and ``CLAIMS``, the lines a run's ``lab_checks`` and ``lab_claims``
        judge, in order."""
        if self.lab is None:
            raise ValueError(f"the {self.name} study has no lab")
        found: ModuleType = load(self.lab)
        return found

    @property
    def chance_words(self) -> str:
        """What its lab's rows' chance level is, where it is not the one its tables give the same numbers (its lab
        module's ``CHANCE_WORDS``; masking: what the caption alone allows); "" for none."""
        words: str = getattr(self.lab_lines, "CHANCE_WORDS", "") if self.lab else ""
        return words

    @property
    def headlines(self) -> list[Where]:
        """The rows of each model the summary page shows (:func:`probekit.results.select` conditions)."""
        return list(load(self.module).HEADLINES)

    @property
    def controls(self) -> list[Where]:
        """The headlines that are controls, meant to be high (not counted against the toy world's ceiling)."""
        return list(load(self.module).CONTROLS)

    @property
    def from_items(self) -> list[tuple[Where, FromItems]]:
        """(result rows, :class:`probekit.results.FromItems`): how each headline (and its ``whole`` stand-in) is
        rebuilt from the study's exported item rows."""
        return list(load(self.module).FROM_ITEMS)

    @property
    def whole(self) -> list[tuple[Where, Where]]:
        """(headline, the row shown in its place where a run has none of it): a headline that is one part of a probe
        split by what it needs (on the toy world) stands in for the whole probe on data that is not split."""
        return list(getattr(load(self.module), "WHOLE", []))
