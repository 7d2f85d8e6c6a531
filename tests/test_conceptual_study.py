"""The conceptual study: its claims on hand-made rows (resolved and not), the paper's rows and facts, and
``studies.conceptual.run`` on the toy world with small limits and a short fine-tuning."""

import numpy as np
import pandas as pd
import pytest

from conftest import check_headlines_from_items
from probekit import papers
from probekit.claims import HIGHER, LOWER, UNRESOLVED, by_topic
from probekit.metrics.background import average_precision
from probekit.papers.conceptual import count, parse_condition, patch_condition
from probekit.studies.conceptual import page as figures
from probekit.results import frame, items_frame, one, row, select
from probekit.studies import lab
from probekit.studies.conceptual import study as conceptual, patching
from probekit.studies.conceptual.claims import REPORTED, patching_claims, probe_b_claims, probe_c_claims, \
    probe_r_claims
from probekit.papers import conceptual as papers_conceptual


def r(probe, metric, value, lo, hi, model="m", subset="all", condition="", n=50, chance=0.5):
    return row(study="conceptual", probe=probe, model=model, subset=subset, condition=condition, metric=metric,
               value=value, ci=(lo, hi), n=n, chance=chance)


def test_subject_vs_predicate_swap_only_when_intervals_separate():
    rows = frame([r("probe-r", "acc", 0.9, 0.85, 0.95, subset="subject_swap"),
                  r("probe-r", "acc", 0.6, 0.5, 0.7, subset="predicate_swap"),
                  r("probe-r", "mu_c", 0.55, 0.45, 0.65, subset="predicate_swap"),
                  r("probe-r", "acc", 0.7, 0.6, 0.8, model="close", subset="subject_swap"),
                  r("probe-r", "acc", 0.65, 0.55, 0.75, model="close", subset="predicate_swap")])
    claims = probe_r_claims(rows, ["m", "close"])
    assert by_topic(claims, "m: subject vs predicate swap").verdict == HIGHER
    assert by_topic(claims, "close: subject vs predicate swap").verdict == UNRESOLVED
    assert by_topic(claims, "m: predicate-swap confidence").verdict == UNRESOLVED   # 0.5 inside [0.45, 0.65]
    # on drawn items (the toy world) which concept is harder is decided by construction: shown, not compared
    drawn = probe_r_claims(rows, ["m", "close"], drawn=True)
    assert [by_topic(drawn, f"{m}: subject vs predicate swap").verdict for m in ("m", "close")] == [
        lab.BY_CONSTRUCTION] * 2
    shown = by_topic(drawn, "m: subject vs predicate swap").rows
    assert (shown["a"]["value"], shown["b"]["value"]) == (0.9, 0.6)
    assert by_topic(drawn, "m: predicate-swap confidence").verdict == UNRESOLVED   # not a difficulty comparison


def test_object_vs_composition_and_text_vs_image():
    rows = frame([r("probe-c", "group", 0.3, 0.2, 0.4, subset="composition", chance=1 / 6),
                  r("probe-c", "group", 0.8, 0.7, 0.9, subset="object", chance=1 / 6),
                  r("probe-c", "text", 0.4, 0.3, 0.5, subset="composition", chance=0.25),
                  r("probe-c", "image", 0.45, 0.35, 0.55, subset="composition", chance=0.25)])
    claims = probe_c_claims(rows, ["m"])
    assert by_topic(claims, "m: object vs composition").verdict == HIGHER
    assert by_topic(claims, "m: text vs image").verdict == UNRESOLVED
    drawn = probe_c_claims(rows, ["m"], drawn=True)
    assert by_topic(drawn, "m: object vs composition").verdict == lab.BY_CONSTRUCTION
    assert by_topic(drawn, "m: object vs composition").rows["a"]["value"] == 0.8
    assert by_topic(drawn, "m: text vs image").verdict == UNRESOLVED


