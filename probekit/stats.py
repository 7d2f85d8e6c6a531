"""Bootstrap intervals shared by every chapter: over the items of one trained model (:func:`bootstrap_ci`), and
pooled over the seeds a model was trained with (:func:`pooled_ci`: resample seeds, and the items: once for all the drawn
seeds where they share their items, else within each drawn seed).

Where rows are not independent (a verb negative and its mirror, the two triplets of a pair, the items of one
group), ``clusters`` labels each row with its unit and the bootstrap resamples whole units (a cluster bootstrap):
each resample draws as many units as there are, with replacement, and computes the statistic over the rows of the
drawn units together (so a mean weighs each unit by its rows).  Rows resampled one by one would treat a pair whose
two rows always disagree as two independent coin flips and overstate the variance.  Units are numbered in the
order they first appear, so one row per unit draws exactly what ``clusters=None`` (rows one by one) draws."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np


@dataclass(frozen=True, eq=False)
class Items:
    """What an interval was computed from, so its row can be computed again (and pooled over seeds:
    :mod:`probekit.studies.lab_items`): the ``values`` (rows), the ``statistic``, the bootstrap's ``n_resamples``,
    ``seed`` and ``clusters``; how its row counts them (``count``: "len", or "finite" for the finite entries) and
    the factor its row shows them in (``scale``: 1, or 100 for a row in points); and ``ids``, the item behind each
    value in order (an item id, a pair id: what another seed's values are matched by, :func:`aligned`), None where
    the caller names its items by their place only (position ids: another seed's values match by count and units).
    """
    values: np.ndarray
    statistic: Callable
    n_resamples: int
    seed: int
    clusters: np.ndarray | None = None
    count: str = "len"
    scale: float = 1.0
    ids: np.ndarray | None = None


#: the result column a row carries its :class:`Items` in (:data:`probekit.results.ITEMS`)
ITEMS = "items"


class Interval(tuple):
    """A 95% interval ``(low, high)`` that carries what it was computed from (``items``: :class:`Items`, None for
    one that was not, e.g. of no values)."""
    items: Items | None

    def __new__(cls, low: float, high: float, items: Items | None = None) -> "Interval":
        self = super().__new__(cls, (low, high))
        self.items = items
        return self

    def __getnewargs__(self) -> tuple[float, float, Items | None]:
        return (*self, self.items)

    def counted(self, count: str) -> "Interval":
        """This interval, its row counting its values by ``count`` ("len" or "finite")."""
        return Interval(self[0], self[1], None if self.items is None else replace(self.items, count=count))

    def scaled(self, scale: float) -> "Interval":
        """This interval times ``scale`` (a row in points: 100), its items saying so."""
        items = None if self.items is None else replace(self.items, scale=self.items.scale * scale)
        return Interval(scale * self[0], scale * self[1], items)


def units(clusters, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Row order grouped by unit and each unit's row count, units in the order they first appear in ``clusters``
    (one label per row of ``n``); None for ``clusters=None``."""
    if clusters is None:
        return None
    labels = np.asarray(clusters)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} cluster labels for {n} rows: give one label (its unit) per row")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")[inverse.ravel()]  # unit number, first seen first
    return np.argsort(rank, kind="stable"), np.bincount(rank)


