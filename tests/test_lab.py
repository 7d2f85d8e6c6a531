"""The lab's verdicts (probekit.studies.lab) on hand-made rows: every role and every claim verdict, and the tables."""

from __future__ import annotations

import pandas as pd

from probekit.report import lab as lab_report
from probekit.results import frame, row
from probekit.studies import lab, lab_holm


def _r(model, value, low, high, chance=0.5, metric="acc", condition=""):
    return row(study="s", probe="p", model=model, condition=condition, subset="all", metric=metric, value=value,
               ci=(low, high), n=100, chance=chance)


ACC = {"metric": "acc", "condition": ""}
ROWS = frame([_r("ko", 0.51, 0.47, 0.54), _r("parent", 0.8, 0.7, 0.9), _r("ko", 0.9, 0.85, 0.95, condition="crop"),
              _r("blind", 0.5, 0.5, 0.5), _r("blind", 0.0, 0.0, 0.0, chance=0.25, metric="pairs"),
              _r("leaky", 0.7, 0.6, 0.8), _r("weak", 0.8, 0.75, 0.84, condition="crop"),
              _r("a", 0.3, 0.25, 0.35), _r("b", 0.6, 0.55, 0.65), _r("c", 0.33, 0.28, 0.7),
              _r("a", -0.3, -0.4, -0.2, chance=0.0, metric="acc_diff"),
              _r("a", -0.1, -0.2, 0.05, chance=0.0, metric="acc_diff", condition="x")])


def test_every_role_gets_its_verdict_from_the_interval():
    checks = [lab.Check("ko", lab.TARGET, "t", {"condition": ""}), lab.Check("parent", lab.PARENT, "p"),
              lab.Check("ko", lab.CONTROL, "c", {"condition": "crop"}), lab.Check("blind", lab.BLIND, "b", ACC),
              lab.Check("blind", lab.BLIND, "pairs", {"metric": "pairs"}), lab.Check("leaky", lab.BLIND, "l"),
              lab.Check("leaky", lab.TARGET, "l"), lab.Check("weak", lab.CONTROL, "w", {"condition": "crop"}),
              lab.Check("nobody", lab.TARGET, "n")]
    found = lab.checks(ROWS, checks)
    assert list(found["verdict"]) == [lab.AT_CHANCE, "above chance", lab.PASSES, lab.NOT_ABOVE, lab.NOT_ABOVE,
                                      "above chance", "above chance", lab.FAILS, lab.NOT_RUN]
    assert list(found["ok"]) == [True, True, True, True, True, False, False, False, False]
    table = lab_report.checks_table(found)
    assert list(table.index) == [c.model for c in checks] and table["result [95% CI] (n)"].iloc[-1] == "not run"
    assert table["verdict"].iloc[5] == "above chance ✗ (should be not above chance); chance 50.0%"
    assert table["verdict"].iloc[0].startswith("at chance ✓")


def test_at_chance_is_an_equivalence_test_with_a_stated_margin():
    """Three verdicts for a knock-out's target: at chance (the interval within chance ± 5 points), above chance
    (the interval excludes chance upward) and not resolved (it holds chance but reaches past the margin: with an
    interval about ±7 points wide, "at chance" cannot be told from a small effect)."""
    rows = frame([_r("narrow", 0.51, 0.47, 0.54), _r("wide", 0.52, 0.42, 0.62), _r("edge", 0.5, 0.45, 0.55),
                  _r("over", 0.52, 0.44, 0.56), _r("above", 0.6, 0.56, 0.64), _r("q", 0.27, 0.21, 0.29, chance=0.25)])
    found = lab.checks(rows, [lab.Check(m, lab.TARGET, "t") for m in ("narrow", "wide", "edge", "over", "above", "q")])
    assert lab.CHANCE_MARGIN == 0.05
    assert list(found["verdict"]) == [lab.AT_CHANCE, lab.NOT_RESOLVED, lab.AT_CHANCE, lab.NOT_RESOLVED, "above chance",
                                      lab.AT_CHANCE]
    assert list(found["ok"]) == [True, False, True, False, False, True]
    assert "within chance ± 5 points (an equivalence test)" in lab_report.judged_by(found)


