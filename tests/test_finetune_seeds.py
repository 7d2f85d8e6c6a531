"""The patching sweep pooled over fine-tuning seeds (probekit.studies.conceptual.finetune_seeds): hand-made per-seed values,
the lab's claims with each seed's rows and verdicts, and a small real run with two seeds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from probekit.studies.conceptual import page as figures
from probekit.report import lab as lab_report
from probekit.results import ITEMS, frame, one, row, select
from probekit.stats import bootstrap_ci, pooled_ci
from probekit.studies import lab, lab_pooling
from probekit.studies.conceptual import study as conceptual, lab as conceptual_lab
from probekit.studies.conceptual import finetune_seeds
from probekit.studies.lab_items import key, split

MEAN = {"statistic": "numpy:mean", "count": "len", "scale": 1.0, "n_resamples": 1000, "boot_seed": 0}
GAIN = dict(study="conceptual", probe="patching", model="toy-clip", condition="both, α = 1 − original",
            subset="probe-r predicate_swap", metric="mu_c_diff", chance=0.0)
AFTER = {**GAIN, "condition": "both, α = 1", "metric": "mu_c", "chance": 0.5}
BEFORE = {**AFTER, "condition": "both, α = 0"}
DERIVED = {**GAIN, "metric": "gamma"}   # a row no bootstrap call gave: not rebuilt from items


def values(mean: float, n: int = 40, spread: float = 0.05) -> np.ndarray:
    """``n`` per-item values around ``mean`` (a fixed, symmetric pattern: the mean is exactly ``mean``)."""
    return mean + spread * np.tile([-1.0, 1.0], n // 2)


def summarised(labels: dict, v: np.ndarray) -> dict:
    return row(**labels, value=float(np.mean(v)), n=len(v), ci=bootstrap_ci(v))


PER_SEED = {0: {"gain": values(0.04), "after": values(0.64), "before": values(0.60)},
            1: {"gain": values(0.00, spread=0.2), "after": values(0.60, spread=0.2), "before": values(0.60)}}


def sweep() -> tuple[pd.DataFrame, dict]:
    """The first seed's rows, and each seed's row key -> (values, summary)."""
    first = PER_SEED[0]
    rows = frame([summarised(GAIN, first["gain"]), summarised(AFTER, first["after"]),
                  summarised(BEFORE, first["before"]), row(**DERIVED, value=0.1, n=40, ci=(0.0, 0.2))])
    keyed = {s: {key(r): (v[name], MEAN) for (_, r), name in zip(rows.iterrows(), ("gain", "after", "before"))}
             for s, v in PER_SEED.items()}
    return rows, keyed


def test_seeds_start_at_the_studys_seed():
    assert finetune_seeds.seeds(0, 5) == [0, 1, 2, 3, 4] and finetune_seeds.seeds(3, 1) == [3]
    with pytest.raises(ValueError, match="at least one"):
        finetune_seeds.seeds(0, 0)


def test_a_patched_row_is_pooled_over_the_seeds_the_original_and_a_derived_row_stay():
    rows, keyed = sweep()
    pooled, each = finetune_seeds.pool(rows, keyed)
    gain = one(pooled, metric="mu_c_diff")
    per = [PER_SEED[s]["gain"] for s in (0, 1)]
    assert gain["value"] == pytest.approx(0.02)   # the mean over seeds of each seed's mean
    assert (gain["ci_low"], gain["ci_high"]) == pooled_ci(per) and gain["n"] == 80
    assert gain["ci_low"] < 0 < gain["ci_high"]    # seed 0 alone resolves a gain; pooled with seed 1 it does not
    # each seed's row is what that seed alone gives: the first seed's is the unpooled row exactly
    first = one(rows, metric="mu_c_diff")
    assert each[key(first)][0]["value"] == first["value"] and each[key(first)][0]["ci_low"] == first["ci_low"]
    assert (each[key(first)][1]["ci_low"], each[key(first)][1]["ci_high"]) == bootstrap_ci(per[1])
    # α = 0 is the original model, the same items under every seed: kept as it is, the same row for each seed
    before = one(rows, condition="both, α = 0")
    assert one(pooled, condition="both, α = 0").to_dict() == before.to_dict()
    assert each[key(before)][1]["value"] == before["value"]
    assert one(pooled, metric="gamma").to_dict() == one(rows, metric="gamma").to_dict()
    assert each[key(one(rows, metric="gamma"))] is None


def test_one_seed_is_the_sweep_exactly():
    rows, _ = sweep()
    ran = []

    def one_sweep(fseed):
        ran.append(fseed)
        return rows, {"both": "checkpoint"}
    got, checkpoints, each = finetune_seeds.pooled_sweep(one_sweep, [7], lambda s: "unused", "unused")
    assert got is rows and checkpoints == {"both": "checkpoint"} and each == {} and ran == [7]


def test_a_row_computed_without_items_is_named_derived_and_has_none():
    values = np.array([1.0, 0.0, 1.0, 1.0])
    labels = dict(study="conceptual", probe="p", model="m", metric="acc", value=0.75, n=4)
    found = split(frame([row(**labels, subset="from items", ci=bootstrap_ci(values)),
                         row(**labels, subset="fisher", ci=(0.5, 0.9))]))
    assert found.derived == (key(found.rows.iloc[1]),) and ITEMS not in found.rows
    assert set(found.items["subset"]) == {"from items"} and found.items["value"].tolist() == values.tolist()


def test_the_lab_claim_shows_each_seed_and_says_when_they_disagree():
    rows, keyed = sweep()
    pooled, each = finetune_seeds.pool(rows, keyed)
    lab_rows = pooled.assign(model=[conceptual_lab.swept_name(m, c) for m, c in zip(pooled["model"],
                                                                                   pooled["condition"])])
    at = lambda r: (conceptual_lab.swept_name(r["model"], r["condition"]),   # noqa: E731
                    {k: r[k] for k in ("probe", "condition", "subset", "metric")})
    claims = [lab.PaperClaim("fine-tuning raises μ(c)", "paper", a=at(AFTER), b=at(BEFORE), diff=at(GAIN)),
              lab.PaperClaim("a claim on a derived row", "paper", a=at(DERIVED), b=at(BEFORE), diff=at(DERIVED))]
    found = finetune_seeds.judged(lab.claims(lab_rows, claims), claims, conceptual_lab.swept_keys(each))
    pooled_line, derived_line = found.iloc[0], found.iloc[1]
    assert pooled_line["verdict"] == lab.NOT_RESOLVED   # decided by the pooled difference
    assert pooled_line["finetune_seed_verdicts"] == f"seed 0: {lab.HOLDS}, seed 1: {lab.NOT_RESOLVED}"
    assert not pooled_line["finetune_seeds_agree"]
    assert pooled_line["finetune_seeds_note"].startswith("fine-tuning seeds disagree")
    entries = json.loads(pooled_line["finetune_seed_rows"])
    assert [(e["seed"], e["value"]) for e in entries] == [(0, pytest.approx(0.04)), (1, pytest.approx(0.0))]
    assert derived_line["finetune_seeds_note"].startswith("one fine-tuning seed")
    assert derived_line["finetune_seed_rows"] == ""
    table = lab_report.claims_table(found)
    assert table.iloc[0]["on the toy world"].startswith("pooled over fine-tuning seeds: ")
    each_seed = table["each fine-tuning seed"]
    assert each_seed.iloc[0].startswith("0: ") and each_seed.iloc[1] == ""


@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory):
    d = tmp_path_factory.mktemp("conceptual-seeds")
    small = dict(models=["toy-clip"], limit=12, device="cpu", data_dir=d / "data", cache_dir=d / "scores",
                 fillers=["scene"], finetune_encoders=["both"], finetune_steps=2, finetune_triplets=8, finetune_batch=4,
                 alphas=[0.0, 1.0], finetune_eval_limit=8, lab_models=["toy-clip"])
    return (conceptual.run(conceptual.Params(**small, finetune_seeds=2)),
            conceptual.run(conceptual.Params(**small, finetune_seeds=1)), d)


def test_two_fine_tuning_seeds_give_each_seeds_rows_and_a_pooled_row(two_seeds):
    pooled, single, d = two_seeds
    assert pooled.facts.sweep.finetune_seeds == [0, 1] and single.facts.sweep.finetune_seeds == [0]
    # a confidence (no fine-tune of two steps flips a top-1 answer: those rows are the same under both seeds)
    where = dict(probe="patching", condition="both, α = 1 − original", subset="probe-r predicate_swap",
                 metric="mu_c_diff")
    first, both = one(single.ours(), **where), one(pooled.ours(), **where)
    assert both["n"] == 2 * first["n"] > 0   # the same items under each of the two seeds
    line = pooled.data["lab_claims"].set_index("claim").loc[next(
        c.claim for c in conceptual_lab.CLAIMS if c.diff[0] == "toy-clip, both, α = 1 − original"
        and c.diff[1] == {k: where[k] for k in ("probe", "subset", "metric")})]
    entries = json.loads(line["finetune_seed_rows"])
    assert [e["seed"] for e in entries] == [0, 1]
    assert entries[0]["value"] == first["value"] and entries[0]["ci_low"] == first["ci_low"]   # seed 0: today's row
    assert both["value"] == pytest.approx((entries[0]["value"] + entries[1]["value"]) / 2)
    # judged beside the zoo's seeds' items, the line says what it rests on: these fine-tuning seeds of one zoo model
    assert line["seeds_note"] == lab_pooling.FINETUNED.format(count=2, seed=0)
    assert "once per fine-tuning seed (0, 1; the same items)" in figures.sweep_text(pooled.facts, pooled.params)
    assert "fine-tuning seed" not in figures.sweep_text(single.facts, single.params)
    # the single-seed run is the sweep as it always was: no per-seed fields, the first seed's rows
    assert "finetune_seed_rows" not in single.data["lab_claims"]
    assert len(select(single.ours(), probe="patching")) == len(select(pooled.ours(), probe="patching"))
    # the second seed's sweep was kept as numbers in the fine-tune cache, found there by a re-run
    assert len(list((d / "data" / "finetune" / "toy-clip" / "seeds").glob("*.parquet"))) == 1
