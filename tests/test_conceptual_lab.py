"""The conceptual lab: its checks and claims select the rows they name (hand-made rows, every verdict), ``lab_rows``
builds rows under exactly those names from per-item scores (paired differences, the renamed α sweep and Probe-B
rows), and a small real run puts the lab models' rows, checks and claims in ``data`` without scoring a model twice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from probekit.claims import ABOVE
from probekit.metrics import conceptual as mc
from probekit.results import COLUMNS, ITEMS, frame, one, row, select
from probekit.report import lab as lab_report
from probekit.studies import lab
from probekit.studies.conceptual import study as conceptual, lab as conceptual_lab
from probekit.studies.conceptual import scores as cs
from probekit.studies.conceptual.lab import CHECKS, CLAIMS
from probekit.studies.conceptual.params import LAB_MODELS


def _r(model, value, low, high, probe="probe-r", subset="predicate_swap", metric="acc", condition="", chance=0.5):
    return row(study="conceptual", probe=probe, model=model, condition=condition, subset=subset, metric=metric,
               value=value, ci=(low, high), n=60, chance=chance)


def _blind(r_pred=(0.5, 0.4, 0.6), r_subj=(0.5, 0.4, 0.6), c=(0.0, 0.0, 0.0)) -> list[dict]:
    """Every row a check reads for the blind model, plus decoys a loose selection would also match."""
    m = "toy-bert-blind"
    return [_r(m, *r_pred), _r(m, *r_subj, subset="subject_swap"), _r(m, 0.99, 0.98, 1.0, subset="subject_only"),
            _r(m, 0.99, 0.98, 1.0, metric="mu_c"),
            *[_r(m, *c, probe="probe-c", subset="composition", metric=k, chance=mc.CHANCE[k])
              for k in ("text", "image", "group")],
            *[_r(m, 0.9, 0.8, 1.0, probe="probe-c", subset="object", metric=k, chance=mc.CHANCE[k])
              for k in ("text", "image", "group")]]


def test_lab_models_and_what_the_checks_and_claims_name():
    assert LAB_MODELS == ("toy-clip", "toy-clip-hardneg", "toy-clip-scenealways", "toy-clip-noattr", "toy-vilt",
                          "toy-bert-blind")
    assert [(c.model, c.role) for c in CHECKS] == [
        ("toy-clip-noattr", lab.TARGET), ("toy-clip", lab.PARENT), ("toy-clip-noattr", lab.CONTROL)] + [
        ("toy-clip-scenealways, (x0, x̃1)", lab.KNOCK_IN)] + [
        ("toy-bert-blind", lab.FLOOR)] * 2 + [("toy-bert-blind", lab.BLIND)] * 3
    # every sweep and encoder claim at the paper's α = 0.2 and at α = 1
    assert conceptual_lab.ALPHAS == (0.2, 1) and conceptual_lab.PATCH_ALPHA == 0.2
    assert [(c.a[0], c.b[0], c.expect, c.diff is not None, c.by_construction) for c in CLAIMS] == [
        *[(f"toy-clip, both, α = {a:g}", "toy-clip, both, α = 0", expect, True, False)
          for expect in (lab.HIGHER, lab.HIGHER, lab.LOWER) for a in (0.2, 1)],
        *[(f"toy-clip, text, α = {a:g}", f"toy-clip, vision, α = {a:g}", expect, True, False)
          for expect in (lab.HIGHER, lab.LOWER) for a in (0.2, 1)],
        ("toy-clip-hardneg", "toy-clip", lab.HIGHER, True, False),
        ("toy-clip-hardneg", "toy-clip", lab.HIGHER, True, False),
        ("toy-clip, x0", "toy-clip, x̃1", lab.NO_DIFFERENCE, True, False)]
    assert [c.diff[0] for c in CLAIMS[6:10]] == [f"toy-clip, text, α = {a:g} − vision, α = {a:g}" for a in (0.2, 1)] * 2
    # the context claim is the paper's finding (models do not use context), judged within ± 5 points
    assert CLAIMS[-1].margin == conceptual_lab.CONTEXT_MARGIN == 5.0
    assert all(c.source.startswith("Schiappa et al. 2023, ") for c in CLAIMS)


BLIND_CHECKS = [c for c in CHECKS if c.model == "toy-bert-blind"]


def test_blind_checks_judge_the_counterbalanced_probe_c_and_show_probe_r_as_a_text_floor():
    found = lab.checks(frame(_blind()), BLIND_CHECKS)
    assert list(found["verdict"]) == [lab.NOT_ABOVE] * 2 + [lab.BY_DESIGN] * 3 and found["ok"].all()
    assert [v.split("; chance ")[0] for v in lab_report.checks_table(found)["verdict"][2:]] == [
        f"{lab.BY_DESIGN}, not judged (these items cannot be won without the image)"] * 3
    assert [r["subset"] for r in found["row"]] == ["predicate_swap", "subject_swap"] + ["composition"] * 3
    assert [r["metric"] for r in found["row"]] == ["acc", "acc", "text", "image", "group"]
    # Probe-R's unlikely captions can be refused from the text alone (the paper's design): the verdict says so,
    # and the row is not judged; on counterbalanced Probe-C a blind score above chance is a failure
    leaky = lab.checks(frame(_blind(r_pred=(0.8, 0.7, 0.9), c=(0.6, 0.5, 0.7))), BLIND_CHECKS)
    assert list(leaky["verdict"]) == [ABOVE, lab.NOT_ABOVE, ABOVE, ABOVE, ABOVE]
    assert list(leaky["ok"]) == [True, True, False, False, False]
    table = lab_report.checks_table(leaky)
    assert [v.split("; chance ")[0] for v in table["verdict"][:3]] == [
        f"{v}, not judged (a text floor by the paper's design)" for v in (ABOVE, lab.NOT_ABOVE)] + [
        f"{ABOVE} ✗ (should be not above chance)"]
    assert lab.checks(frame([_r("toy-clip", 0.9, 0.8, 1.0)]), CHECKS)["verdict"].eq(lab.NOT_RUN).all()


def _noattr_rows(composition, parent=(0.90, 0.87, 0.93), objects=(0.99, 0.98, 1.0)) -> list[dict]:
    """Probe-C rows of the attributes knock-out and its parent, with the Winoground scores beside μ(c) as decoys."""
    def c(model, subset, value, low, high):
        return [_r(model, value, low, high, probe="probe-c", subset=subset, metric="mu_c"),
                *[_r(model, 0.02, 0.0, 0.05, probe="probe-c", subset=subset, metric=k, chance=mc.CHANCE[k])
                  for k in ("text", "image", "group")]]
    return [*c("toy-clip-noattr", "composition", *composition), *c("toy-clip-noattr", "object", *objects),
            *c("toy-clip", "composition", *parent)]


def test_the_attributes_knock_out_must_collapse_on_composition_swaps_only():
    """Captions that never name a colour, size or pattern leave nothing to tell "a small cube" from "a large cube":
    its Probe-C composition μ(c) must lie within 0.5 ± 5 points (an image-blind choice scores 0.5 exactly) while
    toy-clip, its parent, is above chance there; object swaps (the attribute shared) must still pass."""
    found = lab.checks(frame(_noattr_rows((0.50, 0.47, 0.53))), conceptual_lab.NO_ATTR_CHECKS)
    assert list(found["verdict"]) == [lab.AT_CHANCE, ABOVE, lab.PASSES] and found["ok"].all()
    assert [(r["subset"], r["metric"], r["value"]) for r in found["row"]] == [
        ("composition", "mu_c", 0.5), ("composition", "mu_c", 0.9), ("object", "mu_c", 0.99)]
    # attribute words learned anyway (a leak), or too few groups to tell chance from a small effect
    for composition, verdict in [((0.70, 0.65, 0.75), ABOVE), ((0.52, 0.44, 0.60), lab.NOT_RESOLVED)]:
        judged = lab.checks(frame(_noattr_rows(composition)), conceptual_lab.NO_ATTR_CHECKS).iloc[0]
        assert (judged["verdict"], judged["ok"]) == (verdict, False)


#: the issue's numbers: at α = 0.25 the held-out task's paired change is −0.6 [−2.0, +0.6] points, not resolved
SMALL_FORGETTING = (-0.006, -0.02, 0.006)


def _claim_rows(r_diff=(0.1, 0.05, 0.15), top1_diff=(-0.2, -0.3, -0.1), hard_diff=(0.0, -0.02, 0.02),
                dc=(-3.0, -5.0, -1.0), tv_r=(0.0, -0.01, 0.01), tv_top1=(-0.03, -0.05, -0.01),
                top1_diff_paper=SMALL_FORGETTING, tv_r_paper=(0.02, 0.01, 0.03), text_gain=(0.5, 0.4, 0.6)
                ) -> pd.DataFrame:
    """Hand-made sweep, hard-negative and Probe-B rows; the sweep at α = 1 and at the paper's α = 0.2, where the
    paired differences are those of α = 1 except the held-out task's (``top1_diff_paper``) and the encoders'
    Probe-R one (``tv_r_paper``); each encoder's own gain over the original (``text_gain``, the vision encoder's
    resolved) is what the encoder claims presuppose."""
    out = []
    for a in (0.2, 1):
        tv = {"mu_c_diff": tv_r if a == 1 else tv_r_paper, "top1_diff": tv_top1}
        for enc in ("text", "vision"):   # the two encoders' fine-tunes, and their paired difference
            for subset, metric in (("probe-r predicate_swap", "mu_c"), ("general", "top1")):
                out.append(_r(f"toy-clip, {enc}, α = {a:g}", 0.8, 0.7, 0.9, probe="patching", subset=subset,
                              metric=metric, condition=f"{enc}, α = {a:g}"))
        for subset, metric in (("probe-r predicate_swap", "mu_c_diff"), ("general", "top1_diff")):
            cond = f"text, α = {a:g} − vision, α = {a:g}"
            out.append(_r(f"toy-clip, {cond}", *tv[metric], probe="patching", subset=subset, metric=metric,
                          condition=cond, chance=0.0))
            for enc, gain in (("text", text_gain), ("vision", (0.5, 0.4, 0.6))):
                out.append(_r(f"toy-clip, {enc}, α = {a:g} − original", *gain, probe="patching", subset=subset,
                              metric=metric, condition=f"{enc}, α = {a:g} − original", chance=0.0))
    for alpha, v in ((0, 0.6), (0.2, 0.65), (1, 0.7)):
        for subset, metric in (("probe-r predicate_swap", "mu_c"), ("probe-c composition", "mu_c"),
                               ("general", "top1")):
            out.append(_r(f"toy-clip, both, α = {alpha:g}", v, v - 0.1, v + 0.1, probe="patching", subset=subset,
                          metric=metric, condition=f"both, α = {alpha:g}"))
    for a in (0.2, 1):
        for subset, metric, d in (("probe-r predicate_swap", "mu_c_diff", r_diff),
                                  ("probe-c composition", "mu_c_diff", r_diff),
                                  ("general", "top1_diff", top1_diff if a == 1 else top1_diff_paper)):
            out.append(_r(f"toy-clip, both, α = {a:g} − original", *d, probe="patching", subset=subset,
                          metric=metric, condition=f"both, α = {a:g} − original", chance=0.0))
    for m in ("toy-clip-hardneg", "toy-clip"):
        out += [_r(m, 0.65, 0.55, 0.75, metric="mu_c"), _r(m, 0.65, 0.55, 0.75, probe="probe-c",
                                                            subset="composition", metric="mu_c")]
    out += [_r("toy-clip-hardneg", *hard_diff, probe=conceptual_lab.PAIRED, subset=s, metric="mu_c_diff",
               condition="toy-clip-hardneg − toy-clip", chance=0.0)
            for s in ("probe-r predicate_swap", "probe-c composition")]
    nan = float("nan")
    out += [_r("toy-clip, x0", 0.9, 0.85, 0.95, probe="probe-b", subset="x0", metric="map", condition="scene",
               chance=nan),
            _r("toy-clip, x̃1", 0.8, 0.7, 0.9, probe="probe-b", subset="x̃1", metric="map", condition="scene",
               chance=nan),
            _r("toy-clip, (x0, x̃1)", *dc, probe="probe-b", subset="(x0, x̃1)", metric="delta_c_pts",
               condition="scene", chance=nan),
            _r("toy-clip, (x0, x̃1)", 9.0, 8.0, 10.0, probe="probe-b", subset="(x0, x̃1)", metric="delta_c_pts",
               condition="black", chance=nan)]   # a decoy: the black filler is not an unrelated scene
    return frame(out)


H, N, D = lab.HOLDS, lab.NOT_RESOLVED, lab.DOES_NOT_HOLD


def test_claims_read_the_paired_differences_at_both_alphas():
    found = lab.claims(_claim_rows(), CLAIMS)
    # (R, C, forgetting) x (α = 0.2, 1); encoders' R, forgetting x (0.2, 1); hard negatives R, C; context
    assert list(found["verdict"]) == [H, H, H, H, N, H, H, N, H, H, N, N, H]
    # the paper's forgetting claim at its α = 0.2: −0.6 [−2.0, +0.6] points, not resolved (it holds at α = 1)
    assert found["diff"][4]["condition"] == "both, α = 0.2 − original" and found["diff"][4]["value"] == -0.006
    assert found["a"][5]["condition"] == "both, α = 1" and found["diff"][5]["metric"] == "top1_diff"
    assert found["diff"][8]["condition"] == "text, α = 0.2 − vision, α = 0.2" and found["diff"][9]["value"] == -0.03
    # the paper's finding that models do not use context: Δc(x0, x̃1) −3.0 [−5.0, −1.0] lies within ± 5 points
    assert found["diff"][12]["condition"] == "scene" and found["diff"][12]["value"] == -3.0
    assert found["margin"][12] == 5.0
    flipped = lab.claims(_claim_rows(r_diff=(-0.1, -0.15, -0.05), top1_diff=(0.0, -0.1, 0.1),
                                     hard_diff=(0.05, 0.01, 0.09), dc=(8.0, 6.0, 9.0), tv_r=(0.02, 0.01, 0.03),
                                     tv_top1=(0.02, 0.01, 0.03), top1_diff_paper=(-0.1, -0.2, -0.05),
                                     tv_r_paper=(0.0, -0.01, 0.01)), CLAIMS)
    assert list(flipped["verdict"]) == [D, D, D, D, H, N, N, H, D, D, H, H, D]
    wide = lab.claims(_claim_rows(dc=(3.5, -1.0, 8.0)), CLAIMS)   # holds 0 but reaches past the margin
    assert wide["verdict"][12] == N
    untrained = lab.claims(_claim_rows(text_gain=(0.01, -0.01, 0.03)), CLAIMS)   # the text fine-tune learned nothing
    assert list(untrained["verdict"][6:10]) == [lab.NOT_TESTABLE] * 4
    assert [g["model"] for g in untrained["gains"][6]] == ["toy-clip, text, α = 0.2 − original",
                                                           "toy-clip, vision, α = 0.2 − original"]
    no_sweep = _claim_rows()
    no_sweep = no_sweep[no_sweep["probe"] != "patching"]
    assert list(lab.claims(no_sweep, CLAIMS)["verdict"][:10]) == [lab.NOT_RUN] * 10


def _scored(model, shift):
    """Per-item Probe-R and Probe-C tables as the study's score functions return them (hand-made values)."""
    rng = np.random.default_rng(len(model))
    lc, lw = rng.normal(1 + shift, 1, 12), rng.normal(0, 1, 12)
    r = pd.DataFrame({"item_id": [f"i{k}" for k in range(12)], "group_id": [f"g{k // 2}" for k in range(12)],
                      "kind": ["predicate_swap", "subject_swap"] * 6, "model": model, "logit_correct": lc,
                      "logit_wrong": lw, "n_images": 1}).assign(**mc.probe_r_item_metrics(lc, lw))
    s = rng.normal(0, 1, (4, 10)) + shift * np.array([1, 0, 0, 1])[:, None]
    c = pd.DataFrame({"group_id": [f"c{k}" for k in range(10)], "split": ["composition", "object"] * 5,
                      "category": "colour", "model": model}).assign(**mc.winoground(*s))
    return r, c


