"""What the lab pages say a knock-out does, from the zoo's recipes (scrambles or removes) and which removal
members the shipped zoo lacks."""

from __future__ import annotations

import pandas as pd

from probekit.report import lab as lab_report
from probekit.scorers.registry import WEIGHTS
from probekit.studies import lab
from probekit.toymodels import zoo


def _shipped(tmp_path, monkeypatch, names):
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / WEIGHTS).write_bytes(b"")
    (tmp_path / "toy-vilt-unpaired").mkdir()              # a member still training: a folder without weights
    monkeypatch.setattr(zoo, "CHECKPOINTS", tmp_path)


def test_each_knock_out_scrambles_or_removes_what_its_recipe_takes_away():
    assert zoo.knockout("toy-vilt-noverb") == ("the verb", zoo.SCRAMBLES)      # hide_verbs: a random verb drawn
    assert zoo.knockout("toy-clip-unbound") == ("the binding", zoo.SCRAMBLES)  # unbound: paired at random
    assert zoo.knockout("toy-vilt-noverbword") == ("the verb", zoo.REMOVES)    # never named
    assert zoo.knockout("toy-vilt-unpaired") == ("the binding", zoo.REMOVES)
    assert zoo.knockout("toy-clip-scenenever") == ("the objects' typical scenes", zoo.REMOVES)
    # a knock-in, caption noise, a whole-world member and a name no table holds are no knock-outs
    assert [zoo.knockout(m) for m in ("toy-clip-scenealways", "toy-vilt-cc30", "toy-vilt-hardneg",
                                      "toy-bert-blind")] == [None] * 4


def test_the_checks_table_and_the_line_below_it_say_what_each_shipped_knock_out_does(tmp_path, monkeypatch):
    _shipped(tmp_path, monkeypatch, ["toy-clip-unbound", "toy-clip-hardneg", "toy-vilt-noverbword"])
    assert zoo.untrained_removals("the verb") == ["toy-vilt-noverbpose"]
    assert zoo.untrained_removals("the binding") == ["toy-vilt-unpaired"]     # no weights yet: not shipped
    found = pd.DataFrame({"model": ["toy-clip-unbound", "toy-clip-hardneg", "toy-clip-unbound", "toy-bert-blind"],
                          "role": [lab.TARGET, lab.PARENT, lab.CONTROL, lab.BLIND]})
    roles = [lab_report.role(r, m) for r, m in zip(found["role"], found["model"])]
    assert roles[0] == "target probe, its information scrambled in training (shown, but paired at random)"
    assert roles[1:] == ["target probe, its information there", "knock-out, control", "blind (text only)"]
    assert lab_report.role(lab.TARGET, "toy-vilt-noverbword") == "target probe, its information removed from training"
    assert lab_report.knockouts_text(found) == (
        "`toy-clip-unbound` scrambles the binding in training rather than removing it (two-agent captions do not say "
        "which noun goes with which predicate). The knock-out that removes the binding instead (`toy-vilt-unpaired`; "
        "`probekit/toyworld/knockouts.py`) is not trained in the shipped zoo and not checked here.")
    # a removal member among the checks is described as removing, and not listed as missing
    verbs = pd.DataFrame({"model": ["toy-vilt-noverbword", "toy-vilt-noverb"], "role": [lab.TARGET, lab.TARGET]})
    said = lab_report.knockouts_text(verbs)
    assert said.startswith("`toy-vilt-noverbword` removes the verb in training (transitive captions never name the "
                           "verb). `toy-vilt-noverb` scrambles the verb in training rather than removing it")
    assert said.endswith("The knock-out that removes the verb instead (`toy-vilt-noverbpose`; "
                         "`probekit/toyworld/knockouts.py`) is not trained in the shipped zoo and not checked here.")
    assert lab_report.knockouts_text(found[found["role"] != lab.TARGET]) == ""


def test_once_the_binding_removal_is_shipped_the_page_checks_it_and_lists_none_missing(tmp_path, monkeypatch):
    _shipped(tmp_path, monkeypatch, ["toy-clip-unbound", "toy-clip-hardneg"])
    (tmp_path / "toy-vilt-unpaired" / WEIGHTS).write_bytes(b"")          # its weights copied in
    assert zoo.shipped("toy-vilt-unpaired") and zoo.untrained_removals("the binding") == []
    both = pd.DataFrame({"model": ["toy-clip-unbound", "toy-vilt-unpaired", "toy-vilt-hardneg"],
                         "role": [lab.TARGET, lab.TARGET, lab.PARENT]})
    assert lab_report.role(lab.TARGET, "toy-vilt-unpaired") == \
        "target probe, its information removed from training"
    assert lab_report.knockouts_text(both) == (
        "`toy-clip-unbound` scrambles the binding in training rather than removing it (two-agent captions do not say "
        "which noun goes with which predicate). `toy-vilt-unpaired` removes the binding in training (two-agent "
        "captions name agents and predicates without pairing them).")
    # shipped but not among a page's checks (the scrambling knock-out's page alone): not said to be untrained
    assert "not trained" not in lab_report.knockouts_text(both.iloc[:1])
