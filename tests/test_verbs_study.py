"""The verbs study end to end on the toy world (``studies.verbs.run``), and its claims on hand-made rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from conftest import check_headlines_from_items
from probekit import claims as cl
from probekit.datasets import load_dataset
from probekit.metrics.itm import negative_type
from probekit.report import render_claims
from probekit.studies.verbs.page import cue_text
from probekit.results import COLUMNS, frame, one, row, select
from probekit.studies.verbs import study as verbs
from probekit.studies.verbs.claims import NOT_PAPERS_ORDER, PAPERS_ORDER, claims
from probekit.papers import svo_probes

LIMIT = 88     # 15 sentences of up to 6 rows: subject, two verb negatives (one per cue) each with its mirror, object
MIN_NEGATIVES = 3  # a sentence's triplet has up to four negative images; a mirror's triplet one: filtered out
TABLE4, TABLE5 = "Hendricks & Nematzadeh 2021, Table 4", "Hendricks & Nematzadeh 2021, Table 5"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("verbs-study")
    result = verbs.run(verbs.Params(
        models=["toy-vilt", "toy-clip"], data_dir=root / "data", limit=LIMIT, seed=0, device="cpu",
        cache_dir=root / "scores", min_triplet_negatives=MIN_NEGATIVES, top_k=2, n_resamples=200, lab_models=[]))
    items = load_dataset("verbs", "toy", data_dir=root / "data", limit=LIMIT, seed=0)
    return result, items


def test_rows_are_schema_rows_of_ours_and_the_papers(study):
    result, _ = study
    rows = result.rows
    assert list(rows.columns) == COLUMNS and len(frame(rows)) == len(rows)
    assert set(rows["study"]) == {"verbs"} and set(result.ours()["model"]) == {"toy-vilt", "toy-clip"}
    assert set(result.reported()["source"]) == {TABLE4, TABLE5}
    mmt = one(rows, source=TABLE4, model="MMT", subset="all", metric="avg")
    assert mmt["value"] == pytest.approx(0.643) and mmt["n"] == 48000 and np.isnan(mmt["ci_low"])
    assert one(rows, source=TABLE5, model="MMT-COCO", subset="verb", metric="neg")["value"] == pytest.approx(0.555)


def test_heads_decide_what_each_model_is_scored_on(study):
    result, _ = study
    assert result.facts.heads == {"toy-vilt": "match", "toy-clip": "similarity"}
    # each table names the head and the checkpoint that produced it
    assert result.facts.head_of == {
        "toy-vilt": "match: sigmoid of ViltForImageAndTextRetrieval's single rank logit; checkpoint toy:toy-vilt",
        "toy-clip": "similarity: logit_scale x cosine of projected CLS/pooled embeddings; checkpoint toy:toy-clip"}
    assert result.facts.thresholded == ["toy-vilt"]
    ours = select(result.ours(), probe="svo")
    assert set(select(ours, model="toy-clip")["metric"]) == {"pairwise"}  # a dual encoder is not thresholded
    vilt = select(ours, model="toy-vilt")
    assert set(vilt["metric"]) == {"avg", "pos", "neg", "pairwise"}
    assert set(select(vilt, metric=["avg", "pos", "neg"])["condition"]) == {"threshold 0.5"}
    # on the toy world, every model's verb negatives again, split by what tells the two verbs apart
    for model in ("toy-vilt", "toy-clip"):
        cues = select(result.ours(), probe=verbs.CUE_PROBE, model=model)
        assert set(cues["subset"]) == {"the object's place", "the pose"} and set(cues["metric"]) == {"pairwise"}
        assert cues["n"].sum() == one(ours, model=model, subset="verb", metric="pairwise")["n"]
        assert result.facts.cue_rows == dict(zip(cues["subset"], cues["n"]))   # the strata the page states
    place, pose = (result.facts.cue_rows[c] for c in ("the object's place", "the pose"))
    assert f"{place} rows told apart by the object's place" in cue_text(result.facts) and f"{pose} by the" in \
        cue_text(result.facts)
    assert cue_text(dataclasses.replace(result.facts, cue_rows={})) == ""


def test_pairwise_claims_are_decided_by_the_rows_intervals(study):
    result, _ = study
    for model in ("toy-vilt", "toy-clip"):
        pair = one(result.ours(), model=model, probe="svo", subset="all", metric="pairwise")
        assert pair["chance"] == 0.5
        assert cl.by_topic(result.claims, f"{model}: pairwise vs chance").verdict == cl.versus_chance(pair)
    # no lab models: the lab's frames are empty and the facts say why
    assert result.facts.lab == "no lab models were given" and len(result.data["lab_checks"]) == 0


def test_n_counts_the_items(study):
    result, items = study
    typed = items[negative_type(items).notna()]
    ours = result.ours()
    for model in ("toy-vilt", "toy-clip"):
        pair = one(ours, model=model, probe="svo", subset="all", metric="pairwise")
        assert pair["n"] == len(typed.drop_duplicates(["sentence", "pos_image_id", "neg_image_id"]))
    pos = one(ours, model="toy-vilt", probe="svo", subset="all", metric="pos")
    neg = one(ours, model="toy-vilt", probe="svo", subset="all", metric="neg")
    assert pos["n"] == len(typed.drop_duplicates(["sentence", "pos_image_id"]))
    assert neg["n"] == len(typed.drop_duplicates(["sentence", "neg_image_id"]))
    assert one(ours, model="toy-vilt", probe="svo", subset="all", metric="avg")["n"] == pos["n"] + neg["n"]
    assert result.facts.rows == len(items) == LIMIT
    # like for like with the guided-masking paper: positive + negative pairs of verb negatives
    verb_avg = one(ours, model="toy-vilt", probe="svo", subset="verb", metric="avg")
    assert result.facts.verb_pairs["all"] == verb_avg["n"] == \
        result.facts.verb_pairs["pos"] + result.facts.verb_pairs["neg"]
    assert result.facts.guided_masking_verb_pairs == {"all": 33893, "pos": 11571, "neg": 22322}
    assert result.facts.missing_pos == result.facts.missing_neg == result.facts.placeholder_images == 0


def test_per_verb_rows_follow_the_triplet_filter_and_the_ranking(study):
    result, items = study
    for model in ("toy-vilt", "toy-clip"):
        per_verb = select(result.ours(), model=model, probe="svo-verbs")
        counts = result.data["triplet_negatives"][model]
        kept = items[items["pos_triplet"].isin(counts[counts >= MIN_NEGATIVES].index)]
        assert set(per_verb["subset"]) == set(kept["verb"]) != set()
        assert result.facts.triplets_kept[model] == int((counts >= MIN_NEGATIVES).sum()) < len(counts)
        order = result.data["verb_order"][model]
        assert len(order) == min(4, len(per_verb))
        values = per_verb.set_index("subset").loc[order, "value"].to_numpy()
        assert values[0] == values.min() and values[-1] == values.max()
    assert set(select(result.ours(), model="toy-vilt", probe="svo-verbs")["metric"]) == {"neg"}


def test_headlines_pick_one_row_per_model(study):
    result, _ = study
    for where in verbs.HEADLINES:
        picked = select(result.ours(), **where)
        assert sorted(picked["model"]) == ["toy-clip", "toy-vilt"]


# ---------------------------------------------------------------------------------------- claims, by hand

def _rows(model="m", pos=(0.92, 0.9, 0.95), neg=(0.35, 0.3, 0.4), verb=(0.55, 0.5, 0.6),
          subject=(0.67, 0.65, 0.7), obj=(0.78, 0.75, 0.8), pairwise=(0.62, 0.55, 0.7), verbs_by_name=None):
    def r(metric, subset, v, probe="svo", condition="threshold 0.5"):
        return row(study="verbs", probe=probe, model=model, condition=condition, subset=subset, metric=metric,
                   value=v[0], ci=v[1:], n=100, chance=0.5)
    out = [r("pos", "all", pos), r("neg", "all", neg), r("avg", "all", ((pos[0] + neg[0]) / 2,) * 3),
           r("avg", "verb", verb), r("avg", "subject", subject), r("avg", "object", obj)]
    out += [r("pairwise", s, pairwise, condition="") for s in ("all", "subject", "verb", "object")]
    out += [r("neg", name, v, probe="svo-verbs") for name, v in (verbs_by_name or {}).items()]
    return frame(out)


def test_resolved_claims():
    rows = _rows(verbs_by_name={"argue": (0.2, 0.1, 0.3), "ride": (0.9, 0.8, 1.0), "sit": (0.5, 0.15, 0.85)})
    got = claims(rows)
    assert cl.by_topic(got, "m: positives vs negatives").verdict == cl.HIGHER
    assert cl.by_topic(got, "m: order of negative types").verdict == PAPERS_ORDER
    assert cl.by_topic(got, "m: pairwise vs chance").verdict == cl.ABOVE
    hard = cl.by_topic(got, "m: hardest vs easiest verb")
    assert hard.verdict == cl.LOWER and hard.words["hard_verb"] == "argue" and hard.words["easy_verb"] == "ride"
    render_claims(got)  # every template names only rows and words it has


def test_unresolved_claims_say_so():
    rows = _rows(pos=(0.7, 0.6, 0.8), neg=(0.62, 0.55, 0.7), verb=(0.6, 0.5, 0.7), subject=(0.7, 0.6, 0.8),
                 obj=(0.82, 0.75, 0.9), pairwise=(0.52, 0.45, 0.6),
                 verbs_by_name={"argue": (0.4, 0.2, 0.6), "ride": (0.6, 0.45, 0.75)})
    got = claims(rows)
    assert cl.by_topic(got, "m: positives vs negatives").verdict == cl.UNRESOLVED
    order = cl.by_topic(got, "m: order of negative types")
    # verb < object is resolved, verb vs subject and subject vs object are not: the order is not resolved
    assert order.verdict == cl.UNRESOLVED and order.words["resolved"] == "verb < object"
    assert cl.by_topic(got, "m: pairwise vs chance").verdict == cl.UNRESOLVED
    assert cl.by_topic(got, "m: hardest vs easiest verb").verdict == cl.UNRESOLVED
    render_claims(got)


def test_an_order_against_the_papers_is_named_and_rejection_bias_is_lower():
    rows = _rows(pos=(0.3, 0.25, 0.35), neg=(0.8, 0.75, 0.85), obj=(0.4, 0.35, 0.45))
    got = claims(rows)
    assert cl.by_topic(got, "m: positives vs negatives").verdict == cl.LOWER
    order = cl.by_topic(got, "m: order of negative types")
    assert order.verdict == NOT_PAPERS_ORDER and "object < verb" in order.words["resolved"].split(", ")


def test_the_papers_rows_are_quoted_when_present_and_a_dual_encoder_gets_pairwise_claims_only():
    from probekit.papers import reported

    dual = select(_rows(model="d"), metric="pairwise")
    got = claims(pd.concat([_rows(), dual, reported(svo_probes)], ignore_index=True))
    assert cl.by_topic(got, "m: positives vs negatives").rows["p_pos"]["value"] == pytest.approx(0.938)
    assert [c.topic for c in got if c.topic.startswith("d:")] == ["d: pairwise vs chance"]
    render_claims(got)
    # rows thresholded at 0.5 say nothing about a threshold of 0.7
    assert [c.topic for c in claims(_rows(), threshold=0.7)] == ["m: pairwise vs chance"]


def test_facts_are_typed(study):
    result, _ = study
    assert type(result.facts) is verbs.VerbsFacts
    with pytest.raises(AttributeError):
        result.facts.n_row   # noqa: B018  (a misspelt field fails at once)


def test_the_headlines_and_table_4_are_rebuilt_from_the_exported_items(study, tmp_path):
    result, _ = study
    assert check_headlines_from_items(result, tmp_path) == 2 + 2 + 2 + 2   # two cues and verb negatives: 2 models each
    items = result.items[result.items["model"] == "toy-vilt"]               # pos and neg: the thresholded model
    avg = one(result.ours(), model="toy-vilt", probe="svo", subset="all", metric="avg")
    assert (items["pos_correct"].mean() + items["neg_correct"].mean()) / 2 == pytest.approx(avg["value"], rel=1e-12)
    assert items["pos_correct"].count() + items["neg_correct"].count() == avg["n"]
    assert result.items.loc[result.items["model"] == "toy-clip", ["pos_correct", "neg_correct"]].isna().all().all()
