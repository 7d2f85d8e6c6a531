"""The predicate–noun lab: its checks and claims select the rows they name (hand-made rows, every verdict), its rows
reuse the main run's scores, and a small real run puts the lab models' rows, checks and claims in ``data``."""

from __future__ import annotations

import pandas as pd

from probekit.claims import ABOVE
from probekit.results import COLUMNS, frame, one, row, select
from probekit.studies import lab
from probekit.studies.prednoun import study as prednoun, lab as prednoun_lab
from probekit.toymodels import object_control
from probekit.studies.prednoun.claims import CROP_GAIN
from probekit.studies.prednoun.lab import CHECKS, CLAIMS, LAB_MODELS, LIMBS_PROBE
from probekit.toyworld.prednoun import LIMBS_ALIKE, LIMBS_DIFFER

STUDY = prednoun_lab.Study(prednoun.score_run, prednoun.analyse, prednoun.limbs_rows)


def _r(model, condition, value, low, high, subset="all", metric="pair_accuracy", probe="pairs"):
    chance = {"pair_accuracy": 0.25, "triplet_accuracy": 0.5, "pair_accuracy_diff": 0.0}[metric]
    return row(study="prednoun", probe=probe, model=model, condition=condition, subset=subset, metric=metric,
               value=value, ci=(low, high), n=100, chance=chance)


def _model(model, full=(0.5, 0.4, 0.6), cropped=(0.9, 0.85, 0.95), triplets=(0.7, 0.6, 0.8), noun=(0.6, 0.5, 0.7),
           predicate=(0.4, 0.3, 0.5), gain=(0.4, 0.3, 0.5), alike=(0.4, 0.3, 0.5)) -> list[dict]:
    """Every row the lab produces for one model, plus decoys a loose selection would also match (the alternative
    template's probe, the cropped triplets, pair accuracy beside every triplet row, the limbs-differ pairs)."""
    return [_r(model, "full", *alike, subset=LIMBS_ALIKE, probe=LIMBS_PROBE),
            _r(model, "full", 0.97, 0.95, 0.99, subset=LIMBS_DIFFER, probe=LIMBS_PROBE),
            _r(model, "full", *full), _r(model, "cropped", *cropped), _r(model, "full", *triplets,
                                                                            metric="triplet_accuracy"),
            _r(model, "cropped", 0.97, 0.95, 0.99, metric="triplet_accuracy"),
            _r(model, "full", *noun, subset="noun"), _r(model, "full", *predicate, subset="predicate"),
            _r(model, "cropped", *noun, subset="noun"), _r(model, "cropped", *predicate, subset="predicate"),
            _r(model, CROP_GAIN, *gain, metric="pair_accuracy_diff"),
            _r(model, "full", 0.99, 0.98, 1.0, probe="pairs-alt")]


def _rows(**models) -> pd.DataFrame:
    return frame([r for name, kw in models.items() for r in _model(name.replace("_", "-"), **kw)])


def _verdicts(found: pd.DataFrame, what: str = "what") -> dict:
    return {(m, w): v for m, w, v in zip(found["model"], found[what], found["verdict"])}


def test_lab_models_and_what_the_checks_and_claims_name():
    assert LAB_MODELS == ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-mismatch", "toy-clip",
                          "toy-clip-hardneg", "toy-clip-unbound", "toy-vilt-unpaired", "toy-bert-blind")
    assert [(c.model, c.role) for c in CHECKS] == [("toy-clip-unbound", lab.TARGET), ("toy-clip-hardneg", lab.PARENT),
                                                    ("toy-clip-unbound", lab.CONTROL),
                                                    ("toy-bert-blind", lab.BLIND), ("toy-bert-blind", lab.BLIND),
                                                    ("toy-clip-unbound", lab.CONTROL),
                                                    ("toy-vilt-unpaired", lab.TARGET),
                                                    ("toy-vilt-hardneg", lab.PARENT),
                                                    ("toy-vilt-unpaired", lab.CONTROL),
                                                    ("toy-vilt-unpaired", lab.CONTROL)] + [
        (m, lab.TRAINED) for m in LAB_MODELS[:6] for _ in range(2)]
    # every control: the cropped pairs and the single object
    controls = [c.where for c in CHECKS if c.role in (lab.CONTROL, lab.TRAINED)]
    assert controls == [prednoun_lab.CROPPED, object_control.ROW] * 8
    # the removal knock-out and its parent are judged on look-alike triplets, the scrambling one on all triplets
    assert [c.where for c in CHECKS[6:8]] == [prednoun_lab.ALIKE_TRIPLETS] * 2
    assert prednoun_lab.ALIKE_TRIPLETS == dict(probe=LIMBS_PROBE, condition="full", subset=LIMBS_ALIKE,
                                               metric="triplet_accuracy")
    # the 2 x 2 on look-alike pairs: architecture within each objective, objective within each architecture; then
    # the cropped topline and nouns vs predicates (over all pairs)
    assert [(c.a[0], c.b[0], c.expect, c.by_construction) for c in CLAIMS] == [
        ("toy-clip", "toy-vilt", lab.LOWER, False), ("toy-clip-hardneg", "toy-vilt-hardneg", lab.LOWER, False),
        ("toy-clip-hardneg", "toy-clip", lab.HIGHER, False), ("toy-vilt-hardneg", "toy-vilt", lab.HIGHER, False),
        ("toy-vilt", "toy-vilt", lab.HIGHER, False), ("toy-vilt", "toy-vilt", lab.HIGHER, True)]
    assert all(c.diff[1]["subset"] == LIMBS_ALIKE for c in CLAIMS[:4]) and all(c.chance_floor for c in CLAIMS)
    assert all(c.source.startswith("Nikolaus et al. 2022, Table") for c in CLAIMS)


