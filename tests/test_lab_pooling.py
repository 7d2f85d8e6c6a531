"""Each lab line's per-item values (studies/lab_items.py), the seeds' items file (toymodels/seed_items.py) and the
lab judged pooled over seeds when that file lies beside the zoo (studies/lab_pooling.py, report/lab.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from probekit.report import lab as report_lab
from probekit.studies import lab, lab_holm, lab_items, lab_pooling, lab_seeds
from probekit.studies.conceptual import study as conceptual
from probekit.studies.masking import study as masking
from probekit.studies.prednoun import study as prednoun
from probekit.studies.verbs import study as verbs
from probekit.toymodels import seed_items


def _verbs(root):
    return verbs.Params(models=["toy-vilt"], data_dir=root / "data", limit=30, seed=0, device="cpu",
                        cache_dir=root / "scores", threshold=0.7, min_triplet_negatives=3, top_k=2, n_resamples=100)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("lab-pooling")


@pytest.fixture(scope="module")
def no_items_file(tmp_path_factory):
    """The lab's zoo folder without a seeds' items file (the shipped zoo has one)."""
    mp = pytest.MonkeyPatch()
    empty = tmp_path_factory.mktemp("no-items-file")
    mp.setattr(seed_items, "zoo", lambda: empty)
    yield empty
    mp.undo()


@pytest.fixture(scope="module")
def small(root, no_items_file):
    return verbs.run(_verbs(root))


SMALL_RUNS = {
    "prednoun": lambda r: prednoun.run(prednoun.Params(
        models=["toy-vilt"], clip_models=[], dataset="toy", data_dir=r / "data", limit=12, device="cpu",
        cache_dir=r / "scores", min_concept_count=4, n_resamples=10,
        lab_models=["toy-clip", "toy-clip-unbound", "toy-vilt", "toy-bert-blind"])),
    "masking": lambda r: masking.run(masking.Params(
        dataset="toy", data_dir=r / "data", cache_dir=r / "scores", limit=12, device="cpu", n_examples=1)),
    "conceptual": lambda r: conceptual.run(conceptual.Params(
        models=["toy-clip"], limit=12, device="cpu", data_dir=r / "data", cache_dir=r / "scores",
        fillers=["scene"], finetune_encoders=["both"], finetune_steps=2, finetune_triplets=8, alphas=[0.0, 1.0],
        finetune_eval_limit=8, finetune_seeds=1)),
}


def _rebuilt_every_line(result) -> int:
    """Assert every lab line whose rows ran is rebuilt exactly from its items, each item named by its id (every
    metric behind a lab row gives ids); the number of lines rebuilt."""
    found, done = lab_items.arrays(result.data["lab_items"]), 0
    unnamed = {k for k, (*_, ids) in found.items() if ids is None or (ids == "").any()}
    assert not unnamed, f"{result.study}: lab rows without item ids: {sorted(map(str, unnamed))[:5]}"
    for name in ("lab_checks", "lab_claims"):
        for _, line in result.data[name].iterrows():
            rows = lab_items.deciding_rows(line)
            got = lab_items.line_items(result, line)
            if not all(isinstance(r, dict) for r in rows):   # a row the run did not produce: nothing to rebuild
                assert got is None and line["verdict"] == lab.NOT_RUN
                continue
            assert got is not None, f"{result.study}: {line.get('what', line.get('claim'))} is not rebuilt"
            for r, values in zip(rows, got):
                _, spec, units, _ = found[lab_items.key(r)]
                again = lab_items.rebuilt(values, spec, r, units)
                for f in ("value", "ci_low", "ci_high", "n"):
                    assert again[f] == pytest.approx(r[f], rel=1e-12, abs=1e-12), (r, f)
            done += 1
    return done


def test_every_verbs_lab_line_is_rebuilt_from_its_items(small):
    assert _rebuilt_every_line(small) == len(small.data["lab_checks"]) + len(small.data["lab_claims"])


@pytest.mark.parametrize("study", sorted(SMALL_RUNS))
def test_every_lab_line_of_a_small_run_is_rebuilt_from_its_items(study, root, no_items_file):
    result = SMALL_RUNS[study](root / study)
    assert _rebuilt_every_line(result) > 0


def test_without_the_items_file_the_lab_is_as_today(small, root):
    today = verbs.run.__wrapped__(_verbs(root))   # the study's own run, nothing kept, pooled or judged
    judged = lab_holm.family(today.data["lab_checks"], today.data["lab_claims"])   # what the wrapped run adds
    for name, frame in zip(("lab_checks", "lab_claims"), judged):
        assert list(small.data[name].columns) == list(frame.columns)
    pd.testing.assert_frame_equal(small.lab_lines, lab_holm.lines("verbs", *judged, today.data["lab_derived"]))
    assert small.lab_lines["holm"].notna().any() and not small.lab_lines["derived"].any()   # every row has items
    assert report_lab.checks_table(small.data["lab_checks"]).equals(report_lab.checks_table(judged[0]))


def _three_seeds(items: pd.DataFrame) -> pd.DataFrame:
    """Seeds 1 and 2 from seed 0's items: seed 1 wins every blind pair (a seed above chance), seed 2 the same as 0."""
    blind = items["model"] == "toy-bert-blind"
    one = items.assign(seed=1, value=np.where(blind, 1.0, items["value"]))
    return pd.concat([items.assign(seed=0), one, items.assign(seed=2)], ignore_index=True)


