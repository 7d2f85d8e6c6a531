"""Verdicts pooled over seeds (probekit.studies.lab_pooled): hand-made cases for each verdict, and one seed giving
exactly the committed lab lines on the chapters' own item tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from probekit.claims import HIGHER, LOWER, UNRESOLVED
from probekit.results import frame
from probekit.studies.masking import lab as masking_lab
from probekit.studies.prednoun import lab as prednoun_lab
from probekit.studies.lab import (ABOVE, AT_CHANCE, BELOW, BLIND, NOT_ABOVE, NOT_RESOLVED, PARENT, PASSES, TARGET,
                                  TRAINED, claim_verdict)
from probekit.studies.lab_pooled import pooled, pooled_check, pooled_difference, pooled_row

LABELS = dict(study="lab", probe="toy", model="toy-m", metric="accuracy", chance=0.5)
DIFF = dict(study="lab", probe="toy", model="toy-m", metric="accuracy_diff", condition="a − b")   # chance 0
CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "chapters"


def hits(right: int, n: int) -> np.ndarray:
    """``n`` items of which the first ``right`` are answered correctly."""
    return np.r_[np.ones(right), np.zeros(n - right)]


def diffs(up: int, down: int, n: int) -> np.ndarray:
    """``n`` per-item differences a − b: ``up`` items +1, ``down`` items −1, the rest 0."""
    return np.r_[np.ones(up), -np.ones(down), np.zeros(n - up - down)]


def valid(p) -> None:
    """Every row (each seed's and the pooled one) is a valid schema row: frame() accepts it (interval holds value)."""
    frame([p.row, *p.rows.values()])


def test_above_chance_on_every_seed():
    p = pooled_check({0: hits(160, 200), 1: hits(170, 200), 2: hits(150, 200)}, PARENT, **LABELS)
    valid(p)
    assert p.verdict == ABOVE and p.seeds_agree and p.disagreement() == ""
    assert p.row["value"] == pytest.approx(0.8) and p.row["n"] == 600
    assert [r["value"] for r in p.rows.values()] == pytest.approx([0.8, 0.85, 0.75])


def test_at_chance_is_the_equivalence_verdict():
    # 2,000 items a seed at 50 and 51 %: the pooled interval lies within 50 ± 5 points
    p = pooled_check({0: hits(1000, 2000), 1: hits(1020, 2000)}, TARGET, **LABELS)
    valid(p)
    assert p.verdict == AT_CHANCE and p.seeds_agree
    assert 0.45 <= p.row["ci_low"] and p.row["ci_high"] <= 0.55


def test_not_resolved_when_the_interval_holds_chance_but_reaches_past_the_margin():
    p = pooled_check({0: hits(11, 20), 1: hits(10, 20)}, TARGET, **LABELS)
    valid(p)
    assert p.verdict == NOT_RESOLVED and p.seeds_agree
    assert p.row["ci_low"] < 0.5 < p.row["ci_high"] and p.row["ci_high"] - p.row["ci_low"] > 0.1


def test_seeds_that_disagree_leave_the_pooled_verdict_unresolved_and_say_so():
    p = pooled_check({0: hits(160, 200), 1: hits(100, 200)}, TARGET, **LABELS)
    valid(p)
    assert p.seed_verdicts == {0: ABOVE, 1: NOT_RESOLVED}
    assert p.verdict == NOT_RESOLVED and not p.seeds_agree
    assert p.disagreement() == "seeds disagree: seed 0 above chance, seed 1 not resolved"


def test_two_constant_seeds_either_side_of_chance():
    # each seed alone is decided (a point interval at 40 % / 60 %); pooled, [0.4, 0.6] holds chance and passes the
    # margin: not resolved (the exact case of tests/test_stats.py)
    p = pooled_check({0: np.full(10, 0.4), 3: np.full(10, 0.6)}, TARGET, **LABELS)
    valid(p)
    assert p.seed_verdicts == {0: BELOW, 3: ABOVE} and p.verdict == NOT_RESOLVED
    assert (p.row["ci_low"], p.row["ci_high"]) == (pytest.approx(0.4), pytest.approx(0.6))
    line = p.line
    assert line["seed_verdicts"] == "seed 0: below chance, seed 3: above chance" and line["seeds_agree"] is False
    assert [r["seed"] for r in json.loads(line["seed_rows"])] == [0, 3]
    assert json.loads(line["rows"])[0]["value"] == pytest.approx(0.5)


def test_paired_differences():
    up = pooled_difference({0: diffs(60, 10, 200), 1: diffs(55, 15, 200)}, **DIFF)
    valid(up)
    assert up.verdict == HIGHER and up.seeds_agree and up.row["chance"] == 0.0
    assert up.row["value"] == pytest.approx((0.25 + 0.2) / 2)
    down = pooled_difference({0: diffs(5, 40, 200), 1: diffs(10, 50, 200)}, **DIFF)
    assert down.verdict == LOWER and down.seeds_agree
    split = pooled_difference({0: diffs(60, 10, 200), 1: diffs(10, 60, 200)}, **DIFF)
    valid(split)
    assert split.seed_verdicts == {0: HIGHER, 1: LOWER} and split.verdict == UNRESOLVED and not split.seeds_agree


def test_few_resamples_still_give_valid_rows():
    valid(pooled_check({0: hits(7, 9), 1: hits(2, 9)}, TARGET, n_resamples=10, **LABELS))


def test_an_empty_seed_is_an_error():
    with pytest.raises(ValueError, match="no items"):
        pooled_check({0: hits(3, 5), 1: np.array([])}, TARGET, **LABELS)


# ------------------------------------------------------------------------ one seed: the committed lab lines
def _committed(chapter: str, what: str) -> pd.Series:
    lab = pd.read_parquet(CHAPTERS / f"{chapter}.lab.parquet")
    found = lab[lab["what"].str.contains(what, regex=False)]
    assert len(found) == 1, what
    return found.iloc[0]


def _items(chapter: str) -> pd.DataFrame:
    return pd.read_parquet(CHAPTERS / f"{chapter}.items.parquet")


def _by_condition(items: pd.DataFrame, model: str) -> pd.DataFrame:
    """A model's ``correct`` per item (rows) and condition (columns)."""
    return items[items["model"] == model].pivot(index="item_id", columns="condition", values="correct")


def _same_line(p, line: pd.Series) -> None:
    """The pooled path with seed 0 alone gives the committed line: its verdict and the deciding row's numbers; or,
    where the line is pooled over training seeds, its seed 0 part (that seed's verdict and row)."""
    assert p.seeds_agree
    each = line["seed_rows"]
    if not (isinstance(each, str) and each):
        assert p.verdict == line["verdict"] and p.line["rows"] == line["rows"]
        return
    assert f"seed 0: {p.verdict}" in line["seed_verdicts"].split(", ")
    assert json.loads(p.line["seed_rows"]) == [e for e in json.loads(each) if e["seed"] == 0]


def test_one_seed_gives_the_masking_lines():
    items = _items("masking")
    text_only = items[(items["model"] == "toy-bert") & (items["condition"] == "text only")]["correct"].dropna()
    blind = next(c for c in masking_lab.CHECKS if c.role == BLIND)
    line = _committed("masking", f"{blind.model}: {blind.what}")
    p = pooled_check({0: text_only.to_numpy()}, BLIND, study="masking", model=blind.model, chance=0.25,
                     **blind.where)
    assert p.verdict == NOT_ABOVE
    _same_line(p, line)

    claim = next(c for c in masking_lab.CLAIMS if "subject" in c.diff[1]["condition"])
    table = _by_condition(items, "toy-vilt")
    diff = (table["full image"] - table["subject ablated"]).dropna().to_numpy()
    sides = [pooled_row({0: table[w["condition"]].dropna().to_numpy()}, study="masking", model=m, **w)
             for m, w in (claim.a, claim.b)]
    p = pooled({0: diff}, lambda r: claim_verdict(claim, *sides, r), study="masking", model="toy-vilt", chance=0.0,
               **claim.diff[1])
    _same_line(p, _committed("masking", claim.claim))


def test_one_seed_gives_the_prednoun_lines():
    pairs = _items("prednoun")
    pairs = pairs[pairs["probe"] == "pairs"]
    cropped = _by_condition(pairs, "toy-vilt")["cropped"].dropna().to_numpy()
    check = next(c for c in prednoun_lab.CHECKS if c.model == "toy-vilt" and c.role == TRAINED
                 and c.where["metric"] == "pair_accuracy")
    p = pooled_check({0: cropped}, TRAINED, study="prednoun", model="toy-vilt", chance=0.25, **check.where)
    assert p.verdict == PASSES
    _same_line(p, _committed("prednoun", f"{check.model}: {check.what} ({check.role})"))

    scored = set(pairs["model"])
    # the chapter's models' claims over all pairs (the item rows do not say which pairs are look-alike ones):
    # toy-vilt cropped − full
    compared = [c for c in prednoun_lab.CLAIMS
                if c.diff and {c.a[0], c.b[0]} <= scored and c.diff[1]["subset"] == "all"]
    assert len(compared) == 1
    for claim in compared:
        (a, wa), (b, wb), (model, where) = claim.a, claim.b, claim.diff
        sa, sb = (_by_condition(pairs, m)[w["condition"]] for m, w in ((a, wa), (b, wb)))
        sides = [pooled_row({0: s.dropna().to_numpy()}, study="prednoun", model=m, **w)
                 for s, (m, w) in ((sa, claim.a), (sb, claim.b))]
        diff = (sa - sb.reindex(sa.index)).dropna().to_numpy()
        p = pooled({0: diff}, lambda r: claim_verdict(claim, *sides, r), study="prednoun", model=model,
                   chance=0.0, **where)
        lines = pd.read_parquet(CHAPTERS / "prednoun.lab.parquet")
        line = lines[(lines["what"] == claim.claim) & (lines["models"] == f"{a}|{b}")].iloc[0]
        _same_line(p, line)


def _committed_row(chapter: str, **where) -> dict:
    rows = pd.read_parquet(CHAPTERS / f"{chapter}.results.parquet")
    found = rows[np.logical_and.reduce([rows[k] == v for k, v in where.items()])]
    assert len(found) == 1, where
    return dict(found.iloc[0])


def _verb_units(t):
    """The verbs pairwise row's units: the draw each verb-negative row came from (its ``unit``)."""
    return t.loc[t["type"] == "verb", "unit"].to_numpy()


@pytest.mark.parametrize("chapter, where, pick, statistic, count", [
    # verbs pairwise on verb negatives: ``correct`` of the rows of that negative type, resampled by their unit
    ("verbs", dict(model="toy-vilt", probe="svo", subset="verb", metric="pairwise", condition=""),
     lambda t: t.loc[t["type"] == "verb", "correct"].to_numpy(), np.mean, len),
    # prednoun triplet accuracy: rows [correct_1, correct_2] (a pair with neither scored dropped), nanmean
    ("prednoun", dict(model="toy-clip", probe="pairs", subset="all", metric="triplet_accuracy", condition="full"),
     lambda t: t[["correct_1", "correct_2"]].to_numpy(float)[~t[["correct_1", "correct_2"]].isna().all(axis=1)],
     np.nanmean, lambda v: int(np.isfinite(v).sum())),
    # masking word accuracy: ``word_correct`` per caption
    ("masking", dict(model="toy-vilt", probe="top-k", subset="all", metric="word_accuracy", condition="full image"),
     lambda t: t["word_correct"].dropna().to_numpy(), np.mean, len),
])
def test_the_documented_item_columns_give_the_chapters_rows(chapter, where, pick, statistic, count):
    """lab_pooled's docstring says which item columns a lab line pools: with one seed they give the chapter's row."""
    items = _items(chapter)
    mine = items[(items["model"] == where["model"]) & (items["probe"] == where["probe"])
                 & (items["condition"] == where["condition"])]
    clusters = {0: _verb_units(mine)} if chapter == "verbs" else None
    found = pooled_row({0: pick(mine)}, statistic=statistic, count=count, clusters=clusters, study=chapter, **where)
    committed = _committed_row(chapter, **where)
    # the saved results are rounded (the lab lines keep every bit: compared exactly above)
    assert [found[k] for k in ("value", "ci_low", "ci_high", "n")] == \
        pytest.approx([committed[k] for k in ("value", "ci_low", "ci_high", "n")], rel=1e-12)


def test_seeds_right_on_the_same_items_pool_to_one_seeds_interval():
    # three seeds that answer alike item by item add no evidence about the items: the pooled interval is one seed's
    one_seed = pooled_check({0: hits(25, 40)}, PARENT, **LABELS)
    alike = pooled_check({s: hits(25, 40) for s in range(3)}, PARENT, **LABELS)
    assert [alike.row["ci_low"], alike.row["ci_high"]] == \
        pytest.approx([one_seed.row["ci_low"], one_seed.row["ci_high"]], abs=0.03)   # other draws, same spread
    assert alike.verdict == one_seed.verdict == NOT_RESOLVED


def test_seeds_each_unresolved_can_be_decided_pooled_without_disagreeing():
    # 40 items a seed at 62.5 %, each seed right on other items: each seed's interval holds chance; three seeds
    # pooled exclude it (the items are drawn once for all seeds, and the mean over seeds varies less by item)
    rng = np.random.default_rng(0)
    p = pooled_check({s: rng.permutation(hits(25, 40)) for s in range(3)}, PARENT, **LABELS)
    assert set(p.seed_verdicts.values()) == {NOT_RESOLVED} and p.verdict == ABOVE
    assert p.seeds_agree and p.disagreement() == ""
