"""The conceptual study's lab (:mod:`probekit.studies.lab`): the blind baseline's checks and the paper's claims on
the toy model zoo, scored on the chapter's own toy items with the study's functions.

* Checks: ``toy-bert-blind`` (the text alone, the image ignored) must not beat chance on Probe-C's Winoground
  text, image and group scores (counterbalanced: each caption is right for one of the two images).  Probe-R's wrong
  captions are unlikely relations by the paper's design ("whether V+L models have learned consistent conceptual
  models of what object relations are possible", section 3.1), so a text-only model that knows the world's
  statistics is meant to be able to beat chance there: its Probe-R rows are the probe's text floor (``FLOOR``),
  shown with their verdict against chance and not judged.
* Claims: fine-tuning CLIP on swap negatives raises Probe-R and Probe-C μ(c) (the α sweep's patched rows of
  ``finetune_model``, both encoders, against α = 0, with their paired difference), at a cost on the held-out task;
  fine-tuning the text encoder alone gains more on Probe-R and forgets more than the vision encoder alone (paired);
  each of these five at the paper's α = 0.2 (``PATCH_ALPHA``) and at α = 1 (:data:`ALPHAS`); hard swap negatives in
  pre-training help a dual encoder (``toy-clip-hardneg`` vs ``toy-clip``, paired over the same items); the paper's
  finding of section 4.4, that models perform about the same when their objects are put in random scenery (they do
  not use context): Probe-B Δc(x0, x̃1) with the background replaced by an unrelated scene, judged "no difference"
  by the equivalence test within ± :data:`CONTEXT_MARGIN` points (the zoo's training images show their first object
  in its typical scene 80% of the time, so the toy models could have learned to use it).

Lab rows never enter ``result.rows``.  Sweep rows are copied with the model renamed ``<model>, <condition>`` and
Probe-B rows ``<model>, <subset>``, so the claims table tells α = 1 from α = 0 and x0 from x̃1.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from probekit.metrics import conceptual as mc
from probekit.papers import effect, conceptual as the_paper
from probekit.papers.conceptual import PATCH_ALPHA, patch_condition
from probekit.results import concat, empty, select
from probekit.scorers.base import Scorer
from probekit.studies.lab_items import Key
from probekit.studies.conceptual import scores as cs, patching
from probekit.claims import UNRESOLVED, Claim
from probekit.studies.lab import (BLIND, CHANCE_MARGIN, CONTROL, FLOOR, HIGHER, KNOCK_IN, LOWER, NO_DIFFERENCE, PARENT,
                                  TARGET, Check, PaperClaim)
from probekit.toyworld import classify

#: the models whose Probe-B rows the lab reads: the claims' (trained with objects in their typical scene 80% of the
#: time) and its knock-in (always), the probe's positive control
PROBE_B_MODELS = ("toy-clip", "toy-clip-scenealways")
KNOCK_IN_MODEL = PROBE_B_MODELS[1]
#: the text-only model whose Probe-R rows are the probe's text floor
BLIND_MODEL = "toy-bert-blind"
#: (a, b) pairs of the zoo compared item by item (probe ``PAIRED``, condition ``a − b``): the hard-negative claim's
#: pair, and each image model against the text floor (:func:`floor_claims`)
PAIRS = (("toy-clip-hardneg", "toy-clip"), ("toy-vilt", BLIND_MODEL), ("toy-clip", BLIND_MODEL))
PAIRED = "lab paired"
#: the sweep rows the claims read: ``finetune_model`` (the chapter's default) with both encoders trained (VT)
SWEEP_MODEL, ENCODERS = "toy-clip", "both"
SOURCE = "Schiappa et al. 2023"
#: the patching weights the sweep's claims are judged at: the paper's (its "CLIP Patched" models) and the full
#: fine-tune
ALPHAS = (PATCH_ALPHA, 1)
#: "about the same" for Probe-B's Δc(x0, x̃1), in points: the paired difference's 95% interval within ± this margin
#: (the lab's chance margin, 5 points, as an equivalence test)
CONTEXT_MARGIN = 100 * CHANCE_MARGIN

R_PRED = dict(probe="probe-r", condition="", subset="predicate_swap")
C_COMP = dict(probe="probe-c", condition="", subset="composition")
SCENE = dict(probe="probe-b", condition="scene")   # multi-object images, background replaced by an unrelated scene

#: the chapter's knock-out and its parent: captions never name a colour, size or pattern, so nothing in training
#: tells Probe-C's composition swaps apart (the same object with an attribute or its antonym); its object swaps (the
#: attribute shared, the objects different) are its control.  μ(c) is 0.5 exactly for a model whose choice between
#: the two captions ignores the image (its two images' confidences add to 1), as triplet accuracy is for binding
NO_ATTR = ("toy-clip-noattr", "toy-clip")
_MU_C = "μ(c), each image's confidence in its own caption"
NO_ATTR_CHECKS = [
    *[Check(model, role, f"Probe-C composition swaps (an attribute vs its antonym): {_MU_C}",
            {**C_COMP, "metric": "mu_c"}) for model, role in zip(NO_ATTR, (TARGET, PARENT))],
    Check(NO_ATTR[0], CONTROL, f"Probe-C object swaps (the attribute shared): {_MU_C}",
          {**C_COMP, "subset": "object", "metric": "mu_c"}),
]

CHECKS = [
    *NO_ATTR_CHECKS,
    Check(f"{KNOCK_IN_MODEL}, (x0, x̃1)", KNOCK_IN, "Probe-B: the confidence change Δc(x0, x̃1) when the background is "
          "replaced by an unrelated scene (points; above 0 when the model uses the scene)",
          dict(SCENE, subset="(x0, x̃1)", metric="delta_c_pts")),
    Check("toy-bert-blind", FLOOR, "Probe-R: true relation vs unlikely predicate (accuracy)",
          {**R_PRED, "metric": "acc"}),
    Check("toy-bert-blind", FLOOR, "Probe-R: true relation vs unlikely subject (accuracy)",
          dict(probe="probe-r", condition="", subset="subject_swap", metric="acc")),
    # a 2x2 group: a text-only scorer prefers the same caption under both images (text score 0) and ties
    # between the images under each caption (image score 0), whatever it learned
    *[Check("toy-bert-blind", BLIND, f"Probe-C composition swaps: {m} score", {**C_COMP, "metric": m},
            by_construction=True)
      for m in ("text", "image", "group")],
]


def _swept(alpha: float, diff: bool = False, encoders: str = ENCODERS, against: str = patching.ORIGINAL) -> str:
    return f"{SWEEP_MODEL}, {patch_condition(encoders, alpha)}" + (f" − {against}" if diff else "")


def _at(alpha: float) -> str:
    return f" (at α = {alpha:g}{', the paper’s' if alpha == PATCH_ALPHA else ''})"


#: the paper's Table 2: its column for each sweep subset, and its model for each fine-tuned encoder (and the original)
_TABLE2 = {"probe-r predicate_swap": "probe-r", "probe-c composition": "probe-c composition", "general": "imagenet"}
_PATCHED = {"both": "CLIP Patched (VT)", "text": "CLIP Patched (T)", "vision": "CLIP Patched (V)",
            patching.ORIGINAL: "CLIP ViT B32"}


def paper_effect(a: str, b: str, subset: str, metric: str) -> float:
    """The paper's own effect on ``subset`` (Table 2, its patched models at α = 0.2): encoders ``a`` − ``b`` (or
    :data:`probekit.studies.conceptual.patching.ORIGINAL`), as a fraction."""
    where = dict(probe="patching", condition="", subset=_TABLE2[subset], metric=metric)
    return effect(the_paper, {**where, "model": _PATCHED[a]}, {**where, "model": _PATCHED[b]})


def _sweep_claim(claim: str, subset: str, metric: str, expect: str, alpha: float) -> PaperClaim:
    """The fine-tune (both encoders) patched at ``alpha`` against the original, paired over the same items; at
    the paper's α beside the paper's effect."""
    where = dict(probe="patching", subset=subset)
    return PaperClaim(claim + _at(alpha), f"{SOURCE}, Table 2 and Table 10", a=(_swept(alpha), {**where,
                      "metric": metric}), b=(_swept(0), {**where, "metric": metric}), expect=expect,
                      diff=(_swept(alpha, diff=True), {**where, "metric": f"{metric}_diff"}),
                      paper_effect=paper_effect(ENCODERS, patching.ORIGINAL, subset, metric)
                      if alpha == PATCH_ALPHA else None)


def _encoders_claim(claim: str, subset: str, metric: str, expect: str, alpha: float) -> PaperClaim:
    """The text encoder's fine-tune against the vision encoder's (both patched at ``alpha``), paired over the same
    items; testable only where each fine-tune learned what it was trained on (swap negatives): its own Probe-R μ(c)
    gain over the original resolved above 0."""
    (t, v), where = patching.ENCODER_PAIRS[0], dict(probe="patching", subset=subset)
    return PaperClaim(claim + _at(alpha), f"{SOURCE}, section 5, Table 2 and appendix B",
                      a=(_swept(alpha, encoders=t), {**where, "metric": metric}),
                      b=(_swept(alpha, encoders=v), {**where, "metric": metric}), expect=expect,
                      diff=(_swept(alpha, True, t, against=patch_condition(v, alpha)),
                            {**where, "metric": f"{metric}_diff"}),
                      learned=tuple((_swept(alpha, True, e), dict(probe="patching", subset="probe-r predicate_swap",
                                                                  metric="mu_c_diff")) for e in (t, v)),
                      paper_effect=paper_effect(t, v, subset, metric) if alpha == PATCH_ALPHA else None)


def _b(view: str) -> str:
    return f"{PROBE_B_MODELS[0]}, {view}"


def _hardneg_claim(claim: str, subset: str) -> PaperClaim:
    a, b = PAIRS[0]
    probe, split = subset.split(" ")
    return PaperClaim(claim, f"{SOURCE}, section 5 and Table 2 (the same idea applied in pre-training)",
                      a=(a, dict(probe=probe, condition="", subset=split, metric="mu_c")),
                      b=(b, dict(probe=probe, condition="", subset=split, metric="mu_c")), expect=HIGHER,
                      diff=(a, dict(probe=PAIRED, condition=f"{a} − {b}", subset=subset, metric="mu_c_diff")))


_SWEEP = [("Fine-tuning CLIP on swap negatives improves its relational understanding (Probe-R μ(c))",
           "probe-r predicate_swap", "mu_c", HIGHER),
          ("Fine-tuning CLIP on swap negatives improves its compositional understanding (Probe-C μ(c))",
           "probe-c composition", "mu_c", HIGHER),
          ("The fine-tuned CLIP pays with a drop in general classification accuracy (the held-out task: "
           f"{classify.GENERAL_TASK}, top-1)", "general", "top1", LOWER)]
_ENCODERS = [("Fine-tuning the text encoder alone improves relational understanding more than fine-tuning the vision "
              "encoder alone (Probe-R μ(c) 71.14 vs 61.40, patched)", "probe-r predicate_swap", "mu_c", HIGHER),
             ("Fine-tuning the text encoder alone forgets more than fine-tuning the vision encoder alone (ImageNet "
              "top-1 57.85 vs 61.45, patched; here the held-out task, top-1)", "general", "top1", LOWER)]
#: the paper's finding of section 4.4 (its Summary, point 4; section 6 repeats it), quoted
CONTEXT_FINDING = ("“When objects are placed in random scenery that violates-expectation, models still perform "
                   "similarly to when the original background is there, this may indicate that overall, models are "
                   "not learning conceptual maps relating objects to their context”")

CLAIMS = [
    *[_sweep_claim(*c, alpha) for c in _SWEEP for alpha in ALPHAS],
    *[_encoders_claim(*c, alpha) for c in _ENCODERS for alpha in ALPHAS],
    _hardneg_claim("Training with selective (swap) negatives enforces relational learning in a dual encoder "
                   "without co-attention (Probe-R μ(c))", "probe-r predicate_swap"),
    _hardneg_claim("Training with selective (swap) negatives enforces compositional learning in a dual encoder "
                   "without co-attention (Probe-C μ(c))", "probe-c composition"),
    PaperClaim(f"{CONTEXT_FINDING} (here: the confidence change Δc(x0, x̃1) with the background replaced by an "
               f"unrelated scene is 0 within ± {CONTEXT_MARGIN:g} points; the zoo's training images show their first "
               "object in its typical scene 80% of the time)",
               f"{SOURCE}, section 4.4 (Summary) and section 6",
               a=(_b("x0"), dict(SCENE, subset="x0", metric="map")),
               b=(_b("x̃1"), dict(SCENE, subset="x̃1", metric="map")), expect=NO_DIFFERENCE, margin=CONTEXT_MARGIN,
               diff=(_b("(x0, x̃1)"), dict(SCENE, subset="(x0, x̃1)", metric="delta_c_pts"))),
]


_FLOOR = {HIGHER: "Against the probe's text floor rather than the coin flip: on the same {d.n} predicate swaps "
                  "`{model}` is right in {a}, the text-only `{blind}` in {f}; paired over the items, {model} is "
                  "{d.size} above the floor.",
          LOWER: "Against the probe's text floor rather than the coin flip: on the same {d.n} predicate swaps "
                 "`{model}` is right in {a}, below the text-only `{blind}` ({f}) by {d.size}, paired over the items.",
          UNRESOLVED: "Against the probe's text floor rather than the coin flip: on the same {d.n} predicate swaps "
                      "`{model}` is right in {a} and the text-only `{blind}` in {f}; the paired difference, {d}, "
                      "is not resolved from 0, so the image adds nothing shown beyond the caption's plausibility."}


def floor_claims(rows: pd.DataFrame, models: Sequence[str]) -> list[Claim]:
    """Probe-R predicate swaps judged against the text floor (:data:`BLIND_MODEL`'s accuracy on the same items),
    by the paired difference of the lab's rows (probe ``PAIRED``, metric ``acc_diff``): higher / lower when its
    95% interval excludes 0, else not resolved."""
    from probekit.claims import claim, difference
    from probekit.studies.lab import find
    out = []
    for m in models:
        d = find(rows, m, dict(probe=PAIRED, condition=f"{m} − {BLIND_MODEL}", subset="probe-r predicate_swap",
                               metric="acc_diff"))
        a, f = find(rows, m, {**R_PRED, "metric": "acc"}), find(rows, BLIND_MODEL, {**R_PRED, "metric": "acc"})
        if d is not None and a is not None and f is not None:
            out.append(claim(f"{m}: predicate swaps vs the text floor", difference(d), _FLOOR,
                             {"d": d, "a": a, "f": f}, model=m, blind=BLIND_MODEL))
    return out


def swept_name(model: str, condition: str) -> str:
    """A sweep row's model in the lab: ``<model>, <condition>``, so the claims table tells α = 1 from α = 0."""
    return f"{model}, {condition}"


def swept_keys(each: Mapping[Key, dict[int, dict[str, Any]] | None]) -> dict[Key, dict[int, dict[str, Any]] | None]:
    """The sweep's per-seed rows (:func:`probekit.studies.conceptual.finetune_seeds.pool`) under the keys and model names the
    lab gives them (:func:`swept_name`)."""
    def named(r: Mapping[str, Any]) -> dict[str, Any]:
        return {**r, "model": swept_name(r["model"], r["condition"])}
    return {(k[0], k[1], swept_name(k[2], k[3]), *k[3:]): None if e is None else {s: named(r) for s, r in e.items()}
            for k, e in each.items()}


def lab_rows(items: dict[str, pd.DataFrame], lab_models: Sequence[str], *, load: Callable[[str], Scorer], seed: int = 0,
             scored: dict[str, pd.DataFrame] | None = None, sweep: pd.DataFrame | None = None,
             probe_b: Callable[[list[str]], pd.DataFrame] | None = None) -> pd.DataFrame:
    """The lab's rows: Probe-R and Probe-C of every lab model on ``items`` (``{"probe-r": ..., "probe-c": ...}``,
    the chapter's toy items), paired differences of :data:`PAIRS`, the sweep's rows renamed, and Probe-B rows of
    :data:`PROBE_B_MODELS`.  ``scored`` holds the main run's per-item tables (models in them are not scored twice),
    ``load(name)`` gives a scorer for the others, ``probe_b(models)`` the Probe-B rows of those models."""
    lab_models = list(dict.fromkeys(lab_models))
    scored = scored or {}
    per: dict[str, dict[str, Any]] = {"probe-r": {}, "probe-c": {}}
    for probe, score in (("probe-r", cs.score_probe_r), ("probe-c", cs.score_probe_c)):
        done = scored.get(probe, empty())
        for m in lab_models:
            mine = done[done["model"] == m] if len(done) else done
            per[probe][m] = mine if len(mine) else score(load(m), items[probe])
    parts = [mc.probe_r_rows(pd.concat(per["probe-r"].values(), ignore_index=True), seed),
             mc.probe_c_rows(pd.concat(per["probe-c"].values(), ignore_index=True), seed)]
    for a, b in PAIRS:
        if a in lab_models and b in lab_models:
            parts.append(patching.paired_rows({p: per[p][a] for p in per}, {p: per[p][b] for p in per}, a, a, seed,
                                              probe=PAIRED, against=b))
    if sweep is not None and len(sweep):
        parts.append(sweep.assign(model=[swept_name(m, c) for m, c in zip(sweep["model"], sweep["condition"])]))
    wanted = [m for m in PROBE_B_MODELS if m in lab_models]
    if probe_b is not None and wanted:
        b = select(probe_b(wanted), probe="probe-b", model=wanted)
        parts.append(b.assign(model=b["model"] + ", " + b["subset"]))
    return concat(parts)