@pytest.fixture(scope="module")
def pooled_run(small, root, tmp_path_factory):
    zoo = tmp_path_factory.mktemp("zoo")
    path = seed_items.write(_three_seeds(small.data["lab_items"]), zoo / seed_items.ITEMS_FILE)
    mp = pytest.MonkeyPatch()
    mp.setattr(seed_items, "zoo", lambda: zoo)
    try:
        with lab_pooling.unpooled():   # the seed comparison scores each zoo alone, a file beside it or not
            alone = verbs.run(_verbs(root))
        assert not set(lab.SEED_FIELDS) & set(alone.data["lab_checks"].columns)
        return verbs.run(_verbs(root)), path
    finally:
        mp.undo()


def test_the_items_file_is_small_and_reads_back(small, pooled_run):
    _, path = pooled_run
    back = seed_items.read(path.parent)
    assert sorted(back["seed"].unique()) == [0, 1, 2] and len(back) == 3 * len(small.data["lab_items"])
    assert path.stat().st_size < 100_000


def test_with_the_items_file_every_line_is_judged_over_the_seeds(small, pooled_run):
    pooled, _ = pooled_run
    checks = pooled.data["lab_checks"]
    assert set(lab.SEED_FIELDS) <= set(checks.columns)
    for (_, mine), (_, today) in zip(checks.iterrows(), small.data["lab_checks"].iterrows()):
        if today["verdict"] == lab.NOT_RUN:
            assert mine["verdict"] == lab.NOT_RUN and mine["seeds_note"].startswith(lab_pooling.ONE_SEED.format(seed=0))
            continue
        each = json.loads(mine["seed_rows"])
        assert [e["seed"] for e in each] == [0, 1, 2]
        assert each[0]["value"] == pytest.approx(today["row"]["value"], abs=1e-12)   # seed 0: today's row
        assert mine["row"]["value"] == pytest.approx(np.mean([e["value"] for e in each]))
        assert mine["verdict"] == lab.check_verdict(mine["row"], today["role"], today["verdict"] == lab.BY_DESIGN)
    blind = checks[checks["model"] == "toy-bert-blind"].iloc[0]
    assert "seed 1: above chance" in blind["seed_verdicts"] and not blind["seeds_agree"]
    assert blind["seeds_note"].startswith("seeds disagree: seed 0 ")
    assert (blind["seeds_kind"], json.loads(blind["seeds"])) == (lab_pooling.POOLED, [0, 1, 2])
    assert {e["seed"]: e["verdict"] for e in json.loads(blind["seeds_disagree"])}[1] == lab.ABOVE
    lines = lab.verdict_lines("verbs", checks, pooled.data["lab_claims"])
    assert set(lab.SEED_FIELDS) <= set(lines.columns) and lines["seed_rows"].str.len().gt(0).any()
    html = report_lab.checks_table(checks, "verbs").to_html()
    assert "pooled over training seeds" in html and "2: " in html and "seeds disagree" in html
    assert lab_seeds.UNDER not in html   # the seeds are on the page: no column from seed_verdicts.csv
    claims = pooled.data["lab_claims"]
    ran = claims[claims["verdict"] != lab.NOT_RUN]
    assert len(ran) and ran["seed_rows"].str.len().gt(0).all()
    assert "pooled over training seeds" in report_lab.claims_table(claims, "verbs").to_html()


def test_lab_seeds_keeps_a_retrained_zoos_items_with_its_seed_and_only_its_members(small, tmp_path, monkeypatch):
    (tmp_path / "training.json").write_text(json.dumps({"seed": 2}))
    monkeypatch.setattr(lab_seeds, "saved", lambda zoo: {"toy-vilt"})
    got = lab_seeds.retrained_items(str(tmp_path), [small.data["lab_items"]])
    assert set(got["seed"]) == {2} and set(got["model"]) == {"toy-vilt"}


