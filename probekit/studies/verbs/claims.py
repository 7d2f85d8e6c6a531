"""The verbs chapter's discussion: claims decided from result rows and their 95% intervals, nothing else.

Per model with thresholded rows (condition "threshold <t>"):

* ``<model>: positives vs negatives``: :func:`~probekit.claims.compare` of accuracy on all positives and all
  negatives (``higher``: it accepts more than it rejects; ``lower``: the reverse), quoting the paper's MMT;
* ``<model>: order of negative types``: average accuracy per negative type against the paper's order
  verb < subject < object (:data:`probekit.papers.svo_probes.NEGATIVE_ORDER`), each pair compared by its
  intervals: ``paper's order`` when verb < subject and subject < object are both resolved, ``not the paper's
  order`` when some pair is resolved the other way, else ``not resolved``.

Per model:

* ``<model>: pairwise vs chance``: :func:`~probekit.claims.versus_chance` of pairwise accuracy on all triples,
  quoting verb negatives with their own verdict;
* ``<model>: hardest vs easiest verb`` (when two or more verbs are ranked): ``lower`` when the lowest-scoring
  verb's interval lies wholly below the highest-scoring verb's, else ``not resolved`` (then no verb is
  resolved as the hardest or the easiest: either would have to lie apart from the other extreme).
"""

from __future__ import annotations

from itertools import combinations

import pandas as pd

from probekit.claims import HIGHER, LOWER, UNRESOLVED, Claim, claim, compare, versus_chance
from probekit.metrics import itm
from probekit.papers import svo_probes
from probekit.results import OURS, one, select

PAPERS_ORDER, NOT_PAPERS_ORDER = "paper's order", "not the paper's order"
_PAPER_MODEL = "MMT"

_BIAS = {
    HIGHER: "**{model}** (ITM at threshold {threshold}): average accuracy {avg}; it accepts more than it rejects, "
            "positives {pos} against negatives {neg}, intervals apart.",
    LOWER: "**{model}** (ITM at threshold {threshold}): average accuracy {avg}; it rejects more than it accepts, "
           "negatives {neg} against positives {pos}, intervals apart.",
    UNRESOLVED: "**{model}** (ITM at threshold {threshold}): average accuracy {avg}; positives {pos} and "
                "negatives {neg} are not told apart by their intervals at this n.",
}
_BIAS_PAPER = " The paper's MMT: average {p_avg.value}, positives {p_pos.value}, negatives {p_neg.value}."
_ORDER = ("By negative type, **{model}**'s average accuracy is {verb} on verb, {subject} on subject and {object} "
          "on object negatives; resolved by the 95% intervals: {resolved}; not resolved at this n: {unresolved}. ")
_ORDER_VERDICT = {
    PAPERS_ORDER: "This is the paper's order, verb < subject < object",
    NOT_PAPERS_ORDER: "This departs from the paper's order, verb < subject < object",
    UNRESOLVED: "Whether it follows the paper's order, verb < subject < object, is not resolved at this n",
}
_ORDER_PAPER = " (MMT: {p_verb.value}, {p_subject.value}, {p_object.value})."
_PAIRWISE = {
    "above chance": "**{model}** prefers the positive image in {a} of triples, above chance ({a.chance}); on verb "
                    "negatives in {b}, {verb_verdict}.",
    "below chance": "**{model}** prefers the positive image in {a} of triples, below chance ({a.chance}); on verb "
                    "negatives in {b}, {verb_verdict}.",
    UNRESOLVED: "**{model}** prefers the positive image in {a} of triples, not told apart from chance "
                "({a.chance}) at this n; on verb negatives in {b}, {verb_verdict}.",
}
_VERSUS = {"above chance": "above chance", "below chance": "below chance",
           UNRESOLVED: "not told apart from chance at this n", "no chance level": "with no chance level"}
_VERBS = {
    LOWER: "**{model}**'s hardest verb is *{hard_verb}* at {hard} and its easiest *{easy_verb}* at {easy} "
           "({what}), intervals apart.",
    UNRESOLVED: "**{model}**'s verbs range from *{hard_verb}* at {hard} to *{easy_verb}* at {easy} ({what}); even "
                "these two are not separated by their intervals, so no verb is resolved as the hardest or the "
                "easiest at this n.",
}