def test_lab_rows_name_their_rows_as_the_claims_read_them_and_reuse_the_scores_given():
    tables = {m: _scored(m, shift) for m, shift in (("toy-clip", 0.0), ("toy-clip-hardneg", 3.0))}
    scored = {p: pd.concat([t[k] for t in tables.values()]) for k, p in enumerate(("probe-r", "probe-c"))}
    sweep = _claim_rows()
    sweep = sweep[sweep["probe"] == "patching"].assign(model="toy-clip", condition=lambda d: d["condition"])
    b = _claim_rows()
    b = b[b["probe"] == "probe-b"].assign(model="toy-clip")

    def load(name):
        raise AssertionError(f"{name} was scored twice")

    rows = conceptual_lab.lab_rows({}, ["toy-clip", "toy-clip-hardneg"], load=load, scored=scored, sweep=sweep,
                                   probe_b=lambda wanted: b.assign(model=wanted[0]))
    assert list(rows.columns) == [*COLUMNS, ITEMS]   # each row with what it was computed from, for the lab's items
    paired = one(rows, probe=conceptual_lab.PAIRED, subset="probe-r predicate_swap", metric="mu_c_diff")
    assert paired["model"] == "toy-clip-hardneg" and paired["condition"] == "toy-clip-hardneg − toy-clip"
    assert paired["n"] == 6 and paired["ci_low"] > 0   # the hard-negative model's logits were shifted up
    found = lab.claims(rows, CLAIMS)
    assert lab.NOT_RUN not in set(found["verdict"])
    assert found["verdict"][10] == lab.HOLDS and found["a"][10]["value"] > found["b"][10]["value"]
    assert found["a"][1]["model"] == "toy-clip, both, α = 1" and found["a"][1]["condition"] == "both, α = 1"
    assert found["a"][0]["model"] == "toy-clip, both, α = 0.2"
    assert found["diff"][9]["model"] == "toy-clip, text, α = 1 − vision, α = 1"
    assert found["diff"][12]["model"] == "toy-clip, (x0, x̃1)"
    # no blind model and no knock-out asked for (toy-clip's line as the knock-out's parent is judged)
    assert lab.checks(rows, [c for c in CHECKS if c.model != "toy-clip"])["verdict"].eq(lab.NOT_RUN).all()


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("conceptual-lab")
    calls = []
    original = cs.score_probe_r

    def counting(scorer, items):
        calls.append((scorer.name, len(items)))
        return original(scorer, items)

    mp = pytest.MonkeyPatch()
    mp.setattr(cs, "score_probe_r", counting)
    try:
        result = conceptual.run(conceptual.Params(
            models=["toy-clip"], limit=12, device="cpu", data_dir=d / "data", cache_dir=d / "scores",
            fillers=["scene"], finetune_encoders=["both"], finetune_steps=2, finetune_triplets=8,
            alphas=[0.0, 1.0], finetune_seeds=1, finetune_eval_limit=8, lab_models=["toy-clip", "toy-bert-blind"]))
    finally:
        mp.undo()
    return result, calls


