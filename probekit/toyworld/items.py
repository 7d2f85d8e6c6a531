"""Small helpers the toy probe generators share: the size of a probe's items and the item table."""

from __future__ import annotations

import pandas as pd

from probekit.parameters import CommonParams, describe, out_of_bounds
from probekit.toyworld.sizes import DEFAULT_SIZE

#: the ``limit`` every study's parameters share: its bound (at least one item)
LIMIT = describe(CommonParams)["limit"]


def target_size(probe: str, limit: int | None) -> int:
    if limit is not None and (why := out_of_bounds(LIMIT, limit)):
        raise ValueError(f"limit {why} item or None, got {limit}")
    return DEFAULT_SIZE[probe] if limit is None else int(limit)


def frame(rows: list[dict], limit: int) -> pd.DataFrame:
    return pd.DataFrame(rows[:limit]).reset_index(drop=True)