def _paper(rows: pd.DataFrame, subsets_metrics: dict[str, tuple[str, str]]) -> dict[str, pd.Series]:
    """The paper's MMT rows to quote (Table 4), by name; none when any is missing (then nothing is quoted)."""
    found = {name: select(rows, source=f"{svo_probes.PAPER}, Table 4", model=_PAPER_MODEL, subset=subset,
                          metric=metric) for name, (subset, metric) in subsets_metrics.items()}
    return {name: r.iloc[0] for name, r in found.items()} if all(len(r) == 1 for r in found.values()) else {}


def positives_vs_negatives(model: str, thresholded: pd.DataFrame, rows: pd.DataFrame, threshold: float) -> Claim:
    quoted = {m: one(thresholded, subset="all", metric=m) for m in ("avg", "pos", "neg")}
    paper = _paper(rows, {f"p_{m}": ("all", m) for m in ("avg", "pos", "neg")})
    templates = {k: v + (_BIAS_PAPER if paper else "") for k, v in _BIAS.items()}
    return claim(f"{model}: positives vs negatives", compare(quoted["pos"], quoted["neg"]), templates,
                 {**quoted, **paper}, model=model, threshold=f"{threshold:g}")


def negative_order(model: str, thresholded: pd.DataFrame, rows: pd.DataFrame) -> Claim:
    """Average accuracy per negative type against the paper's verb < subject < object, pair by pair."""
    avgs = {t: one(thresholded, subset=t, metric="avg") for t in itm.NEG_TYPES}
    order = svo_probes.NEGATIVE_ORDER
    resolved, unresolved, against = [], [], False
    for a, b in combinations(order, 2):  # the paper finds a harder (lower) than b
        verdict = compare(avgs[a], avgs[b])
        if verdict == UNRESOLVED:
            unresolved.append(f"{a} vs {b}")
        else:
            resolved.append(f"{a} < {b}" if verdict == LOWER else f"{b} < {a}")
            against |= verdict == HIGHER
    if against:
        verdict = NOT_PAPERS_ORDER
    elif all(compare(avgs[a], avgs[b]) == LOWER for a, b in zip(order, order[1:])):
        verdict = PAPERS_ORDER
    else:
        verdict = UNRESOLVED
    paper = _paper(rows, {f"p_{t}": (t, "avg") for t in order})
    templates = {k: _ORDER + v + (_ORDER_PAPER if paper else ".") for k, v in _ORDER_VERDICT.items()}
    return claim(f"{model}: order of negative types", verdict, templates, {**avgs, **paper},
                 model=model, resolved=", ".join(resolved) or "none", unresolved=", ".join(unresolved) or "none")


def pairwise_vs_chance(model: str, mine: pd.DataFrame) -> Claim:
    a = one(mine, subset="all", metric="pairwise")
    b = one(mine, subset="verb", metric="pairwise")
    verdict = versus_chance(a)
    return claim(f"{model}: pairwise vs chance", verdict, _PAIRWISE.get(verdict, _PAIRWISE[UNRESOLVED]),
                 {"a": a, "b": b}, model=model, verb_verdict=_VERSUS[versus_chance(b)])


def hardest_vs_easiest(model: str, verbs: pd.DataFrame) -> Claim:
    ordered = verbs.sort_values(["value", "subset"], kind="stable")
    hard, easy = ordered.iloc[0], ordered.iloc[-1]
    verdict = LOWER if compare(hard, easy) == LOWER else UNRESOLVED
    what = "negative-pair accuracy" if hard["metric"] == "neg" else "pairwise accuracy"
    return claim(f"{model}: hardest vs easiest verb", verdict, _VERBS, {"hard": hard, "easy": easy},
                 model=model, hard_verb=hard["subset"], easy_verb=easy["subset"], what=what)


def claims(rows: pd.DataFrame, threshold: float = 0.5) -> list[Claim]:
    """The discussion of the verbs study, from its result rows (ours and the paper's)."""
    ours = select(rows, source=OURS, study="verbs")
    out = []
    for model in dict.fromkeys(ours["model"]):
        mine = select(ours, model=model, probe=itm.PROBE)
        thresholded = select(mine, condition=itm.condition(threshold))
        if len(thresholded):
            out += [positives_vs_negatives(model, thresholded, rows, threshold),
                    negative_order(model, thresholded, rows)]
        if len(select(mine, metric="pairwise")):
            out.append(pairwise_vs_chance(model, mine))
        verbs = select(ours, model=model, probe=itm.VERB_PROBE)
        if len(verbs) >= 2:
            out.append(hardest_vs_easiest(model, verbs))
    return out
