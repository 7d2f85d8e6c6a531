"""The guided-masking discussion as claims: a pure function of the study's rows (``claims(rows, k)``).

Per masked-LM model: its full-image top-k accuracy (the paper's per-piece rule) against chance; each ablation's
paired drop (stated as a drop or a gain only when the paired interval excludes 0); the image's worth over the
text-only model (same); the paper's strict order full image > subject ablated > no image, checked on both paired
differences; and the chance and subject-ablation verdicts under the whole-word rule (``word_accuracy``).
Once: the order in the paper's own Table 2.  Per ITM model: its balanced and pooled average and its negative
accuracy under each ablation against the full image, compared by their intervals; nothing beyond what those
rows show.  Per model with both heads: its masked-LM head's two-way verb choice against its ITM head's choice on
the same verb pairs, by their paired difference (:mod:`probekit.metrics.head_choice`).

**The no-image condition.**  A model shown a blank image still reads the caption.  When its accuracy there is
below the text-only model's on the same captions (the paired ``image ablated − text only`` interval lies below 0),
the blank input does harm beyond removing the image's information, so the claims that rest on it (the drop to no
image, the paper's order) are :data:`NOT_COMPARABLE`: stated with their numbers and why, not judged.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from probekit.claims import HIGHER, Claim, LOWER, UNRESOLVED, claim, compare, difference, versus_chance
from probekit.metrics.head_choice import DIFF, ITM, MLM, ONLY, PROBE as CHOICE, SUBSET, discordant_count
from probekit.results import OURS, Row, one_or_none, select
from probekit.studies.lab import NOT_COMPARABLE

ORDER, BROKEN = "paper's order", "order broken"
MIXED = "mixed"
ABLATED = {"subject ablated": "the subject's patches", "image ablated": "the whole image"}

_CHANCE = {
    "above chance": "**{model}** finds the verb among its top {k} in {a} of captions with the full image, above "
                    "chance ({a.chance}: {k} of the probe's verbs named at random).",
    "below chance": "**{model}** finds the verb among its top {k} in {a} of captions with the full image, below "
                    "chance ({a.chance}).",
    UNRESOLVED: "**{model}** finds the verb among its top {k} in {a} of captions with the full image; at this n "
                "that is not resolved from chance ({a.chance}).",
    "no chance level": "**{model}** finds the verb among its top {k} in {a} of captions with the full image.",
}
_DROP = {
    HIGHER: "Blanking {what} lowers {model}'s top-{k} accuracy from {full.value} to {b.value}, a drop of {d.size} "
            "(paired bootstrap over the same captions).",
    LOWER: "Blanking {what} raises {model}'s top-{k} accuracy from {full.value} to {b.value}, a gain of {d.size} "
           "(paired bootstrap over the same captions).",
    UNRESOLVED: "Blanking {what} moves {model}'s top-{k} accuracy from {full.value} to {b.value} ({d}); the paired "
                "interval includes 0, so the change is not resolved at this n.",
}
_DAMAGED = ("Blanking {what} moves {model}'s top-{k} accuracy from {full.value} to {b.value}; not judged as the "
            "image's worth: without the image {model} falls below the text-only `{text}` on the same captions ({o}, "
            "paired), so the blank input does harm beyond removing the image.")
_TEXT = {
    HIGHER: "With the full image {model} beats the text-only `{text}` ({t}) by {d.size}.",
    LOWER: "The text-only `{text}` ({t}) beats {model} with the full image by {d.size}.",
    UNRESOLVED: "The text-only `{text}` reaches {t}; {model}'s difference with the full image, {d}, is not "
                "resolved at this n.",
}
_ORDER = {
    ORDER: "{model} keeps the paper's strict order full image > subject ablated > no image: both paired "
           "differences exclude 0 (full − subject ablated {d1}; subject ablated − no image {d2}).",
    BROKEN: "{model} does not keep the paper's order full image > subject ablated > no image: full − subject "
            "ablated is {d1} and subject ablated − no image is {d2}.",
    UNRESOLVED: "Whether {model} keeps the paper's order full image > subject ablated > no image is not resolved "
                "at this n (full − subject ablated {d1}; subject ablated − no image {d2}).",
    NOT_COMPARABLE: "Whether {model} keeps the paper's order full image > subject ablated > no image is not judged: "
                    "its no-image condition falls below the text-only `{text}` on the same captions ({o}, paired).",
}
_CHOICE = {
    HIGHER: "On the same verb pairs, {model}'s masked-LM head prefers the true verb to the verb negative's (the "
            "verb masked, the image shown) in {m}, its ITM head the true sentence in {i}: the masked-LM head is "
            "ahead by {d.size} (paired bootstrap; chance 50% for both). It alone is right on {mo} pairs, the ITM "
            "head alone on {io}.",
    LOWER: "On the same verb pairs, {model}'s ITM head prefers the true sentence to the verb negative's in {i}, its "
           "masked-LM head the true verb in {m} (the verb masked, the image shown): the ITM head is ahead by "
           "{d.size} (paired bootstrap; chance 50% for both). It alone is right on {io} pairs, the masked-LM head "
           "alone on {mo}.",
    UNRESOLVED: "On the same verb pairs, {model}'s masked-LM head prefers the true verb in {m} and its ITM head the "
                "true sentence in {i}; their paired difference, {d}, is not resolved at this n (the masked-LM head "
                "alone right on {mo} pairs, the ITM head alone on {io}).",
}
_CHOICE_CUE = {
    HIGHER: "On the verb pairs told apart only by {cue}, {model}'s masked-LM head is right in {m}, its ITM head in "
            "{i}: the masked-LM head is ahead by {d.size} (paired).",
    LOWER: "On the verb pairs told apart only by {cue}, {model}'s ITM head is right in {i}, its masked-LM head in "
           "{m}: the ITM head is ahead by {d.size} (paired).",
    UNRESOLVED: "On the verb pairs told apart only by {cue}, {model}'s masked-LM head is right in {m}, its ITM head "
                "in {i}; their paired difference, {d}, is not resolved at this n.",
}
_PAPER = {
    ORDER: "In the paper's Table 2 (SVO-Probes, top-5) each of its {n} region-feature models has full image > "
           "subject ablated > no image; its text-only BERT reaches {bert}.",
    MIXED: "In the paper's Table 2 (SVO-Probes, top-5) not every one of its {n} models has full image > subject "
           "ablated > no image; its text-only BERT reaches {bert}.",
}
_ITM = {
    HIGHER: "ITM ({model}), {what} blanked: accuracy {metric} {b}, higher than with the full image ({a}).",
    LOWER: "ITM ({model}), {what} blanked: accuracy {metric} {b}, lower than with the full image ({a}).",
    UNRESOLVED: "ITM ({model}), {what} blanked: accuracy {metric} {b} against {a} with the full image; the "
                "intervals overlap, so the change is not resolved at this n.",
}
_ITM_METRIC = {"avg": "averaged over positives and negatives (balanced)",
               "avg_pooled": "pooled over all pairs", "neg": "on negatives"}
_WORD_CHANCE = {
    "above chance": "Scored by whole words (the k most probable combinations of pieces), **{model}** reaches {a} "
                    "with the full image, above chance ({a.chance}).",
    "below chance": "Scored by whole words, **{model}** reaches {a} with the full image, below chance "
                    "({a.chance}).",
    UNRESOLVED: "Scored by whole words, **{model}** reaches {a} with the full image; not resolved from chance "
                "({a.chance}) at this n.",
    "no chance level": "Scored by whole words, **{model}** reaches {a} with the full image.",
}
_WORD_DROP = {
    HIGHER: "Scored by whole words, blanking the subject lowers {model}'s accuracy by {d.size}.",
    LOWER: "Scored by whole words, blanking the subject raises {model}'s accuracy by {d.size}.",
    UNRESOLVED: "Scored by whole words, blanking the subject moves {model}'s accuracy by {d}; the paired interval "
                "includes 0.",
}


def _find(rows: pd.DataFrame, **where: Any) -> pd.Series | None:
    return one_or_none(rows[rows["value"].notna()], **where)


def order_verdict(first_drop: Row, second_drop: Row) -> str:
    """The paper's order from two paired differences (full − subject ablated, subject ablated − no image)."""
    verdicts = (difference(first_drop), difference(second_drop))
    if LOWER in verdicts:
        return BROKEN
    return ORDER if verdicts == (HIGHER, HIGHER) else UNRESOLVED


