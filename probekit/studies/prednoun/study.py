"""The predicate–noun study (Nikolaus et al. 2022): every model on full images and cropped to the target, with the
default and the alternative template; per concept, per (target, distractor) tuple, and the confounds.

Rows (vocabulary shared with :mod:`probekit.papers.prednoun`):

* probe ``pairs`` (default template) / ``pairs-alt`` (alternative template), condition ``full`` / ``cropped``,
  subset ``all`` / ``noun`` / ``predicate``: metrics ``pair_accuracy`` (chance 0.25) and ``triplet_accuracy``
  (0.5); ``pair_accuracy_diff`` with condition ``cropped − full`` (paired bootstrap over pairs);
* probe ``nouns`` / ``predicates``, subset the concept (Fig. 3 and 5), and ``noun tuples`` / ``predicate
  tuples``, subset "target → distractor" (Fig. 6, tuples with at least ``min_tuple_count`` triplets, the
  authors' 5): full images, default template;
* probe ``confounds``, subset the factor: metrics ``r`` (bootstrap interval over pairs) and ``p`` (Table 9);
* on the toy world, probe :data:`LIMBS_PROBE`, subset "limbs alike" / "limbs differ": pair and triplet accuracy
  of the full-image runs by whether the image's two agents wear limbs of one colour (:func:`limbs_rows`);
* probe ``crop overlap`` (model ""): the fraction of triplets whose distractor box lies more than half (90%)
  inside the target's crop (:mod:`probekit.metrics.crop_overlap`);
* with ``released_outputs``: the same pair, concept and tuple rows computed from the authors' released per-item
  outputs (:mod:`probekit.data.prednoun_released`), source :data:`RELEASED`, models named as in the paper.

``items`` (:func:`probekit.metrics.pairs.pair_items`): one row per pair of every scored run (probe ``pairs`` /
``pairs-alt``, condition ``full`` / ``cropped``), ``correct`` 1 when both triplets are right; its mean over a run's
rows (a swap's rows) is that run's ``pair_accuracy`` on ``all`` (the swap).

On the toy world, ``lab_models`` (the toy zoo, :mod:`probekit.studies.prednoun.lab`) are scored on the same triplets,
full and cropped: their rows are ``data["lab"]`` (not in ``rows``), judged in ``data["lab_checks"]`` and
``data["lab_claims"]`` (:mod:`probekit.studies.lab`); ``facts.limbs_only`` is the best pair and triplet accuracy
of a model that binds a pose to a kind by the colour of its limbs alone
(:func:`probekit.toyworld.prednoun.limbs_only_accuracy`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from probekit import papers
from probekit.papers import prednoun as the_paper
from probekit.data import prednoun_released
from probekit.data.prednoun import crop_to_targets
from probekit.datasets import default_data_dir, load_dataset
from probekit.metrics import confounds, crop_overlap, pairs
from probekit.papers.prednoun import PAPER
from probekit.results import FromItems, StudyResult, concat, concat_items
from probekit.scorers import Scorer, can_answer, head_for, load_scorer
from probekit.scorers.mlm import pseudo_perplexity
from probekit.scorers.registry import REGISTRY
from probekit.studies.prednoun import lab as prednoun_lab
from probekit.studies.prednoun.lab import LIMBS_PROBE, Scored, Views
from probekit.studies.pair_scores import score_triplets
from probekit.studies.prednoun.claims import CROP_GAIN, claims
from probekit.studies.prednoun.params import Params
from probekit.studies.lab_items import lab_data, split
from probekit.studies.lab_pooling import pooled_over_seeds
from probekit.toymodels import object_control
from probekit.toyworld.prednoun import LIMBS_ALIKE, LIMBS_DIFFER, limbs_alike, limbs_only_accuracy

STUDY = "prednoun"
PROBES = {"default": "pairs", "alt": "pairs-alt"}
CONDITIONS = ("full", "cropped")
RELEASED = f"{PAPER}, released outputs"
#: the binding across patches (look-alike pairs: only the busts tell whose pose is whose), its within-patch part
#: (the limbs tell) and the cropped topline
HEADLINES = [dict(probe=LIMBS_PROBE, condition="full", subset=LIMBS_ALIKE, metric="pair_accuracy"),
             dict(probe=LIMBS_PROBE, condition="full", subset=LIMBS_DIFFER, metric="pair_accuracy"),
             dict(probe="pairs", condition="cropped", subset="all", metric="pair_accuracy")]
#: the headlines that are controls (meant to be high), not hard conditions
CONTROLS = HEADLINES[1:]
#: (headline, the row shown instead where a run has none of it): real data is not split by the limbs
WHOLE = [(HEADLINES[0], dict(probe="pairs", condition="full", subset="all", metric="pair_accuracy"))]
#: the headlines rebuilt from the item rows (one per pair, default template: probe "pairs"): means of ``correct``,
#: on the toy world by ``limbs`` (the pair's label of :func:`probekit.toyworld.prednoun.limbs_alike`)
FROM_ITEMS = [*[(h, FromItems(dict(probe="pairs", condition="full", limbs=h["subset"]))) for h in HEADLINES[:2]],
              (HEADLINES[2], FromItems(dict(probe="pairs", condition="cropped"))),
              (WHOLE[0][1], FromItems(dict(probe="pairs", condition="full")))]


def score_run(name: str, scorer: Scorer, items: pd.DataFrame, views: Views, condition: str, template: str
              ) -> pd.DataFrame:
    """``items`` with ``name``'s s_target and s_distractor on the images of ``condition`` (``image_shown``):
    ``views[condition]`` (e.g. ``{"cropped": crops}``), the items' own images where ``views`` has none, with the
    default or the alternative sentences (``template``)."""
    shown = views.get(condition)
    scores = score_triplets(scorer, items, images=shown, template=template)
    return items.assign(model=name, condition=condition, template=template, s_target=scores["s_target"],
                        s_distractor=scores["s_distractor"],
                        image_shown=list(items["image"] if shown is None else shown))


def limbs_rows(scored: Scored, seed: int) -> pd.DataFrame:
    """Toy world: pair and triplet accuracy of every full-image, default-template run of ``scored`` split by
    whether the two agents' limbs look alike (probe :data:`LIMBS_PROBE`, subset the label of
    :func:`probekit.toyworld.prednoun.limbs_alike`)."""
    return concat([pairs.accuracy_by(s, limbs_alike(s), model=m, probe=LIMBS_PROBE, condition=c, seed=seed)
                   for (m, c, t), s in scored.items() if (c, t) == ("full", "default")])


def perplexities(lm: Scorer, sentences: Iterable[str]) -> dict[str, float]:
    """Exact pseudo-perplexity of each sentence (every sub-word token masked alone) under the masked LM ``lm``."""
    sentences = sorted(set(sentences))
    return {s: pseudo_perplexity(lp) for s, lp in zip(sentences, lm.token_logprobs(sentences))}


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def analyse(scored: Scored, models: Sequence[str], seed: int, min_concept_count: int, min_tuple_count: int,
            n_resamples: int, detailed: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Rows, per-concept and per-tuple frames of scored runs ``{(model, condition, template): items}``: pair and
    triplet accuracy of every run, cropped − full of every model of ``models`` scored on both, and the concepts
    and tuples of the full-image, default-template run of every model of ``detailed`` (default: ``models``)."""
    parts = [pairs.accuracy(s, model=m, probe=PROBES[t], condition=c, seed=seed) for (m, c, t), s in scored.items()]
    parts += [pairs.accuracy_diff(scored[(m, "cropped", t)], scored[(m, "full", t)], model=m, probe=PROBES[t],
                                  condition=CROP_GAIN, seed=seed)
              for m in models for t in PROBES if (m, "cropped", t) in scored and (m, "full", t) in scored]
    concepts, tuples = [], []
    for m in models if detailed is None else detailed:
        full = scored[(m, "full", "default")]
        concepts.append(pairs.concept_accuracy(full, min_concept_count, n_resamples, seed).assign(model=m))
        tuples.append(pairs.tuple_accuracy(full, min_tuple_count, seed).assign(model=m))
        parts += [pairs.concept_rows(concepts[-1], model=m), pairs.tuple_rows(tuples[-1], model=m)]
    return concat(parts), _stack(concepts), _stack(tuples)