def test_checks_give_the_expected_verdicts_on_a_probe_doing_its_job():
    # the knock-outs cannot bind: their triplets sit at 0.5, their pairs below the coin-flip 0.25 (a preference
    # that does not depend on the image loses both triplets' pair), and the binding checks read triplets
    rows = _rows(toy_clip_unbound=dict(full=(0.12, 0.07, 0.18), triplets=(0.51, 0.47, 0.54),
                                       cropped=(0.92, 0.86, 0.97)),
                 toy_clip_hardneg=dict(full=(0.45, 0.36, 0.54), triplets=(0.68, 0.62, 0.74)),
                 toy_clip=dict(full=(0.5, 0.4, 0.6), triplets=(0.49, 0.43, 0.55)),   # no binding check reads toy-clip
                 toy_bert_blind=dict(full=(0.0, 0.0, 0.0), triplets=(0.5, 0.5, 0.5)))
    found = lab.checks(rows, CHECKS)[:5]
    assert list(found["verdict"]) == [lab.AT_CHANCE, ABOVE, lab.PASSES, lab.BY_DESIGN, lab.BY_DESIGN]
    assert found["ok"].all()
    # each check reads exactly its row: triplets full / pairs cropped / the blind pairs and triplets on full images
    # (default template)
    assert [r["value"] for r in found["row"]] == [0.51, 0.68, 0.92, 0.0, 0.5]
    assert [r["metric"] for r in found["row"]] == ["triplet_accuracy", "triplet_accuracy", "pair_accuracy",
                                                   "pair_accuracy", "triplet_accuracy"]
    assert {r["probe"] for r in found["row"]} == {"pairs"} and [r["condition"] for r in found["row"]] == \
        ["full", "full", "cropped", "full", "full"]


def _alike_triplets(model, value, low, high):
    return _r(model, "full", value, low, high, subset=LIMBS_ALIKE, metric="triplet_accuracy", probe=LIMBS_PROBE)


def test_the_binding_removal_is_judged_on_look_alike_triplets_by_equivalence_with_chance():
    """toy-vilt-unpaired must sit within chance ± 5 points on look-alike triplets (its limbs-differ and all-pairs
    rows, where the limbs' colour binds, are not read), its parent above chance there, and pass both controls."""
    def with_alike(model, alike_triplets, **kw):
        return [*_model(model, triplets=(0.9, 0.88, 0.92), **kw), _alike_triplets(model, *alike_triplets)]
    rows = frame([*with_alike("toy-vilt-unpaired", (0.51, 0.47, 0.54), cropped=(0.95, 0.93, 0.97)),
                  *with_alike("toy-vilt-hardneg", (0.62, 0.58, 0.66)),
                  row(study="prednoun", model="toy-vilt-unpaired", value=0.99, ci=(0.97, 1.0), n=200, chance=0.5,
                      **object_control.ROW)])
    found = lab.checks(rows, CHECKS)[6:10]
    assert list(found["verdict"]) == [lab.AT_CHANCE, ABOVE, lab.PASSES, lab.PASSES] and found["ok"].all()
    assert [r["value"] for r in found["row"][:2]] == [0.51, 0.62]
    # at chance needs the whole interval within ± 5 points: one that reaches 44% is not resolved; one above, fails
    for alike, verdict in [((0.49, 0.44, 0.54), lab.NOT_RESOLVED), ((0.58, 0.56, 0.61), ABOVE)]:
        leaky = frame([*with_alike("toy-vilt-unpaired", alike)])
        judged = lab.checks(leaky, CHECKS).iloc[6]
        assert (judged["verdict"], judged["ok"]) == (verdict, False)


