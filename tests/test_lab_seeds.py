"""Comparing the lab's verdicts across retrained zoos: column names and the model card's table."""

from __future__ import annotations

import json

import pandas as pd

from probekit.studies.lab_seeds import labels
from probekit.toymodels.seed_table import SEEDS_FILE
from probekit.toymodels.card import seed_section


def _zoo(path, seed, **where):
    path.mkdir()
    (path / "training.json").write_text(json.dumps({"seed": seed, "models": {}, **where}))
    return str(path)


def test_zoos_are_named_by_their_seed_and_where_they_were_trained(tmp_path, monkeypatch):
    from pathlib import Path

    from probekit.scorers import registry
    monkeypatch.setattr(registry, "TOY_CHECKPOINTS", Path(_zoo(tmp_path / "shipped", 0, device="cpu", threads=2)))
    a, b = _zoo(tmp_path / "a", 1), _zoo(tmp_path / "b", 2, device="cpu", threads=1)
    assert labels(["shipped", a, b]) == ["seed 0 (shipped, cpu, 2 threads)", "seed 1", "seed 2 (cpu, 1 thread)"]
    same = _zoo(tmp_path / "c", 1)
    assert labels([a, same]) == [a, same]                   # one seed twice: the directories tell them apart
    assert labels([str(tmp_path)]) == [str(tmp_path)]       # no training.json


def test_card_shows_each_verdict_with_its_numbers_and_flags_disagreement(tmp_path):
    assert seed_section(tmp_path) == ""
    diff = dict(model="toy-clip", metric="group_diff", value=0.013, ci_low=-0.003, ci_high=0.032, n=80)
    a, b = (dict(model=m, metric="top1", value=v, ci_low=v - 0.02, ci_high=v + 0.02, n=600) for m, v in
            (("toy-vilt", 0.472), ("toy-bert", 0.045)))
    pd.DataFrame([dict(study="conceptual", kind="claim", what="swaps", models="a|b",
                       **{"seed 0": "not resolved", "seed 1": "holds"}, agree=False, waits_for="",
                       **{"seed 0 rows": json.dumps([diff]),
                          "seed 1 rows": json.dumps([{**diff, "value": 0.021, "ci_low": 0.005}])}),
                  dict(study="masking", kind="claim", what="image helps", models="a|b",
                       **{"seed 0": "holds", "seed 1": "holds"}, agree=True, waits_for="",
                       **{"seed 0 rows": json.dumps([a, b]), "seed 1 rows": json.dumps([b, a])}),
                  dict(study="masking", kind="check", what="top-5", models="m", **{"seed 0": "at chance",
                                                                                   "seed 1": "fails"},
                       agree=False, waits_for="", **{"seed 0 rows": "[]", "seed 1 rows": ""})]
                 ).to_csv(tmp_path / SEEDS_FILE, index=False)
    lines = seed_section(tmp_path).splitlines()
    assert "| study | kind | check or claim | seed 0 | seed 1 | same |" in lines
    assert ("| conceptual | claim | swaps | not resolved: +1.3 pts [-0.3, +3.2] (n = 80) "
            "| holds: +2.1 pts [+0.5, +3.2] (n = 80) | **no** |") in lines
    assert ("| masking | claim | image helps | holds: 47.2% [45.2, 49.2] (n = 600) vs 4.5% [2.5, 6.5] (n = 600) "
            "| holds: 4.5% [2.5, 6.5] (n = 600) vs 47.2% [45.2, 49.2] (n = 600) | yes |") in lines
    assert "| masking | check | top-5 | at chance | fails | **no** |" in lines     # no rows: the verdict alone
    assert "1 of 2 claims and 0 of 1 checks compared keep their verdict." in lines


def test_a_line_is_traced_to_the_zoo_members_it_loads():
    from probekit.studies.lab_seeds import members

    assert members("toy-clip, both, α = 1|toy-bert-blind") == {"toy-clip", "toy-bert"}
    assert members("toy-vilt|toy-vilt") == {"toy-vilt"}


