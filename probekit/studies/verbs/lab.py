"""The verbs chapter's toy laboratory: knock-out and blind checks of SVO-Probes, and its paper's claims on the zoo.

``lab_rows`` scores the lab models (the chapter's ``lab_models``; :data:`probekit.studies.verbs.params.LAB_MODELS`
by default) on the chapter's own toy items with the study's scoring (:func:`probekit.studies.verbs.study.score_model`:
pairwise accuracy for every model, Table 4 at the paper's threshold 0.5 for calibrated ITM heads; toy-bert-blind,
uncalibrated, is scored pairwise only, its image choices tie).
:data:`CHECKS` and :data:`CLAIMS` name the rows :func:`probekit.studies.lab.checks` / ``lab.claims`` judge:

* toy-clip-noverb and toy-vilt-noverb saw each transitive training scene drawn as a verb picked at random among all
  24 (the captioned one about 1 time in 24, otherwise a verb swap of the caption): pairwise accuracy on
  verb negatives is their **target** (should be at chance, while each one's parent, toy-clip-hardneg or
  toy-vilt-hardneg, trained alike with the verbs visible, is above chance on it), on subject and on object
  negatives their **controls** (should pass);
* toy-bert-blind ignores the image: pairwise accuracy on all, subject, verb and object negatives is **blind**
  (should not beat chance);
* Hendricks & Nematzadeh 2021, Table 5 (MMT pretrained on Conceptual Captions vs on COCO): each of :data:`NOISY`
  against toy-vilt at threshold 0.5, on negatives, positives and average: toy-vilt-noisy (30% of its captions
  replaced, half by one-slot swaps of their own, the kind of sentence this probe's negatives are, taught as
  matches) and toy-vilt-mismatch (30% replaced by other scenes' captions only), so that noise in general and being
  taught this probe's kind of negative are told apart; each judged on the paired difference of the two models on
  the same pairs (:func:`probekit.metrics.itm.itm_accuracy_diff`), as the other chapters' model comparisons are,
  each testable where both models learned image–sentence matching (average accuracy above chance);
* Table 4 (verb negatives harder than subject and object negatives): a claim about concepts, which a drawn world
  decides by construction; toy-vilt's pairwise rows are shown, never judged.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from probekit.metrics import itm
from probekit.papers import effect, svo_probes as the_paper
from probekit.results import concat, select
from probekit.scorers import load_scorer
from probekit.studies.pair_scores import PairScores
from probekit.studies.lab import BLIND, CONTROL, HIGHER, LOWER, PARENT, TARGET, Check, PaperClaim
from probekit.toyworld import svo

#: the lab thresholds ITM heads at the paper's 0.5, whatever the chapter's ``threshold``: its claims are the paper's
THRESHOLD = 0.5
TABLE4 = "Hendricks & Nematzadeh 2021, Table 4 and Sec. 4.2"
TABLE5 = "Hendricks & Nematzadeh 2021, Table 5 and Sec. 4.5"


#: toy world: pairwise accuracy on verb negatives by what tells the two verbs apart (subset: the cue)
CUE_PROBE = "svo-verb-cue"


def pairwise(subset: str) -> dict[str, str]:
    """The pairwise-accuracy row of ``subset`` ("all", "subject", "verb", "object")."""
    return dict(probe=itm.PROBE, subset=subset, metric="pairwise", condition="")


def thresholded(metric: str, subset: str = "all") -> dict[str, str]:
    """A Table 4 row ("pos", "neg" or "avg") at the lab's threshold."""
    return dict(probe=itm.PROBE, subset=subset, metric=metric, condition=itm.condition(THRESHOLD))


#: (knock-out, its parent): the same recipe with the verbs visible, one pair per architecture
KNOCKOUTS = (("toy-clip-noverb", "toy-clip-hardneg"), ("toy-vilt-noverb", "toy-vilt-hardneg"))
#: the pair judged on the chapter's headline, verb negatives told apart only by the object's place (binding across
#: patches): the cross-encoder's; the dual encoder's pair has its rows per cue too (every lab model has), shown on
#: the page, not judged there
HEADLINE_PAIR = KNOCKOUTS[1]
PLACE = dict(probe=CUE_PROBE, subset=svo.PLACE, metric="pairwise", condition="")

CHECKS = [
    *[check for knockout, parent in KNOCKOUTS for check in (
        Check(knockout, TARGET, "verb negatives, pairwise", pairwise("verb")),
        Check(parent, PARENT, "verb negatives, pairwise", pairwise("verb")),
        Check(knockout, CONTROL, "subject negatives, pairwise", pairwise("subject")),
        Check(knockout, CONTROL, "object negatives, pairwise", pairwise("object")))],
    *[Check(model, role, "verb negatives told apart by the object's place, pairwise (the headline)", PLACE)
      for model, role in zip(HEADLINE_PAIR, (TARGET, PARENT))],
    # one sentence, two images: a text-only scorer ties on every row, 50% whatever it learned
    *[Check("toy-bert-blind", BLIND, f"{what}, pairwise", pairwise(subset), by_construction=True)
      for subset, what in [("all", "all negatives"), ("subject", "subject negatives"), ("verb", "verb negatives"),
                           ("object", "object negatives")]],
]

