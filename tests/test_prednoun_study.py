"""The predicate–noun study end to end on the toy world (``studies.prednoun.run``), and its discussion's claims on
hand-made rows."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from conftest import check_headlines_from_items
from probekit import claims as cl
from probekit.report import render_claims
from probekit.studies.prednoun.page import strata_text
from probekit.results import frame, items_frame, one, row, select
from probekit.scorers.mlm import pseudo_perplexity
from probekit.studies.prednoun import study as prednoun
from probekit.studies.prednoun.claims import UNDEFINED, claims
from probekit.toyworld.prednoun import limbs_alike

MODELS = ["toy-vilt", "toy-clip"]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    root = tmp_path_factory.mktemp("prednoun")
    return prednoun.run(prednoun.Params(  # the lab: tests/test_prednoun_lab.py
        models=MODELS, dataset="toy", data_dir=root / "data", limit=40, seed=0, device="cpu",
        cache_dir=root / "scores", min_concept_count=4, n_resamples=20, clip_models=["toy-clip"], lab_models=[]))


def test_run_scores_every_model_condition_template_and_swap(result):
    ours = result.ours()
    assert result.facts.n_triplets == 40 and result.facts.n_pairs == 20 and result.facts.missing_images == 0
    assert result.facts.heads == {"toy-vilt": "match", "toy-clip": "similarity"}
    for model in MODELS:
        for probe in ("pairs", "pairs-alt"):
            for condition in ("full", "cropped"):
                acc = one(ours, probe=probe, model=model, condition=condition, subset="all", metric="pair_accuracy")
                assert acc["n"] == 20 and acc["chance"] == 0.25 and acc["ci_low"] <= acc["value"] <= acc["ci_high"]
                tri = one(ours, probe=probe, model=model, condition=condition, subset="all",
                          metric="triplet_accuracy")
                assert tri["n"] == 40 and tri["chance"] == 0.5
                swaps = select(ours, probe=probe, model=model, condition=condition, metric="pair_accuracy",
                               subset=["noun", "predicate"])
                assert swaps["n"].sum() == 20
            gain = one(ours, probe=probe, model=model, condition="cropped − full", metric="pair_accuracy_diff")
            full = one(ours, probe=probe, model=model, condition="full", subset="all", metric="pair_accuracy")
            cropped = one(ours, probe=probe, model=model, condition="cropped", subset="all", metric="pair_accuracy")
            assert gain["value"] == pytest.approx(cropped["value"] - full["value"]) and gain["n"] == 20
    # every model gets its discussion (verdicts depend on the checkpoints: not asserted here)
    assert [c.topic for c in result.claims if c.topic.endswith("vs chance")] == [f"{m}: vs chance" for m in MODELS]
    # no lab models: empty lab frames, and the fact says why
    assert result.data["lab"].empty and result.data["lab_checks"].empty and result.data["lab_claims"].empty
    assert result.facts.lab == "no lab models (`lab_models` is empty)"
    # every model's full-image pairs are split by whether the two agents' limbs look alike
    for model in ("toy-vilt", "toy-clip"):
        split = select(ours, probe=prednoun.LIMBS_PROBE, model=model, metric="pair_accuracy")
        assert list(zip(split["subset"], split["n"])) == [("limbs alike", 10), ("limbs differ", 10)]  # the strata
        assert set(split["condition"]) == {"full"}
    assert result.facts.limbs_pairs == {"limbs alike": 10, "limbs differ": 10}
    # the page says how the pairs were drawn, from these counts; nothing on data that is not split
    said = strata_text(result.facts)
    assert "10 pairs of two kinds whose limbs look alike" in said and "50.0% to 50.0%" in said
    assert strata_text(dataclasses.replace(result.facts, limbs_pairs=None)) == ""
    # the toy world's binding yardstick is stated with or without a lab, from these items' share of look-alike pairs
    alike = split.loc[split["subset"] == "limbs alike", "n"].sum() / 20
    assert result.facts.limbs_only == pytest.approx({"pair_accuracy": 1 - alike + alike / 4,
                                                        "triplet_accuracy": 1 - alike + alike / 2})


def test_run_rows_line_up_with_the_papers(result):
    rows = result.rows
    theirs = result.reported()
    assert {s.rsplit(", ", 1)[1] for s in theirs["source"]} == {"Table 1", "Table 6", "Table 7", "Table 8",
                                                                 "Table 9"}
    for probe, condition, subset, metric in (("pairs", "full", "all", "pair_accuracy"),
                                             ("pairs", "cropped", "noun", "pair_accuracy"),
                                             ("pairs-alt", "cropped", "all", "pair_accuracy"),
                                             ("confounds", "full", "distance from centre", "r")):
        found = select(rows, probe=probe, condition=condition, subset=subset, metric=metric)
        assert {"ours"} < set(found["source"]) and len(set(found["source"])) >= 2, (probe, condition, subset)


def test_run_per_concept_tuples_and_confounds(result):
    ours = result.ours()
    concepts = result.data["concepts"]
    assert set(concepts["model"]) == set(MODELS) and (concepts["n_triplets"] >= 4).all()
    for c in concepts.itertuples():
        r = one(ours, probe=f"{c.kind}s", model=c.model, subset=c.label)
        assert r["value"] == c.accuracy and r["n"] == c.n_pairs and c.std >= 0
    assert len(select(ours, probe=["noun tuples", "predicate tuples"])) == len(result.data["tuples"])
    assert (result.data["tuples"]["n_triplets"] >= 5).all() and result.params["min_tuple_count"] == 5
    # the crop caveat: a property of the items (toy boxes never overlap), one row per threshold
    overlap = select(ours, probe="crop overlap").set_index("subset")
    assert list(overlap["value"]) == [0.0, 0.0] and (overlap["n"] == 40).all() and set(overlap["model"]) == {""}
    assert result.facts.checkpoints == {"toy-vilt": "toy:toy-vilt", "toy-clip": "toy:toy-clip"}
    assert result.facts.released == [] and select(result.rows, source=prednoun.RELEASED).empty
    # tight boxes vary with the agent's kind and pose, and their place with the cell: every factor varies
    from probekit.metrics.confounds import confound_differences

    diffs = confound_differences(result.data["scores"].query("model == 'toy-vilt' and condition == 'full' and "
                                                             "template == 'default'"), result.data["perplexity"])
    assert (diffs[["box_size", "centre_distance", "perplexity"]].std() > 0).all()
    for model in MODELS:
        r = select(ours, probe="confounds", model=model, metric="r").set_index("subset")
        assert list(r.index) == ["bounding box size", "distance from centre", "perplexity"]
        assert r["value"].notna().all() and (r["n"] == 40).all()
        assert (r["ci_low"] < r["value"]).all() and (r["value"] < r["ci_high"]).all()
    # perplexity is the exact pseudo-perplexity: each sub-word token masked alone
    from probekit.scorers import load_scorer

    lm = load_scorer("toy-bert", device="cpu", cache_dir=False)
    sentence = result.data["items"]["sentence_target"].iloc[0]
    expected = pseudo_perplexity(lm.token_logprobs([sentence])[0])
    assert result.data["perplexity"][sentence] == pytest.approx(expected, rel=1e-5) and expected > 1


def test_perplexities_average_the_true_tokens_log_probabilities():
    class FakeLM:
        def token_logprobs(self, texts, images=None):
            return [np.log([0.5, 0.25]) if t == "a b" else np.log([0.1]) for t in texts]

    ppl = prednoun.perplexities(FakeLM(), ["a b", "c", "a b"])
    assert ppl == pytest.approx({"a b": math.sqrt(8), "c": 10.0})


# ----------------------------------------------------------------------------------------- claims


def _pairs(model, condition, value, low, high, n=200, subset="all"):
    return row(study="prednoun", probe="pairs", model=model, condition=condition, subset=subset,
               metric="pair_accuracy", value=value, ci=(low, high), n=n, chance=0.25)


def _r(model, factor, value, low, high, n=400):
    return row(study="prednoun", probe="confounds", model=model, condition="full", subset=factor, metric="r",
               value=value, ci=(low, high), n=n, chance=0.0)


def hand_made_rows(model="m", full=(0.995, 0.985, 1.0), gain=(0.0, -0.015, 0.015), nouns=(1.0, 1.0, 1.0),
                   predicates=(0.99, 0.97, 1.0), confounds=((math.nan, math.nan, math.nan), (-0.07, -0.16, 0.03),
                                                            (0.03, -0.07, 0.13))):
    """The toy run's numbers (n = 100 pairs per swap): nouns 1.00 vs predicates 0.99, overlapping intervals."""
    out = [_pairs(model, "full", *full), _pairs(model, "cropped", full[0] + gain[0], full[0] + gain[0] - 0.05,
                                                                min(full[0] + gain[0] + 0.05, 1.0)),
           _pairs(model, "full", *nouns, n=100, subset="noun"), _pairs(model, "full", *predicates, n=100,
                                                                     subset="predicate"),
           row(study="prednoun", probe="pairs", model=model, condition="cropped − full", metric="pair_accuracy_diff",
               value=gain[0], ci=gain[1:], n=200, chance=0.0)]
    out += [_r(model, f, *v) for f, v in zip(("bounding box size", "distance from centre", "perplexity"), confounds)]
    return frame(out)


