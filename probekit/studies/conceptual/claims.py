"""The conceptual study's discussion as claims: pure functions of the result rows (ours and the paper's).

A comparison between two of our numbers is stated only when the data resolves it (non-overlapping 95% intervals,
or a paired difference whose interval excludes 0); on drawn items (``drawn``: the toy world) a concept-difficulty
comparison (subject vs predicate swaps, object vs composition swaps) is decided by construction
(:data:`probekit.studies.lab.BY_CONSTRUCTION`): its numbers are shown, not compared.  The paper's facts are counted
from its rows (:func:`probekit.papers.conceptual.count`), never typed in.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from probekit.claims import HIGHER, LOWER, UNRESOLVED, Claim, Templates, claim, compare, difference, versus_chance
from probekit.metrics.background import ALL_FILLERS, ALL_MODELS
from probekit.papers.conceptual import PAPER, UNDONE, count, undo_readings
from probekit.results import OURS, Row, one_or_none, select
from probekit.studies.conceptual.pairs import PAIRS
from probekit.studies.lab import BY_CONSTRUCTION

REPORTED = "reported"  # the verdict of a claim that only repeats the paper's numbers


def _pair(topic: str, a: Row | None, b: Row | None, templates: Templates, drawn: bool = False, **words: str) -> list[Claim]:
    if a is None or b is None:
        return []
    return [claim(topic, BY_CONSTRUCTION if drawn else compare(a, b), templates, {"a": a, "b": b}, **words)]


def _pairs(ours: pd.DataFrame, probe: str, model: str, drawn: bool) -> list[Claim]:
    """``model``'s pairs of ``probe`` (:data:`~probekit.studies.conceptual.pairs.PAIRS`) in ``ours``, each claimed
    only where both its rows are."""
    out = []
    for topic, (subset_a, metric_a), (subset_b, metric_b), templates in PAIRS[probe]:
        a = one_or_none(ours, model=model, subset=subset_a, metric=metric_a)
        b = one_or_none(ours, model=model, subset=subset_b, metric=metric_b)
        out += _pair(f"{model}: {topic}", a, b, templates, drawn and BY_CONSTRUCTION in templates, model=model)
    return out


def probe_r_claims(rows: pd.DataFrame, models: Sequence[str], drawn: bool = False) -> list[Claim]:
    ours = select(rows, source=OURS, probe="probe-r", condition="")
    out = []
    for m in models:
        out += _pairs(ours, "probe-r", m, drawn)
        conf = one_or_none(ours, model=m, subset="predicate_swap", metric="mu_c")
        if conf is not None:
            out.append(claim(f"{m}: predicate-swap confidence", versus_chance(conf), {
                "above chance": "Its mean confidence in the true relation against an unlikely predicate, {a}, is "
                                "above the coin flip ({a.chance}).",
                "below chance": "Its mean confidence against an unlikely predicate, {a}, is below a coin flip.",
                UNRESOLVED: "Its mean confidence against an unlikely predicate, {a}, is not resolved from a coin "
                            "flip ({a.chance}): the paper's sign of a missing conceptual map."}, {"a": conf}))
    paper = select(rows, source=f"{PAPER}, Table 3")
    if len(paper):
        k, n = count(paper, dict(subset="subject_swap", metric="acc"), dict(subset="predicate_swap", metric="acc"))
        clip = select(paper, subset="predicate_swap", metric="acc")
        clip = clip[clip["model"].str.startswith("CLIP") & ~clip["model"].str.contains("Patched")]
        out.append(claim("paper: subject vs predicate swap", REPORTED,
                         "In the paper {k} of {n} models are more accurate on subject swaps than on predicate swaps, "
                         "and the original CLIPs' predicate-swap accuracy lies within {lo.value}–{hi.value}.",
                         {"lo": clip.loc[clip["value"].idxmin()], "hi": clip.loc[clip["value"].idxmax()]},
                         k=str(k), n=str(n)))
    return out


def probe_c_claims(rows: pd.DataFrame, models: Sequence[str], drawn: bool = False) -> list[Claim]:
    ours = select(rows, source=OURS, probe="probe-c", condition="")
    cats = select(rows, source=OURS, probe="probe-c-category", metric="group")
    out = []
    for m in models:
        out += _pairs(ours, "probe-c", m, drawn)
        mine = select(cats, model=m).dropna(subset=["value"])
        if len(mine) > 1:
            lo, hi = mine.loc[mine["value"].idxmin()], mine.loc[mine["value"].idxmax()]
            out += _pair(f"{m}: attribute categories", hi, lo, {
                HIGHER: "Its attribute categories range from {hard} ({b}) to {easy} ({a}), resolved apart (only "
                        "these two ends are compared).",
                LOWER: "",  # the maximum cannot lie below the minimum
                UNRESOLVED: "Its attribute categories, from {hard} ({b}) to {easy} ({a}), are not resolved apart."},
                easy=hi["subset"], hard=lo["subset"])
    paper = select(rows, source=f"{PAPER}, Table 4")
    if len(paper):
        k, n = count(paper, dict(subset="object", metric="group"), dict(subset="composition", metric="group"))
        t, _ = count(paper, dict(subset="composition", metric="text"), dict(subset="composition", metric="image"))
        out.append(claim("paper: object vs composition", REPORTED,
                         "In the paper the object-swap group score exceeds the composition-swap one for {k} of {n} "
                         "models, and the text score exceeds the image score on composition swaps for {t} of them.",
                         k=str(k), n=str(n), t=str(t)))
    return out


BELOW_CHANCE = "below chance"
_ANATOMY = ("`{model}`'s group score on {category} swaps, {a}, is below chance ({a.chance}, independent scores): not "
            "a scoring bug but its scores. In {one_image} of these {n} groups one image is preferred under both "
            "captions (image score 0) and in {one_caption} one caption under both images (text score 0; the caption "
            "preferred is \"{preferred}\" in {preferred_share} of those); the matched pairs outscore the swapped "
            "ones in {matched_higher}. Scores made of an image prior plus a caption prior, with no image–caption "
            "fit, would score 0 on every group.")


def anatomy_claims(rows: pd.DataFrame, anatomy: pd.DataFrame) -> list[Claim]:
    """One claim per model and attribute category whose Probe-C group score is resolved below chance, explained
    by :func:`probekit.metrics.conceptual_items.group_anatomy` (``anatomy``): how often one image, or one caption,
    is preferred whatever the other, which forces the text or image score, and so the group score, to 0."""
    from probekit.numbers import pct
    out = []
    cats = select(rows, source=OURS, probe="probe-c-category", metric="group")
    for _, a in anatomy.iterrows():
        r = one_or_none(cats, model=a["model"], subset=a["category"])
        if r is None or versus_chance(r) != BELOW_CHANCE:
            continue
        out.append(claim(f"{a['model']}: {a['category']} groups below chance", BELOW_CHANCE, _ANATOMY, {"a": r},
                         model=a["model"], category=a["category"], n=str(int(a["n"])), preferred=str(a["preferred"]),
                         **{k: pct(a[k]) for k in ("one_image", "one_caption", "preferred_share",
                                                    "matched_higher")}))
    return out


def _apart(verdicts: dict[str, str]) -> str:
    """Where the scene filler's γ lies among the others (``verdicts``: filler -> compare(scene, filler)): the
    fillers it is resolved above or below, and the rest."""
    of = {wanted: ", ".join(f for f, v in verdicts.items() if v == wanted) for wanted in (HIGHER, LOWER, UNRESOLVED)}
    parts = [("resolved above the γ of ", of[HIGHER]), ("resolved below the γ of ", of[LOWER]),
             ("not resolved from ", of[UNRESOLVED])]
    return "; ".join(words + fillers for words, fillers in parts if fillers)


def probe_b_claims(rows: pd.DataFrame, models: Sequence[str]) -> list[Claim]:
    multi = select(rows, source=OURS, probe="probe-b", metric="gamma", subset="(x0, x̃1)")
    single = select(rows, source=OURS, probe="probe-b-single", condition=ALL_FILLERS, metric="acc")
    out = []
    for m in models:
        g = select(multi, model=m).set_index("condition")
        if "scene" in g.index and len(g) > 1:
            others = [f for f in g.index if f not in ("scene", ALL_FILLERS)]
            verdicts = {f: compare(g.loc["scene"], g.loc[f]) for f in others}
            less = [f for f, v in verdicts.items() if v == HIGHER]
            more = [f for f, v in verdicts.items() if v == LOWER]
            verdict = HIGHER if len(less) == len(others) else LOWER if len(more) == len(others) else UNRESOLVED
            out.append(claim(f"{m}: scene filler", verdict, {
                HIGHER: "`{model}`: with an unrelated scene behind the objects γ is {a}, higher than with every "
                        "other filler: no sign that it expects objects in their usual context.",
                LOWER: "`{model}`: with an unrelated scene behind the objects γ is {a}, lower than with every other "
                       "filler: it leans on the usual context.",
                UNRESOLVED: "`{model}`: with an unrelated scene behind the objects γ is {a}: {apart}."},
                {"a": g.loc["scene"]}, model=m, apart=_apart(verdicts)))
        x0, x1 = one_or_none(single, model=m, subset="x0"), one_or_none(single, model=m, subset="x̃1")
        out += _pair(f"{m}: isolation", x1, x0, {
            HIGHER: "Alone on a filler, the target is recognised more often ({a}) than beside the image's other "
                    "objects on the same filler ({b}), as in the paper's Table 9.",
            LOWER: "Alone on a filler, the target is recognised less often ({a}) than beside the image's other "
                   "objects on the same filler ({b}), unlike the paper's Table 9.",
            UNRESOLVED: "The target alone on a filler ({a}) vs beside the image's other objects on the same filler "
                        "({b}): not resolved at this n."})
    objects = select(rows, source=OURS, probe="probe-b-object", model=ALL_MODELS).dropna(subset=["value"])
    if len(objects) > 1:
        top, low = objects.loc[objects["value"].idxmax()], objects.loc[objects["value"].idxmin()]
        direction = context_direction(objects["value"])
        most, least = (top, low) if direction != GAINED else (low, top)
        out += _pair("objects: context", most, least, _CONTEXT[direction], most=most["subset"],
                     least=least["subset"], top=top["subset"], low=low["subset"])
    return out


LOST, GAINED, MIXED = "lost", "gained", "mixed"
#: the Δc sentence by the signs of the objects' Δc (:func:`context_direction`); ``a`` is the object that changed
#: most in that direction (``most``), ``b`` the one that changed least (``least``)
_CONTEXT = {
    LOST: {HIGHER: "Every object loses confidence when the context is removed (Δc > 0, points): most **{most}** ({a}), "
                   "least {least} ({b}), resolved apart.",
           LOWER: "",   # a is the maximum
           UNRESOLVED: "Every object loses confidence when the context is removed (Δc > 0, points), from {least} ({b}) "
                       "to {most} ({a}), not resolved apart."},
    GAINED: {HIGHER: "",  # a is the minimum
             LOWER: "Every object gains confidence when the context is removed (Δc < 0, points): most **{most}** "
                    "({a}), least {least} ({b}), resolved apart.",
             UNRESOLVED: "Every object gains confidence when the context is removed (Δc < 0, points), from {least} "
                         "({b}) to {most} ({a}), not resolved apart."},
    MIXED: {HIGHER: "Removing the context does not move every object's confidence the same way (Δc, points; "
                    "positive: lost, negative: gained): Δc ranges from {low} ({b}) to **{top}** ({a}), resolved "
                    "apart.",
            LOWER: "",
            UNRESOLVED: "Removing the context does not move every object's confidence the same way (Δc, points; "
                        "positive: lost, negative: gained): Δc ranges from {low} ({b}) to {top} ({a}), not resolved "
                        "apart."},
}


def context_direction(values: Iterable[float]) -> str:
    """Whether removing the context loses (every Δc > 0) or gains (every Δc < 0) confidence over the objects' Δc
    ``values``, or neither for all of them (:data:`MIXED`)."""
    values = list(values)
    if all(v > 0 for v in values):
        return LOST
    return GAINED if all(v < 0 for v in values) else MIXED


def patching_claims(rows: pd.DataFrame, model: str, encoders: Sequence[str], alphas: Sequence[float]) -> list[Claim]:
    diffs = select(rows, source=OURS, probe="patching", model=model)
    names = {"text": "the text encoder (T)", "vision": "the vision encoder (V)", "both": "both encoders (VT)"}
    out = []
    for enc in encoders:
        for a in alphas:
            if a == 0:
                continue
            cond = f"{enc}, α = {a:g} − original"
            probe = one_or_none(diffs, condition=cond, subset="probe-r predicate_swap", metric="mu_c_diff")
            general = one_or_none(diffs, condition=cond, subset="general", metric="top1_diff")
            words = dict(who=names.get(enc, enc), alpha=f"{a:g}")
            if probe is not None:
                out.append(claim(f"{enc} α={a:g}: probe", difference(probe), {
                    HIGHER: "Fine-tuning {who}, patched at α = {alpha}: predicate-swap μ(c) rises ({a}, paired "
                            "over the same items).",
                    LOWER: "Fine-tuning {who}, patched at α = {alpha}: predicate-swap μ(c) falls ({a}, paired over "
                           "the same items).",
                    UNRESOLVED: "Fine-tuning {who}, patched at α = {alpha}: the change in predicate-swap μ(c), {a}, "
                                "is not resolved."}, {"a": probe}, **words))
            if general is not None:
                out.append(claim(f"{enc} α={a:g}: general task", difference(general), {
                    HIGHER: "The held-out task improves ({a}).",
                    LOWER: "The held-out task loses ({a}): the forgetting patching is meant to limit.",
                    UNRESOLVED: "The change on the held-out task, {a}, is not resolved: no forgetting shown at this "
                                "n."}, {"a": general}, **words))
    paper = select(rows, source=f"{PAPER}, Table 2")
    if len(paper):
        r, top1 = select(paper, subset="probe-r", metric="mu_c"), select(paper, subset="imagenet", metric="top1")
        base, t = "CLIP ViT B32", "CLIP Patched (T)"
        patched = top1[top1["model"].str.startswith("CLIP Patched")]
        least = patched.loc[patched["value"].idxmax()]
        out.append(claim("paper: patching", REPORTED,
                         "The paper (α = 0.2): Probe-R μ(c) of CLIP ViT-B/32 rises from {r0.value} to {r1.value} (T) "
                         "while ImageNet top-1 falls from {i0.value} to {i1.value}; {least} forgets least "
                         "({i2.value}).", {"r0": one_or_none(r, model=base), "r1": one_or_none(r, model=t),
                                            "i0": one_or_none(top1, model=base), "i1": one_or_none(top1, model=t), "i2": least},
                         least=least["model"]))
    return out


def corrected_paper(rows: pd.DataFrame) -> pd.DataFrame:
    """The paper's rows with its code's two readings undone (the untouched rows as printed)."""
    paper = rows[rows["source"].str.startswith(PAPER) & ~rows["source"].str.endswith(UNDONE)]
    fixed = undo_readings(paper)
    key = ["source", "probe", "model", "condition", "subset", "metric"]
    touched = set(map(tuple, fixed.assign(source=fixed["source"].str.removesuffix(UNDONE))[key].to_numpy()))
    kept = paper[[tuple(k) not in touched for k in paper[key].to_numpy()]]
    return pd.concat([kept, fixed.assign(source=fixed["source"].str.removesuffix(UNDONE))], ignore_index=True)


def readings_claims(rows: pd.DataFrame) -> list[Claim]:
    """Which of the paper's conclusions move when its code's readings are undone: the count of models whose text
    score beats their image score on composition swaps (FLAVA), and the most patch-sensitive model of Table 8,
    the lowest γ(x0, x̃0) (ViLT, BridgeTower)."""
    printed = select(rows, source=[f"{PAPER}, Table 4", f"{PAPER}, Table 8"])
    if not len(printed):
        return []
    fixed = corrected_paper(printed)
    text, image = dict(subset="composition", metric="text"), dict(subset="composition", metric="image")
    (k, n), (k2, _) = count(printed, text, image), count(fixed, text, image)
    out = [claim("paper: text vs image, reading undone", REPORTED,
                 "Text score above image score on composition swaps: {k} of {n} models as printed, {k2} of {n} "
                 "with FLAVA's two scores put back in place.", k=str(k), n=str(n), k2=str(k2))]
    where = dict(probe="probe-b", condition=ALL_FILLERS, metric="gamma", subset="(x0, x̃0)")
    a, b = select(printed, **where), select(fixed, **where)
    low_a, low_b = a.loc[a["value"].idxmin()], b.loc[b["value"].idxmin()]
    out.append(claim("paper: patch sensitivity, reading undone", REPORTED,
                     "Lowest γ(x0, x̃0), the most patch-sensitive model of Table 8: {m1} ({a.value}) as printed; "
                     "{m2} ({b.value}) with ViLT's and BridgeTower's x̃0 and x̃1 put back in place, where ViLT's "
                     "γ(x0, x̃0) is {v.value} and its γ(x0, x̃1) {w.value}.",
                     {"a": low_a, "b": low_b, "v": one_or_none(fixed, model="ViLT", **where),
                      "w": one_or_none(fixed, model="ViLT", **{**where, "subset": "(x0, x̃1)"})},
                     m1=" and ".join(a.loc[a["value"] == low_a["value"], "model"]),
                     m2=" and ".join(b.loc[b["value"] == low_b["value"], "model"])))
    return out


def sections(rows: pd.DataFrame, models: Sequence[str], finetune_model: str = "", encoders: Sequence[str] = (),
             alphas: Sequence[float] = (), drawn: bool = False) -> dict[str, list[Claim]]:
    """The chapter's claims per section, in page order: ``probe-r``, ``probe-c``, ``probe-b``, ``patching``
    (``drawn``: the items are the toy world's, where concept difficulty is decided by construction)."""
    return {"probe-r": probe_r_claims(rows, models, drawn), "probe-c": probe_c_claims(rows, models, drawn),
            "probe-b": probe_b_claims(rows, models), "readings": readings_claims(rows),
            "patching": patching_claims(rows, finetune_model, encoders, alphas) if finetune_model else []}