def test_scene_filler_and_isolation():
    g = dict(probe="probe-b", metric="gamma", subset="(x0, x̃1)", chance=float("nan"))
    rows = frame([r(condition="scene", value=0.99, lo=0.95, hi=1.0, **g),
                  r(condition="black", value=0.7, lo=0.6, hi=0.8, **g),
                  r(condition="gray", value=0.97, lo=0.9, hi=1.02, **g),
                  r("probe-b-single", "acc", 0.9, 0.8, 1.0, condition="all fillers", subset="x0"),
                  r("probe-b-single", "acc", 0.3, 0.2, 0.4, condition="all fillers", subset="x̃1")])
    claims = probe_b_claims(rows, ["m"])
    scene = by_topic(claims, "m: scene filler")
    # resolved above black, from gray not: no filler it is resolved below is named (none is)
    apart = "resolved above the γ of black; not resolved from gray"
    assert scene.verdict == UNRESOLVED and scene.words["apart"] == apart
    assert by_topic(claims, "m: isolation").verdict == LOWER


@pytest.mark.parametrize("values, direction, verdict, most, least", [
    ({"lamp": -10.99, "chair": -32.39, "cup": -15.1}, "gained", LOWER, "chair", "lamp"),   # the book's numbers
    ({"lamp": 10.99, "chair": 32.39, "cup": 15.1}, "lost", HIGHER, "chair", "lamp"),
    ({"lamp": -10.99, "chair": 32.39, "cup": 15.1}, "mixed", HIGHER, "chair", "lamp"),
])
def test_the_context_sentence_follows_the_signs_and_the_order_of_delta_c(values, direction, verdict, most, least):
    """Δc > 0: confidence lost when the context is removed; < 0: gained.  The claim names the object that changed
    most in the direction all of them share as ``a`` (for gains, the lowest Δc), never "lost ... largest" for
    two gains."""
    from probekit.studies.conceptual.claims import context_direction
    rows = frame([r("probe-b-object", "delta_c_pts", v, v - 4, v + 4, model="all models", subset=o,
                    condition="all fillers", chance=float("nan")) for o, v in values.items()])
    c = by_topic(probe_b_claims(rows, []), "objects: context")
    assert context_direction(values.values()) == direction
    assert (c.verdict, c.words["most"], c.words["least"]) == (verdict, most, least)
    assert (c.rows["a"]["subset"], c.rows["b"]["subset"]) == ((most, least) if direction != "mixed"
                                                              else ("chair", "lamp"))
    assert c.template   # a sentence exists for this verdict


def test_patching_gain_and_forgetting_only_when_the_paired_difference_is_resolved():
    cond = "text, α = 0.5 − original"
    rows = frame([r("patching", "mu_c_diff", 0.1, 0.05, 0.15, model="clip", condition=cond,
                    subset="probe-r predicate_swap", chance=0.0),
                  r("patching", "top1_diff", -1 / 60, -0.05, 0.0, model="clip", condition=cond, subset="general",
                    chance=0.0),   # one image in 60 lost: not forgetting at this n
                  r("patching", "top1_diff", -0.2, -0.3, -0.1, model="clip", condition="text, α = 1 − original",
                    subset="general", chance=0.0)])
    claims = patching_claims(rows, "clip", ["text"], [0.0, 0.5, 1.0])
    assert by_topic(claims, "text α=0.5: probe").verdict == HIGHER
    assert by_topic(claims, "text α=0.5: general task").verdict == UNRESOLVED
    assert by_topic(claims, "text α=1: general task").verdict == LOWER


def test_the_papers_rows_are_fractions_and_its_facts_are_counted():
    rows = papers.reported(papers_conceptual)
    t3 = select(rows, source="Schiappa et al. 2023, Table 3")
    assert one(t3, model="BridgeTower", subset="subject_swap", metric="acc")["value"] == pytest.approx(0.8901)
    assert count(t3, dict(subset="subject_swap", metric="acc"), dict(subset="predicate_swap", metric="acc")) == (15, 15)
    t4 = select(rows, source="Schiappa et al. 2023, Table 4")
    assert count(t4, dict(subset="composition", metric="text"), dict(subset="composition", metric="image")) == (14, 15)
    gamma = one(rows, probe="probe-b-pooled", model="all models", condition="scene", subset="(x0, x̃1)",
                metric="gamma")
    assert gamma["value"] == pytest.approx(1.01)
    t10 = select(rows, source="Schiappa et al. 2023, Table 10", condition=patch_condition("text", 0.6))
    assert one(t10, subset="relcomp", metric="group")["value"] == pytest.approx(0.7463)
    assert parse_condition(patch_condition("both", 0.25)) == ("both", 0.25)
    assert len(select(rows, source="Schiappa et al. 2023, Table 2", model="ViLT")) == 3   # its ImageNet cell is "–"