def test_claims_say_not_resolved_when_intervals_overlap():
    found = claims(hand_made_rows())
    assert cl.by_topic(found, "m: vs chance").verdict == cl.ABOVE
    assert cl.by_topic(found, "m: crop gain").verdict == cl.UNRESOLVED
    assert cl.by_topic(found, "m: nouns vs predicates").verdict == cl.UNRESOLVED  # 1.00 vs 0.99 at n = 100
    strongest = cl.by_topic(found, "m: strongest confound")
    assert strongest.verdict == cl.UNRESOLVED and strongest.words["factor"] == "distance from centre"
    undefined = cl.by_topic(found, "m: undefined confounds")
    assert undefined.verdict == UNDEFINED and undefined.words["factors"] == "bounding box size"
    assert len(render_claims(found).splitlines()) == 5  # every template fills from its rows and words


def test_claims_state_resolved_differences():
    rows = hand_made_rows(full=(0.10, 0.05, 0.16), gain=(0.30, 0.22, 0.38), nouns=(0.60, 0.50, 0.70),
                          predicates=(0.30, 0.21, 0.39),
                          confounds=((0.05, -0.05, 0.15), (-0.24, -0.33, -0.15), (0.08, -0.02, 0.18)))
    found = claims(rows)
    assert cl.by_topic(found, "m: vs chance").verdict == cl.BELOW
    assert cl.by_topic(found, "m: crop gain").verdict == cl.HIGHER
    assert cl.by_topic(found, "m: nouns vs predicates").verdict == cl.HIGHER
    strongest = cl.by_topic(found, "m: strongest confound")
    assert strongest.verdict == cl.LOWER and strongest.words["factor"] == "distance from centre"
    assert "m: undefined confounds" not in [c.topic for c in found]
    swapped = claims(hand_made_rows(nouns=(0.30, 0.21, 0.39), predicates=(0.60, 0.50, 0.70)))
    assert cl.by_topic(swapped, "m: nouns vs predicates").verdict == cl.LOWER
    chance = claims(hand_made_rows(full=(0.26, 0.19, 0.33)))
    assert cl.by_topic(chance, "m: vs chance").verdict == cl.UNRESOLVED