def _one(i: int) -> str:
    """Line i's numbers: one row, value i / 10, no interval."""
    return json.dumps([dict(model="m", metric="acc", value=i / 10, ci_low=None, ci_high=None, n=10)])


def _partial_zoo_table(tmp_path):
    """Seed 1 retrained toy-vilt and toy-clip only (toy-bert's directory made, no weights yet: still training)."""
    from probekit.studies.lab_seeds import compare, saved

    zoo = tmp_path / "seed1"
    for name, weights in (("toy-vilt", True), ("toy-clip", True), ("toy-bert", False)):
        (zoo / name).mkdir(parents=True)
        if weights:
            (zoo / name / "model.safetensors").write_bytes(b"")
    assert saved(str(zoo)) == {"toy-vilt", "toy-clip"} and saved("shipped") is None
    lines = pd.DataFrame(dict(study=["verbs", "conceptual", "verbs", "masking"],
                              kind=["claim", "claim", "check", "claim"],
                              what=["noisy", "fine-tuning", "blind", "subject"],
                              models=["toy-vilt-noisy|toy-vilt", "toy-clip, both, α = 1|toy-clip, both, α = 0",
                                      "toy-bert-blind", "toy-vilt|toy-vilt"]))
    seed0 = lines.assign(verdict=["holds", "holds", "not above chance", "holds"], rows=[_one(i) for i in range(4)])
    seed1 = lines.assign(verdict=["does not hold", "not resolved", "above chance", "holds"],
                         rows=[_one(i) for i in range(4, 8)])
    return compare([seed0, seed1], ["seed 0", "seed 1"], [saved("shipped"), saved(str(zoo))])


def test_a_line_waiting_for_a_member_is_not_compared_and_the_card_names_the_member(tmp_path):
    table = _partial_zoo_table(tmp_path)
    assert table["seed 0"].tolist() == ["holds", "holds", "not above chance", "holds"]
    assert table["seed 1"].tolist() == ["not retrained", "not resolved", "not retrained", "holds"]
    assert table["waits_for"].tolist() == ["toy-vilt-noisy", "", "toy-bert", ""]
    assert table["agree"].tolist() == [None, False, None, True]
    assert table["seed 1 rows"].tolist() == ["", _one(5), "", _one(7)] and table["seed 0 rows"][0] == _one(0)
    table.to_csv(tmp_path / SEEDS_FILE, index=False)
    lines = seed_section(tmp_path).splitlines()
    assert "| verbs | claim | noisy | holds: 0.0% (n = 10) | not retrained | — |" in lines
    assert "| conceptual | claim | fine-tuning | holds: 10.0% (n = 10) | not resolved: 50.0% (n = 10) | **no** |" in lines
    assert ("1 of 2 claims compared keep their verdict. Not compared yet: 1 claim and 1 check, "   # no check compared
            "which need `toy-bert`, `toy-vilt-noisy` retrained under that seed.") in lines


def test_a_line_compared_by_an_earlier_run_keeps_its_cells_unless_the_runs_disagree(tmp_path):
    from probekit.studies.lab_seeds import carry

    now = _partial_zoo_table(tmp_path)
    earlier = now.copy()
    earlier.loc[0, ["seed 1", "agree", "waits_for"]] = ["holds", True, ""]      # toy-vilt-noisy was retrained then
    earlier.loc[2, ["seed 0", "seed 1", "agree", "waits_for"]] = ["above chance", "above chance", True, ""]
    # (line 2: seed 0 differs)
    earlier.loc[3, ["seed 1", "agree"]] = ["not resolved", False]               # compared now: this run wins
    earlier.to_csv(tmp_path / "earlier.csv", index=False)                      # as main() reads it back
    kept = carry(now, pd.read_csv(tmp_path / "earlier.csv"), ["seed 0", "seed 1"])
    assert kept["seed 1"].tolist() == ["holds", "not resolved", "not retrained", "holds"]
    assert kept["agree"].tolist() == [True, False, None, True]
    assert kept["waits_for"].fillna("").tolist() == ["", "", "toy-bert", ""]
    assert carry(now, earlier.drop(columns="seed 0"), ["seed 0", "seed 1"]).equals(now)   # other zoos: nothing kept