def test_the_encoders_are_compared_at_the_papers_alpha_and_at_the_largest():
    assert conceptual.Params().alphas == [0.0, 0.2, 0.5, 1.0]   # 0.2: the paper's "CLIP Patched"
    assert patching.compared_alphas([0.0, 0.2, 0.5, 1.0]) == [0.2, 1.0]
    assert patching.compared_alphas([0.0, 0.25, 0.5, 1.0]) == [1.0]   # the old default: α = 0.2 never compared
    assert patching.compared_alphas([0.0, 0.2]) == [0.2] and patching.compared_alphas([0.0]) == []


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    d = tmp_path_factory.mktemp("conceptual")
    return conceptual.run(conceptual.Params(
        limit=16, device="cpu", data_dir=d / "data", cache_dir=d / "scores", fillers=["black", "scene"],
        finetune_encoders=["text", "vision"], finetune_steps=2, finetune_triplets=6, alphas=[0.0, 0.2, 1.0],
        finetune_seeds=1, finetune_eval_limit=12, lab_models=[]))


def test_run_on_the_toy_world(result):
    ours = result.ours()
    assert set(ours["model"]) >= {"toy-vilt", "toy-clip"}
    for headline in conceptual.HEADLINES:
        got = select(ours, **headline)
        assert set(got["model"]) == {"toy-vilt", "toy-clip"}, headline
        assert ((got["value"] >= 0) & (got["value"] <= 1)).all()
    acc = one(ours, probe="probe-r", model="toy-clip", subset="predicate_swap", metric="acc")
    assert acc["chance"] == 0.5 and acc["ci_low"] <= acc["value"] <= acc["ci_high"] and acc["n"] > 0
    assert set(select(ours, probe="probe-b")["condition"]) == {"black", "scene", "all fillers"}
    assert result.facts.heads == {"toy-vilt": "match", "toy-clip": "similarity"}
    assert result.facts.probe_r_items == 16 and result.facts.unreadable["Probe-B"] == 0
    sweep = select(ours, probe="patching", model="toy-clip")
    # the encoders compared item by item at the paper's α = 0.2 as well as at the largest α
    assert set(sweep["condition"]) == {f"{e}, α = {a}" for e in ("text", "vision") for a in ("0", "0.2", "1")} | {
        f"{e}, α = {a} − original" for e in ("text", "vision") for a in ("0.2", "1")} | {
        "text, α = 0.2 − vision, α = 0.2", "text, α = 1 − vision, α = 1"}
    top1 = one(sweep, condition="text, α = 1 − original", subset="general", metric="top1_diff")
    assert top1["n"] == 12 and top1["chance"] == 0.0
    # the two encoders' fine-tunes compared over the same items: the mean paired difference is the difference
    for (subset, metric), a in [(sm, a) for sm in (("general", "top1"), ("probe-r predicate_swap", "mu_c"),
                                                   ("probe-c composition", "mu_c")) for a in ("0.2", "1")]:
        t, v = (one(sweep, condition=f"{e}, α = {a}", subset=subset, metric=metric)["value"]
                for e in ("text", "vision"))
        tv = one(sweep, condition=f"text, α = {a} − vision, α = {a}", subset=subset, metric=f"{metric}_diff")
        assert tv["value"] == pytest.approx(t - v) and tv["ci_low"] <= tv["value"] <= tv["ci_high"], (subset, a)
    assert list(result.data["history"]["step"]) == [0, 1, 0, 1]
    # 6 triplets of each kind, 2 steps of the chapter's batch of 128, which finetune_clip caps at the 12 triplets:
    # the page gives the budget in epochs, as the authors do (40)
    assert (result.facts.sweep.triplets, result.facts.sweep.finetune_batch) == (12, 12)
    assert "2 steps of 12 (2.0 epochs; the authors: 40 epochs" in figures.sweep_text(result.facts, result.params)
    assert set(result.data["sweep"]["alpha"]) == {0.0, 0.2, 1.0}
    fractions = result.reported()[~result.reported()["metric"].isin(["gamma", "delta_c_pts"])]
    assert len(fractions) and (fractions["value"].between(0, 1)).all()   # the paper's percentages as fractions
    assert by_topic(result.claims, "paper: subject vs predicate swap").verdict == REPORTED
    # the ViLT-family toy model is also read as the authors' code reads ViLT (x̃0 and x̃1 exchanged)
    authors = select(ours, probe=conceptual.AUTHORS_READING["probe-b"])
    assert set(authors["model"]) == {"toy-vilt"}
    assert one(authors, metric="map", subset="x̃0")["value"] == one(ours, probe="probe-b", model="toy-vilt",
                                                                     condition="all fillers", metric="map",
                                                                     subset="x̃1")["value"]
    assert result.facts.finetune_skipped == "" and result.facts.general_fallback == ""
    assert set(result.data["readings"]["model"]) == {"FLAVA", "ViLT", "BridgeTower", "toy-vilt"}
    assert {c.verdict for c in result.claims} <= {HIGHER, LOWER, UNRESOLVED, REPORTED, "above chance",
                                                  "below chance", lab.BY_CONSTRUCTION}
    # the toy world's concept-difficulty comparisons are decided by construction, their numbers still quoted
    for topic in ("toy-clip: subject vs predicate swap", "toy-vilt: object vs composition"):
        c = by_topic(result.claims, topic)
        assert c.verdict == lab.BY_CONSTRUCTION and 0 <= c.rows["a"]["value"] <= 1, topic
    # no lab models: empty lab frames, and the facts say why (tests/test_conceptual_lab.py runs the lab)
    assert "lab_models" in result.facts.lab
    assert not len(result.data["lab"]) and not len(result.data["lab_checks"]) and not len(result.data["lab_claims"])