def test_a_small_real_run_puts_the_lab_in_data(small_run):
    result, calls = small_run
    rows = result.data["lab"]
    assert list(rows.columns) == COLUMNS and len(rows)
    for m in ("toy-clip", "toy-bert-blind"):
        # toy-clip is also paired item by item with the text floor, toy-bert-blind
        assert set(select(rows, model=m)["probe"]) == {"probe-r", "probe-c"} | (
            {conceptual_lab.PAIRED} if m == "toy-clip" else set()), m
    assert len(select(rows, probe="patching", model="toy-clip, both, α = 1"))
    assert set(select(rows, probe="probe-b")["model"]) == {"toy-clip, x0", "toy-clip, x̃0", "toy-clip, x̃1",
                                                           "toy-clip, (x0, x̃1)", "toy-clip, (x0, x̃0)",
                                                           "toy-clip, (x̃0, x̃1)"}
    assert not len(select(result.ours(), model="toy-bert-blind"))   # lab rows are not the study's rows
    n_items = result.facts.probe_r_items
    assert [c for c in calls if c[1] == n_items] == [("toy-clip", n_items), ("toy-bert-blind", n_items)]
    assert len(result.data["lab_checks"]) == len(CHECKS) and len(result.data["lab_claims"]) == len(CLAIMS)
    claims = result.data["lab_claims"]
    # not in this run: toy-clip-hardneg, and the text and vision encoders' fine-tunes (only "both" is trained)
    missing = claims["a_model"].isin(["toy-clip-hardneg", "toy-clip, text, α = 1", "toy-clip, text, α = 0.2",
                                      "toy-clip, both, α = 0.2"])   # this run sweeps α = 0 and 1 only
    assert missing.sum() == 9 and set(claims.loc[missing, "verdict"]) == {lab.NOT_RUN}
    assert lab.NOT_RUN not in set(claims.loc[~missing, "verdict"])
    assert "toy-clip, toy-bert-blind" in result.facts.lab