def test_checks_flag_a_probe_that_leaks_and_say_not_run_for_a_missing_model():
    rows = _rows(toy_clip_unbound=dict(triplets=(0.6, 0.55, 0.65), cropped=(0.7, 0.6, 0.8)),
                 toy_bert_blind=dict(full=(0.4, 0.32, 0.48), triplets=(0.7, 0.6, 0.8)))
    found = lab.checks(rows, CHECKS)[:5]
    assert list(found["verdict"]) == [ABOVE, lab.NOT_RUN, lab.FAILS, ABOVE, ABOVE]
    assert not found["ok"].any()
    only_blind = lab.checks(_rows(toy_bert_blind={}), CHECKS)
    assert list(only_blind["verdict"][:3]) == [lab.NOT_RUN] * 3
    # a parent that cannot bind either: its triplets at chance are not the "above chance" a parent must show
    flat = lab.checks(_rows(toy_clip_hardneg=dict(triplets=(0.5, 0.46, 0.54))), CHECKS)
    assert (flat["verdict"][1], flat["ok"][1]) == (lab.AT_CHANCE, False)


def test_every_trained_model_is_held_to_the_higher_control_floor_cropped_and_on_a_single_object():
    def single(model, value):
        return row(study="prednoun", model=model, value=value, ci=(value - 0.05, value), n=200, chance=0.5,
                   **object_control.ROW)
    rows = pd.concat([_rows(toy_vilt=dict(cropped=(0.94, 0.90, 0.97)), toy_vilt_noisy=dict(cropped=(0.89, 0.85, 0.93)),
                            toy_clip_unbound=dict(cropped=(0.90, 0.86, 0.94))),
                      frame([single("toy-vilt", 0.97), single("toy-vilt-noisy", 0.99), single("toy-clip-unbound", 0.91),
                             single("toy-clip", 0.89)])], ignore_index=True)
    found = lab.checks(rows, CHECKS)
    trained = found[found["role"] == lab.TRAINED]
    cropped, single_object = prednoun_lab.CROPPED_WHAT, object_control.WHAT
    assert _verdicts(trained) == {
        ("toy-vilt", cropped): lab.PASSES, ("toy-vilt", single_object): lab.PASSES,
        ("toy-vilt-noisy", cropped): lab.AT_FLOOR, ("toy-vilt-noisy", single_object): lab.PASSES,
        ("toy-clip", cropped): lab.NOT_RUN, ("toy-clip", single_object): lab.FAILS,
        **{(m, w): lab.NOT_RUN for m in ("toy-vilt-hardneg", "toy-vilt-mismatch", "toy-clip-hardneg")
           for w in (cropped, single_object)}}
    # the knock-out's controls, their intervals from 0.86: at or above its floor of 0.85, not a trained model's 0.90
    assert list(found["verdict"][found["role"] == lab.CONTROL]) == [lab.PASSES, lab.PASSES, lab.NOT_RUN, lab.NOT_RUN]


def test_claims_hold_fail_or_stay_unresolved_from_their_rows():
    rows = _rows(toy_clip=dict(alike=(0.2, 0.12, 0.28)),
                 toy_vilt=dict(alike=(0.5, 0.4, 0.6), cropped=(0.8, 0.72, 0.88), gain=(0.3, 0.2, 0.4)))
    found = lab.claims(rows, CLAIMS)
    assert list(found["verdict"]) == [lab.HOLDS] + [lab.NOT_RUN] * 3 + [lab.HOLDS, lab.BY_CONSTRUCTION]
    assert found["a"][0]["subset"] == LIMBS_ALIKE and found["b"][0]["model"] == "toy-vilt"
    assert found["diff"][4]["metric"] == "pair_accuracy_diff" and found["diff"][0] is None
    assert (found["a"][5]["subset"], found["b"][5]["subset"]) == ("noun", "predicate")
    # the other way round / a paired difference whose interval holds 0 (even with intervals that do not overlap)
    other = _rows(toy_clip=dict(alike=(0.8, 0.7, 0.9)),
                  toy_vilt=dict(alike=(0.5, 0.4, 0.6), cropped=(0.75, 0.65, 0.85), gain=(0.05, -0.02, 0.12)))
    assert list(lab.claims(other, CLAIMS)["verdict"])[::4] == [lab.DOES_NOT_HOLD, lab.NOT_RESOLVED]
    # the architecture claim's paired difference over the same pairs decides it when there: one that holds 0
    # leaves it unresolved, even with intervals that do not overlap
    versus = prednoun_lab.versus("toy-clip", "toy-vilt")
    paired = pd.concat([rows, frame([_r("toy-clip", versus, -0.03, -0.08, 0.02, metric="pair_accuracy_diff",
                                        subset=LIMBS_ALIKE, probe=LIMBS_PROBE)])])
    found = lab.claims(paired, CLAIMS)
    assert found["verdict"][0] == lab.NOT_RESOLVED and found["diff"][0]["condition"] == "toy-clip − toy-vilt, full"