def test_claims_cover_every_model_and_ignore_the_papers_rows():
    rows = frame(list(hand_made_rows("a").to_dict("records")) + list(hand_made_rows("b").to_dict("records"))
                 + [dict(_pairs("ViLT", "cropped", 0.75, np.nan, np.nan), source="Nikolaus et al. 2022, Table 1")])
    topics = [c.topic for c in claims(rows)]
    assert [t for t in topics if t.endswith("vs chance")] == ["a: vs chance", "b: vs chance"]
    assert [c.topic for c in claims(rows, ["b"])][0] == "b: vs chance"


def test_report_tables_put_our_rows_beside_the_papers(result):
    from probekit.report import cell
    from probekit.studies.prednoun import page as figures

    t1 = figures.table(result, 1)
    assert list(t1.columns) == ["full", "cropped"]
    for model in MODELS:
        shown = one(result.ours(), probe="pairs", model=model, condition="cropped", subset="all",
                    metric="pair_accuracy")
        assert t1.loc[("ours", model), "cropped"] == cell(shown, with_n=True)   # with its n, as every row of ours
    assert t1.loc[("Nikolaus et al. 2022, Table 1", "ViLT"), "cropped"] == "75.0"
    t8 = figures.table(result, 8)
    assert list(t8.columns) == [("full", "noun"), ("full", "predicate"), ("cropped", "noun"), ("cropped", "predicate")]
    t6 = figures.table(result, 6)
    assert t6.loc[("Nikolaus et al. 2022, Table 6", "CLIP RN50 cc12m"), "architecture"] == "RN50"
    assert ("ours", "toy-clip") in t6.index and ("ours", "toy-vilt") not in t6.index
    t9 = figures.table(result, 9)
    size = one(result.ours(), probe="confounds", model="toy-vilt", subset="bounding box size", metric="r")
    assert t9.loc[("ours", "toy-vilt"), ("bounding box size", "r")] == cell(size) != "n/a"
    with pytest.raises(ValueError, match="tables: 1, 6, 7, 8, 9"):
        figures.table(result, 2)


