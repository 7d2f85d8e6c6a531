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
    """Percentile bootstrap interval of ``statistic``; ``(nan, nan)`` for no values."""
    draws = bootstrap(values, statistic, n_resamples, seed)
    if np.isnan(draws).all():
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_std(values, statistic: Callable[[np.ndarray], float] = np.mean, n_resamples: int = 100,
                  seed: int = 0) -> float:
    """Standard deviation of ``statistic`` over bootstrap resamples (the predicate-noun paper's spread)."""
    draws = bootstrap(values, statistic, n_resamples, seed)
    return float(np.nanstd(draws))
