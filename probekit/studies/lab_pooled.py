"""The lab's verdicts pooled over seeds: a check or claim judged on every trained seed of its models at once.

A zoo member retrained with several seeds gives, for one lab row (one model, probe, condition, subset and
metric), one array of per-item values per seed.  :func:`pooled` turns them into

* one result row per seed (:func:`seed_rows`: that seed's value and its item-bootstrap interval, exactly the row a
  study computes today from that seed's zoo), judged on its own (``seed_verdicts``);
* one **pooled** row (:func:`pooled_row`): the value is the mean over seeds of each seed's value, the interval is
  :func:`probekit.stats.pooled_ci` (a two-level bootstrap stratified by seed: seeds, then the items, one draw for
  all seeds that share them, else within each drawn seed), ``n`` the items counted over all seeds.  It is an ordinary row of the result schema, with the same keys as
  each seed's row, so :func:`probekit.studies.lab.find` still finds one row per check and the verdict functions of
  :mod:`probekit.studies.lab` and :mod:`probekit.claims` judge it unchanged;
* the **verdict**, decided by the pooled row alone, and ``seeds_agree``: whether every seed's own row gets one
  verdict (a line says so when they do not, e.g. one seed above chance and another not resolved).

Per-seed values travel beside the pooled row, not in it: the schema has no seed column, and adding one would
change every saved table.  A verdict line (:func:`probekit.studies.lab.verdict_lines`) keeps the pooled row in
``rows`` as today and the per-seed rows as JSON (:attr:`Pooled.line`: ``seed_rows``, ``seed_verdicts``,
``seeds_agree``), as ``seed_verdicts.csv`` keeps a column per zoo.  With one seed the pooled row *is* today's row
(:func:`probekit.stats.pooled_ci` reduces to ``bootstrap_ci``), so the verdicts and numbers on the pages stay.

Where a lab line will get its per-seed item arrays (the next wiring, once the retrained seeds exist): each study's
item table (``StudyResult.items``, ``<chapter>.items.parquet``), scored once per seed's zoo, grouped by ``model``
and ``condition`` (and the item column that holds the row's ``subset``), one array per seed of

* verbs ``pairwise``: ``correct`` of probe ``svo``, the rows of the subset's negative ``type`` (all rows for
  "all"); Table 4's ``pos``/``neg`` (and ``_diff``): ``pos_score >= 0.5`` per distinct (sentence, positive image),
  ``neg_score < 0.5`` per distinct (sentence, negative image), as :func:`probekit.metrics.itm.itm_accuracy` counts
  them; ``avg``: both stacked with a 1/0 column and its ``_balanced_mean`` as the statistic;
* prednoun ``pair_accuracy``: ``correct`` of probe ``pairs``/``pairs-alt`` (one row per pair, NaN dropped),
  ``subset`` a ``swap``; ``triplet_accuracy``: the rows ``[correct_1, correct_2]`` with ``statistic=np.nanmean`` and
  ``count`` = finite entries; ``pair_accuracy_diff``: ``correct`` of one condition minus the other's, by
  ``item_id`` (the pair), NaN dropped;
* masking ``accuracy`` (``word_accuracy``): ``correct`` (``word_correct``) per caption, NaN dropped;
  ``<metric>_diff``: the same column pivoted to ``item_id`` x ``condition``, one condition minus the other;
* conceptual: the scored table's columns each ``Stat`` of :mod:`probekit.metrics.conceptual` summarises, with its
  statistic.

The bootstrap's ``seed`` and ``n_resamples`` are the study's (its ``seed`` parameter; 1000 resamples), so one seed
gives the study's own interval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from probekit.claims import difference
from probekit.results import row
from probekit.stats import bootstrap_ci, pooled_ci, pooled_value
from probekit.studies.lab import ROW_FIELDS, check_verdict, deciding

#: what a row's value is of its items (:func:`probekit.stats.bootstrap_ci`'s ``statistic``), and how many they count
Statistic = Callable[[np.ndarray], float]
Count = Callable[[np.ndarray], int]


def seed_rows(per_seed: Mapping[int, np.ndarray], *, statistic: Statistic = np.mean, count: Count = len,
              n_resamples: int = 1000, seed: int = 0, clusters: Mapping[int, np.ndarray | None] | None = None,
              **labels: Any) -> dict[int, dict[str, Any]]:
    """Per trained seed (the keys of ``per_seed``), its result row: ``statistic`` of its items, their
    :func:`~probekit.stats.bootstrap_ci` (over its items' units where ``clusters`` gives that seed's) and
    ``count`` of them; ``labels`` are the row's other fields (:func:`probekit.results.row`: study, probe, model,
    metric, condition, subset, chance)."""
    units = clusters or {}
    return {s: row(**labels, value=float(statistic(np.asarray(v))), n=float(count(np.asarray(v))),
                   ci=bootstrap_ci(v, statistic, n_resamples=n_resamples, seed=seed, clusters=units.get(s)))
            for s, v in per_seed.items()}


def pooled_row(per_seed: Mapping[int, np.ndarray], *, statistic: Statistic = np.mean, count: Count = len,
               n_resamples: int = 1000, seed: int = 0, clusters: Mapping[int, np.ndarray | None] | None = None,
               **labels: Any) -> dict[str, Any]:
    """The pooled result row: :func:`~probekit.stats.pooled_value` with :func:`~probekit.stats.pooled_ci` (which
    holds it; seeds, then units, drawn once for seeds that share their items), ``n`` = ``count`` summed
    over seeds; with one seed, that seed's row exactly."""
    values = [np.asarray(v) for v in per_seed.values()]
    units = [(clusters or {}).get(s) for s in per_seed]
    return row(**labels, value=pooled_value(values, statistic), n=float(sum(count(v) for v in values)),
               ci=pooled_ci(values, statistic, n_resamples=n_resamples, seed=seed, clusters=units))


