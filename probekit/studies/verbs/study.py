"""Verb understanding on SVO-Probes (Hendricks & Nematzadeh 2021): the chapter ``verbs`` as one call.

``run(params)`` (:class:`~probekit.studies.verbs.params.Params`) loads the items, scores every model, and returns
a :class:`~probekit.results.StudyResult`:

* ``rows``: ours (:mod:`probekit.metrics.itm`: Table 4 at the threshold for models that can answer the
  "threshold" question, pairwise accuracy for every model, per-verb accuracy; on the toy world also pairwise
  accuracy on verb negatives by what tells the two verbs apart, probe :data:`CUE_PROBE`) and the paper's Tables 4–5;
* ``data``: ``overview`` (one row of dataset counts), ``coverage`` (per model: head, checkpoint, scored rows and
  rows dropped whole for a missing positive / negative / unreadable image; ``images``, only where a model's images
  were preprocessed by the loader instead of on its device, says why), ``verb_order`` (per model, the ranked
  verbs shown, hardest first) and ``triplet_negatives`` (per model, distinct negative images per positive SVO
  triplet, what ``min_triplet_negatives`` filters on, as the paper's Table 6 does), and the toy laboratory
  (:mod:`probekit.studies.verbs.lab`): ``lab`` (the lab models' rows on the same items, not in ``rows``),
  ``lab_checks`` and ``lab_claims`` (:func:`probekit.studies.lab.checks` / ``claims`` of them; empty frames when
  the lab does not run, ``facts.lab`` says why);
* ``facts``: a :class:`VerbsFacts`, the counts the page states (rows dropped for a missing positive and a missing negative image,
  placeholder photos counted as missing, verb-negative pairs beside the guided-masking paper's), which head
  scored each model (``heads``) and which head of which checkpoint that is (``head_of``);
* ``claims``: :func:`probekit.studies.verbs.claims.claims` of the rows.

Heads (``probekit.scorers.head_for``): a model with a "threshold" head (ITM) is scored by its match
probabilities, thresholded for Table 4 and compared for pairwise accuracy; any other model by its "choice"
head over the two images (a softmax over two similarities for a dual encoder), pairwise accuracy only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from probekit import papers
from probekit.papers import svo_probes as the_paper
from probekit.datasets import load_dataset
from probekit.metrics import itm
from probekit.papers.guided_masking import GUIDED_MASKING_VERB_PAIRS
from probekit.results import OURS, FromItems, StudyResult, concat, concat_items, select
from probekit.scorers import REGISTRY, Scorer, can_answer, head_for, load_scorer
from probekit.studies.verbs import lab as verbs_lab
from probekit.studies.pair_scores import PairScores, score_pairs
from probekit.studies.verbs.claims import claims
from probekit.studies.verbs.params import Params
from probekit.studies.lab_items import lab_data, split
from probekit.studies.lab_pooling import pooled_over_seeds
from probekit.toyworld import svo

STUDY = "verbs"
CUE_PROBE = verbs_lab.CUE_PROBE
#: the study's headline rows for the summary page (one per model each): verb negatives told apart by the object's
#: place alone (relating the object's patch to the agent's), and by the pose alone (within the agent's patch)
HEADLINES = [dict(probe=CUE_PROBE, subset=svo.PLACE, metric="pairwise"),
             dict(probe=CUE_PROBE, subset=svo.POSE, metric="pairwise")]
CONTROLS = HEADLINES[1:]
#: (headline, the row shown instead where a run has none of it): real data is not split by the cue
WHOLE = [(HEADLINES[0], dict(probe=itm.PROBE, subset="verb", metric="pairwise"))]
#: the headlines, and Table 4 at the threshold on all rows (the page's first table; its "avg" is the mean of "pos"
#: and "neg"), rebuilt from the item rows (one per triple): means of ``correct`` by ``cue`` or ``type``, and of
#: ``pos_correct`` / ``neg_correct`` (:func:`table4_columns`)
FROM_ITEMS = [(HEADLINES[0], FromItems(dict(probe=itm.PROBE, cue=svo.PLACE))),
              (HEADLINES[1], FromItems(dict(probe=itm.PROBE, cue=svo.POSE))),
              (WHOLE[0][1], FromItems(dict(probe=itm.PROBE, type="verb"))),
              *[(dict(probe=itm.PROBE, subset="all", metric=side),
                 FromItems(dict(probe=itm.PROBE), column=f"{side}_correct")) for side in ("pos", "neg")]]


def table4_columns(item_rows: pd.DataFrame, threshold: float | None, cues: pd.Series | None) -> pd.DataFrame:
    """``item_rows`` (:func:`probekit.metrics.itm.pair_items`) with what Table 4 counts on all rows at ``threshold``
    (None: a model without a threshold head, NaN throughout): ``pos_correct`` 1 where the triple's positive pair is
    predicted a match, on the first triple of each distinct (sentence, positive image) and NaN on its repeats;
    ``neg_correct`` 1 where its negative pair is predicted no match, likewise once per (sentence, negative image);
    and on the toy world ``cue``, what tells a verb negative's verb apart (:func:`probekit.toyworld.svo.verb_cue`)."""
    out = item_rows.assign(**({} if cues is None else {"cue": item_rows["item_id"].map(cues.dropna())}))
    sides: tuple[tuple[str, Callable[[pd.Series], pd.Series]], ...] = (("pos", lambda s: s >= threshold),
                                                                       ("neg", lambda s: s < threshold))
    for side, right in sides:
        first = ~out.duplicated(["sentence", f"{side}_image_id"])
        out[f"{side}_correct"] = (right(out[f"{side}_score"]).astype(float).where(first) if threshold is not None
                                  else float("nan"))
    return out