def test_a_trained_models_control_needs_the_higher_floor():
    """An interval at 0.86-0.93 passes as a knock-out's control (floor 0.85) and holds a fully trained model's floor
    (0.90); one wholly below the floor fails it."""
    rows = frame([_r("ko", 0.87, 0.86, 0.93, condition="crop"), _r("full", 0.87, 0.86, 0.93, condition="crop"),
                  _r("good", 0.93, 0.90, 0.96, condition="crop"), _r("bad", 0.86, 0.82, 0.89, condition="crop")])
    roles = [("ko", lab.CONTROL), ("full", lab.TRAINED), ("good", lab.TRAINED), ("bad", lab.TRAINED)]
    found = lab.checks(rows, [lab.Check(m, role, "c", {"condition": "crop"}) for m, role in roles])
    assert list(found["verdict"]) == [lab.PASSES, lab.AT_FLOOR, lab.PASSES, lab.FAILS]
    assert list(found["ok"]) == [True, False, True, False]
    assert list(lab_report.checks_table(found)["verdict"])[:2] == ["passes ✓; chance 50.0%",
                                                                   "at the floor ✗ (should be passes); chance 50.0%"]
    assert lab_report.judged_by(found) == (
        "verdict from the 95% interval; a control passes when its interval lies at or above 85% (a knock-out) or 90% "
        "(a model trained on everything), fails when it lies below, and is at the floor when it holds the floor")
    assert "at or above 85% (a knock-out)," in lab_report.judged_by(found[found["role"] == lab.CONTROL])


def test_a_control_is_judged_from_its_interval_not_its_point_value():
    """The shipped zoo's case: toy-vilt-noisy's cropped control at 89.5% [85.0, 93.5] under seed 0 and 90.0%
    [86.0, 94.0] under seed 1 is at the floor both times (the point value fell either side of 90%); an interval
    whose low end is the floor passes; a row without an interval resolves nothing."""
    floor = lab.FLOORS[lab.TRAINED]
    assert lab.versus_floor(_r("m", 0.895, 0.85, 0.935), floor) == lab.AT_FLOOR
    assert lab.versus_floor(_r("m", 0.90, 0.86, 0.94), floor) == lab.AT_FLOOR
    assert lab.versus_floor(_r("m", 0.935, 0.90, 0.965), floor) == lab.PASSES
    assert lab.versus_floor(_r("m", 0.88, 0.85, 0.8999), floor) == lab.FAILS
    assert lab.versus_floor(row(study="s", probe="p", model="m", metric="acc", value=0.99), floor) == lab.AT_FLOOR