def blank_damages(below_text: Row | None) -> bool:
    """Whether a model's paired ``image ablated − text only`` row (None: not run) lies below 0: without the image
    it reads the caption worse than the text-only model does."""
    return below_text is not None and difference(below_text) == LOWER


def _model_claims(top: pd.DataFrame, drops: pd.DataFrame, model: str, k: int) -> list[Claim]:
    full = _find(top, model=model, condition="full image")
    out = [claim(f"{model}: full image vs chance", versus_chance(full), _CHANCE, rows={"a": full}, model=model,
                 k=str(k))]
    o, t = _find(drops, model=model, condition="image ablated − text only"), _find(top, condition="text only")
    damaged, text = blank_damages(o), str(t["model"]) if t is not None else ""
    for condition, what in ABLATED.items():
        d, b = _find(drops, model=model, condition=f"full image − {condition}"), _find(top, model=model,
                                                                                        condition=condition)
        if d is not None and b is not None:
            blank = damaged and condition == "image ablated"
            rows = {"d": d, "full": full, "b": b, **({"o": o} if blank else {})}
            out.append(claim(f"{model}: full image − {condition}", NOT_COMPARABLE if blank else difference(d),
                             _DAMAGED if blank else _DROP, rows=rows, model=model, k=str(k), what=what, text=text))
    d = _find(drops, model=model, condition="full image − text only")
    if d is not None and t is not None:
        out.append(claim(f"{model}: full image − text only", difference(d), _TEXT, rows={"d": d, "t": t},
                         model=model, text=text))
    d1 = _find(drops, model=model, condition="full image − subject ablated")
    d2 = _find(drops, model=model, condition="subject ablated − image ablated")
    if d1 is not None and d2 is not None:
        out.append(claim(f"{model}: paper's order", NOT_COMPARABLE if damaged else order_verdict(d1, d2), _ORDER,
                         rows={"d1": d1, "d2": d2, **({"o": o} if damaged else {})}, model=model, text=text))
    return out


