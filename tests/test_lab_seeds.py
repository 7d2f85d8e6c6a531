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
    assert "1 of 1 claims and 0 of 1 checks keep their verdict." in lines
