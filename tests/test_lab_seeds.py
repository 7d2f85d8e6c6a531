"""Comparing the lab's verdicts across retrained zoos: column names and the model card's table."""

from __future__ import annotations

import json

import pandas as pd

from probekit.studies.lab_seeds import labels
from probekit.toymodels.card import SEEDS_FILE, seed_section


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


def test_card_shows_each_verdict_and_flags_disagreement(tmp_path):
    assert seed_section(tmp_path) == ""
    pd.DataFrame([dict(study="verbs", kind="claim", what="noisy captions", models="a|b", **{"seed 0": "holds",
                                                                                            "seed 1": "holds"}),
                  dict(study="masking", kind="check", what="top-5", models="m", **{"seed 0": "at chance",
                                                                                   "seed 1": "fails"})]
                 ).assign(agree=[True, False]).to_csv(tmp_path / SEEDS_FILE, index=False)
    lines = seed_section(tmp_path).splitlines()
    assert "| study | kind | check or claim | seed 0 | seed 1 | same |" in lines
    assert "| verbs | claim | noisy captions | holds | holds | yes |" in lines
    assert "| masking | check | top-5 | at chance | fails | **no** |" in lines
    assert "1 of 1 claims and 0 of 1 checks compared keep their verdict." in lines


def test_a_line_is_traced_to_the_zoo_members_it_loads():
    from probekit.studies.lab_seeds import members

    assert members("toy-clip, both, α = 1|toy-bert-blind") == {"toy-clip", "toy-bert"}
    assert members("toy-vilt|toy-vilt") == {"toy-vilt"}


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
    seed0 = lines.assign(verdict=["holds", "holds", "not above chance", "holds"])
    seed1 = lines.assign(verdict=["does not hold", "not resolved", "above chance", "holds"])
    return compare([seed0, seed1], ["seed 0", "seed 1"], [saved("shipped"), saved(str(zoo))])


def test_a_line_waiting_for_a_member_is_not_compared_and_the_card_names_the_member(tmp_path):
    table = _partial_zoo_table(tmp_path)
    assert table["seed 0"].tolist() == ["holds", "holds", "not above chance", "holds"]
    assert table["seed 1"].tolist() == ["not retrained: toy-vilt-noisy", "not resolved", "not retrained: toy-bert",
                                        "holds"]
    assert table["agree"].tolist() == [None, False, None, True]
    table.to_csv(tmp_path / SEEDS_FILE, index=False)
    lines = seed_section(tmp_path).splitlines()
    assert "| verbs | claim | noisy | holds | not retrained: toy-vilt-noisy | — |" in lines
    assert "| conceptual | claim | fine-tuning | holds | not resolved | **no** |" in lines
    assert ("1 of 2 claims and 0 of 0 checks compared keep their verdict. Not compared yet: 1 claim and 1 check, "
            "which need `toy-bert`, `toy-vilt-noisy` retrained under that seed.") in lines


def test_a_line_compared_by_an_earlier_run_keeps_its_cells_unless_the_runs_disagree(tmp_path):
    from probekit.studies.lab_seeds import carry

    now = _partial_zoo_table(tmp_path)
    earlier = now.copy()
    earlier.loc[0, ["seed 1", "agree"]] = ["holds", True]                       # toy-vilt-noisy was retrained then
    earlier.loc[2, ["seed 0", "seed 1", "agree"]] = ["above chance", "above chance", True]  # seed 0 differs
    earlier.loc[3, ["seed 1", "agree"]] = ["not resolved", False]               # compared now: this run wins
    earlier.to_csv(tmp_path / "earlier.csv", index=False)                      # as main() reads it back
    kept = carry(now, pd.read_csv(tmp_path / "earlier.csv"), ["seed 0", "seed 1"])
    assert kept["seed 1"].tolist() == ["holds", "not resolved", "not retrained: toy-bert", "holds"]
    assert kept["agree"].tolist() == [True, False, None, True]
    assert carry(now, earlier.drop(columns="seed 0"), ["seed 0", "seed 1"]).equals(now)   # other zoos: nothing kept