def test_the_lab_runs_on_the_toy_world_only_and_says_why_not():
    kw = dict(scorers={}, items={}, scored={}, b_rows=None, background=None, sweep=None, seed=0, load=None)
    for models, dataset, why in (([], "toy", "`lab_models` is empty"), (["toy-clip"], "paper", "toy world only")):
        fact, found = conceptual._lab(models, dataset, **kw)
        assert why in fact and not len(found.rows) and list(found.rows.columns) == COLUMNS and not len(found.items)


@pytest.mark.parametrize("diff, verdict", [((0.144, 0.06, 0.23), lab.HIGHER),
                                                 ((0.05, -0.02, 0.12), "not resolved")])
def test_probe_r_is_judged_against_its_text_floor_paired_not_against_the_coin_flip(diff, verdict):
    """toy-vilt's 79.1% on predicate swaps is above the coin flip but the page's own text floor (the blind model on
    the same items) is 64.7%: the verdict comes from the paired difference over the same items."""
    blind = conceptual_lab.BLIND_MODEL
    rows = frame([_r("toy-vilt", 0.791, 0.719, 0.856), _r(blind, 0.647, 0.576, 0.719),
                  _r("toy-vilt", *diff, probe=conceptual_lab.PAIRED, subset="probe-r predicate_swap",
                     metric="acc_diff", condition=f"toy-vilt − {blind}", chance=0.0)])
    found = conceptual_lab.floor_claims(rows, ["toy-vilt", "toy-clip"])   # toy-clip: no rows, no claim
    assert [(c.topic, c.verdict) for c in found] == [("toy-vilt: predicate swaps vs the text floor", verdict)]
    assert found[0].rows["f"]["model"] == blind and found[0].rows["d"]["value"] == diff[0]
    assert ("toy-vilt", blind) in conceptual_lab.PAIRS


