"""The guided-masking lab (``studies.masking_lab``): its checks and claims select the rows they name (hand-made rows,
every verdict; all at the paper's top-5, a top-1 row beside each a decoy), and a small real run puts the lab models'
rows beside the study's (never into its rows).  The toy checkpoints may be placeholders: no model's number or verdict
is asserted."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from probekit.numbers import pct
from probekit.results import COLUMNS, frame, row, select
from probekit.report import lab as lab_report
from probekit.studies import lab
from probekit.studies.masking import study as masking, lab as masking_lab
from probekit.studies.masking import params as masking_params
from probekit.studies.masking.lab import CHECKS, CLAIMS

CHANCE5, CHANCE1 = 5 / 24, 1 / 24


def _r(model, probe, condition, value, low, high, metric="accuracy", subset="all", chance=CHANCE5, n=300):
    return row(study="masking", probe=probe, model=model, condition=condition, subset=subset, metric=metric,
               value=value, ci=(low, high), n=n, chance=chance)


def _decoys():
    """Rows a loose selection would pick up instead: other k, other conditions, other metrics, other subsets."""
    return [_r("toy-vilt-noverb", "top-1", "full image", .9, .85, .95, chance=CHANCE1),
            _r("toy-vilt-noverb", "top-5", "full image", .9, .85, .95, metric="word_accuracy"),
            _r("toy-vilt-noverb", "top-5", "subject ablated", .9, .85, .95),
            _r("toy-vilt-noverb", "top-5", "full image", .9, .85, .95, subset="not in every condition"),
            _r("toy-vilt", "itm", "full image", .9, .85, .95, metric="avg_pooled", subset="all", chance=.5),
            _r("toy-vilt", "itm", "full image", .9, .85, .95, metric="avg", subset="verb", chance=.5),
            _r("toy-vilt", "itm", "subject ablated", .05, .01, .09, metric="avg_pooled", subset="verb", chance=.5)]


def test_checks_select_their_rows_and_give_each_verdict():
    assert [(c.model, c.role) for c in CHECKS] == [("toy-vilt-noverb", lab.TARGET), ("toy-vilt-hardneg", lab.PARENT),
                                                   ("toy-bert", lab.BLIND)]
    at_chance = frame([*_decoys(), _r("toy-vilt-noverb", "top-5", "full image", .21, .17, .25),
                       _r("toy-vilt-hardneg", "top-5", "full image", .7, .65, .75),
                       _r("toy-bert", "top-5", "text only", .21, .16, .26),
                       _r("toy-bert", "top-1", "text only", .9, .85, .95, chance=CHANCE1)])
    found = lab.checks(at_chance, CHECKS)
    assert list(found["verdict"]) == [lab.AT_CHANCE, lab.ABOVE, lab.NOT_ABOVE] and found["ok"].all()
    assert [r["value"] for r in found["row"]] == [.21, .7, .21]      # the top-5 full-image / text-only rows
    above = frame([*_decoys(), _r("toy-vilt-noverb", "top-5", "full image", .60, .55, .65),
                   _r("toy-bert", "top-5", "text only", .30, .25, .35)])
    found = lab.checks(above, CHECKS)
    assert list(found["verdict"]) == [lab.ABOVE, lab.NOT_RUN, lab.ABOVE] and not found["ok"].any()
    found = lab.checks(frame(_decoys()[1:]), CHECKS)                  # no row was produced
    assert list(found["verdict"]) == [lab.NOT_RUN] * 3


def _claim_rows(image_gain, drop, heads):
    """Rows for the three claims: (value, low, high) of claim 1's paired top-5 difference (full image − text only),
    claim 2's paired top-5 drop and claim 3's paired difference of toy-vilt's two heads on the verb pairs (MLM head
    .80 [.75, .85], ITM head .70 [.64, .76]; the ITM rows on verb negatives beside them are not claim 3's); the
    same rows at top-1 are decoys."""
    return frame([
        *_decoys(),
        _r("toy-vilt", "top-1", "full image", .70, .65, .75, chance=CHANCE1),
        _r("toy-bert", "top-1", "text only", .05, .03, .08, chance=CHANCE1),
        _r("toy-vilt", "top-1", "full image − text only", -.5, -.6, -.4, metric="accuracy_diff", chance=0),
        _r("toy-vilt", "top-5", "full image", .80, .75, .85),
        _r("toy-bert", "top-5", "text only", .22, .18, .26),
        _r("toy-vilt", "top-5", "subject ablated", .78, .73, .83),
        _r("toy-vilt", "top-5", "full image − subject ablated", *drop, metric="accuracy_diff", chance=0),
        _r("toy-vilt", "top-5", "full image − text only", *image_gain, metric="accuracy_diff", chance=0),
        _r("toy-vilt", "itm", "full image", .40, .35, .45, metric="avg_pooled", subset="verb", chance=.5),
        _r("toy-vilt", "verb choice", "MLM head", .80, .75, .85, subset="verb", chance=.5),
        _r("toy-vilt", "verb choice", "ITM head", .70, .64, .76, subset="verb", chance=.5),
        _r("toy-vilt", "verb choice", "MLM head − ITM head", *heads, metric="accuracy_diff", subset="verb", chance=0),
    ])


def test_claims_select_their_rows_and_give_each_verdict():
    assert [(c.a[0], c.b[0], c.expect) for c in CLAIMS] == [("toy-vilt", "toy-bert", lab.HIGHER),
                                                             ("toy-vilt", "toy-vilt", lab.HIGHER),
                                                             ("toy-vilt", "toy-vilt", lab.HIGHER)]
    assert all(c.source.startswith("Beňová et al. 2024, Table") for c in CLAIMS)
    # claim 2 (the blanked subject) is decided by how the toy world is drawn; claim 3 compares toy-vilt's two heads
    # on the same verb pairs (chance 50% for both), judged by their paired difference
    assert [(c.by_construction, c.not_comparable) for c in CLAIMS] == [(False, False), (True, False), (False, False)]
    assert CLAIMS[1].reason == masking_lab.BLANKED_BY_CONSTRUCTION and CLAIMS[2].reason == ""
    # claims 1 and 3 by their paired differences; claim 2 shown with its rows whatever the numbers
    found = lab.claims(_claim_rows((.65, .60, .70), (.02, .01, .03), (.10, .04, .16)), CLAIMS)
    assert list(found["verdict"]) == [lab.HOLDS, lab.BY_CONSTRUCTION, lab.HOLDS]
    assert [r["value"] for r in found["a"]] == [.80, .80, .80] and [r["value"] for r in found["b"]] == [.22, .78, .70]
    assert [found["diff"][i]["value"] for i in range(3)] == [.65, .02, .10]
    assert list(found["reason"][1:]) == [CLAIMS[1].reason, ""]
    # the lab's chance level (the caption's prior) is named apart from the study's (k of the verbs at random)
    shown = lab_report.claims_table(found, "masking")["on the toy world"].iloc[0]
    assert shown.startswith("toy-vilt: 80.0% [75.0, 85.0] (n = 300); chance (the best from the caption alone) 20.8% vs toy-bert")
    assert "; chance 20.8%" in lab_report.claims_table(found)["on the toy world"].iloc[0]
    found = lab.claims(_claim_rows((-.1, -.15, -.05), (.02, -.01, .05), (-.10, -.16, -.04)), CLAIMS)
    assert list(found["verdict"]) == [lab.DOES_NOT_HOLD, lab.BY_CONSTRUCTION, lab.DOES_NOT_HOLD]
    found = lab.claims(_claim_rows((.01, -.02, .04), (-.05, -.08, -.02), (.10, -.01, .21)), CLAIMS)
    assert list(found["verdict"]) == [lab.NOT_RESOLVED, lab.BY_CONSTRUCTION, lab.NOT_RESOLVED]
    no_bert = _claim_rows((.65, .60, .70), (.02, .01, .03), (.10, .04, .16))
    found = lab.claims(no_bert[no_bert["model"] != "toy-bert"], CLAIMS)
    assert list(found["verdict"]) == [lab.NOT_RUN, lab.BY_CONSTRUCTION, lab.HOLDS]
    table = lab_report.claims_table(found)   # the page still shows the numbers, each head named
    assert list(table["verdict"]) == [lab.NOT_RUN, lab.BY_CONSTRUCTION, lab.HOLDS]
    assert table["on the toy world"].iloc[2].startswith("toy-vilt (MLM head): 80.0%")
    assert "toy-vilt (ITM head): 70.0%" in table["on the toy world"].iloc[2]


def test_no_lab_off_the_toy_world_or_without_lab_models():
    def load(name):
        pytest.fail(f"{name} loaded")

    for dataset, models in (("svo-probes", masking_params.LAB_MODELS), ("toy", [])):
        data, why = masking._lab(dataset, models, pd.DataFrame(), load, ".", None, 0)
        assert why and all(len(data[k]) == 0 for k in ("lab", "lab_checks", "lab_claims"))
        assert list(data["lab"].columns) == COLUMNS
    assert "toy world" in masking._lab("svo-probes", ["toy-vilt"], None, load, ".", None, 0)[1]


LIMIT = 12
CHEAP = ["toy-vilt-noverb", "toy-bert"]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    root = tmp_path_factory.mktemp("masking-lab")
    return masking.run(masking.Params(
        dataset="toy", data_dir=root / "data", cache_dir=root / "scores", limit=LIMIT, device="cpu", n_examples=1,
        lab_models=CHEAP))


def test_a_small_lab_run(result):
    rows = result.data["lab"]
    assert list(rows.columns) == COLUMNS and set(rows["model"]) == set(CHEAP)
    top = select(rows, metric="accuracy", subset="all")
    assert set(zip(top["probe"], top["model"], top["condition"])) == {
        ("top-5", m, c) for m, c in [("toy-bert", "text only"), *(("toy-vilt-noverb", c) for c in masking.CONDITIONS)]}
    assert (top["n"] == LIMIT).all()
    # chance is what the caption alone allows: the world's stated prior, not k / (verbs in the sample)
    assert np.allclose(select(top, probe="top-5")["chance"], result.facts.lab_text_prior)
    drops = select(rows, metric="accuracy_diff", model="toy-vilt-noverb")
    assert len(drops) == 5 and set(drops["probe"]) == {"top-5"}
    itm = select(rows, probe="itm", subset="verb", metric="avg_pooled")
    assert set(itm["model"]) == {"toy-vilt-noverb"} and set(itm["condition"]) == set(masking.CONDITIONS)
    # the two heads' verb choice is scored only for the model claim 3 reads (toy-vilt, not a lab model here)
    assert masking_lab.CHOOSERS == {"toy-vilt"} and not len(select(rows, probe="verb choice"))
    # the lab's rows stay out of the study's rows
    assert "top-5" not in set(result.rows["probe"]) and "toy-vilt-noverb" not in set(result.rows["model"])
    checks, claims = result.data["lab_checks"], result.data["lab_claims"]
    assert len(checks) == len(CHECKS)
    assert [v == lab.NOT_RUN for v in checks["verdict"]] == [m not in CHEAP for m in checks["model"]]  # the parent
    assert len(claims) == len(CLAIMS) and set(claims["verdict"]) == {lab.NOT_RUN}   # toy-vilt is not a lab model
    assert result.facts.lab is None and result.facts.lab_models == CHEAP


def test_lab_tables_and_captions(result):
    from probekit.report import lab as lab_report
    from probekit.studies.masking.page import checks_caption, claims_caption

    assert len(lab_report.checks_table(result.data["lab_checks"])) == len(CHECKS)
    shown = lab_report.claims_table(lab.claims(_claim_rows((.65, .60, .70), (.02, .01, .03), (.10, .04, .16)), CLAIMS))
    assert len(shown) == len(CLAIMS) and "paired difference" in shown.iloc[0, 1]
    assert "verbs chapter" in checks_caption(result.facts)
    caption = claims_caption(result.facts)
    assert all(pct(p) in caption for p in (result.facts.lab_text_prior, result.facts.lab_chance))
    assert checks_caption(SimpleNamespace(lab="The lab runs on the toy world only.")) == "The lab runs on the toy world only."
