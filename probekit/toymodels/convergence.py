"""Was a member still learning when its schedule ended? The slope of each held-out curve over its last third."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..numbers import signed

PER_STEPS = 10_000     # slopes are in points of accuracy per this many steps


def trends(history: dict, keys) -> dict[str, tuple[float, float, float]]:
    """Per curve in ``keys``: (slope, CI low, CI high) of a least-squares line through the last third of the
    held-out points (at least three), in points per ``PER_STEPS`` steps, 95% CI from Student's t.
    The items are the same at every point, so the CI measures how steadily the curve moved, not item sampling."""
    probe, steps = history.get("probe") or [], history.get("probe_step") or []
    tail = max(3, len(probe) // 3)
    if len(probe) < 4:
        return {}
    x = np.asarray(steps[-tail:], dtype=float)
    out = {}
    for key in (k for k in keys if k in probe[-1]):
        y = 100 * np.asarray([p[key] for p in probe[-tail:]], dtype=float)
        xc = x - x.mean()
        slope = float(xc @ (y - y.mean()) / (xc @ xc))
        resid = y - y.mean() - slope * xc
        se = float(np.sqrt(resid @ resid / (len(y) - 2) / (xc @ xc)))
        half = float(stats.t.ppf(0.975, len(y) - 2)) * se
        out[key] = tuple(PER_STEPS * v for v in (slope, slope - half, slope + half))
    return out


def moving(found: dict[str, tuple[float, float, float]]) -> dict[str, tuple[float, float, float]]:
    """The curves whose slope's CI excludes 0 (still rising, or falling, when training stopped)."""
    return {k: t for k, t in found.items() if t[1] > 0 or t[2] < 0}


def cell(found: dict[str, tuple[float, float, float]]) -> str:
    """One table cell: the moving curves with their slope and CI, or "flat"."""
    if not found:
        return "n/a"
    moved = moving(found)
    if not moved:
        return "flat"
    return "; ".join(f"{k} {'rising' if s > 0 else 'falling'} {signed(s)} [{signed(lo)}, {signed(hi)}]"
                     for k, (s, lo, hi) in moved.items())
