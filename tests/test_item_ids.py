"""Items carry their ids (stats.Items.ids) from the interval to the lab's long item table (studies/lab_items.py), the
seeds' file (toymodels/seed_items.py) and pooling (studies/lab_pooling.py): another seed's values are matched to
this run's by id, refused when the ids differ, and matched by count and units where either names its items by
position only (a file written before ids)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from probekit.results import frame, row
from probekit.stats import aligned, bootstrap_ci
from probekit.studies import lab_items, lab_pooling
from probekit.studies.lab_pooled import pooled_row
from probekit.toymodels import seed_items

IDS = np.array([f"item-{i:02d}" for i in range(20)])
VALUES = np.random.default_rng(3).random(20)
LABELS = dict(study="verbs", probe="svo", model="toy-clip", metric="pairwise", condition="", subset="all")


def _items(values, ids=None, clusters=None) -> pd.DataFrame:
    """The long item table of one lab row over ``values`` (named by ``ids``; None: by position)."""
    ci = bootstrap_ci(values, n_resamples=50, seed=1, clusters=clusters, ids=ids)
    return lab_items.split(frame([row(**LABELS, value=float(np.mean(values)), ci=ci, n=len(values))])).items


def _pooled(there: pd.DataFrame, here: pd.DataFrame | None = None):
    """``_seeds_of`` of the row: this run (seed 0: ``here``, default VALUES named by IDS) pooled with seed 1."""
    mine = lab_items.arrays(_items(VALUES, IDS) if here is None else here)
    (k,) = mine
    r = {**dict(zip(lab_items.KEY, k)), "chance": 0.5}
    return lab_pooling._seeds_of(r, mine, {1: lab_items.arrays(there)}, 0)


def _expected(theirs: np.ndarray) -> dict:
    args = dict(n_resamples=50, seed=1, **LABELS, chance=0.5, source="ours")
    return pooled_row({0: VALUES, 1: theirs}, **args)


def test_aligned_puts_their_rows_on_my_items_in_any_order_and_refuses_other_ids():
    assert aligned(["a", "b", "c"], ["c", "a", "b"]).tolist() == [1, 2, 0]
    assert aligned([3, 1], ["1", "3"]).tolist() == [1, 0]   # ids compare as text (a file keeps them as text)
    assert aligned(["a", "a", "b"], ["b", "a", "a"]).tolist() == [1, 2, 0]   # an id held twice: in row order
    assert aligned(["a", "b", "c"], ["a", "b", "d"]) is None
    assert aligned(["a", "b"], ["a", "b", "c"]) is None


def test_an_interval_carries_its_ids_and_refuses_a_wrong_count():
    assert bootstrap_ci([1.0, 0.0, 1.0], ids=["x", "y", "z"]).items.ids.tolist() == ["x", "y", "z"]
    assert bootstrap_ci([1.0, 0.0, 1.0]).items.ids is None
    assert bootstrap_ci([1.0, 0.0], ids=["x", "y"]).scaled(100).items.ids.tolist() == ["x", "y"]
    with pytest.raises(ValueError, match="2 item ids for 3 rows"):
        bootstrap_ci([1.0, 0.0, 1.0], ids=["x", "y"])


def test_the_item_table_and_the_seeds_file_keep_the_ids_and_read_a_file_without_them(tmp_path):
    table = _items(VALUES[:4], IDS[:4], clusters=["u", "u", "v", "w"])
    assert table["item_id"].tolist() == IDS[:4].tolist()
    back = seed_items.read_file(seed_items.write(table.assign(seed=1), tmp_path / "items.parquet"))
    values, _, units, ids = lab_items.arrays(back.drop(columns="seed"))[tuple(LABELS[c] for c in lab_items.KEY)]
    assert values.tolist() == VALUES[:4].tolist() and ids.tolist() == IDS[:4].tolist()
    assert units.tolist() == ["u", "u", "v", "w"]
    old = back.drop(columns="item_id")   # a file written before items carried ids
    assert list(lab_items.arrays(old).values())[0][3] is None
    assert list(lab_items.arrays(_items(VALUES[:4])).values())[0][3] is None   # a caller without ids: by position


def test_another_seeds_values_in_another_order_are_pooled_item_by_item():
    order = np.random.default_rng(0).permutation(20)
    _, pooled = _pooled(_items(VALUES[order], IDS[order]))   # seed 1: this run's values, shuffled with their ids
    expected = _expected(VALUES)
    assert (pooled["ci_low"], pooled["ci_high"]) == (expected["ci_low"], expected["ci_high"])
    shuffled = _expected(VALUES[order])   # taken row by row, as count and units alone would
    assert (pooled["ci_low"], pooled["ci_high"]) != (shuffled["ci_low"], shuffled["ci_high"])


def test_another_seed_on_other_ids_of_the_same_count_is_not_pooled():
    other = IDS.copy()
    other[5] = "item-99"
    why = _pooled(_items(VALUES, other))
    assert why == f"seed 1 of {seed_items.ITEMS_FILE} was scored on other items than this run's 20 (other item ids)"


def test_without_ids_on_either_side_the_seeds_are_matched_by_count_and_units_as_before():
    _, pooled = _pooled(_items(VALUES[::-1]))   # an old file: no ids, rows taken in order
    expected = _expected(VALUES[::-1])
    assert (pooled["ci_low"], pooled["ci_high"]) == (expected["ci_low"], expected["ci_high"])
    assert _pooled(_items(VALUES[:19])) == (f"seed 1 of {seed_items.ITEMS_FILE} was scored on other items than this "
                                            "run's 20")
    units = np.repeat(["a", "b"], 10)
    here = _items(VALUES, clusters=units)
    assert isinstance(_pooled(_items(VALUES, clusters=units), here), tuple)
    assert isinstance(_pooled(_items(VALUES, clusters=units[::-1]), here), str)   # other units: other items


def test_ids_put_their_units_in_my_order_too():
    units = np.repeat(["a", "b", "c", "d"], 5)
    order = np.random.default_rng(1).permutation(20)
    here = _items(VALUES, IDS, clusters=units)
    assert isinstance(_pooled(_items(VALUES[order], IDS[order], clusters=units[order]), here), tuple)
    assert isinstance(_pooled(_items(VALUES[order], IDS[order], clusters=units), here), str)
