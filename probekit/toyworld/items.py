"""Small helpers the toy probe generators share: default sizes and the item table."""

from __future__ import annotations

import pandas as pd

#: items per probe when ``limit`` is None: the toy chapters' sizes (sized for the book's CPU budget; the verbs'
#: and the predicate-noun items hold at least 400 of each part of their hard probe, verb negatives told apart by the
#: object's place and by the pose, look-alike pairs and the others)
DEFAULT_SIZE = {"verbs": 1240, "prednoun": 1600, "masking": 600, "probe-r": 480, "probe-c": 160, "probe-b": 360,
                "classify": 120, "classify-pairs": 396}


def target_size(probe: str, limit: int | None) -> int:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be a positive number of items or None, got {limit}")
    return DEFAULT_SIZE[probe] if limit is None else int(limit)


def frame(rows: list[dict], limit: int) -> pd.DataFrame:
    return pd.DataFrame(rows[:limit]).reset_index(drop=True)