def _two_by_two(objective_dual, objective_cross, dual_alike=(0.4, 0.3, 0.5)) -> pd.DataFrame:
    """The four members' look-alike rows (the dual encoders' ``dual_alike``, the others above chance) and the
    2 x 2's objective effects, paired."""
    def diff(model, condition, v):
        return _r(model, condition, *v, metric="pair_accuracy_diff", subset=LIMBS_ALIKE, probe=LIMBS_PROBE)
    (dual_swap, dual), (cross_swap, cross) = prednoun_lab.OBJECTIVES
    return pd.concat([_rows(**{m.replace("-", "_"): dict(alike=dual_alike) if m in (dual_swap, dual) else {}
                               for m in (dual_swap, dual, cross_swap, cross)}), frame([
        diff(dual_swap, prednoun_lab.versus(dual_swap, dual), objective_dual),
        diff(cross_swap, prednoun_lab.versus(cross_swap, cross), objective_cross)])], ignore_index=True)


def test_the_two_by_twos_objective_effects_are_judged_by_their_paired_differences():
    # swap negatives help both architectures: both effects hold; only the cross-encoder learns from them: the dual
    # encoder's effect holds 0
    found = lab.claims(_two_by_two((0.2, 0.1, 0.3), (0.15, 0.05, 0.25)), CLAIMS)
    assert list(found["verdict"][2:4]) == [lab.HOLDS, lab.HOLDS]
    found = lab.claims(_two_by_two((0.0, -0.05, 0.05), (0.3, 0.2, 0.4)), CLAIMS)
    assert list(found["verdict"][2:4]) == [lab.NOT_RESOLVED, lab.HOLDS]
    # neither dual encoder binds above chance (0.25): their comparison is not testable, whatever its difference
    # says; each architecture claim sets a dual encoder at chance against a cross-encoder above it: judged (here
    # not resolved: their intervals, [15, 30] and [30, 50], touch)
    found = lab.claims(_two_by_two((0.1, 0.05, 0.15), (0.3, 0.2, 0.4), dual_alike=(0.22, 0.15, 0.3)), CLAIMS)
    assert list(found["verdict"][:4]) == [lab.NOT_RESOLVED, lab.NOT_RESOLVED, lab.NOT_TESTABLE, lab.HOLDS]


def test_lab_rows_reuse_the_main_runs_scores():
    # a model name no registry knows: loading it would fail, so its rows come from ``scored`` alone
    items = pd.DataFrame({"item_id": ["a0", "a1", "b0", "b1"], "pair_id": ["a", "a", "b", "b"],
                          "pos": ["subject", "subject", "object", "object"], "subject": ["man", "woman", "dog", "dog"],
                          "object": ["sitting"] * 2 + ["running", "lying"],
                          "word_target": ["man", "woman", "running", "lying"],
                          "word_distractor": ["woman", "man", "lying", "running"],
                          "other_agent": ["woman", "man", "woman", "woman"]})
    scored = {("no-such-model", c, "default"): items.assign(s_target=[0.9, 0.8, 0.7, 0.2], s_distractor=0.5)
              for c in ("full", "cropped")}
    rows = prednoun_lab.lab_rows(items, ["no-such-model"], views={}, scored=scored, study=STUDY)
    assert set(rows["model"]) == {"no-such-model"}
    assert one(rows, condition="full", subset="all", metric="pair_accuracy")["value"] == 0.5
    assert one(rows, condition=CROP_GAIN, metric="pair_accuracy_diff")["value"] == 0.0
    # the full-image pairs again, by the limbs: pair a's man and woman wear different limbs (a won), pair b's dog
    # and woman alike ones (b lost)
    split = select(rows, probe=prednoun.LIMBS_PROBE, metric="pair_accuracy")
    assert list(zip(split["subset"], split["value"], split["n"])) == [("limbs alike", 0.0, 1), ("limbs differ", 1.0, 1)]


