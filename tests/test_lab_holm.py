"""A chapter's lab judgements as one Holm family (probekit.studies.lab_holm), on hand-made rows."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from probekit import claims as C
from probekit.report import lab as lab_report
from probekit.results import StudyResult, frame, row
from probekit.studies import lab, lab_holm, lab_items


def _r(model, value, low, high, chance=0.5, metric="acc", condition=""):
    return row(study="s", probe="p", model=model, condition=condition, subset="all", metric=metric, value=value,
               ci=(low, high), n=100, chance=chance)


ROWS = frame([_r("ko", 0.51, 0.47, 0.54), _r("parent", 0.8, 0.7, 0.9), _r("ko", 0.9, 0.851, 0.95, condition="crop"),
              _r("blind", 0.5, 0.5, 0.5), _r("a", 0.8, 0.7, 0.9, condition="x"), _r("b", 0.6, 0.5, 0.7, condition="x"),
              _r("a", 0.2, 0.1, 0.3, chance=0.0, metric="acc_diff", condition="d"),
              _r("b", 0.05, -0.01, 0.11, chance=0.0, metric="acc_diff", condition="d")])
X, D = {"metric": "acc", "condition": "x"}, {"metric": "acc_diff", "condition": "d"}


def _family():
    checks = lab.checks(ROWS, [lab.Check("ko", lab.TARGET, "t", {"condition": ""}),
                               lab.Check("parent", lab.PARENT, "p"),
                               lab.Check("ko", lab.CONTROL, "c", {"condition": "crop"}),
                               lab.Check("blind", lab.BLIND, "b", by_construction=True)])
    claims = lab.claims(ROWS, [lab.PaperClaim("holds", "P", ("a", X), ("b", X), diff=("a", D)),
                               lab.PaperClaim("open", "P", ("a", X), ("b", X), diff=("b", D)),
                               lab.PaperClaim("drawn", "P", ("a", X), ("b", X), by_construction=True)])
    return checks, claims


def _marks(survives: pd.Series) -> list:
    """A nullable boolean column as True / False / None (a verdict that resolved nothing)."""
    return [None if pd.isna(s) else bool(s) for s in survives]


def test_each_judged_line_gets_the_p_of_its_verdicts_test_and_one_holm_family():
    """The target at chance: its equivalence p (TOST within 0.5 ± 0.05; the upper side, 0.04 over 0.03 / 1.96,
    decides); the parent: against chance; the control: against its floor 0.85 (its interval's end 0.851 just above
    it, p 0.046, which does not survive five tests); a claim: its paired difference against 0.  A blind row on
    items it cannot win and a claim decided by construction are not judged (no p, not counted)."""
    checks, claims = _family()
    assert list(checks["verdict"]) == [lab.AT_CHANCE, "above chance", lab.PASSES, lab.BY_DESIGN]
    assert list(claims["verdict"]) == [lab.HOLDS, lab.NOT_RESOLVED, lab.BY_CONSTRUCTION]
    checks, claims = lab_holm.family(checks, claims)
    row_of = {m: lab.find(ROWS, m, w) for m, w in (("ko", {"condition": ""}), ("parent", {}))}
    assert checks["p"][0] == pytest.approx(math.erfc(0.04 / (0.03 / C.Z95) / math.sqrt(2)))
    assert checks["p"][1] == pytest.approx(C.p_value(row_of["parent"], 0.5))
    assert checks["p"][2] == pytest.approx(math.erfc(0.05 / (0.049 / C.Z95) / math.sqrt(2)))   # 0.046
    assert math.isnan(checks["p"][3]) and math.isnan(claims["p"][2])
    assert claims["p"][1] == pytest.approx(C.p_value(lab.find(ROWS, "b", D))) and claims["p"][1] > 0.05
    p = [*checks["p"], *claims["p"]]
    assert [*checks["holm"], *claims["holm"]] == pytest.approx(C.holm(p), nan_ok=True)
    assert _marks(checks["survives"]) == [True, True, False, None] and _marks(claims["survives"]) == [True, None, None]
    assert lab_holm.tally(lab_holm.lines("s", checks, claims)) == dict(checks=3, claims=2, survive=3)


def test_the_lab_tables_show_the_holm_column_and_the_count_of_judgements():
    raw = _family()
    checks, claims = lab_holm.family(*raw)
    column = lab_report.HOLM
    shown = lab_report.checks_table(checks)[column]
    assert list(shown.str.split(" ").str[0]) == ["✓", "✓", "✗", "—"]
    assert list(lab_report.claims_table(claims)[column].str.split(" ").str[0]) == ["✓", "○", "—"]
    assert column not in lab_report.claims_table(raw[1]).columns          # not judged as a family: no column
    judged = lab_holm.lines("s", checks, claims)
    assert lab_report.judgements(judged).startswith("3 checks and 2 claims judged; 3 of their verdicts")


def test_the_lines_carry_each_checks_chance_level_and_whether_it_decides_on_a_derived_row():
    """A check's line carries its row's chance level (a claim's none: it is judged against 0 or between its rows);
    a line deciding on a row the lab's items could not rebuild (derived, seed 0's only) says so."""
    checks, claims = lab_holm.family(*_family())
    parent = lab_items.key(lab.find(ROWS, "parent", {}))
    diff_b = lab_items.key(lab.find(ROWS, "b", D))
    found = lab_holm.lines("s", checks, claims, derived=[parent, diff_b])
    assert found["chance"].tolist()[:4] == [0.5] * 4 and found["chance"].iloc[4:].isna().all()
    assert found["derived"].tolist() == [False, True, False, False, False, True, False]
    assert not lab_holm.lines("s", checks, claims)["derived"].any()


def test_a_run_judges_its_lab_once_into_its_lines(monkeypatch):
    """:func:`lab_holm.judge` computes the chapter's family once: the checks and claims gain its columns, the
    result its lines, and the tables and the caption's count read them without judging again."""
    calls = []
    family = lab_holm.family
    monkeypatch.setattr(lab_holm, "family", lambda *a: calls.append(1) or family(*a))
    checks, claims = _family()
    result = StudyResult("s", {}, ROWS, {"lab_checks": checks, "lab_claims": claims})
    lab_holm.judge(result)
    lab_report.checks_table(result.data["lab_checks"]), lab_report.claims_table(result.data["lab_claims"])
    lab_report.judgements(result.lab_lines)
    assert len(calls) == 1
    assert _marks(result.lab_lines["survives_holm"]) == [True, True, False, None, True, None, None]
    assert result.lab_lines["holm"].tolist() == pytest.approx(
        [*result.data["lab_checks"]["holm"], *result.data["lab_claims"]["holm"]], nan_ok=True)