def test_the_sweep_scores_whole_groups_drawn_at_random_not_the_head_of_the_table():
    """``finetune_eval_limit`` on a real probe's table (ordered by relation or source): whole groups, at most the
    limit, drawn under the seed and kept in order (the toy tables fit under the cap: next test)."""
    import pandas as pd

    from probekit.studies.conceptual.patching import whole_groups

    items = pd.DataFrame({"group_id": [g for g, size in zip("abcdef", (3, 4, 3, 4, 3, 4)) for _ in range(size)]})
    items["row"] = range(len(items))
    picked = whole_groups(items, 10, seed=0)
    sizes = items.groupby("group_id").size()
    assert len(picked) <= 10 and (picked.groupby("group_id").size() == sizes[picked["group_id"].unique()]).all()
    assert list(picked["row"]) == sorted(picked["row"])                   # the table's order
    assert picked.equals(whole_groups(items, 10, seed=0))                # the same under the seed
    draws = {tuple(whole_groups(items, 10, seed=s)["group_id"].unique()) for s in range(20)}
    assert len(draws) > 3                                   # seeds draw different groups: not the head every time
    assert whole_groups(items, None) is items and whole_groups(items, 21) is items
    assert list(whole_groups(items, 2, seed=0).groupby("group_id").size()) in ([3], [4])   # one group at least


def test_the_toy_probe_r_and_c_tables_fit_under_the_sweeps_cap_so_it_scores_the_chapters_own_items():
    from probekit.toyworld.items import DEFAULT_SIZE

    cap = conceptual.Params().finetune_eval_limit   # the chapter's default
    assert DEFAULT_SIZE["probe-r"] <= cap and DEFAULT_SIZE["probe-c"] <= cap