def test_the_two_by_two_is_paired_over_the_same_look_alike_pairs():
    # hand-made scores under the four members' names (every run given: nothing is loaded).  Pairs a and b hold
    # kinds whose limbs look alike, c kinds whose limbs differ.  Pairs won (a, b, c): toy-clip (0, 0, 1), toy-vilt
    # (1, 0, 1), toy-clip-hardneg (1, 1, 1), toy-vilt-hardneg (1, 1, 0); on a and b: clip − vilt (−1, 0),
    # clip-hardneg − vilt-hardneg (0, 0), clip-hardneg − clip (1, 1), vilt-hardneg − vilt (0, 1)
    items = pd.DataFrame({"item_id": ["a0", "a1", "b0", "b1", "c0", "c1"], "pair_id": ["a", "a", "b", "b", "c", "c"],
                          "pos": ["subject"] * 6, "subject": ["man", "girl", "dog", "woman", "man", "boy"],
                          "object": ["sitting"] * 6, "word_target": ["man", "girl", "dog", "woman", "man", "boy"],
                          "word_distractor": ["girl", "man", "woman", "dog", "boy", "man"],
                          "other_agent": ["girl", "man", "woman", "dog", "boy", "man"]})
    won, lost = [0.9, 0.9], [0.9, 0.2]
    target = {"toy-clip": lost + lost + won, "toy-vilt": won + lost + won, "toy-clip-hardneg": won + won + won,
              "toy-vilt-hardneg": won + won + lost}
    scored = {(m, c, "default"): items.assign(s_target=t, s_distractor=0.5) for m, t in target.items()
              for c in ("full", "cropped")}
    rows = prednoun_lab.lab_rows(items, list(target), views={}, scored=scored, study=STUDY)
    diffs = select(rows, probe=LIMBS_PROBE, metric="pair_accuracy_diff")
    assert set(diffs["subset"]) == {LIMBS_ALIKE} and set(diffs["n"]) == {2}        # pair c is left out
    assert dict(zip(diffs["condition"], diffs["value"])) == {
        "toy-clip − toy-vilt, full": -0.5, "toy-clip-hardneg − toy-vilt-hardneg, full": 0.0,
        "toy-clip-hardneg − toy-clip, full": 1.0, "toy-vilt-hardneg − toy-vilt, full": 0.5}
    found = lab.claims(rows, CLAIMS)
    # toy-clip (0 of 2) and toy-vilt (1 of 2, [0, 1]) are not above chance: their comparison is not testable; the
    # dual encoder's objective effect is 1 on both pairs: its interval [1, 1] excludes 0; the others hold 0
    assert list(found["verdict"][:4]) == [lab.NOT_TESTABLE, lab.NOT_RESOLVED, lab.HOLDS, lab.NOT_RESOLVED]
    assert [d["value"] for d in found["diff"][:4]] == [-0.5, 0.0, 1.0, 0.5]
    assert len(select(rows, probe="pairs", metric="pair_accuracy_diff")) == 4     # each model's cropped − full


def test_real_run_scores_the_lab_models_on_the_same_items(tmp_path):
    result = prednoun.run(prednoun.Params(
        models=["toy-vilt"], clip_models=[], dataset="toy", data_dir=tmp_path / "data", limit=12, device="cpu",
        cache_dir=tmp_path / "scores", min_concept_count=4, n_resamples=10,
        lab_models=["toy-clip-unbound", "toy-bert-blind"]))
    rows = result.data["lab"]
    assert list(rows.columns) == COLUMNS and set(rows["model"]) == {"toy-clip-unbound", "toy-bert-blind"}
    assert not set(rows["model"]) & set(result.rows["model"])  # lab rows stay out of the study's rows
    for model in ("toy-clip-unbound", "toy-bert-blind"):
        for condition in ("full", "cropped"):
            acc = one(rows, model=model, probe="pairs", condition=condition, subset="all", metric="pair_accuracy")
            assert acc["n"] == 6 and acc["chance"] == 0.25
    # a blind model prefers one sentence whatever the image, and the pair swaps the sentences: it wins no pair
    assert one(rows, model="toy-bert-blind", condition="full", subset="all", metric="pair_accuracy")["value"] == 0
    assert len(result.data["lab_checks"]) == len(CHECKS) and len(result.data["lab_claims"]) == len(CLAIMS)
    assert set(result.data["lab_claims"]["verdict"]) == {lab.NOT_RUN}  # toy-vilt and toy-clip are not lab models
    assert "12 triplets" in result.facts.lab and result.params["lab_models"] == ["toy-clip-unbound",
                                                                                    "toy-bert-blind"]