def released(folders: Sequence[str], root: Path, seed: int, min_concept_count: int, min_tuple_count: int,
             n_resamples: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The authors' released outputs of ``folders`` through :func:`analyse`: rows of source :data:`RELEASED`,
    concepts and tuples (Table 1's models only, as the paper's figures), and how many of the paper's printed pair
    accuracies (Tables 1, 7, 8) the recomputation gives at 2 decimals."""
    scored = prednoun_released.load_released(folders, root)
    models = list(dict.fromkeys(m for m, _, _ in scored))
    detailed = [m for m in models if m in prednoun_released.MODELS.values()]  # Fig. 3, 5, 6: Table 1's models
    rows, concepts, tuples = analyse(scored, models, seed, min_concept_count, min_tuple_count, n_resamples,
                                     detailed)
    rows = rows.assign(source=RELEASED)
    printed = papers.reported(the_paper)
    printed = printed[printed["source"].str.endswith(("Table 1", "Table 7", "Table 8"))]
    both = printed.merge(rows, on=["probe", "model", "condition", "subset", "metric"], suffixes=("_p", ""))
    agree = int((both["value"].round(2) == both["value_p"].round(2)).sum())
    return rows, concepts, tuples, dict(released=models, released_agree=agree, released_compared=len(both))



@dataclass(frozen=True)
class PrednounFacts:
    """What the page states (``StudyResult.facts``); a misspelt field is an AttributeError in a unit test
    (tests/test_facts.py), not on the executed page."""

    released: list[str]              # the authors' released outputs re-analysed (their model names)
    released_agree: int              # ... pair accuracies of theirs that agree with the paper's
    released_compared: int           # ... out of these
    lab: str                         # what the lab ran, or why it did not
    dataset: str
    seed: int
    n_triplets: int
    n_pairs: int
    missing_images: int
    main_models: list[str]
    clip_models: list[str]
    unusable: list[str]              # models without an image-text head, with their capabilities
    heads: dict[str, str]
    checkpoints: dict[str, str]
    skipped: dict[str, int]          # unreadable images met, per model
    n_scored: int
    perplexity_model: str
    n_sentences: int
    limbs_only: dict[str, float] | None = None   # toy world: the limbs' colour alone, pair and triplet accuracy
    limbs_pairs: dict[str, int] | None = None    # toy world: pairs per stratum (limbs alike / differ)


@pooled_over_seeds
def run(params: Params) -> StudyResult:
    """Score every model of ``models`` (four runs: full/cropped × default/alt template) and of ``clip_models``
    (full images, default template), re-analyse the authors' ``released_outputs`` (their folder names, e.g.
    "VILT"), and compute the study's rows, per-item data, facts and claims; on the toy world, score the
    ``lab_models`` too (full and cropped, default template) and judge the lab's checks and claims."""
    models, clip_models, dataset, seed = params.models, params.clip_models, params.dataset, params.seed
    device, batch_size, cache_dir = params.device, params.batch_size, params.cache_dir
    min_concept_count, min_tuple_count = params.min_concept_count, params.min_tuple_count
    n_resamples = params.n_resamples
    root = Path(params.data_dir) if params.data_dir is not None else default_data_dir()
    items = load_dataset(STUDY, dataset, data_dir=root, limit=params.limit, seed=seed)
    crops = crop_to_targets(items, root)
    scorers, unusable = {}, []
    for name in dict.fromkeys(list(models) + list(clip_models)):
        scorer = load_scorer(name, device=device, batch_size=batch_size, cache_dir=cache_dir)
        if can_answer(scorer, "choice"):
            scorers[name] = scorer
        else:
            unusable.append(f"{name} ({', '.join(sorted(scorer.capabilities))})")
    main = [m for m in models if m in scorers]
    runs = [(m, c, t) for m in main for t in PROBES for c in CONDITIONS]
    runs += [(m, "full", "default") for m in clip_models if m in scorers and m not in main]
    views = {"cropped": crops}
    scored = {key: score_run(key[0], scorers[key[0]], items, views, key[1], key[2]) for key in runs}
    rows, concepts, tuples = analyse(scored, main, seed, min_concept_count, min_tuple_count, n_resamples)

    lm = (load_scorer(params.perplexity_model, device=device, batch_size=batch_size, cache_dir=cache_dir) if main
          else None)
    perplexity = perplexities(lm, list(items["sentence_target"]) + list(items["sentence_distractor"])) if lm else {}
    parts = [confounds.confound_rows(scored[(m, "full", "default")], perplexity, model=m, seed=seed)
             for m in main]
    parts.append(crop_overlap.distractor_in_crop(items, seed=seed))
    released_facts: dict[str, Any] = dict(released=[], released_agree=0, released_compared=0)
    data: dict[str, Any] = dict(released_concepts=pd.DataFrame(), released_tuples=pd.DataFrame())
    if params.released_outputs:
        theirs, data["released_concepts"], data["released_tuples"], released_facts = released(
            params.released_outputs, root, seed, min_concept_count, min_tuple_count, n_resamples)
        parts.append(theirs)
    rows = concat([rows, *parts, papers.reported(the_paper)])
    if dataset == "toy" and params.lab_models:
        objects = object_control.items(root, seed)
        found = split(prednoun_lab.lab_rows(items, params.lab_models, views=views, objects=objects, scored=scored,
                                            study=prednoun_lab.Study(score_run, analyse, limbs_rows), seed=seed,
                                            device=device, batch_size=batch_size, cache_dir=cache_dir))
        data.update(lab_data(found, prednoun_lab.CHECKS, prednoun_lab.CLAIMS))
        lab_fact = (f"{', '.join(dict.fromkeys(data['lab']['model']))} scored on the same {len(items)} "
                    f"triplets, full and cropped to the target (default template), and on {len(objects)} "
                    "single-object images")
    else:
        data.update(lab_data(None, [], []))
        lab_fact = ("the lab runs on the toy world only" if dataset != "toy"
                    else "no lab models (`lab_models` is empty)")

    limbs = limbs_alike(items).groupby(items["pair_id"].astype(str)).first() if dataset == "toy" else None  # per pair
    limbs_only: dict[str, float] | None = None
    limbs_pairs: dict[str, int] | None = None
    if limbs is not None:
        limbs_only = limbs_only_accuracy(items)
        limbs_pairs = {k: int(v) for k, v in limbs.value_counts().sort_index().items()}
        rows = concat([rows, limbs_rows(scored, seed)])
    swaps = items.assign(swap=items["pos"].map(pairs.SWAP_NAMES)).groupby("swap")
    facts = PrednounFacts(
        **released_facts, lab=lab_fact, dataset=dataset, seed=seed, n_triplets=len(items),
        n_pairs=int(items["pair_id"].nunique()), missing_images=int(items["image"].isna().sum()), main_models=main,
        clip_models=[m for m in clip_models if m in scorers], unusable=unusable,
        heads={m: head_for(s, "choice") for m, s in scorers.items()},
        checkpoints={m: REGISTRY[m].source if m in REGISTRY else m for m in scorers},
        skipped={m: len(s.skipped) for m, s in scorers.items()},
        n_scored=sum(len(s) for s in scored.values()), perplexity_model=params.perplexity_model,
        n_sentences=len(perplexity), limbs_only=limbs_only, limbs_pairs=limbs_pairs)
    data.update(items=items.assign(crop=crops),
                counts=pd.DataFrame({"triplets": swaps.size(), "pairs": swaps["pair_id"].nunique()}),
                scores=_stack(list(scored.values())),
                concepts=concepts, tuples=tuples, perplexity=perplexity)
    per_item = [pairs.pair_items(s, model=m, probe=PROBES[t], condition=c)
                .pipe(lambda p: p if limbs is None else p.assign(limbs=p["item_id"].map(limbs)))
                for (m, c, t), s in scored.items()]
    return StudyResult(STUDY, asdict(params), rows, data=data, facts=facts, claims=claims(rows, main),
                       items=concat_items(per_item))
