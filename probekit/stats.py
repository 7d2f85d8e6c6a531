"""Bootstrap intervals shared by every chapter."""

from __future__ import annotations

from typing import Callable

import numpy as np


def bootstrap(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
              seed: int = 0) -> np.ndarray:
    """Return ``statistic`` over ``n_resamples`` resamples (with replacement) of the rows of ``values``."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.full(n_resamples, np.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_resamples, len(values)))
    return np.array([statistic(values[i]) for i in idx])


def bootstrap_ci(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 1000,
                 seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic``, widened where needed to hold the point estimate
    ``statistic(values)``; ``(nan, nan)`` for no values.

    The percentile interval need not hold the point estimate: with few resamples (or a skewed statistic) both
    percentiles can fall on one side of it, e.g. 10 resamples giving [0.5, 0.7375] around an accuracy of 0.75.  The
    end on the wrong side is then moved to the point estimate (here [0.5, 0.75]), so every interval a metric
    reports holds its value, as the result schema requires; an interval that already holds it is unchanged."""
    draws = bootstrap(values, statistic, n_resamples, seed)
    if np.isnan(draws).all():
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    point = float(statistic(np.asarray(values)))
    return float(np.fmin(low, point)), float(np.fmax(high, point))


def bootstrap_std(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 100,
                  seed: int = 0) -> float:
    """Standard deviation of ``statistic`` over bootstrap resamples (the predicate-noun paper's spread)."""
    draws = bootstrap(values, statistic, n_resamples, seed)
    return float(np.nanstd(draws))
