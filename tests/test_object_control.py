"""The single-object control: each image's wrong name is another object, and a trained toy model names the object."""

from __future__ import annotations

import pytest

from probekit.results import one
from probekit.scorers import load_scorer
from probekit.toymodels import object_control
from probekit.toyworld.vocab import OBJECTS


def test_every_image_gets_its_own_name_and_another_objects(tmp_path):
    items = object_control.items(tmp_path, seed=0, n=60)
    assert len(items) == 60 and set(items["label"]) == set(OBJECTS)
    assert (items["right"] == "a " + items["label"]).all() and (items["right"] != items["wrong"]).all()
    assert set(items["wrong"]) == {f"a {o}" for o in OBJECTS}   # every object is somebody's wrong name
    again = object_control.items(tmp_path, seed=0, n=60)
    assert again[["image", "wrong"]].equals(items[["image", "wrong"]])


def test_a_trained_dual_encoder_names_the_object_and_the_row_says_how_sure(tmp_path):
    items = object_control.items(tmp_path, seed=0, n=40)
    rows = object_control.rows(load_scorer("toy-clip", device="cpu", cache_dir=False), "toy-clip", items, "prednoun")
    r = one(rows, model="toy-clip", **object_control.ROW)
    assert r["value"] >= 0.9 and r["ci_low"] <= r["value"] <= r["ci_high"] and (r["n"], r["chance"]) == (40, 0.5)
    # the same images with the two names swapped: the model now picks the wrong one as often as it picked right
    swapped = items.assign(right=items["wrong"], wrong=items["right"])
    flipped = object_control.rows(load_scorer("toy-clip", device="cpu", cache_dir=False), "toy-clip", swapped, "x")
    assert flipped["value"].iloc[0] == pytest.approx(1 - r["value"])