def test_item_rows_recompute_the_headlines(result, tmp_path):
    """Probe-R's acc and Probe-C's text/image/group are means of the item rows' columns, Probe-B's mAP is the mean of
    the average precision recomputed from each item's class scores, and its single-object acc a mean of
    ``correct``; exactly, per model and subset (condition for Probe-B)."""
    items = items_frame(result.items)
    ours = result.ours()
    checked = 0
    for (probe, model, condition), part in items.groupby(["probe", "model", "condition"]):
        if probe == "probe-r":
            for kind, rows in part.groupby("kind"):
                assert one(ours, probe=probe, model=model, subset=kind, metric="acc")["value"] == \
                    rows["correct"].dropna().to_numpy().mean()
                checked += kind == "predicate_swap"
        elif probe == "probe-c":
            assert (part["correct"].dropna() == part["group_correct"].dropna()).all()
            for split, rows in part.groupby("split"):
                for metric, column in (("group", "correct"), ("text", "text_correct"), ("image", "image_correct")):
                    assert one(ours, probe=probe, model=model, subset=split, metric=metric)["value"] == \
                        rows[column].dropna().to_numpy().mean()
                checked += split == "composition"
        else:
            assert probe == "probe-b" and condition in {"black", "scene"}
            for view, rows in part.groupby("view"):
                one_object = rows["single_object"].astype(bool)
                multi, single = rows[~one_object], rows[one_object]
                assert multi["correct"].isna().all() and single["correct"].notna().all()
                ap = np.array([average_precision(p, s) for p, s in zip(multi["positive"], multi["scores"])])
                assert np.array_equal(ap, multi["ap"].to_numpy(), equal_nan=True)
                assert one(ours, probe=probe, model=model, condition=condition, subset=view, metric="map")["value"] \
                    == ap[~np.isnan(ap)].mean()
                assert one(ours, probe="probe-b-single", model=model, condition=condition, subset=view,
                           metric="acc")["value"] == single["correct"].to_numpy().mean()
                checked += (condition, view) == ("black", "x̃1")
    assert checked == 3 * 2   # the three headlines of both models
    assert set(items["probe"]) == {"probe-r", "probe-c", "probe-b"}
    assert items_frame(pd.read_parquet(result.items.to_parquet(tmp_path / "items.parquet") or
                                       tmp_path / "items.parquet")).shape == items.shape


def test_group_anatomy_explains_group_scores_below_chance():
    """Item 4 of issue 54: toy-vilt's Probe-C group scores for pattern and size sit below the 1/6 chance.  Scores
    made of an image prior plus a caption prior (no image–caption fit) prefer one image under both captions and one
    caption under both images in every group: text, image and group scores 0; independent scores would give 1/6."""
    from probekit.metrics.conceptual import winoground
    from probekit.metrics.conceptual_items import group_anatomy
    from probekit.studies.conceptual.claims import BELOW_CHANCE, anatomy_claims
    rng = np.random.default_rng(0)
    n = 40
    image_prior, caption_prior = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    s = {f"s{i}{j}": image_prior[:, i] + caption_prior[:, j] for i in (0, 1) for j in (0, 1)}
    w = winoground(**s)
    items = pd.DataFrame({**s, "model": "m", "category": "pattern", "split": "composition",
                          "group_correct": w["group"], "caption_0": "a plain bottle", "caption_1": "a striped bottle"})
    a = group_anatomy(items).iloc[0]
    assert (a["n"], a["group"], a["one_caption"], a["one_image"]) == (n, 0.0, 1.0, 1.0)
    assert a["preferred"] in ("plain", "striped") and a["preferred_share"] >= 0.5
    independent = pd.DataFrame({**{k: rng.normal(size=4000) for k in s}, "model": "m", "category": "c",
                                "caption_0": "a big cup", "caption_1": "a small cup"})
    independent["group_correct"] = winoground(*(independent[k] for k in ("s00", "s01", "s10", "s11")))["group"]
    b = group_anatomy(independent).iloc[0]
    assert b["group"] == pytest.approx(1 / 6, abs=0.02) and b["one_caption"] == pytest.approx(0.5, abs=0.03)
    rows = frame([r("probe-c-category", "group", 0.0, 0.0, 0.0, subset="pattern", chance=1 / 6),
                  r("probe-c-category", "group", 0.16, 0.05, 0.3, subset="c", chance=1 / 6)])
    found = anatomy_claims(rows, pd.concat([group_anatomy(items), group_anatomy(independent)]))
    assert [(c.topic, c.verdict) for c in found] == [("m: pattern groups below chance", BELOW_CHANCE)]
    assert found[0].words["one_image"] == "100.0%"


def test_facts_are_typed(result):
    from probekit.studies.conceptual.facts import ConceptualFacts
    assert type(result.facts) is ConceptualFacts
    with pytest.raises(AttributeError):
        result.facts.probe_r_item   # noqa: B018  (a misspelt field fails at once)


def test_the_headlines_are_rebuilt_from_the_exported_items(result, tmp_path):
    assert check_headlines_from_items(result, tmp_path) == 3 * len(set(result.ours()["model"]) & {"toy-vilt", "toy-clip"})
