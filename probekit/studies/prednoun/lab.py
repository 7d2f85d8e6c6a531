"""The predicate–noun study's lab (:mod:`probekit.studies.lab`): the toy zoo scored on the study's own toy triplets.

Every lab model is scored, full image and cropped to the target (default template), by the study's own
:func:`probekit.studies.prednoun.study.score_run` and analysed by :func:`probekit.studies.prednoun.study.analyse`: rows of
probe ``pairs``, metrics ``pair_accuracy`` (chance 0.25) and ``triplet_accuracy`` (0.5), subsets ``all`` /
``noun`` / ``predicate``, and ``pair_accuracy_diff`` with condition ``cropped − full``.  Runs the main study has
already scored are reused, never scored again.

* :data:`CHECKS`: ``toy-clip-unbound`` (trained on captions that bind nouns to predicates at random) must be at chance
  on full images (the target: binding) while its parent ``toy-clip-hardneg`` is above it, and still pass cropped to
  the target (the control: one agent in view, so grounding single words is enough) and on a single object
  (:mod:`probekit.toymodels.object_control`), as must every model of :data:`TRAINED_MODELS` (there to a higher
  floor, :data:`probekit.studies.lab.FLOORS`); ``toy-bert-blind`` (the text
  alone) picks the same sentence for both images of a pair, so it can never win a pair, nor beat chance on
  triplets.  The binding checks read triplet accuracy (:data:`BINDING` says why).  ``toy-vilt-unpaired``
  (:data:`UNPAIRED`: binding removed, two-agent captions name agents and predicates without pairing them) must be
  at chance where only relating each bust to its limbs binds (look-alike pairs, :data:`ALIKE_TRIPLETS`) while its
  parent ``toy-vilt-hardneg`` is above it there, and pass the same two controls.
* :data:`CLAIMS`: the paper's dual encoder vs cross-encoder comparison as a 2 × 2 on the binding headline
  (look-alike pairs, probe :data:`LIMBS_PROBE`): architecture (:data:`ARCHITECTURES`) × objective (random or swap
  negatives, :data:`OBJECTIVES`), each factor's effect within each level of the other as a paired difference over
  the same pairs (condition :func:`versus`), not testable where neither model of a comparison binds above chance;
  the paper's cropped topline; and its nouns vs predicates split (how hard a noun or a pose is to see is set by the
  toy world's drawing: decided by construction).

How far binding can go on the toy world is set by its drawing too: an agent's limbs wear a colour it shares with one
other kind (:data:`probekit.toyworld.glyphs.LIMBS`), so the limbs alone bind most triplets and only the bust above
them tells the rest (:func:`probekit.toyworld.prednoun.limbs_only_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from probekit.metrics import pairs
from probekit.metrics.pairs import PAIR_CHANCE, TRIPLET_CHANCE
from probekit.papers import effect, prednoun as the_paper
from probekit.results import concat, frame
from probekit.scorers import Scorer, can_answer, load_scorer
from probekit.toymodels import object_control
from probekit.studies.lab import BLIND, CONTROL, HIGHER, LOWER, PARENT, TARGET, TRAINED, Check, PaperClaim
from probekit.studies.prednoun.claims import CROP_GAIN
from probekit.studies.prednoun.params import LAB_MODELS, TRAINED_MODELS
from probekit.toyworld.prednoun import LIMBS_ALIKE, limbs_alike

PAPER = "Nikolaus et al. 2022"
#: the lab's runs per model: (condition, template)
RUNS = (("full", "default"), ("cropped", "default"))


def pair_row(condition: str, subset: str = "all", metric: str = "pair_accuracy") -> dict[str, str]:
    """``where`` of a lab row: probe ``pairs`` (default template), the given condition, subset and metric."""
    return dict(probe="pairs", condition=condition, subset=subset, metric=metric)


FULL, CROPPED = pair_row("full"), pair_row("cropped")
#: on the toy world: full images, default template, pairs split by whether the two agents' limbs look alike
LIMBS_PROBE = "pairs-limbs"
#: the binding headline: full-image pair accuracy on look-alike pairs (only relating each bust to its limbs binds)
ALIKE = dict(probe=LIMBS_PROBE, condition="full", subset=LIMBS_ALIKE, metric="pair_accuracy")
#: the 2 × 2 on the binding headline, four members trained alike otherwise: (dual encoder, cross-encoder) with
#: random negatives and with swap negatives; (swap negatives, random negatives) for the dual and the cross-encoder
ARCHITECTURES = (("toy-clip", "toy-vilt"), ("toy-clip-hardneg", "toy-vilt-hardneg"))
OBJECTIVES = (("toy-clip-hardneg", "toy-clip"), ("toy-vilt-hardneg", "toy-vilt"))


def versus(a: str, b: str) -> str:
    """The condition of model ``a``'s paired difference against model ``b`` on full images."""
    return f"{a} − {b}, full"