def test_claims_hold_fail_stay_unresolved_or_are_decided_by_construction():
    claims = [lab.PaperClaim("a below b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER),
              lab.PaperClaim("a above b", "P", ("a", ACC), ("b", ACC), expect=lab.HIGHER),
              lab.PaperClaim("c below b", "P", ("c", ACC), ("b", ACC), expect=lab.LOWER),
              lab.PaperClaim("paired", "P", ("a", ACC), ("b", ACC), expect=lab.HIGHER,
                             diff=("a", {"metric": "acc_diff", "condition": "x"})),
              lab.PaperClaim("paired lower", "P", ("c", ACC), ("b", ACC), expect=lab.LOWER,
                             diff=("a", {"metric": "acc_diff", "condition": ""})),
              lab.PaperClaim("concept", "P", ("a", ACC), ("b", ACC), by_construction=True),
              lab.PaperClaim("missing", "P", ("a", ACC), ("zzz", ACC))]
    found = lab.claims(ROWS, claims)
    # c's interval overlaps b's: not resolved by intervals, but its paired difference excludes 0
    assert list(found["verdict"]) == [lab.HOLDS, lab.DOES_NOT_HOLD, lab.NOT_RESOLVED, lab.NOT_RESOLVED, lab.HOLDS,
                                      lab.BY_CONSTRUCTION, lab.NOT_RUN]
    table = lab_report.claims_table(found)
    assert list(table["verdict"]) == list(found["verdict"]) and "not run" in table["on the toy world"].iloc[-1]


def test_a_no_difference_claim_is_judged_by_equivalence_and_an_incomparable_one_is_shown_not_judged():
    """The paper's "about the same" is an equivalence test on the paired difference within the claim's margin
    (here 5 points): [−1, +2] holds, [−1, +8] and [+3, +8] (excluding 0, but reaching into the margin) are not
    resolved, [6, 9] and [−9, −6] (wholly outside the margin) do not hold.  Rows on different items are not
    comparable (verdict and reason shown, even where their intervals are far apart)."""
    import pytest
    pts = {"metric": "delta_c_pts", "condition": ""}
    cases = (("same", (-1, 2)), ("wide", (-1, 8)), ("part", (3, 8)), ("up", (6, 9)), ("down", (-9, -6)))
    rows = frame([_r("a", 0.7, 0.6, 0.8), _r("b", 0.7, 0.6, 0.8), _r("a", 0.9, 0.85, 0.95, condition="far"),
                  *[_r(m, (lo + hi) / 2, lo, hi, chance=0.0, metric="delta_c_pts") for m, (lo, hi) in cases]])
    same = [lab.PaperClaim(m, "P", ("a", ACC), ("b", ACC), expect=lab.NO_DIFFERENCE, margin=5.0, diff=(m, pts))
            for m, _ in cases]
    apart = lab.PaperClaim("apart", "P", ("a", {"condition": "far"}), ("b", ACC), not_comparable=True,
                           reason="different items")
    found = lab.claims(rows, [*same, apart])
    assert list(found["verdict"]) == [lab.HOLDS, lab.NOT_RESOLVED, lab.NOT_RESOLVED, lab.DOES_NOT_HOLD,
                                      lab.DOES_NOT_HOLD, lab.NOT_COMPARABLE]
    assert list(found["margin"][:5]) == [5.0] * 5 and found["reason"][5] == "different items"
    table = lab_report.claims_table(found)
    assert "different items" in table["on the toy world"].iloc[5] and "± 5.00" in table["on the toy world"].iloc[0]
    with pytest.raises(ValueError, match="margin"):
        lab.PaperClaim("no margin", "P", ("a", ACC), ("b", ACC), expect=lab.NO_DIFFERENCE, diff=("same", pts))


def test_a_claim_on_settings_at_chance_is_not_testable():
    """Two settings of which neither learned the probe (intervals holding or below chance 0.5) differ in nothing
    they learned: a claim of a difference between them is not testable, whatever their paired difference says; one
    setting above chance makes it testable (its claim may hold or not).  A no-difference claim needs both above
    chance (two at chance are alike by the floor).  ``chance_floor=False`` judges the rows as they are."""
    d = {"metric": "acc_diff", "condition": "d"}
    rows = frame([_r("flat", 0.5, 0.45, 0.55), _r("low", 0.3, 0.25, 0.35), _r("up", 0.7, 0.65, 0.75),
                  *[_r(m, -0.2, -0.3, -0.1, chance=0.0, metric="acc_diff", condition="d") for m in ("flat", "up")],
                  _r("near", 0.01, -0.02, 0.04, chance=0.0, metric="acc_diff", condition="d")])
    def claim(a, b, **kw):
        return lab.PaperClaim(f"{a} vs {b}", "P", (a, ACC), (b, ACC), **kw)
    found = lab.claims(rows, [
        claim("low", "flat", expect=lab.LOWER, diff=("flat", d)),            # neither above chance
        claim("low", "up", expect=lab.LOWER, diff=("up", d)),                # up learned: judged, holds
        claim("up", "flat", expect=lab.NO_DIFFERENCE, margin=0.05, diff=("near", d)),   # flat did not
        claim("up", "up", expect=lab.NO_DIFFERENCE, margin=0.05, diff=("near", d)),
        claim("low", "flat", expect=lab.LOWER, diff=("flat", d), chance_floor=False)])
    assert list(found["verdict"]) == [lab.NOT_TESTABLE, lab.HOLDS, lab.NOT_TESTABLE, lab.HOLDS, lab.HOLDS]
    said = lab_report.untrained(found.iloc[0])
    assert "low: acc 30.0%" in said and "flat: acc 50.0%" in said
    said = lab_report.untrained(found.iloc[2])
    assert "flat: acc" in said and "up: acc" not in said


def test_a_claim_comparing_settings_that_did_not_learn_is_not_testable():
    """A claim that presupposes each setting learned what it was trained for (its own gain, paired, above 0) is
    judged only when every gain's interval lies above 0: here ``a``'s gain [+0.1, +0.3] is resolved, ``c``'s
    [−0.02, +0.1] is not, and a gain that was not run leaves the claim untestable too; the table names the
    unresolved gain's model, not the resolved one."""
    gain = {"metric": "acc_diff", "condition": "gain"}
    rows = frame([*ROWS.to_dict("records"), _r("a", 0.2, 0.1, 0.3, chance=0.0, metric="acc_diff", condition="gain"),
                  _r("c", 0.04, -0.02, 0.1, chance=0.0, metric="acc_diff", condition="gain")])
    both = lab.PaperClaim("a < b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER, learned=(("a", gain),))
    one = lab.PaperClaim("a < b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER, learned=(("a", gain), ("c", gain)))
    gone = lab.PaperClaim("a < b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER, learned=(("nobody", gain),))
    found = lab.claims(rows, [both, one, gone])
    assert list(found["verdict"]) == [lab.HOLDS, lab.NOT_TESTABLE, lab.NOT_TESTABLE]
    assert [len(g) for g in found["gains"]] == [1, 2, 1] and found["gains"][2] == [None]
    said = lab_report.untrained(found.iloc[1])
    assert said.startswith(lab.NOT_TESTABLE) and "c: acc_diff" in said and "a: acc_diff" not in said
    assert lab_report.untrained(found.iloc[2]).endswith("a row not run)")
    assert lab.claim_verdict(one, *(lab.find(rows, *x) for x in (one.a, one.b)), gains=[None, None]) == \
        lab.NOT_TESTABLE


def test_a_check_that_names_several_rows_is_an_error():
    import pytest
    with pytest.raises(KeyError, match="must name one row"):
        lab.checks(ROWS, [lab.Check("ko", lab.TARGET, "t")])          # two conditions match


def test_a_chapters_lab_tables_set_each_verdict_beside_the_other_seeds():
    """A comparison (lab_seeds) made from these very rows under seed 0, with a seed 1 that disagrees on one claim:
    the tables show seed 1's verdicts; a line whose numbers differ from the comparison's seed 0 is not set beside."""
    from probekit.studies.lab_seeds import NOT_IN, OTHER_RUN

    checks = lab.checks(ROWS, [lab.Check("ko", lab.TARGET, "t", ACC), lab.Check("parent", lab.PARENT, "p"),
                               lab.Check("ko", lab.CONTROL, "c", {"condition": "crop"})])   # a model named twice
    claims = lab.claims(ROWS, [lab.PaperClaim("a below b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER),
                               lab.PaperClaim("c below b", "P", ("c", ACC), ("b", ACC), expect=lab.LOWER)])
    lines = lab.verdict_lines("s", checks, claims)
    seed1 = ["at chance", "above chance", "at the floor", "holds", "holds"]
    seeds = lines[["study", "kind", "what", "models"]].assign(
        **{"seed 0": lines["verdict"], "seed 1": seed1, "agree": lines["verdict"] == seed1, "waits_for": "",
           "seed 0 rows": lines["rows"], "seed 1 rows": lines["rows"]})
    assert list(lines["verdict"]) == ["at chance", "above chance", "passes", "holds", "not resolved"]
    table = lab_report.claims_table(claims, "s", seeds)
    assert list(table.columns) == ["the paper's claim", "on the toy world", "verdict", "under seed 1"]
    assert list(table["under seed 1"]) == ["holds", "holds"]
    # one line per check, each beside its own line's verdict (a model with two checks is not joined twice)
    table = lab_report.checks_table(checks, "s", seeds)
    assert list(table.index) == ["ko", "parent", "ko"]
    assert list(table["under seed 1"]) == ["at chance", "above chance", "at the floor"]
    other = lab.checks(frame([_r("ko", 0.55, 0.45, 0.65), _r("parent", 0.8, 0.7, 0.9)]),
                       [lab.Check("ko", lab.TARGET, "t"), lab.Check("parent", lab.PARENT, "p")])
    assert list(lab_report.checks_table(other, "s", seeds)["under seed 1"]) == [OTHER_RUN, "above chance"]
    assert set(lab_report.claims_table(claims, "another study", seeds)["under seed 1"]) == {NOT_IN}
    assert list(lab_report.claims_table(claims).columns) == ["the paper's claim", "on the toy world", "verdict"]


def test_a_line_pooled_over_training_seeds_is_set_beside_the_comparison_by_its_own_seeds_rows():
    """The summary sets every claim beside the seed comparison: a line the page pooled over seeds 0 and 1 holds the
    pooled rows (not the comparison's seed 0 ones), so it is matched by its seed-0 part of ``seed_rows``; its
    numbers there differing from the comparison's still read "not compared"."""
    import json

    from probekit.studies.lab_pooling import POOLED
    from probekit.studies.lab_seeds import OTHER_RUN, beside

    claims = lab.claims(ROWS, [lab.PaperClaim("a below b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER)])
    line = lab.verdict_lines("s", None, claims)
    seeds = line[["study", "kind", "what", "models"]].assign(
        **{"seed 0": line["verdict"], "seed 1": "not resolved", "agree": False, "waits_for": "",
           "seed 0 rows": line["rows"], "seed 1 rows": line["rows"]})
    own = json.loads(line.at[0, "rows"])
    other = [{**r, "value": r["value"] + 0.01} for r in own]
    pooled = line.assign(rows=json.dumps([{**r, "n": 2 * r["n"]} for r in own]), seeds_kind=POOLED, seeds="[0, 1]",
                         seed_rows=json.dumps([{"seed": 0, **r} for r in own] + [{"seed": 1, **r} for r in other]))
    assert list(beside(pooled, seeds)["under seed 1"]) == ["not resolved"]
    assert list(beside(pooled.assign(seeds_kind=None), seeds)["under seed 1"]) == [OTHER_RUN]   # read as its own run's
    moved = pooled.assign(seed_rows=json.dumps([{"seed": 0, **r} for r in other] + [{"seed": 1, **r} for r in own]))
    assert list(beside(moved, seeds)["under seed 1"]) == [OTHER_RUN]


def test_a_claims_rows_name_their_metric_when_its_difference_is_of_another():
    """Probe-B's scene claim reads two views' mAP and decides on Δc between them: the table shows the difference it
    judges first, with its n, and the two views' mAP after it as not judged, each metric named, so the two values are
    not read as the terms of the difference; rows of the difference's own metric are not named."""
    nan = float("nan")
    rows = frame([_r("x0", 0.957, 0.93, 0.98, nan, "map"), _r("x1", 0.921, 0.89, 0.95, nan, "map"),
                  _r("x0-x1", 0.61, 0.08, 1.23, chance=0.0, metric="delta_c_pts")])
    claim = lab.PaperClaim("loses confidence", "P", ("x0", {"metric": "map"}), ("x1", {"metric": "map"}),
                           diff=("x0-x1", {"metric": "delta_c_pts"}))
    text = lab_report.claims_table(lab.claims(rows, [claim]))["on the toy world"].iloc[0]
    assert text.startswith("x0 vs x1: paired difference Δc (points) 0.6 [0.1, 1.2] (n = 100); beside it, not "
                           "judged: x0: mAP 95.7% [93.0, 98.0] (n = 100) vs x1: mAP 92.1%")   # to its interval's width
    plain = lab.claims(ROWS, [lab.PaperClaim("paired", "P", ("a", ACC), ("b", ACC),
                                             diff=("a", {"metric": "acc_diff", "condition": "x"}))])
    assert lab_report.claims_table(plain)["on the toy world"].iloc[0].startswith("a: 30.0% [25.0, 35.0]")


def test_one_rule_says_when_two_values_are_the_same():
    """The seed comparison (same_rows) and the rebuild's reproduction check (chapters.reproduce) share it."""
    same = lab.same_value
    assert same(0.5, 0.5 + 1e-9) and not same(0.5, 0.51) and same(180, 180.0)
    assert same(float("nan"), float("nan")) and same(None, None) and not same(None, 0.0)
    assert same(["walk", "kneel"], ["walk", "kneel"]) and not same(["walk"], ["walk", "kneel"])
    assert same([0.1, 0.2], (0.1, 0.2 + 1e-12)) and not same("a", "b")
    # a nullable boolean's missing value (a verdict line's survives_holm) equals itself and None, nothing else
    assert same(pd.NA, pd.NA) and same(pd.NA, None) and not same(pd.NA, True) and not same(False, pd.NA)


def test_a_knock_in_is_judged_against_zero_on_its_difference_row():
    """A knock-in's row (a within-model difference without a chance level, e.g. Probe-B's Δc) must lie above 0:
    above when its interval excludes 0 upwards, below when downwards, not resolved when it holds 0."""
    rows = frame([_r("in", 4.0, 1.5, 6.5, chance=float("nan"), metric="d"),
                  _r("in", 0.5, -1.0, 2.0, chance=float("nan"), metric="d", condition="x"),
                  _r("in", -3.0, -5.0, -1.0, chance=float("nan"), metric="d", condition="y")])
    checks = [lab.Check("in", lab.KNOCK_IN, "k", {"metric": "d", "condition": c}) for c in ("", "x", "y")]
    found = lab.checks(rows, checks)
    assert list(found["verdict"]) == ["above 0", lab.NOT_RESOLVED, "below 0"]
    assert list(found["ok"]) == [True, False, False]
    judged, _ = lab_holm.family(found, lab.claims(rows, []))
    assert judged["p"].iloc[0] < 0.05 < judged["p"].iloc[1] and judged["survives"].tolist()[0] is True
    assert lab_report.checks_table(found)["probe (role)"].iloc[0].endswith("(knock-in, its information always there "
                                                                          "(positive control))")


def test_a_claims_table_pooled_over_training_and_fine_tuning_seeds_shows_each_rows_seeds_in_one_column():
    """A conceptual-like table: one claim pooled over the zoo's training seeds, one over fine-tuning seeds (the zoo
    cannot pool it): one seed column, each cell naming the seeds its row rests on; a table of one kind keeps its
    header."""
    import json

    claims = lab.claims(ROWS, [lab.PaperClaim("a below b", "P", ("a", ACC), ("b", ACC), expect=lab.LOWER),
                               lab.PaperClaim("c below b", "P", ("c", ACC), ("b", ACC), expect=lab.LOWER)])
    def rows(*seeds):
        return json.dumps([{"seed": s, "model": "a", "metric": "acc", "value": v, "ci_low": None, "ci_high": None,
                            "n": 100} for s, v in seeds])
    tuned = "pooled over 2 fine-tuning seeds of the zoo model trained with seed 0; not over the zoo's seeds"
    both = claims.assign(seed_rows=[rows((0, 0.3), (1, 0.32)), None], seeds_note=["", tuned],
                         finetune_seed_rows=["", rows((0, 0.33), (1, 0.35))], finetune_seeds_note=["", ""])
    table = lab_report.claims_table(both)
    assert list(table.columns) == ["the paper's claim", "on the toy world", "each seed", "verdict"]
    assert list(table["each seed"]) == ["training seed 0: 30.0% · 1: 32.0%", "fine-tuning seed 0: 33.0% · 1: 35.0%"]
    assert [t.split(":")[0] for t in table["on the toy world"]] == ["pooled over training seeds",
                                                                   "pooled over fine-tuning seeds"]
    assert list(table["verdict"]) == [lab.HOLDS, f"{lab.NOT_RESOLVED} ({tuned})"]
    one_kind = lab_report.claims_table(both.assign(seed_rows=None))
    assert list(one_kind["each fine-tuning seed"]) == ["", "0: 33.0% · 1: 35.0%"]