def test_each_line_keeps_the_rows_its_verdict_was_decided_from():
    from probekit.results import frame, row
    from probekit.studies import lab

    def r(model, value, metric="acc"):
        return row(study="s", probe="p", model=model, condition="", subset="all", metric=metric, value=value,
                   ci=(value - 0.1, value + 0.1), n=100, chance=0.5)
    rows = frame([r("ko", 0.5), r("a", 0.9), r("b", 0.6), r("a", 0.3, "acc_diff")])
    checks = lab.checks(rows, [lab.Check("ko", lab.TARGET, "t"), lab.Check("gone", lab.TARGET, "t")])
    claims = lab.claims(rows, [lab.PaperClaim("a beats b", "p", ("a", {"metric": "acc"}), ("b", {})),
                               lab.PaperClaim("a beats b, paired", "p", ("a", {"metric": "acc"}), ("b", {}),
                                              diff=("a", {"metric": "acc_diff"})),
                               lab.PaperClaim("gone", "p", ("gone", {}), ("b", {}))])
    found = [json.loads(x) for x in lab.verdict_lines("s", checks, claims)["rows"]]
    assert [[(x["model"], x["metric"], x["value"]) for x in f] for f in found] == [
        [("ko", "acc", 0.5)], [], [("a", "acc", 0.9), ("b", "acc", 0.6)], [("a", "acc_diff", 0.3)], []]
    assert found[0][0]["ci_low"] == 0.4 and found[0][0]["n"] == 100


def test_a_page_sets_each_line_beside_its_verdict_under_the_other_seed(tmp_path):
    from probekit.studies.lab_seeds import NOT_IN, OTHER_RUN, beside
    from probekit.toymodels.seed_table import LINE, read

    assert read(tmp_path) is None
    _partial_zoo_table(tmp_path).to_csv(tmp_path / SEEDS_FILE, index=False)
    table = read(tmp_path)
    page = table[LINE].assign(verdict=["holds", "holds", "not above chance", "holds"],
                              rows=[_one(0), _one(1), _one(2), _one(9)])
    page.loc[4] = ["verbs", "claim", "a claim the comparison lacks", "a|b", "holds", _one(0)]
    page.loc[5] = [*table.loc[1, LINE], "not resolved", _one(1)]
    got = beside(page, table)
    assert list(got.columns) == ["under seed 1"]
    # line 3: same verdict, other numbers (run with other parameters); line 4: not in the comparison; line 5: same
    # numbers, another verdict
    assert got["under seed 1"].tolist() == ["not retrained", "not resolved", "not retrained", OTHER_RUN, NOT_IN,
                                            OTHER_RUN]


def test_a_rebuilds_float_noise_is_the_same_run_and_another_number_is_not(tmp_path):
    """A fresh build differs from the committed pages by float noise (Probe-C <= 1.6e-8; the fine-tuned CLIPs'
    paired differences up to a few 1e-6, e.g. 0.0106200487 -> 0.0106200658): such a line is compared with the
    seeds; numbers that differ beyond the stated tolerance (1e-4 relative, 1e-6 absolute) are another run."""
    from probekit.studies.lab import SAME_RTOL, same_rows
    from probekit.studies.lab_seeds import OTHER_RUN, beside
    from probekit.toymodels.seed_table import LINE, read

    base = json.loads(_one(1))
    noisy = json.dumps([{**r, "value": r["value"] * (1 + 1.6e-6)} for r in base])
    moved = json.dumps([{**r, "value": r["value"] * (1 + 10 * SAME_RTOL)} for r in base])
    assert same_rows(_one(1), noisy) and not same_rows(_one(1), moved) and not same_rows(_one(1), "[]")
    _partial_zoo_table(tmp_path).to_csv(tmp_path / SEEDS_FILE, index=False)
    table = read(tmp_path)
    page = table[LINE].iloc[[1, 1]].assign(verdict="holds", rows=[noisy, moved]).reset_index(drop=True)
    assert beside(page, table)["under seed 1"].tolist() == ["not resolved", OTHER_RUN]
