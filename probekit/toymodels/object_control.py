"""The toy zoo's single-object control: one object in view, its name against another object's name (chance 0.5).

A model that grounds object names at all picks the right one.  The items are the toy ``classify`` probe (one object
of random colour, size and pattern, in its typical scene 80% of the time; objects in turn); each image's wrong name
is another object, the k-th image's ``1 + k % 5`` places further in ``OBJECTS``.  The toy models' held-out record
(:mod:`probekit.toymodels.evaluate`) and the predicate–noun chapter's lab score the same control.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from probekit.datasets import load_dataset
from probekit.results import frame, row
from probekit.stats import bootstrap_ci
from probekit.toyworld.vocab import OBJECTS

PROBE = "single object"
N_ITEMS = 200
#: ``where`` of the control's row (:func:`rows`)
ROW = dict(probe=PROBE, condition="", subset="all", metric="accuracy")
WHAT = "single object: its name vs another object's (chance 0.5)"


def items(data_dir, seed: int = 0, n: int = N_ITEMS, split: str = "eval") -> pd.DataFrame:
    """The control's images with their right and wrong names (``right``, ``wrong``: "a <object>")."""
    found = load_dataset("classify", "toy", data_dir=data_dir, limit=n, seed=seed, split=split)
    labels = list(found["label"])
    wrong = [OBJECTS[(OBJECTS.index(label) + 1 + k % 5) % len(OBJECTS)] for k, label in enumerate(labels)]
    return found.assign(right=[f"a {label}" for label in labels], wrong=[f"a {w}" for w in wrong])


def two_way(scorer, images: Sequence, right: Sequence[str], wrong: Sequence[str]) -> np.ndarray:
    """Whether the scorer's choice head scores ``right[i]`` strictly above ``wrong[i]`` for ``images[i]`` (a tie
    fails: probekit's control, held to the predicate–noun rule)."""
    scores = scorer.choose_text(list(images), [[r, w] for r, w in zip(right, wrong)])
    return scores[:, 0] > scores[:, 1]


def rows(scorer, model: str, objects: pd.DataFrame, study: str, seed: int = 0) -> pd.DataFrame:
    """The control's accuracy for ``model`` (one row of :data:`ROW`, 95% bootstrap interval over images)."""
    won = two_way(scorer, objects["image"], objects["right"], objects["wrong"]).astype(float)
    ci = bootstrap_ci(won, seed=seed, ids=objects["item_id"].to_numpy())
    return frame([row(study=study, model=model, value=won.mean(), ci=ci, n=len(won), chance=0.5, **ROW)])
