"""The verbs chapter's toy lab: its checks and paper claims select the rows they mean and get the verdicts those rows
call for (hand-made rows; no zoo number is asserted), and one small real run carries the lab's rows and tables."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from probekit.chapters.check import role_problem
from probekit.datasets import load_dataset
from probekit.metrics import itm
from probekit.results import COLUMNS, frame, row, select
from probekit.studies import lab
from probekit.studies.verbs import study as verbs, lab as verbs_lab
from probekit.studies.verbs import params as verbs_params
from probekit.toyworld import svo
from probekit.papers import svo_probes

AT = itm.condition(verbs_lab.THRESHOLD)


def _rows(model: str, **given) -> list[dict]:
    """Every "svo" row score_model gives a thresholded model: pairwise per subset and pos/neg/avg at the lab's
    threshold.  ``given``: ``<metric>_<subset>=(value, low, high)``; the rest 0.5 [0.4, 0.6]."""
    out = []
    for subset in itm.SUBSETS:
        for metric, condition in [("pairwise", ""), ("pos", AT), ("neg", AT), ("avg", AT)]:
            value, low, high = given.get(f"{metric}_{subset}", (0.5, 0.4, 0.6))
            out.append(row(study="verbs", probe=itm.PROBE, model=model, condition=condition, subset=subset,
                           metric=metric, value=value, ci=(low, high), n=100, chance=0.5))
    return out


def _cue(model: str, ci: tuple) -> dict:
    """``model``'s pairwise row on verb negatives told apart by the object's place (the chapter's headline)."""
    low, high = ci[1], ci[2]
    return row(study="verbs", probe=verbs_lab.CUE_PROBE, model=model, subset=svo.PLACE, metric="pairwise",
               value=ci[0], ci=(low, high), n=416, chance=0.5)


def _lab(noverb: dict | None = None, blind: dict | None = None, noisy: dict | None = None,
         clean: dict | None = None, parent: dict | None = None, mismatch: dict | None = None):
    parts = [_rows(name, **given) for name, given in [("toy-vilt-noverb", noverb), ("toy-bert-blind", blind),
                                                      ("toy-vilt-noisy", noisy), ("toy-vilt", clean),
                                                      ("toy-vilt-hardneg", parent), ("toy-vilt-mismatch", mismatch)]
             if given is not None]
    return frame([r for part in parts for r in part])


def test_checks_select_the_knockouts_and_the_blind_models_pairwise_rows():
    knockout = dict(pairwise_verb=(0.51, 0.47, 0.54), pairwise_subject=(0.9, 0.85, 0.95),
                    pairwise_object=(0.95, 0.9, 1.0), neg_verb=(0.99, 0.98, 1.0))
    rows = frame([r for name, given in [("toy-vilt-noverb", knockout), ("toy-clip-noverb", knockout),
                                        ("toy-vilt-hardneg", dict(pairwise_verb=(0.8, 0.72, 0.88))),
                                        ("toy-clip-hardneg", dict(pairwise_verb=(0.8, 0.72, 0.88))),
                                        ("toy-bert-blind", {f"pairwise_{s}": (0.5, 0.5, 0.5) for s in itm.SUBSETS})]
                  for r in _rows(name, **given)] + [_cue("toy-vilt-noverb", (0.5, 0.46, 0.54)),
                                                    _cue("toy-vilt-hardneg", (0.64, 0.6, 0.68))])
    found = lab.checks(rows, verbs_lab.CHECKS)
    assert len(found) == len(verbs_lab.CHECKS) == 14
    picked = [(r["model"], r["row"]["subset"], r["row"]["metric"], r["row"]["condition"]) for _, r in found.iterrows()]
    per_knockout = lambda ko, parent: [(ko, "verb", "pairwise", ""), (parent, "verb", "pairwise", ""),
                                       (ko, "subject", "pairwise", ""), (ko, "object", "pairwise", "")]
    assert picked == per_knockout("toy-clip-noverb", "toy-clip-hardneg") + \
        per_knockout("toy-vilt-noverb", "toy-vilt-hardneg") + \
        [(m, svo.PLACE, "pairwise", "") for m in ("toy-vilt-noverb", "toy-vilt-hardneg")] + \
        [("toy-bert-blind", s, "pairwise", "") for s in ("all", "subject", "verb", "object")]
    assert list(found["role"]) == [lab.TARGET, lab.PARENT, lab.CONTROL, lab.CONTROL] * 2 + [lab.TARGET, lab.PARENT] + \
        [lab.BLIND] * 4
    assert list(found["verdict"]) == [lab.AT_CHANCE, "above chance", lab.PASSES, lab.PASSES] * 2 + \
        [lab.AT_CHANCE, "above chance"] + \
        [lab.BY_DESIGN] * 4   # one sentence over two images: the blind model ties on every row, not judged
    assert found["ok"].all() and found["expected"].iloc[-4:].isna().all()


def test_checks_say_when_the_probe_is_not_doing_its_job():
    rows = _lab(noverb=dict(pairwise_verb=(0.8, 0.7, 0.9), pairwise_subject=(0.8, 0.75, 0.84)),
                blind=dict(pairwise_verb=(0.7, 0.6, 0.8)))
    found = lab.checks(rows, verbs_lab.CHECKS)
    verdict = {(r["model"], r["what"]): r["verdict"] for _, r in found.iterrows()}
    assert verdict["toy-vilt-noverb", "verb negatives, pairwise"] == "above chance"   # the knock-out sees verbs
    assert verdict["toy-vilt-noverb", "subject negatives, pairwise"] == lab.FAILS     # [75, 84] < the 85% floor
    assert verdict["toy-vilt-noverb", "object negatives, pairwise"] == lab.FAILS
    assert verdict["toy-bert-blind", "verb negatives, pairwise"] == "above chance"
    assert verdict["toy-bert-blind", "all negatives, pairwise"] == lab.BY_DESIGN
    assert verdict["toy-vilt-hardneg", "verb negatives, pairwise"] == lab.NOT_RUN
    assert list(found["ok"]) == [False] * 4 + [False, False, False, False] + [False, False] + [True, True, False, True]


def test_claims_compare_each_noisy_vilt_with_the_clean_one_at_the_papers_threshold():
    rows = _lab(noisy=dict(neg_all=(0.3, 0.2, 0.4), pos_all=(0.95, 0.9, 1.0), avg_all=(0.6, 0.55, 0.65),
                           pairwise_verb=(0.1, 0.0, 0.2)),
                mismatch=dict(neg_all=(0.6, 0.5, 0.7), pos_all=(0.9, 0.86, 0.94), avg_all=(0.52, 0.505, 0.535)),
                clean=dict(neg_all=(0.7, 0.6, 0.8), pos_all=(0.8, 0.7, 0.85), avg_all=(0.62, 0.57, 0.67),
                           pairwise_verb=(0.6, 0.5, 0.7), pairwise_subject=(0.9, 0.85, 0.95)))
    found = lab.claims(rows, verbs_lab.CLAIMS)
    assert len(found) == len(verbs_lab.CLAIMS) == 8
    picked = [((r["a"]["model"], r["a"]["subset"], r["a"]["metric"], r["a"]["condition"]),
               (r["b"]["model"], r["b"]["subset"], r["b"]["metric"], r["b"]["condition"])) for _, r in found.iterrows()]
    assert picked == [((noisy, "all", m, AT), ("toy-vilt", "all", m, AT))
                      for noisy in ("toy-vilt-noisy", "toy-vilt-mismatch") for m in ("neg", "pos", "avg")] + \
        [(("toy-vilt", "verb", "pairwise", ""), ("toy-vilt", s, "pairwise", "")) for s in ("subject", "object")]
    assert list(found["claim"][:3]) == list(found["claim"][3:6])       # one quoted claim, two comparisons
    assert list(found["expect"]) == [lab.LOWER, lab.HIGHER, lab.LOWER] * 2 + [lab.LOWER, lab.LOWER]
    # mismatch: negatives [50, 70] overlap the clean [60, 80]; positives [86, 94] apart above [70, 85]; average
    # [50.5, 53.5] (above chance: it learned matching) apart below [57, 67]
    assert list(found["verdict"]) == [lab.HOLDS, lab.HOLDS, lab.NOT_RESOLVED, lab.NOT_RESOLVED, lab.HOLDS, lab.HOLDS,
                                      lab.BY_CONSTRUCTION, lab.BY_CONSTRUCTION]
    assert set(found["source"]) == {verbs_lab.TABLE4, verbs_lab.TABLE5}


def test_claims_resolved_the_other_way_or_not_run():
    rows = _lab(noisy=dict(neg_all=(0.8, 0.75, 0.85), pos_all=(0.5, 0.45, 0.55), avg_all=(0.65, 0.6, 0.7)),
                clean=dict(neg_all=(0.3, 0.2, 0.4), pos_all=(0.9, 0.85, 0.95), avg_all=(0.6, 0.55, 0.65)))
    found = lab.claims(rows, verbs_lab.CLAIMS)
    assert list(found["verdict"][:2]) == [lab.DOES_NOT_HOLD, lab.DOES_NOT_HOLD]
    # judged on one class's accuracy (the clean model's negatives below chance), but testable only where each model
    # learned image–sentence matching: an average accuracy that holds chance leaves the claims not testable
    at_chance = _lab(noisy=dict(neg_all=(0.8, 0.75, 0.85), avg_all=(0.55, 0.45, 0.65)),
                     clean=dict(neg_all=(0.3, 0.2, 0.4), avg_all=(0.6, 0.55, 0.65)))
    assert list(lab.claims(at_chance, verbs_lab.CLAIMS)["verdict"][:3]) == [lab.NOT_TESTABLE] * 3
    # the noisy members left out of lab_models: their claims are not run; toy-vilt's rows still show Table 4's
    found = lab.claims(select(rows, model="toy-vilt"), verbs_lab.CLAIMS)
    assert list(found["verdict"]) == [lab.NOT_RUN] * 6 + [lab.BY_CONSTRUCTION] * 2
    # a threshold other than the lab's selects nothing
    other = frame([{**r, "condition": itm.condition(0.7) if r["condition"] else ""} for r in rows.to_dict("records")])
    assert list(lab.claims(other, verbs_lab.CLAIMS)["verdict"][:3]) == [lab.NOT_RUN] * 3


def test_every_lab_model_can_answer_the_chapters_question():
    for name in verbs_params.LAB_MODELS:
        assert role_problem(name, verbs_params.ANSWERS, toy_data=True) is None, name


def test_lab_rows_reuse_rows_already_scored(tmp_path):
    items = load_dataset("verbs", "toy", data_dir=tmp_path, limit=6, seed=0)
    mine = frame(_rows("not-a-registry-model") + [row(study="verbs", probe=itm.VERB_PROBE, model="x", metric="neg",
                                                      value=0.5, subset="hold")])
    got = verbs_lab.lab_rows(items, ["not-a-registry-model"], scored={"not-a-registry-model": (mine, None)},
                             score=verbs.score_model)
    assert len(got) == len(itm.SUBSETS) * 4 and set(got["probe"]) == {itm.PROBE}  # no loading, svo rows only


def test_each_noisy_member_is_paired_with_the_clean_one_and_judged_on_the_paired_difference(tmp_path):
    items = load_dataset("verbs", "toy", data_dir=tmp_path, limit=6, seed=0)
    n = len(items)
    rejects, accepts = (np.full(n, 0.9), np.full(n, 0.1)), (np.full(n, 0.9), np.full(n, 0.9))
    learned = dict(avg_all=(0.7, 0.6, 0.8))   # both learned matching (the claims presuppose it)
    scored = {"toy-vilt": (frame(_rows("toy-vilt", **learned)), rejects),
              "toy-vilt-mismatch": (frame(_rows("toy-vilt-mismatch", **learned)), accepts)}
    got = verbs_lab.lab_rows(items, ["toy-vilt", "toy-vilt-mismatch"], scored=scored, n_resamples=50,
                             score=verbs.score_model)
    paired = select(got, condition=f"toy-vilt-mismatch − toy-vilt, {AT}")
    assert dict(zip(paired["metric"], paired["value"])) == {"neg_diff": -1.0, "pos_diff": 0.0, "avg_diff": -0.5}
    # the two models' own rows (0.5 [0.4, 0.6] each) overlap; the paired rows resolve the negatives and the average
    found = lab.claims(got, verbs_lab.CLAIMS)
    mismatch = found[found["a_model"] == "toy-vilt-mismatch"]
    assert list(mismatch["verdict"]) == [lab.HOLDS, lab.NOT_RESOLVED, lab.HOLDS]
    assert list(found[found["a_model"] == "toy-vilt-noisy"]["verdict"]) == [lab.NOT_RUN] * 3


def test_no_lab_off_the_toy_world_or_without_models(tmp_path):
    items = load_dataset("verbs", "toy", data_dir=tmp_path, limit=6, seed=0)
    for dataset, models, why in [("svo-probes", verbs_params.LAB_MODELS, "the lab runs on the toy world only"),
                                 ("toy", [], "no lab models were given")]:
        data, fact = verbs.run_lab(items, dataset, models, {})
        assert fact == why and len(data["lab"]) == len(data["lab_checks"]) == len(data["lab_claims"]) == 0
        assert list(data["lab"].columns) == COLUMNS and "verdict" in data["lab_checks"].columns


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("verbs-lab")
    return verbs.run(verbs.Params(
        models=["toy-vilt"], data_dir=root / "data", limit=30, seed=0, device="cpu", cache_dir=root / "scores",
        threshold=0.7, min_triplet_negatives=3, top_k=2, n_resamples=100, lab_models=["toy-vilt", "toy-bert-blind"]))


def test_a_small_run_carries_the_lab(small):
    got = small.data["lab"]
    assert list(got.columns) == COLUMNS and len(frame(got)) == len(got)
    assert set(got["model"]) == {"toy-vilt", "toy-bert-blind"} and set(got["probe"]) == {itm.PROBE, verbs.CUE_PROBE}
    assert set(select(got, probe=verbs.CUE_PROBE)["subset"]) == {svo.PLACE, svo.POSE}   # the headline and its control
    assert set(select(got, model="toy-bert-blind")["metric"]) == {"pairwise"}  # uncalibrated: pairwise only
    # the lab thresholds at the paper's 0.5 whatever the chapter's threshold; the study's rows keep theirs
    assert set(select(got, model="toy-vilt", metric="neg")["condition"]) == {AT}
    assert set(select(small.ours(), model="toy-vilt", metric="neg", probe=itm.PROBE)["condition"]) == {"threshold 0.7"}
    assert set(small.ours()["model"]) == {"toy-vilt"}                                # lab rows stay out of rows
    assert len(small.data["lab_checks"]) == len(verbs_lab.CHECKS)
    assert len(small.data["lab_claims"]) == len(verbs_lab.CLAIMS)
    verdicts = small.data["lab_checks"].groupby("model")["verdict"].apply(set).to_dict()
    assert verdicts["toy-vilt-noverb"] == {lab.NOT_RUN} and lab.NOT_RUN not in verdicts["toy-bert-blind"]
    assert small.facts.lab == "toy-vilt, toy-bert-blind on the same 30 toy rows, ITM heads at threshold 0.5"
    assert small.params["lab_models"] == ["toy-vilt", "toy-bert-blind"]


def test_table5_figure_sets_the_clean_and_noisy_members_beside_the_papers_coco_and_cc_models():
    from probekit import papers
    from probekit.studies.verbs import page as verbs_report

    lab_rows = _lab(noisy=dict(neg_all=(0.1, 0.07, 0.13)), mismatch=dict(neg_all=(0.5, 0.45, 0.55)),
                    clean=dict(neg_all=(0.58, 0.53, 0.63)), noverb=dict())
    ours, theirs = verbs_report.table5_rows(lab_rows, papers.reported(svo_probes))
    assert list(dict.fromkeys(ours["model"])) == ["toy-vilt", "toy-vilt-noisy", "toy-vilt-mismatch"]
    assert set(ours["metric"]) == {"pos", "neg", "avg"} and set(ours["subset"]) == {"all"} and len(ours) == 9
    paper = {(m, k): v for m, k, v in zip(theirs["model"], theirs["metric"], theirs["value"])}
    assert paper == {("MMT-COCO", "pos"): 0.752, ("MMT-COCO", "neg"): 0.609, ("MMT-COCO", "avg"): 0.680,
                     ("MMT", "pos"): 0.938, ("MMT", "neg"): 0.348, ("MMT", "avg"): 0.643}
    fig = verbs_report.table5_figure(lab_rows, papers.reported(svo_probes))
    heights = sorted(round(b.get_height(), 6) for b in fig.axes[0].patches)
    assert heights == sorted(round(100 * v, 6) for v in ours["value"])    # one bar per row, in percent
    assert len(fig.axes[1].patches) == 6
    assert verbs_report.table5_figure(select(lab_rows, model="toy-vilt-noverb"), papers.reported(svo_probes)) is None


def test_verb_pairs_text_sets_ours_beside_the_guided_masking_papers_count():
    from probekit.studies.verbs import page as verbs_report

    facts = SimpleNamespace(verb_pairs={"pos": 1234, "neg": 2000, "all": 3234},
                            guided_masking_verb_pairs={"pos": 11571, "neg": 22322, "all": 33893})
    assert verbs_report.verb_pairs_text(facts) == (
        "Verb negatives with both images: 1,234 positive + 2,000 negative pairs = 3,234 pairs; the guided-masking "
        "paper, on the full SVO-Probes release, scored 11,571 + 22,322 = 33,893.")
