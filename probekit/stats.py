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

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import numpy as np

#: while :func:`keeping` is active, every :func:`bootstrap_ci` call appends what it was computed from here
_KEPT: ContextVar[list[dict[str, Any]] | None] = ContextVar("probekit_kept_intervals", default=None)


@contextmanager
def keeping() -> Iterator[list[dict[str, Any]]]:
    """Keep what every :func:`bootstrap_ci` computed inside the block: a list, filled as they run, of dicts with
    the ``values``, ``statistic`` and ``clusters`` it was given, its ``n_resamples`` and ``seed``, and its ``value``
    and ``ci`` (what a result row computed from items holds, so the row can be rebuilt from them:
    :mod:`probekit.studies.lab_items`).  A block inside another keeps for both: what the inner one kept is added
    to the outer one's list when it ends."""
    outer = _KEPT.get()
    kept: list[dict[str, Any]] = []
    token = _KEPT.set(kept)
    try:
        yield kept
    finally:
        _KEPT.reset(token)
        if outer is not None:
            outer.extend(kept)


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
                 seed: int = 0, level: float = 0.95, clusters=None) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` (over rows, or with ``clusters`` over whole units:
    :func:`bootstrap`), widened where needed to hold the point estimate ``statistic(values)``; ``(nan, nan)`` for
    no values.

    The percentile interval need not hold the point estimate: with few resamples (or a skewed statistic) both
    percentiles can fall on one side of it, e.g. 10 resamples giving [0.5, 0.7375] around an accuracy of 0.75.  The
    end on the wrong side is then moved to the point estimate (here [0.5, 0.75]), so every interval a metric
    reports holds its value, as the result schema requires; an interval that already holds it is unchanged."""
    draws = bootstrap(values, statistic, n_resamples, seed, clusters)
    if np.isnan(draws).all():
        return float("nan"), float("nan")
    point = float(statistic(np.asarray(values)))
    ci = _holding(draws, point, level)
    kept = _KEPT.get()
    if kept is not None and level == 0.95:
        kept.append(dict(values=np.asarray(values), statistic=statistic, n_resamples=n_resamples, seed=seed,
                         value=point, ci=ci, clusters=None if clusters is None else np.asarray(clusters)))
    return ci


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


def _shared(per_seed: list[np.ndarray], clusters: list) -> bool:
    """Whether the seeds were scored on the same items: as many rows each and the same unit labels."""
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
