"""The studies, one per chapter, in one table (:data:`STUDIES`) read by the CLI, the checks, the summary page and
the lab's seed comparison.

A study is a package ``probekit.studies.<study>``: ``run(params) -> probekit.results.StudyResult`` in its ``study``
module (no display code), with
the rows the summary page shows (``HEADLINES``, of which ``CONTROLS`` are controls; ``WHOLE``, where a headline is
a part of a probe only the toy world splits, the row shown instead on other data; ``FROM_ITEMS``, how each of them
is rebuilt from the study's item rows), and its parameters, one frozen
dataclass in ``probekit.studies.<study>.params`` (:mod:`probekit.parameters`).  Entries are module paths imported
only when used (:mod:`probekit.registry`): the checks read a study's parameters without importing the study.  A
chapter notebook is its parameters cell, one ``run`` call, report calls and prose.
"""

from __future__ import annotations

from dataclasses import dataclass

from probekit.registry import load


@dataclass(frozen=True)
class Study:
    name: str
    probes: tuple[str, ...]   # the probes whose dataset sources its ``dataset`` parameter names
    module: str               # run(params), HEADLINES, CONTROLS, FROM_ITEMS (and WHOLE)
    params: str               # "module:class" of its parameters dataclass

    @property
    def parameters(self) -> type:
        return load(self.params)

    def run(self, params):
        return load(self.module).run(params)

    @property
    def headlines(self) -> list[dict]:
        """The rows of each model the summary page shows (:func:`probekit.results.select` conditions)."""
        return list(load(self.module).HEADLINES)

    @property
    def controls(self) -> list[dict]:
        """The headlines that are controls, meant to be high (not counted against the toy world's ceiling)."""
        return list(load(self.module).CONTROLS)

    @property
    def from_items(self) -> list[tuple[dict, object]]:
        """(result rows, :class:`probekit.results.FromItems`): how each headline (and its ``whole`` stand-in) is
        rebuilt from the study's exported item rows."""
        return list(load(self.module).FROM_ITEMS)

    @property
    def whole(self) -> list[tuple[dict, dict]]:
        """(headline, the row shown in its place where a run has none of it): a headline that is one part of a probe
        split by what it needs (on the toy world) stands in for the whole probe on data that is not split."""
        return list(getattr(load(self.module), "WHOLE", []))


#: the studies in reading order
STUDIES: dict[str, Study] = {s.name: s for s in [
    Study("verbs", ("verbs",), "probekit.studies.verbs.study", "probekit.studies.verbs.params:Params"),
    Study("prednoun", ("prednoun",), "probekit.studies.prednoun.study", "probekit.studies.prednoun.params:Params"),
    Study("masking", ("masking",), "probekit.studies.masking.study", "probekit.studies.masking.params:Params"),
    Study("conceptual", ("probe-r", "probe-c", "probe-b"), "probekit.studies.conceptual.study",
          "probekit.studies.conceptual.params:Params"),
]}