def paired(a: str, b: str) -> tuple[str, dict[str, str]]:
    """A claim's ``diff``: model ``a``'s paired difference against ``b`` on look-alike pairs (a row of
    :func:`lab_rows`)."""
    return a, {**ALIKE, "condition": versus(a, b), "metric": "pair_accuracy_diff"}


TRIPLETS_FULL = pair_row("full", metric="triplet_accuracy")
#: a model that cannot bind scores triplet accuracy 0.5 exactly in expectation (the pair's two images hold the same
#: nouns and predicates, bound the other way round), but pair accuracy anywhere from 0 (its preference does not
#: depend on the image) to 0.25 (a coin flip per triplet): the binding checks read triplets
BINDING = f"triplet accuracy (chance {TRIPLET_CHANCE:g})"

CROPPED_WHAT = f"pair accuracy, cropped to the target (chance {PAIR_CHANCE:g})"
#: the removal knock-out of cross-patch binding and its parent: two-agent captions name both agents and both
#: predicates, never paired, so no caption needs the limbs related to their bust
UNPAIRED = ("toy-vilt-unpaired", "toy-vilt-hardneg")
#: its target row: triplets on look-alike pairs (the limbs' colour names no agent there)
ALIKE_TRIPLETS = {**ALIKE, "metric": "triplet_accuracy"}
_ALIKE_BINDING = f"{BINDING}, full image, look-alike pairs"
CHECKS = [
    Check("toy-clip-unbound", TARGET, f"{BINDING}, full image", TRIPLETS_FULL),
    Check("toy-clip-hardneg", PARENT, f"{BINDING}, full image", TRIPLETS_FULL),
    Check("toy-clip-unbound", CONTROL, CROPPED_WHAT, CROPPED),
    # counterbalanced: a text-only scorer prefers one sentence under both images, so it wins exactly one triplet
    # of each pair (50%) and no pair (0%), whatever it learned
    Check("toy-bert-blind", BLIND, f"pair accuracy, full image (chance {PAIR_CHANCE:g})", FULL, by_construction=True),
    Check("toy-bert-blind", BLIND, f"{BINDING}, full image", TRIPLETS_FULL, by_construction=True),
    Check("toy-clip-unbound", CONTROL, object_control.WHAT, object_control.ROW),
    Check(UNPAIRED[0], TARGET, _ALIKE_BINDING, ALIKE_TRIPLETS),
    Check(UNPAIRED[1], PARENT, _ALIKE_BINDING, ALIKE_TRIPLETS),
    Check(UNPAIRED[0], CONTROL, CROPPED_WHAT, CROPPED),
    Check(UNPAIRED[0], CONTROL, object_control.WHAT, object_control.ROW),
    *(Check(model, TRAINED, what, where) for model in TRAINED_MODELS
      for what, where in [(CROPPED_WHAT, CROPPED), (object_control.WHAT, object_control.ROW)]),
]

_ALIKE_WHAT = "pair accuracy on full images, look-alike pairs (only relating each bust to its limbs binds them)"
_SECT = f"{PAPER}, Tables 1 and 6, Sect. 5.1"
#: the objective is the lab's factor beside the paper's architecture (CLIP differs from the ITM models in both)
_OBJECTIVE = f"{_SECT}; the objective is the toy lab's second factor"


#: the paper's ViLT rows the cropped-task claim's effect is read from (Table 1)
_VILT_PAIRS = dict(probe="pairs", model="ViLT", subset="all", metric="pair_accuracy")


def _effect(a: str, b: str, claim: str, source: str, expect: str) -> PaperClaim:
    return PaperClaim(claim, source, a=(a, ALIKE), b=(b, ALIKE), expect=expect, diff=paired(a, b))