def _choice_claims(choice: pd.DataFrame) -> list[Claim]:
    """Per model with both heads' rows: the masked-LM head's verb choice against the ITM head's, paired, over every
    verb pair and then over the pairs of each cue (the rows' other subsets: what tells the two verbs apart)."""
    out = []
    for model in dict.fromkeys(choice["model"]):
        mine = choice[choice["model"] == model]
        whole = mine[mine["subset"] == SUBSET]
        found = {name: _find(whole, condition=c) for name, c in
                 (("m", MLM), ("i", ITM), ("d", DIFF), ("mo", ONLY[MLM]), ("io", ONLY[ITM]))}
        if any(r is None for r in found.values()):
            continue
        counts = {k: str(discordant_count(found[k])) for k in ("mo", "io")}
        out.append(claim(f"{model}: MLM head − ITM head, verb pairs", difference(found["d"]), _CHOICE,
                         rows={k: found[k] for k in ("m", "i", "d")}, model=model, **counts))
        for cue in dict.fromkeys(mine.loc[mine["subset"] != SUBSET, "subset"]):
            part = {name: _find(mine, subset=cue, condition=c) for name, c in (("m", MLM), ("i", ITM), ("d", DIFF))}
            if all(r is not None for r in part.values()):
                out.append(claim(f"{model}: MLM head − ITM head, verb pairs told apart by {cue}",
                                 difference(part["d"]), _CHOICE_CUE, rows=part, model=model, cue=cue))
    return out


def _word_claims(words: pd.DataFrame, word_drops: pd.DataFrame, model: str) -> list[Claim]:
    full = _find(words, model=model, condition="full image")
    if full is None:
        return []
    out = [claim(f"{model}: whole words, full image vs chance", versus_chance(full), _WORD_CHANCE,
                 rows={"a": full}, model=model)]
    d = _find(word_drops, model=model, condition="full image − subject ablated")
    if d is not None:
        out.append(claim(f"{model}: whole words, full image − subject ablated", difference(d), _WORD_DROP,
                         rows={"d": d}, model=model))
    return out


def _paper_claim(paper: pd.DataFrame) -> list[Claim]:
    table = paper[paper["source"].str.endswith("Table 2") & (paper["probe"] == "top-k")
                  & (paper["metric"] == "accuracy")]
    if not len(table):
        return []
    wide = table.pivot_table(index="model", columns="condition", values="value", aggfunc="first")
    bert = _find(table, condition="text only")
    models = wide.dropna(subset=list(ABLATED) + ["full image"])
    ordered = ((models["full image"] > models["subject ablated"])
               & (models["subject ablated"] > models["image ablated"])).all()
    return [claim("paper: order", ORDER if ordered else MIXED, _PAPER, rows={"bert": bert}, n=str(len(models)))]


def _itm_claims(itm: pd.DataFrame) -> list[Claim]:
    out = []
    for model in dict.fromkeys(itm["model"]):
        for condition, what in ABLATED.items():
            for metric, words in _ITM_METRIC.items():
                a = _find(itm, model=model, condition="full image", metric=metric)
                b = _find(itm, model=model, condition=condition, metric=metric)
                if a is None or b is None:
                    continue
                out.append(claim(f"{model}: ITM {metric}, {condition}", compare(b, a), _ITM, rows={"a": a, "b": b},
                                 model=model, what=what, metric=words))
    return out


def claims(rows: pd.DataFrame, k: int = 5) -> list[Claim]:
    """The discussion's claims from the study's rows (ours and the paper's)."""
    ours, paper = rows[rows["source"] == OURS], rows[rows["source"] != OURS]
    top = select(ours, probe="top-k", metric="accuracy", subset="all")
    drops = select(ours, probe="top-k", metric="accuracy_diff", subset="all")
    words = select(ours, probe="top-k", metric="word_accuracy", subset="all")
    word_drops = select(ours, probe="top-k", metric="word_accuracy_diff", subset="all")
    out = []
    for model in dict.fromkeys(select(top, condition="full image")["model"]):
        if _find(top, model=model, condition="full image") is not None:
            out += _model_claims(top, drops, model, k) + _word_claims(words, word_drops, model)
    out += _paper_claim(paper)
    out += _itm_claims(select(ours, probe="itm", subset="all"))
    return out + _choice_claims(select(ours, probe=CHOICE))