def test_a_chapter_whose_models_no_other_seed_retrained_says_each_line_rests_on_one_seed():
    from types import SimpleNamespace

    from probekit.studies.verbs import lab as verbs_lab

    checks = pd.DataFrame({"verdict": [lab.HOLDS] * len(verbs_lab.CHECKS)})
    claims = pd.DataFrame({"verdict": [lab.NOT_RESOLVED] * len(verbs_lab.CLAIMS)})
    result = SimpleNamespace(study="verbs", data={"lab_checks": checks, "lab_claims": claims})
    others = pd.DataFrame({"study": ["masking", "masking"], "seed": [1, 2]})   # seeds 1, 2 retrained masking's only
    lab_pooling.pool(result, others, 0)
    for name in ("lab_checks", "lab_claims"):
        notes = result.data[name]["seeds_note"]
        assert notes.eq("rests on seed 0 alone, not pooled: none of its models retrained with seed 1, 2").all()
        assert result.data[name]["seeds_kind"].eq(lab_pooling.ONE).all() and result.data[name]["seeds"].eq("[0]").all()
        assert result.data[name]["verdict"].tolist() == {"lab_checks": checks, "lab_claims": claims}[name]["verdict"].tolist()


def _conceptual_lab(tuned: str) -> tuple:
    """A conceptual result whose checks were not run and whose claims decide on a derived row (not in its items),
    the first pooled over five fine-tuning seeds (``tuned``), the others not; an items file line of seed 1."""
    from types import SimpleNamespace

    from probekit.studies.conceptual import lab as conceptual_lab

    diff = {"study": "conceptual", "probe": "patching", "model": "toy-clip, both, α = 1 − original", "condition": "",
            "subset": "", "metric": "mu_c_diff", "value": 0.01, "ci_low": 0.0, "ci_high": 0.02, "n": 139}
    checks = pd.DataFrame({"row": [None] * len(conceptual_lab.CHECKS), "verdict": lab.NOT_RUN})
    n = len(conceptual_lab.CLAIMS)
    claims = pd.DataFrame({"a": [None] * n, "b": [None] * n, "diff": [diff] * n, "gains": [[] for _ in range(n)],
                           "finetune_seed_rows": [tuned] + [""] * (n - 1), "verdict": lab.HOLDS})
    item = {**{c: diff[c] for c in lab_items.KEY}, "statistic": "numpy:mean", "count": "len", "scale": 1.0,
            "n_resamples": 10, "boot_seed": 0, "item": 0, "column": 0, "cluster": "", "value": 1.0}
    found = pd.DataFrame([{**item, "model": "toy-clip", "seed": 1}])
    result = SimpleNamespace(study="conceptual", data={"lab_checks": checks, "lab_claims": claims,
                                                       "lab_items": pd.DataFrame(columns=lab_items.ITEM_COLUMNS)})
    return result, found


@pytest.mark.parametrize("other", ["conceptual", "masking"])   # the zoo's seed 1 retrained a conceptual model or none
def test_a_line_pooled_over_fine_tuning_seeds_says_so_where_the_zoos_seeds_cannot_pool_it(other):
    tuned = json.dumps([{"seed": s, "model": "toy-clip", "metric": "mu_c_diff", "value": 0.01} for s in range(5)])
    result, found = _conceptual_lab(tuned)
    lab_pooling.pool(result, found.assign(study=other), 0)
    notes = result.data["lab_claims"]["seeds_note"]
    assert notes.iloc[0] == ("pooled over 5 fine-tuning seeds of the zoo model trained with seed 0; "
                             "not over the zoo's seeds")
    assert notes.iloc[1:].str.startswith("rests on seed 0 alone, not pooled: ").all()   # not fine-tuned: one seed
    kinds = result.data["lab_claims"]["seeds_kind"]
    assert kinds.iloc[0] == lab_pooling.TUNED and kinds.iloc[1:].eq(lab_pooling.ONE).all()
    assert result.data["lab_claims"]["seeds"].iloc[0] == "[0, 1, 2, 3, 4]"
    assert result.data["lab_claims"]["verdict"].eq(lab.HOLDS).all()


def test_a_run_on_other_items_than_the_seeds_file_is_not_pooled_with_it(root, monkeypatch):
    # the shipped zoo's seeds' items are the chapter's defaults; a run with a limit scores fewer, other items
    from probekit.scorers.registry import TOY_CHECKPOINTS

    monkeypatch.setattr(seed_items, "zoo", lambda: TOY_CHECKPOINTS)   # the shipped zoo, whatever the module set
    shipped = seed_items.read()
    assert shipped is not None and (shipped["model"] == "toy-vilt-hardneg").any()
    result = SMALL_RUNS["masking"](root / "masking-shipped")
    line = result.data["lab_checks"].set_index("model").loc["toy-vilt-hardneg"]
    assert line["seeds_note"].startswith(lab_pooling.ONE_SEED.format(seed=0))
    assert "scored on other items than this run's" in line["seeds_note"] and pd.isna(line["seed_rows"])
    assert _rebuilt_every_line(result) > 0   # each line as this run's items give it, not averaged with the file's