def disagreeing(verdicts: Mapping[int, str]) -> str:
    """Each seed's verdict in words, as a line whose seeds disagree says them: "seed 0 above chance, seed 1 not
    resolved"."""
    return ", ".join(f"seed {s} {v}" for s, v in verdicts.items())


@dataclass(frozen=True)
class Pooled:
    """A check or claim under every seed: each seed's row and verdict, the pooled row and the verdict it decides."""
    rows: Mapping[int, dict[str, Any]]  # seed -> its result row
    seed_verdicts: Mapping[int, str]    # seed -> the verdict its own row gets
    row: dict[str, Any]                 # the pooled result row
    verdict: str                        # decided by the pooled row

    @property
    def seeds_agree(self) -> bool:
        """Whether every seed's own row gets one verdict (which may differ from the pooled one: seeds each "not
        resolved" on their items can be decided pooled, and that is no disagreement)."""
        return len(set(self.seed_verdicts.values())) == 1

    def disagreement(self) -> str:
        """What a line says when seeds disagree ("" when they agree), e.g. "seeds disagree: seed 0 above chance,
        seed 1 not resolved"."""
        return "" if self.seeds_agree else "seeds disagree: " + disagreeing(self.seed_verdicts)

    def seeds(self, each: Mapping[int, Sequence[Mapping[str, Any]]] | None = None) -> dict[str, Any]:
        """What a verdict line says of its seeds: ``seed_rows`` (JSON: each seed's
        :data:`~probekit.studies.lab.ROW_FIELDS` and ``seed``, for every row in ``each``, seed -> the rows its verdict
        read, or for its own row), ``seed_verdicts`` ("seed 0: …, seed 1: …"), ``seeds_agree``, ``seeds_note``
        (:meth:`disagreement`) and ``seeds_disagree`` (JSON: each seed's verdict where they disagree, else none)."""
        rows = each if each is not None else {s: [r] for s, r in self.rows.items()}
        entries = [{"seed": s, **{k: r[k] for k in ROW_FIELDS}} for s, rs in rows.items() for r in rs]
        return dict(seed_rows=json.dumps(entries, default=float),
                    seed_verdicts=", ".join(f"seed {s}: {v}" for s, v in self.seed_verdicts.items()),
                    seeds_agree=self.seeds_agree, seeds_note=self.disagreement(),
                    seeds_disagree=json.dumps([] if self.seeds_agree else [
                        {"seed": s, "verdict": v} for s, v in self.seed_verdicts.items()]))

    @property
    def line(self) -> dict[str, Any]:
        """The fields a verdict line takes: the pooled ``verdict`` and ``rows`` (:func:`~probekit.studies.lab.deciding`
        of the pooled row), and what it says of its seeds (:meth:`seeds`)."""
        return dict(verdict=self.verdict, rows=deciding(self.row), **self.seeds())


def pooled(per_seed: Mapping[int, np.ndarray], judge: Callable[[dict[str, Any]], str], **row_args: Any) -> Pooled:
    """Every seed's row and the pooled row (``row_args``: :func:`pooled_row`'s), each judged by ``judge`` (a row ->
    its verdict: :func:`probekit.studies.lab.check_verdict`, :func:`probekit.claims.difference`, ...)."""
    found = pooled_row(per_seed, **row_args)   # first: a seed without items is an error, not a NaN row
    rows = seed_rows(per_seed, **row_args)
    return Pooled(rows=rows, seed_verdicts={s: judge(r) for s, r in rows.items()}, row=found, verdict=judge(found))


def pooled_check(per_seed: Mapping[int, np.ndarray], role: str, *, by_construction: bool = False,
                 **row_args: Any) -> Pooled:
    """A lab check (:class:`probekit.studies.lab.Check`'s ``role``) judged across seeds by
    :func:`~probekit.studies.lab.check_verdict`: against chance (``row_args`` give ``chance``) "above chance",
    "below chance", "at chance" (TOST within :data:`~probekit.studies.lab.CHANCE_MARGIN`) or "not resolved"; a
    control against its floor."""
    return pooled(per_seed, lambda r: check_verdict(r, role, by_construction), **row_args)


def pooled_difference(per_seed: Mapping[int, np.ndarray], **row_args: Any) -> Pooled:
    """A paired difference (per seed, the per-item differences a − b) judged across seeds by
    :func:`probekit.claims.difference`: "higher", "lower" or "not resolved" (``chance`` 0 unless given)."""
    return pooled(per_seed, difference, **{"chance": 0.0, **row_args})


__all__ = ["Pooled", "disagreeing", "pooled", "pooled_check", "pooled_difference", "pooled_row", "seed_rows"]