@dataclass(frozen=True)
class VerbsFacts:
    """What the page states (``StudyResult.facts``): counts, heads and what the lab ran; a misspelt field is an
    AttributeError in a unit test (tests/test_facts.py), not on the executed page."""

    dataset: str
    rows: int
    sentences: int
    verbs: int
    missing_pos: int             # rows dropped for a missing positive image
    missing_neg: int             # ... and then for a missing negative image
    placeholder_images: int      # placeholder photos counted as missing
    mixed_flags: int
    verb_pairs: dict[str, int]   # verb-negative pairs: all, pos, neg
    guided_masking_verb_pairs: dict[str, int]
    heads: dict[str, str]        # model -> the head that scored it
    head_of: dict[str, str]      # model -> which head of which checkpoint
    thresholded: list[str]       # models with Table 4 rows (a "threshold" head)
    scored: dict[str, int]
    unreadable_image: dict[str, int]
    verbs_ranked: dict[str, int]
    triplets_kept: dict[str, int]
    lab: str                     # what the lab ran, or why it did not
    cue_rows: dict[str, int]     # toy world: verb-negative rows (mirrors included) by what tells the verbs apart


def overview(items: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """One row of counts: rows, sentences, images, rows per negative type, verbs."""
    kinds = itm.negative_type(items).fillna("several/none")
    return pd.DataFrame({
        "rows (sentence x negative image)": [len(items)],
        "sentences": [items["sentence"].nunique()],
        "positive images": [items["pos_image_id"].nunique()],
        "negative images": [items["neg_image_id"].nunique()],
        **{f"{k} negatives": [int((kinds == k).sum())] for k in [*itm.NEG_TYPES, "several/none"]},
        "verbs": [items["verb"].nunique()],
    }, index=[dataset])


def head_of(scorer: Scorer, head: str) -> str:
    """Which head of which checkpoint scored a model: the registry's description of that head and the checkpoint,
    e.g. "match: sigmoid of ViltForImageAndTextRetrieval's single rank logit; checkpoint dandelin/vilt-b32-..."."""
    spec = REGISTRY.get(scorer.name)
    how = next((part for part in scorer.head.split("; ") if part.startswith(f"{head}:")), head)
    return f"{how}; checkpoint {spec.source if spec else scorer.source}"


def score_model(scorer: Scorer, items: pd.DataFrame, threshold: float, min_triplet_negatives: int, n_resamples: int,
                seed: int, cues: pd.Series | None = None) -> tuple[pd.DataFrame, dict[str, Any], pd.Series, PairScores]:
    """One model's rows, its coverage record, its per-triplet negative-image counts and its scores (positive and
    negative pair per row, :func:`probekit.studies.pair_scores.score_pairs`); with ``cues`` (what tells each verb
    negative's verb apart, :func:`probekit.toyworld.svo.verb_cue`), pairwise rows per cue too."""
    thresholded = can_answer(scorer, "threshold")
    head = head_for(scorer, "threshold") if thresholded else head_for(scorer, "choice")
    pos, neg = score_pairs(scorer, items, head)
    name = scorer.name
    parts = [itm.itm_accuracy(items, pos, neg, name, threshold, n_resamples, seed)] if thresholded else []
    metric = "neg" if thresholded else "pairwise"
    per_verb = itm.verb_accuracy(items, pos, neg, name, metric, threshold, min_triplet_negatives, n_resamples, seed)
    parts += [itm.pairwise_accuracy(items, pos, neg, name, n_resamples, seed), per_verb]
    if cues is not None:
        parts.append(itm.pairwise_by(items, pos, neg, cues, CUE_PROBE, name, n_resamples, seed))
    triplets = itm.triplet_negative_counts(items, pos, neg)
    record = {"family": scorer.family, "head": head, "head of checkpoint": head_of(scorer, head),
              "scored as": f"ITM at threshold {threshold:g}" if thresholded else "choice of image (pairwise)",
              **itm.coverage(items, pos, neg), "unreadable images": len(scorer.skipped),
              "triplets kept": int((triplets >= min_triplet_negatives).sum()),
              "verbs ranked": int(len(per_verb)),
              **({"images": scorer.device_pixels_note} if scorer.device_pixels_note else {})}
    return concat(parts), record, triplets, (pos, neg)


def run_lab(items: pd.DataFrame, dataset: str, lab_models: Sequence[str],
            scored: dict[str, tuple[pd.DataFrame, PairScores]], **scoring: Any) -> tuple[dict[str, pd.DataFrame], str]:
    """The toy laboratory's data (``lab``, ``lab_checks``, ``lab_claims``) and the fact saying what ran or why not.
    ``scored``: the main run's (rows, scores) per model, reused when they are at the lab's threshold."""
    if dataset != "toy" or not lab_models:
        return (lab_data(None, [], []),
                "the lab runs on the toy world only" if dataset != "toy" else "no lab models were given")
    found = split(verbs_lab.lab_rows(items, lab_models, score=score_model, scored=scored, **scoring))
    return (lab_data(found, verbs_lab.CHECKS, verbs_lab.CLAIMS),
            f"{', '.join(dict.fromkeys(lab_models))} on the same {len(items)} toy rows, ITM heads at threshold "
            f"{verbs_lab.THRESHOLD:g}")


@pooled_over_seeds
def run(params: Params) -> StudyResult:
    """The verbs study with the chapter's parameters."""
    models, dataset, threshold, seed = params.models, params.dataset, params.threshold, params.seed
    min_triplet_negatives, n_resamples = params.min_triplet_negatives, params.n_resamples
    device, batch_size, cache_dir = params.device, params.batch_size, params.cache_dir
    items = load_dataset(STUDY, dataset, data_dir=params.data_dir, limit=params.limit, seed=seed)
    parts, records, triplet_negatives, verb_order, scores = {}, {}, {}, {}, {}
    cues = svo.verb_cue(items) if dataset == "toy" else None
    for name in models:
        scorer = load_scorer(name, device=device, batch_size=batch_size, cache_dir=cache_dir)
        parts[name], records[name], triplet_negatives[name], scores[name] = score_model(
            scorer, items, threshold, min_triplet_negatives, n_resamples, seed, cues)
        verb_order[name] = itm.ranked_verbs(parts[name][parts[name]["probe"] == itm.VERB_PROBE], params.top_k)
    rows = concat([*parts.values(), papers.reported(the_paper)])
    reuse = {name: (parts[name], scores[name]) for name in parts} if threshold == verbs_lab.THRESHOLD else {}
    lab_data, lab_fact = run_lab(items, dataset, params.lab_models, reuse,
                                 min_triplet_negatives=min_triplet_negatives, n_resamples=n_resamples, seed=seed,
                                 device=device, batch_size=batch_size, cache_dir=cache_dir, cues=cues)
    coverage = pd.DataFrame(records).T.fillna({"images": ""})  # a note where the loader preprocessed
    kinds = itm.negative_type(items)
    has_pos = items["pos_image"].notna()
    facts = VerbsFacts(
        dataset=dataset, rows=len(items), sentences=int(items["sentence"].nunique()),
        verbs=int(items["verb"].nunique()),
        missing_pos=int((~has_pos).sum()), missing_neg=int((has_pos & items["neg_image"].isna()).sum()),
        placeholder_images=int(items.attrs.get("n_images_placeholder", 0)),
        mixed_flags=int(kinds.isna().sum()),
        verb_pairs=itm.verb_pair_counts(items), guided_masking_verb_pairs=dict(GUIDED_MASKING_VERB_PAIRS),
        heads={name: r["head"] for name, r in records.items()},
        head_of={name: r["head of checkpoint"] for name, r in records.items()},
        thresholded=list(dict.fromkeys(select(rows, source=OURS, metric="avg")["model"])),
        scored={name: r["scored"] for name, r in records.items()},
        unreadable_image={name: r["unreadable_image"] for name, r in records.items()},
        verbs_ranked={name: r["verbs ranked"] for name, r in records.items()},
        triplets_kept={name: r["triplets kept"] for name, r in records.items()},
        lab=lab_fact, cue_rows={} if cues is None else {k: int(v) for k, v in cues.value_counts().sort_index().items()},
    )
    data = {"overview": overview(items, dataset), "coverage": coverage, "verb_order": verb_order,
            "triplet_negatives": triplet_negatives, **lab_data}
    cue_of = None if cues is None else cues.set_axis(items["item_id"].astype(str))
    per_item = [table4_columns(itm.pair_items(items, *scores[name], name),
                               threshold if name in facts.thresholded else None, cue_of) for name in parts]
    return StudyResult(STUDY, asdict(params), rows, data, facts, claims(rows, threshold=threshold),
                       concat_items(per_item))
