"""Two readings in the conceptual paper's released evaluation code (Schiappa et al. 2023), applied to per-item scores
so that their effect can be shown beside the correct computation.  Each function is its own inverse: applied to
correct scores it gives what the authors' code reports, applied to what it reports it gives the correct scores.

* Probe-C, FLAVA: ``contrastive_logits_per_text`` is indexed as if its rows were images, so FLAVA's four scores
  are read transposed: the Winoground text and image scores are exchanged (the group score, which needs both, is
  unchanged) and μ(c), a softmax over each row, becomes a softmax over the two images for each caption.
* Probe-B, ViLT and BridgeTower: the images are batched as original + modified + patch but read back as original +
  patch + modified, so x̃0 (patched) and x̃1 (filled) are exchanged.
"""

from __future__ import annotations

import pandas as pd

from probekit.metrics.conceptual import winoground

#: registry families whose reported numbers carry each reading
PROBE_C_SWAPPED = ("flava",)
PROBE_B_SWAPPED = ("vilt", "bridgetower")


def swap_text_image(scored: pd.DataFrame) -> pd.DataFrame:
    """Probe-C per-group scores (:func:`~probekit.studies.conceptual.scores.score_probe_c`) as the authors' code
    computes FLAVA's: its four scores transposed and every Winoground column recomputed from them.

    With ``s_ij = f(image_i, caption_j)``, ``contrastive_logits_per_text[j, i] = s_ij`` (rows are captions), and the
    authors read entry ``[a, b]`` as (image a, caption b): what they take for ``s_ab`` is ``s_ba``.  So their text
    score is our image score and the reverse, the group score is unchanged, and their μ(c), a softmax over row ``i``
    taken at column ``i``, is a softmax over the two *images* for each caption:
    ``(σ(s00 − s10) + σ(s11 − s01)) / 2``, where ours is ``(σ(s00 − s01) + σ(s11 − s10)) / 2`` (a softmax over
    the two captions for each image).  For (s00, s01, s10, s11) = (2, 1, 0, 0): theirs 0.5749, ours 0.6155.
    Transposing twice is the identity, so the function is its own inverse."""
    out = scored.copy()
    out["s01"], out["s10"] = scored["s10"].to_numpy(), scored["s01"].to_numpy()
    for name, values in winoground(out["s00"], out["s01"], out["s10"], out["s11"]).items():
        out[name] = values
    return out


def swap_views(scored: pd.DataFrame) -> pd.DataFrame:
    """Probe-B per-item scores (:func:`~probekit.studies.conceptual.scores.score_probe_b`) with the patched x̃0 and the
    filled x̃1 exchanged (``h_`` and ``conf_`` columns): ViLT's and BridgeTower's numbers as the authors' code
    computes them."""
    names = {}
    for prefix in ("h", "conf"):
        names[f"{prefix}_x0_patch"], names[f"{prefix}_x1_fill"] = f"{prefix}_x1_fill", f"{prefix}_x0_patch"
    return scored.rename(columns=names)[list(scored.columns)]