CLAIMS = [
    _effect(*ARCHITECTURES[0], "a dual encoder (CLIP: image and text in separate submodules, no inter-modal fusion) "
            "tracks predicate–noun dependencies worse than the cross-encoders pretrained with image–text matching; "
            f"random negatives in both objectives; {_ALIKE_WHAT}", _SECT, LOWER),
    _effect(*ARCHITECTURES[1], "the same claim with swap negatives in both objectives (dual encoder with swaps added "
            f"to its contrastive texts vs ITM cross-encoder with swap negatives); {_ALIKE_WHAT}", _SECT, LOWER),
    _effect(*OBJECTIVES[0], "swap negatives (the same nouns and predicates bound the other way, the probe's own kind "
            f"of negative) teach a dual encoder binding that random negatives do not; {_ALIKE_WHAT}", _OBJECTIVE,
            HIGHER),
    _effect(*OBJECTIVES[1], f"the same for the cross-encoder (ITM with swap negatives vs random ones); {_ALIKE_WHAT}",
            _OBJECTIVE, HIGHER),
    PaperClaim("in the cropped task (only the target in view) performance is higher than on full images (the "
               "paper: \"much higher\", by 10 to 46 points across its Table 1 models, 35 for ViLT; the toy world "
               "tests the direction, not the size): models ground nouns and predicates better than they bind "
               "them; pair accuracy of the ITM model",
               f"{PAPER}, Table 1, Sect. 4.1",
               a=("toy-vilt", CROPPED), b=("toy-vilt", FULL), expect=HIGHER,
               diff=("toy-vilt", pair_row(CROP_GAIN, metric="pair_accuracy_diff")),
               paper_effect=effect(the_paper, {**_VILT_PAIRS, "condition": "cropped"},
                                   {**_VILT_PAIRS, "condition": "full"})),
    PaperClaim("pairs whose sentences differ in the noun are slightly easier than pairs that differ in the "
               "predicate (nouns are grounded better than predicates); pair accuracy on full images",
               f"{PAPER}, Table 8, Sect. 5.2",
               a=("toy-vilt", pair_row("full", "noun")), b=("toy-vilt", pair_row("full", "predicate")),
               expect=HIGHER, by_construction=True),
]


#: scored runs: (model, condition, template) -> the items with their scores
#: (:func:`probekit.studies.prednoun.study.score_run`)
Scored = dict[tuple[str, str, str], pd.DataFrame]
#: condition -> the images shown instead of the items' own (e.g. ``{"cropped": crops}``)
Views = Mapping[str, Sequence[Any]]


@dataclass(frozen=True)
class Study:
    """What the lab needs of the predicate–noun study, handed over by it (this module does not import the study,
    which imports this one): its ``score_run``, ``analyse`` and ``limbs_rows``."""
    score_run: Callable[[str, Scorer, pd.DataFrame, Views, str, str], pd.DataFrame]
    analyse: Callable[..., tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]]
    limbs_rows: Callable[[Scored, int], pd.DataFrame]


def lab_rows(items: pd.DataFrame, lab_models: Sequence[str] = LAB_MODELS, *, views: Views, study: Study,
             objects: pd.DataFrame | None = None, scored: Scored | None = None, seed: int = 0, device: str = "auto",
             batch_size: int = 32, cache_dir: str | None = None) -> pd.DataFrame:
    """Rows of every model of ``lab_models`` on ``items`` (every condition of :data:`RUNS`, its images from ``views``,
    e.g. ``{"cropped": crops}``; default template), reusing the runs of ``scored`` (the main
    study's ``{(model, condition, template): scored items}``), and on the single-object control ``objects``
    (:func:`probekit.toymodels.object_control.items`; None: not scored); a model without an image–text choice head
    gives no rows (its checks and claims say "not run").  ``study``: the study's scoring and analysis
    (:class:`Study`, passed in, so this module does not import the study that imports it)."""
    scored, runs, controls = dict(scored or {}), {}, []
    for model in dict.fromkeys(lab_models):
        keys = [(model, condition, template) for condition, template in RUNS]
        scorer: Scorer | None = None
        if objects is not None or any(k not in scored for k in keys):
            scorer = load_scorer(model, device=device, batch_size=batch_size, cache_dir=cache_dir)
            if not can_answer(scorer, "choice"):
                continue
        for key in keys:
            if key in scored:
                runs[key] = scored[key]
            else:
                assert scorer is not None  # loaded above, as a run was not in ``scored``
                runs[key] = study.score_run(model, scorer, items, views, *key[1:])
        if objects is not None:
            controls.append(object_control.rows(scorer, model, objects, "prednoun", seed))
    if not runs:
        return frame([])
    rows, _, _ = study.analyse(runs, list(dict.fromkeys(m for m, _, _ in runs)), seed, min_concept_count=0,
                               min_tuple_count=0, n_resamples=0, detailed=[])  # no concepts, no tuples
    full = {m: s for (m, condition, template), s in runs.items() if (condition, template) == RUNS[0]}
    on_alike = dict(probe=LIMBS_PROBE, seed=seed, groups=limbs_alike(items), subset=LIMBS_ALIKE)
    between = [pairs.accuracy_diff(full[a], full[b], model=a, condition=versus(a, b), **on_alike)
               for a, b in (*ARCHITECTURES, *OBJECTIVES) if a in full and b in full]
    return concat([rows, *between, study.limbs_rows(runs, seed), *controls])