def test_lab_rows_pair_each_image_model_with_the_text_floor_item_by_item():
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "kind": "predicate_swap", "correct": [1.0, 1.0, 0.0],
                          "confidence": [0.9, 0.8, 0.4], "group_id": ["a", "b", "c"]})
    blind = items.assign(correct=[1.0, 0.0, 0.0], confidence=0.5)
    groups = pd.DataFrame({"group_id": ["g"], "split": "composition", "confidence": 0.5, "image": 0.0, "text": 0.0,
                           "group": 0.0})
    scored = {"probe-r": pd.concat([items.assign(model="toy-vilt"), blind.assign(model=conceptual_lab.BLIND_MODEL)]),
              "probe-c": pd.concat([groups.assign(model=m) for m in ("toy-vilt", conceptual_lab.BLIND_MODEL)])}
    rows = conceptual_lab.lab_rows({"probe-r": items, "probe-c": items}, ["toy-vilt", conceptual_lab.BLIND_MODEL],
                                   load=None, scored=scored)
    d = one(rows, probe=conceptual_lab.PAIRED, model="toy-vilt", subset="probe-r predicate_swap", metric="acc_diff")
    assert d["value"] == pytest.approx(1 / 3) and d["condition"] == f"toy-vilt − {conceptual_lab.BLIND_MODEL}"
