"""The predicate–noun discussion as claims, one pure function of the result rows (tested on hand-made rows).

Per model, on full images with the default template:

* ``"<model>: vs chance"``: pair accuracy against chance (0.25), :func:`probekit.claims.versus_chance`;
* ``"<model>: crop gain"``: the paired difference cropped − full, stated only when its interval excludes 0;
* ``"<model>: nouns vs predicates"``: noun-swap against predicate-swap pairs, stated only when their intervals
  do not overlap (different pairs, so :func:`probekit.claims.compare`);
* ``"<model>: strongest confound"``: the factor with the largest |r|, stated only when its interval excludes 0;
* ``"<model>: undefined confounds"`` (verdict ``undefined``): factors whose r cannot be computed.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from probekit.claims import ABOVE, BELOW, HIGHER, LOWER, UNRESOLVED, Claim, claim, compare, difference, \
    versus_chance
from probekit.results import OURS, one, select

UNDEFINED = "undefined"
CROP_GAIN = "cropped − full"

_CHANCE = {ABOVE: "**{model}** gets {a} of pairs right on full images, above chance ({a.chance}).",
           BELOW: "**{model}** gets {a} of pairs right on full images, below chance ({a.chance}).",
           UNRESOLVED: "**{model}** gets {a} of pairs right on full images: not distinguishable from chance "
                       "({a.chance}) at this n."}
_CROP = {HIGHER: "Cropping the image to the target raises {model}'s pair accuracy by {d.size} (paired over the same "
                 "pairs; {c} cropped).",
         LOWER: "Cropping the image to the target lowers {model}'s pair accuracy by {d.size} (paired over the same "
                "pairs; {c} cropped).",
         UNRESOLVED: "Cropping the image to the target changes {model}'s pair accuracy by {d} ({c} cropped): "
                     "not resolved at this n."}
_SWAPS = {HIGHER: "Noun swaps ({a}) are easier for {model} than predicate swaps ({b}).",
          LOWER: "Noun swaps ({a}) are harder for {model} than predicate swaps ({b}).",
          UNRESOLVED: "{model}, noun swaps ({a}) vs predicate swaps ({b}): the difference is not resolved at "
                      "this n."}
_CONFOUND = {HIGHER: "The strongest confound of {model} is {factor}: r = {a} (bootstrap interval over pairs), so "
                     "the larger the target's {factor} relative to the distractor's, the more it prefers the target "
                     "sentence.",
             LOWER: "The strongest confound of {model} is {factor}: r = {a} (bootstrap interval over pairs), so "
                    "the smaller the target's {factor} relative to the distractor's, the more it prefers the target "
                    "sentence.",
             UNRESOLVED: "No confound of {model} is resolved at this n: the strongest, {factor}, has r = {a} "
                         "(bootstrap interval over pairs), which includes 0."}
_UNDEFINED = ("Undefined for {model}: {factors} (the difference is the same for every triplet, or a score "
              "is, so there is nothing to correlate).")


def _pair_row(ours: pd.DataFrame, model: str, condition: str, subset: str = "all") -> pd.Series:
    return one(ours, probe="pairs", model=model, condition=condition, subset=subset, metric="pair_accuracy")


def claims(rows: pd.DataFrame, models: Sequence[str] | None = None) -> list[Claim]:
    """The discussion of ``models`` (default: every model of ours scored on cropped images), from ``rows``."""
    ours = rows[rows["source"] == OURS]
    if models is None:
        models = list(dict.fromkeys(select(ours, probe="pairs", condition="cropped")["model"]))
    out = []
    for m in models:
        full = _pair_row(ours, m, "full")
        out.append(claim(f"{m}: vs chance", versus_chance(full), _CHANCE, {"a": full}, model=m))
        gain = one(ours, probe="pairs", model=m, condition=CROP_GAIN, subset="all", metric="pair_accuracy_diff")
        out.append(claim(f"{m}: crop gain", difference(gain), _CROP, {"d": gain, "c": _pair_row(ours, m, "cropped")},
                         model=m))
        noun, predicate = _pair_row(ours, m, "full", "noun"), _pair_row(ours, m, "full", "predicate")
        out.append(claim(f"{m}: nouns vs predicates", compare(noun, predicate), _SWAPS,
                         {"a": noun, "b": predicate}, model=m))
        r = select(ours, probe="confounds", model=m, metric="r")
        defined = r[[not math.isnan(v) for v in r["value"]]]
        if len(defined):
            strongest = defined.loc[defined["value"].abs().idxmax()]
            out.append(claim(f"{m}: strongest confound", difference(strongest), _CONFOUND, {"a": strongest},
                             model=m, factor=strongest["subset"]))
        if len(defined) < len(r):
            undefined = [f for f in r["subset"] if f not in set(defined["subset"])]
            out.append(claim(f"{m}: undefined confounds", UNDEFINED, _UNDEFINED, model=m,
                             factors=", ".join(undefined)))
    return out
