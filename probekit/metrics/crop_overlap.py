"""How much of the visual distractor the cropped condition of the predicate–noun study leaves in view.

The cropped image is the target's box (:func:`probekit.data.prednoun.crop_to_targets`), so the distractor is
removed only where its box lies outside the target's.  For each triplet, :func:`inside_fraction` is the share of
the distractor box's area inside the target box (both ``[x, y, w, h]`` fractions of the image);
:func:`distractor_in_crop` gives, per threshold, the fraction of triplets above it (strictly: "more than half"),
with a 95% percentile bootstrap interval over the triplets.  On the authors' evaluation set this is 14.3% of
triplets for one half and 3.1% for 90%.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from probekit.results import frame, row
from probekit.stats import bootstrap_ci

THRESHOLDS = (0.5, 0.9)
PROBE = "crop overlap"
METRIC = "distractor_in_crop"


def inside_fraction(inner: Sequence[float], outer: Sequence[float]) -> float:
    """Share of the area of box ``inner`` that lies inside box ``outer`` (``[x, y, w, h]`` boxes); 0 for a box
    of zero area."""
    ix, iy, iw, ih = (float(v) for v in inner)
    ox, oy, ow, oh = (float(v) for v in outer)
    width = max(0.0, min(ix + iw, ox + ow) - max(ix, ox))
    height = max(0.0, min(iy + ih, oy + oh) - max(iy, oy))
    area = iw * ih
    return width * height / area if area > 0 else 0.0


def subset_name(threshold: float) -> str:
    """The row's subset for a threshold: "> 50% of the distractor's box"."""
    return f"> {100 * threshold:g}% of the distractor's box"


def distractor_in_crop(items: pd.DataFrame, thresholds: Sequence[float] = THRESHOLDS, seed: int = 0,
                       n_resamples: int = 1000, study: str = "prednoun") -> pd.DataFrame:
    """Per threshold, the fraction of ``items`` (with ``target_box`` and ``distractor_box``) whose distractor box
    lies more than that share inside the target box: rows of probe ``crop overlap``, condition ``cropped``,
    metric ``distractor_in_crop``, model "" (a property of the items, not of a model), n triplets."""
    shares = np.array([inside_fraction(d, t) for t, d in zip(items["target_box"], items["distractor_box"])],
                      dtype=float)
    out = []
    for threshold in thresholds:
        above = (shares > threshold).astype(float)
        out.append(row(study=study, probe=PROBE, model="", condition="cropped", subset=subset_name(threshold),
                       metric=METRIC, value=above.mean() if len(above) else np.nan,
                       ci=bootstrap_ci(above, n_resamples=n_resamples, seed=seed), n=len(above)))
    return frame(out)