#: the members trained on noisier captions (own swaps and other scenes' / other scenes' only), each against CLEAN
NOISY, CLEAN = ("toy-vilt-noisy", "toy-vilt-mismatch"), "toy-vilt"
_CC = "A model pretrained on noisier captions (Conceptual Captions rather than COCO)"
_TABLE5 = [(f"{_CC} over-predicts that image–sentence pairs match: its accuracy on negative pairs is lower (34.8 vs "
            "60.9)", "neg", LOWER),
           (f"{_CC} has higher accuracy on positive pairs (93.8 vs 75.2)", "pos", HIGHER),
           (f"{_CC} has lower average accuracy (64.3 vs 68.0)", "avg", LOWER)]


def _table5_effect(metric: str) -> float:
    """The paper's Table 5 effect on ``metric``: MMT pretrained on Conceptual Captions − MMT pretrained on COCO."""
    where = dict(probe="svo", subset="all", metric=metric)
    return effect(the_paper, {**where, "model": "MMT"}, {**where, "model": "MMT-COCO"})


def paired(noisy: str, metric: str) -> tuple[str, dict[str, str]]:
    """A Table 5 claim's ``diff``: ``noisy``'s paired difference in ``metric`` against :data:`CLEAN` (a row of
    :func:`lab_rows`)."""
    return noisy, dict(probe=itm.PROBE, subset="all", metric=f"{metric}_diff",
                       condition=f"{noisy} − {CLEAN}, {itm.condition(THRESHOLD)}")


CLAIMS = [
    # one class's accuracy at a threshold has no chance floor (answering "no match" to every pair scores 100% on
    # negatives): what each model must have learned is image–sentence matching, its average accuracy above chance
    *[PaperClaim(text, TABLE5, (noisy, thresholded(metric)), (CLEAN, thresholded(metric)), expect=expect,
                 diff=paired(noisy, metric), chance_floor=False, paper_effect=_table5_effect(metric),
                 learned=((noisy, thresholded("avg")), (CLEAN, thresholded("avg"))))
      for noisy in NOISY for text, metric, expect in _TABLE5],
    PaperClaim("Verb negatives are harder than subject negatives (MMT average accuracy 60.8 vs 67.0)", TABLE4,
               (CLEAN, pairwise("verb")), (CLEAN, pairwise("subject")), expect=LOWER, by_construction=True),
    PaperClaim("Verb negatives are harder than object negatives (MMT average accuracy 60.8 vs 73.4)", TABLE4,
               (CLEAN, pairwise("verb")), (CLEAN, pairwise("object")), expect=LOWER, by_construction=True),
]


def lab_rows(items: pd.DataFrame, lab_models: Sequence[str], *,
             score: Callable[..., tuple[pd.DataFrame, dict[str, Any], pd.Series, PairScores]],
             min_triplet_negatives: int = 30, n_resamples: int = 1000, seed: int = 0, device: str = "auto",
             batch_size: int = 32, cache_dir: str | None = None,
             scored: Mapping[str, tuple[pd.DataFrame, PairScores]] | None = None,
             cues: pd.Series | None = None) -> pd.DataFrame:
    """The lab models' SVO-Probes rows (probe "svo": pairwise, and Table 4 at :data:`THRESHOLD` for calibrated
    ITM heads) on ``items``, and each of :data:`NOISY`'s paired differences against :data:`CLEAN`
    (:func:`probekit.metrics.itm.itm_accuracy_diff`) where both ran.  ``scored``: the (rows, scores) a model
    already has from the main run at :data:`THRESHOLD` (reused, not scored again); ``score``: the study's
    ``score_model`` (passed in, so this module does not import the study that imports it), for the others;
    ``cues``: what tells each verb negative apart (toy world), for the rows per cue (probe :data:`CUE_PROBE`)."""
    scored = dict(scored or {})
    for name in dict.fromkeys(lab_models):
        if name not in scored:
            scorer = load_scorer(name, device=device, batch_size=batch_size, cache_dir=cache_dir)
            rows, _, _, scores = score(scorer, items, THRESHOLD, min_triplet_negatives, n_resamples, seed, cues)
            scored[name] = rows, scores
    parts = [select(scored[name][0], probe=[itm.PROBE, CUE_PROBE]) for name in dict.fromkeys(lab_models)]
    thresholded = {name for name in lab_models if len(select(scored[name][0], metric="avg"))}
    parts += [itm.itm_accuracy_diff(items, scored[noisy][1], scored[CLEAN][1], noisy, CLEAN, THRESHOLD,
                                    n_resamples, seed) for noisy in NOISY if {noisy, CLEAN} <= thresholded]
    return concat(parts)