def test_item_rows_recompute_the_pair_accuracies(result):
    """One item row per pair of every run; the mean of ``correct`` over a run's pairs (a swap's) is its row."""
    items = items_frame(result.items)
    assert set(zip(items["model"], items["condition"], items["probe"])) >= {
        (m, c, "pairs") for m in MODELS for c in ("full", "cropped")}
    drawn = result.data["items"]
    limbs = limbs_alike(drawn).groupby(drawn["pair_id"]).first()
    for condition in ("full", "cropped"):
        for model in MODELS:
            mine = items[(items["model"] == model) & (items["probe"] == "pairs") & (items["condition"] == condition)]
            assert mine["item_id"].is_unique and len(mine) == result.facts.n_pairs
            assert one(result.ours(), model=model, probe="pairs", condition=condition, subset="all",
                       metric="pair_accuracy")["value"] == mine["correct"].dropna().mean()
            if condition == "full":   # the headline and its limbs-differ control: the same items, by the pair's kinds
                for where in prednoun.HEADLINES[:2]:
                    part = mine[mine["item_id"].map(limbs) == where["subset"]]
                    assert one(result.ours(), model=model, **where)["value"] == part["correct"].dropna().mean()
    for (model, condition, probe), mine in items.groupby(["model", "condition", "probe"]):
        for swap, part in mine.groupby("swap"):
            expected = one(result.ours(), model=model, condition=condition, probe=probe, subset=swap,
                           metric="pair_accuracy")["value"]
            assert expected == part["correct"].dropna().mean()
    shown = {c: set(items.loc[items["condition"] == c, ["image_shown_1", "image_shown_2"]].stack().dropna())
             for c in ("full", "cropped")}
    assert shown["full"] <= set(result.data["items"]["image"]) and shown["cropped"] <= set(result.data["items"]["crop"])
    assert set(items["sentence_target_1"]) <= set(result.data["items"]["sentence_target"])


def test_facts_are_typed(result):
    assert type(result.facts) is prednoun.PrednounFacts
    with pytest.raises(AttributeError):
        result.facts.n_triplet   # noqa: B018  (a misspelt field fails at once)


def test_the_parents_line_names_the_pairs_on_which_it_is_above_chance():
    """The page said toy-clip-unbound's parent, told the binding, is above chance: true only where the limbs
    differ."""
    import pandas as pd

    from probekit.studies.prednoun.page import parent_by_limbs
    from probekit.studies.lab import CONTROL, PARENT, TARGET

    def split(subset, value, half):
        return row(study="prednoun", probe=prednoun.LIMBS_PROBE, model="toy-clip-hardneg", condition="full",
                   subset=subset, metric="triplet_accuracy", value=value, ci=(value - half, value + half), n=800,
                   chance=0.5)
    rows = frame([split("limbs differ", 0.944, 0.016), split("limbs alike", 0.52, 0.03),
                  {**split("limbs alike", 0.2, 0.05), "metric": "pair_accuracy", "chance": 0.25}])
    checks = pd.DataFrame({"model": ["toy-clip-unbound", "toy-clip-hardneg", "toy-clip-unbound"],
                           "role": [TARGET, PARENT, CONTROL]})
    assert parent_by_limbs(checks, rows) == (
        "The parent of `toy-clip-unbound`, `toy-clip-hardneg`, told the binding, on full-image triplet accuracy: "
        "above chance where the two agents' limbs differ, 94.4% [92.8, 96.0] (n = 800); not resolved from chance "
        "where their limbs look alike, 52.0% [49.0, 55.0] (n = 800).")
    low = frame([split("limbs differ", 0.944, 0.016), split("limbs alike", 0.40, 0.03)])
    assert "below chance where their limbs look alike, 40.0%" in parent_by_limbs(checks, low)
    assert parent_by_limbs(checks, rows.iloc[:0]) == ""        # real data: no split, no line
    # two knock-outs: each parent's line names its own (the zoo's parent), not the other's
    both = pd.concat([checks, pd.DataFrame({"model": ["toy-vilt-unpaired", "toy-vilt-hardneg"],
                                            "role": [TARGET, PARENT]})], ignore_index=True)
    vilt = frame([{**split("limbs alike", 0.62, 0.03), "model": "toy-vilt-hardneg"}])
    said = parent_by_limbs(both, pd.concat([rows, vilt], ignore_index=True))
    assert said.startswith("The parent of `toy-clip-unbound`, `toy-clip-hardneg`, told the binding")
    assert said.endswith(" The parent of `toy-vilt-unpaired`, `toy-vilt-hardneg`, told the binding, on full-image "
                         "triplet accuracy: above chance where their limbs look alike, 62.0% [59.0, 65.0] (n = 800).")


def test_the_headlines_are_rebuilt_from_the_exported_items(result, tmp_path):
    assert check_headlines_from_items(result, tmp_path) == 2 * 4     # limbs alike, differ, cropped, full: 2 models
