"""Was a member still learning when its schedule ended? The slope of each held-out curve over its last third, and
whether its CI shows the curve flat, still moving, or neither."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..numbers import interval

PER_STEPS = 10_000     # slopes are in points of accuracy per this many steps
#: a curve is flat when its slope's 95% CI lies within +-this many points per PER_STEPS: another 10,000 steps would
#: move it by less than half the 95% CI of a held-out number at n = 200 (+-4 to 6 points between 90% and 75%)
FLAT_WITHIN = 2.0


def trends(history: dict, keys) -> dict[str, tuple[float, float, float]]:
    """Per curve in ``keys``: (slope, CI low, CI high) of a least-squares line through the last third of the
    held-out points (at least three), in points per ``PER_STEPS`` steps, 95% CI from Student's t.
    The items are the same at every point, so the CI measures how steadily the curve moved, not item sampling."""
    probe, steps = history.get("probe") or [], history.get("probe_step") or []
    tail = max(3, len(probe) // 3)
    if len(probe) < 4:
        return {}
    out = {}
    for key in (k for k in keys if k in probe[-1]):   # a member resumed onto a newer probe has a key's last points
        pts = [(s, p[key]) for s, p in zip(steps[-tail:], probe[-tail:]) if key in p]
        if len(pts) < 3:
            continue
        x, y = (np.asarray(v, dtype=float) for v in zip(*pts))
        y = 100 * y
        xc = x - x.mean()
        slope = float(xc @ (y - y.mean()) / (xc @ xc))
        resid = y - y.mean() - slope * xc
        se = float(np.sqrt(resid @ resid / (len(y) - 2) / (xc @ xc)))
        half = float(stats.t.ppf(0.975, len(y) - 2)) * se
        out[key] = (PER_STEPS * slope, PER_STEPS * (slope - half), PER_STEPS * (slope + half))
    return out


def verdict(trend: tuple[float, float, float]) -> str:
    """"flat" when the slope's CI lies within +-``FLAT_WITHIN``; "rising" or "falling" when it excludes 0 (and is
    not that close to it); "not resolved" otherwise: a noisy curve that does not show a slope is not shown flat."""
    slope, low, high = trend
    if -FLAT_WITHIN <= low and high <= FLAT_WITHIN:
        return "flat"
    if low > 0 or high < 0:
        return "rising" if slope > 0 else "falling"
    return "not resolved"


def unsettled(found: dict[str, tuple[float, float, float]]) -> dict[str, tuple[float, float, float]]:
    """The curves not shown flat: still rising or falling, or too noisy to tell."""
    return {k: t for k, t in found.items() if verdict(t) != "flat"}


def cell(found: dict[str, tuple[float, float, float]]) -> str:
    """One table cell: the curves not shown flat with their verdict, slope and CI, or "flat"."""
    if not found:
        return "n/a"
    left = unsettled(found)
    if not left:
        return "flat"
    return "; ".join(f"{k} {verdict(t)} {interval(*t, sign=True, least=1)}" for k, t in left.items())