def _drawn_rows(grouped: tuple[np.ndarray, np.ndarray], drawn: np.ndarray) -> np.ndarray:
    """The rows of the units ``drawn`` (unit numbers, repeats allowed), unit after unit."""
    order, sizes = grouped
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    lengths = sizes[drawn]
    offsets = np.repeat(starts[drawn] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return order[offsets + np.arange(lengths.sum())]


def _row_draws(n: int, grouped: tuple[np.ndarray, np.ndarray] | None, rng: np.random.Generator, count: int):
    """``count`` resamples of ``n`` rows, as row indices: of the rows, or of whole units (``grouped``)."""
    if grouped is None:
        return rng.integers(0, n, size=(count, n))
    drawn = rng.integers(0, len(grouped[1]), size=(count, len(grouped[1])))
    return [_drawn_rows(grouped, d) for d in drawn]


def _resample(values: np.ndarray, statistic: Callable, rng: np.random.Generator, count: int,
              grouped: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """``statistic`` over ``count`` resamples of ``values``: of its rows, or of whole units (``grouped``)."""
    return np.array([statistic(values[i]) for i in _row_draws(len(values), grouped, rng, count)])


def bootstrap(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
              seed: int = 0, clusters=None) -> np.ndarray:
    """Return ``statistic`` over ``n_resamples`` resamples (with replacement) of the rows of ``values``, or with
    ``clusters`` (one label per row) of whole units, the statistic over the drawn units' rows together."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.full(n_resamples, np.nan)
    rng = np.random.default_rng(seed)
    return _resample(values, statistic, rng, n_resamples, units(clusters, len(values)))


def bootstrap_ci(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
                 seed: int = 0, level: float = 0.95, clusters=None, ids=None) -> Interval:
    """Percentile bootstrap interval of ``statistic`` (over rows, or with ``clusters`` over whole units:
    :func:`bootstrap`), widened where needed to hold the point estimate ``statistic(values)``; ``(nan, nan)`` for
    no values.

    The percentile interval need not hold the point estimate: with few resamples (or a skewed statistic) both
    percentiles can fall on one side of it, e.g. 10 resamples giving [0.5, 0.7375] around an accuracy of 0.75.  The
    end on the wrong side is then moved to the point estimate (here [0.5, 0.75]), so every interval a metric
    reports holds its value, as the result schema requires; an interval that already holds it is unchanged.

    The interval carries its :class:`Items` (a 95% one: what a result row's interval is), so a row made of it
    (:func:`probekit.results.row`) keeps them; ``ids`` (one per row: the item each row is of) name them, so that
    another seed's values of the row are matched item by item (they do not change the interval)."""
    draws = bootstrap(values, statistic, n_resamples, seed, clusters)
    if np.isnan(draws).all():
        return Interval(float("nan"), float("nan"))
    point = float(statistic(np.asarray(values)))
    if ids is not None and len(ids) != len(values):
        raise ValueError(f"{len(ids)} item ids for {len(values)} rows: give one id (its item) per row")
    items = (Items(np.asarray(values), statistic, n_resamples, seed, None if clusters is None else np.asarray(clusters),
                   ids=None if ids is None else np.asarray(ids))
             if level == 0.95 else None)
    return Interval(*_holding(draws, point, level), items)


def _holding(draws: np.ndarray, point: float, level: float) -> tuple[float, float]:
    """The percentile interval of ``draws`` at ``level``, its end on the wrong side of ``point`` moved to it."""
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return float(np.fmin(low, point)), float(np.fmax(high, point))


def bootstrap_std(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 100,
                  seed: int = 0) -> float:
    """Standard deviation of ``statistic`` over bootstrap resamples (the predicate-noun paper's spread)."""
    draws = bootstrap(values, statistic, n_resamples, seed)
    return float(np.nanstd(draws))


def _seeds(per_seed) -> list[np.ndarray]:
    per_seed = [np.asarray(v) for v in per_seed]
    if not per_seed:
        raise ValueError("pooled bootstrap over no seeds: pass one array of per-item values per trained seed")
    empty = [i for i, v in enumerate(per_seed) if len(v) == 0]
    if empty:
        raise ValueError(f"seed(s) at position {empty} have no items: a seed the probe did not score cannot be "
                         "pooled (leave it out and say so)")
    return per_seed


def pooled_value(per_seed, statistic: Callable[[np.ndarray], float] = np.mean) -> float:
    """The pooled point value: the mean over seeds of ``statistic`` over each seed's items (seeds weigh alike)."""
    return float(np.mean([statistic(v) for v in _seeds(per_seed)]))


def aligned(ids, their_ids) -> np.ndarray | None:
    """The order of another seed's rows that puts them on this seed's items: ``their[order]`` is item by item what
    ``ids`` (this seed's item per row) name, whatever order ``their_ids`` come in (an id held twice matches in the
    order its rows come); None when the two do not hold the same items (another id, another count)."""
    mine, theirs = np.asarray(ids).astype(str), np.asarray(their_ids).astype(str)
    if len(mine) != len(theirs):
        return None
    here, there = np.argsort(mine, kind="stable"), np.argsort(theirs, kind="stable")
    if not np.array_equal(mine[here], theirs[there]):
        return None
    order = np.empty(len(mine), dtype=int)
    order[here] = there
    return order


def _shared(per_seed: list[np.ndarray], clusters: list) -> bool:
    """Whether the seeds were scored on the same items: as many rows each and the same unit labels (row ``i`` of
    each seed taken for one item: where items have ids, the caller puts them in one order first, :func:`aligned`)."""
    first = None if clusters[0] is None else np.asarray(clusters[0])
    return all(len(v) == len(per_seed[0]) for v in per_seed) and all(
        (c is None) if first is None else (c is not None and np.array_equal(np.asarray(c), first))
        for c in clusters)


def pooled_bootstrap(per_seed, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
                     seed: int = 0, clusters=None) -> np.ndarray:
    """Draws of :func:`pooled_value` under a two-level bootstrap stratified by seed (as rliable, Agarwal et al.
    2021, does for few training runs): each resample draws as many seeds as there are, with replacement, then
    resamples items, and averages ``statistic`` over the drawn seeds.

    Seeds scored on the same items (as many rows each, the same unit labels: a crossed design, every seed's zoo
    on the lab's one item set) get **one** item resample per draw, applied to every drawn seed: the items' own
    variation is common to the seeds, and resampling it independently per seed would average it away (with k
    seeds nearly sharing item effects, an interval about sqrt(k) too narrow).  Seeds with items of their own are
    resampled independently (a seed drawn twice, twice).

    ``per_seed``: one array per trained seed, of per-item values (rows, as in :func:`bootstrap`; for a paired
    design the per-item differences).  With one seed there is nothing to draw at the seed level and the draws are
    exactly :func:`bootstrap`'s (same ``seed``, same item draws).  No seeds, or a seed without items: ValueError.
    ``clusters``: per seed, its rows' unit labels (or None: rows one by one); whole units are resampled, as
    :func:`bootstrap` does."""
    per_seed = _seeds(per_seed)
    k = len(per_seed)
    clusters = list(clusters or [None] * k)
    grouped = [units(c, len(v)) for c, v in zip(clusters, per_seed)]
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, k, size=(n_resamples, k)) if k > 1 else np.zeros((n_resamples, 1), dtype=int)
    stats = np.empty(drawn.shape)
    if _shared(per_seed, clusters):
        rows = _row_draws(len(per_seed[0]), grouped[0], rng, n_resamples)
        for r, (picked, seeds_) in enumerate(zip(rows, drawn)):
            stats[r] = [statistic(per_seed[s][picked]) for s in seeds_]
        return stats.mean(axis=1)
    for s, values in enumerate(per_seed):
        where = drawn == s
        stats[where] = _resample(values, statistic, rng, int(where.sum()), grouped[s])
    return stats.mean(axis=1)


def pooled_ci(per_seed, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
              seed: int = 0, level: float = 0.95, clusters=None) -> tuple[float, float]:
    """Percentile interval of :func:`pooled_bootstrap`'s draws (``clusters`` as there), widened where needed to hold
    :func:`pooled_value` (as :func:`bootstrap_ci` does); with one seed exactly :func:`bootstrap_ci`."""
    draws = pooled_bootstrap(per_seed, statistic, n_resamples, seed, clusters)
    return _holding(draws, pooled_value(per_seed, statistic), level)
