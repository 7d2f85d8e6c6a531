"""Two readings in the conceptual paper's released evaluation code (Schiappa et al. 2023), applied to per-item scores
so that their effect can be shown beside the correct computation.  Each function is its own inverse: applied to
correct scores it gives what the authors' code reports, applied to what it reports it gives the correct scores.

* Probe-C, FLAVA: ``contrastive_logits_per_text`` is indexed as if its rows were images, so FLAVA's Winoground
  text and image scores are exchanged (the group score, which needs both, is unchanged).
* Probe-B, ViLT and BridgeTower: the images are batched as original + modified + patch but read back as original +
  patch + modified, so x̃0 (patched) and x̃1 (filled) are exchanged.
"""

from __future__ import annotations

import pandas as pd

#: registry families whose reported numbers carry each reading
PROBE_C_SWAPPED = ("flava",)
PROBE_B_SWAPPED = ("vilt", "bridgetower")


def swap_text_image(scored: pd.DataFrame) -> pd.DataFrame:
    """Probe-C per-group scores (:func:`~probekit.metrics.conceptual.score_probe_c`) with ``text`` and ``image``
    exchanged: FLAVA's numbers as the authors' code computes them."""
    return scored.rename(columns={"text": "image", "image": "text"})[list(scored.columns)]


def swap_views(scored: pd.DataFrame) -> pd.DataFrame:
    """Probe-B per-item scores (:func:`~probekit.metrics.background.score_probe_b`) with the patched x̃0 and the
    filled x̃1 exchanged (``h_`` and ``conf_`` columns): ViLT's and BridgeTower's numbers as the authors' code
    computes them."""
    names = {}
    for prefix in ("h", "conf"):
        names[f"{prefix}_x0_patch"], names[f"{prefix}_x1_fill"] = f"{prefix}_x1_fill", f"{prefix}_x0_patch"
    return scored.rename(columns=names)[list(scored.columns)]
