"""The findings block each chapter opens with: every finding's number and verdict are what the committed rows say
(book/chapters/<study>.results.parquet and .lab.parquet), and on hand-made rows a comparison the interval does not
resolve says so, and "at chance" stands only where the equivalence test puts it."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from probekit.claims import HIGHER, UNRESOLVED
from probekit.numbers import cell
from probekit.report import findings
from probekit.report.finding import Finding, lead, render
from probekit.registry import load as entry
from probekit.results import frame, load, one, row
from probekit.studies import STUDIES, lab
from probekit.studies.conceptual import findings as conceptual
from probekit.studies.masking import findings as masking
from probekit.studies.prednoun import findings as prednoun
from probekit.studies.verbs import findings as verbs
from probekit.toyworld.prednoun import LIMBS_ALIKE
from probekit.toyworld.svo import PLACE, POSE

matplotlib.use("Agg")
CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "chapters"


def committed(study: str) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A chapter's committed result rows and its lab's verdict lines (None for a study without a lab)."""
    lab_file = CHAPTERS / f"{study}.lab.parquet"
    return load(CHAPTERS / f"{study}.results.parquet"), pd.read_parquet(lab_file) if lab_file.is_file() else None


def _same_row(f: Finding, r) -> None:
    assert (f.value, f.ci, f.n) == (float(r["value"]), (float(r["ci_low"]), float(r["ci_high"])), int(r["n"]))


@pytest.mark.parametrize("study", [s for s, study in STUDIES.items() if study.findings])
def test_each_chapter_has_3_to_6_findings_headline_first_each_with_its_interval_and_n(study):
    found = entry(STUDIES[study].findings)(*committed(study))
    assert 3 <= len(found) <= 6
    assert found[0].headline
    assert all(f.n is not None and f.ci[0] <= f.value <= f.ci[1] for f in found)


def test_verbs_headline_is_the_object_place_rows_at_chance_as_the_equivalence_test_says():
    rows, lines = committed("verbs")
    found = verbs.findings(rows, lines)
    heads = [f for f in found if f.headline]
    assert [f.row["model"] for f in heads] == ["toy-vilt", "toy-clip"]
    for f in heads:
        r = one(rows, source="ours", model=f.row["model"], probe="svo-verb-cue", subset=PLACE, metric="pairwise")
        _same_row(f, r)
        assert f.verdict == lab.check_verdict(r, lab.TARGET) == lab.AT_CHANCE
    pose = [f for f in found if f.row.get("subset") == POSE]
    assert [f.verdict for f in pose] == [lab.ABOVE, lab.ABOVE]
    itm = next(f for f in found if f.row.get("metric") == "neg")
    assert itm.paper_value == one(rows, model="MMT", subset="verb", metric="neg",
                                  source="Hendricks & Nematzadeh 2021, Table 4")["value"]
    parent = lines[(lines["models"] == "toy-vilt-hardneg") & lines["what"].str.contains("object's place")].iloc[0]
    passed = next(f for f in found if f.row["model"] == "toy-vilt-hardneg")
    assert (passed.verdict, passed.value) == (parent["verdict"], json.loads(parent["rows"])[0]["value"])


def test_prednoun_headline_is_the_look_alike_pairs_not_resolved_against_chance_and_the_crop_gain_resolved():
    rows, lines = committed("prednoun")
    found = prednoun.findings(rows, lines)
    head = found[0]
    r = one(rows, source="ours", model="toy-vilt", probe="pairs-limbs", subset=LIMBS_ALIKE, metric="pair_accuracy")
    _same_row(head, r)
    # 23.2% [19.0, 27.5]: holds chance (25%) but reaches past its 5-point margin: neither at nor off chance
    assert head.verdict == lab.check_verdict(r, lab.TARGET) == lab.NOT_RESOLVED
    assert head.paper_value == one(rows, model="ViLT", condition="full", probe="pairs", metric="pair_accuracy",
                                   source="Nikolaus et al. 2022, Table 1")["value"]
    gain = next(f for f in found if f.row["metric"] == "pair_accuracy_diff" and f.row["model"] == "toy-vilt")
    assert gain.verdict == HIGHER
    assert gain.paper_value == pytest.approx(0.75 - 0.40)   # the paper's ViLT, cropped − full (its Table 1 rows)
    claim = next(f for f in found if f.row["model"] == "toy-clip-hardneg")
    line = lines[lines["models"] == "toy-clip-hardneg|toy-vilt-hardneg"].iloc[0]
    assert (claim.verdict, claim.value) == (line["verdict"], json.loads(line["rows"])[0]["value"])


def test_masking_findings_read_the_top5_rows_and_the_paper_table2():
    rows, lines = committed("masking")
    found = masking.findings(rows, lines)
    full = one(rows, source="ours", model="toy-vilt", probe="top-k", condition="full image", metric="accuracy")
    _same_row(found[0], full)
    assert found[0].verdict == lab.ABOVE
    assert found[0].paper_value == one(rows, model="ViLBERT", condition="full image", subset="SVO-Probes",
                                       metric="accuracy")["value"]
    blind = next(f for f in found if f.row["model"] == "toy-bert")
    assert blind.verdict == lab.check_verdict(one(rows, source="ours", model="toy-bert", metric="accuracy"), lab.TARGET)


def test_conceptual_findings_quote_the_probe_headlines_beside_the_papers_models():
    rows, lines = committed("conceptual")
    found = conceptual.findings(rows, lines)
    group = next(f for f in found if f.row["model"] == "toy-vilt" and f.row["metric"] == "group")
    _same_row(group, one(rows, source="ours", model="toy-vilt", probe="probe-c", subset="composition", metric="group"))
    assert group.paper_value == one(rows, model="ViLT", probe="probe-c", subset="composition", metric="group")["value"]
    context = next(f for f in found if f.row["metric"] == "delta_c_pts")
    assert context.verdict == lines[lines["what"].str.startswith("“When objects")].iloc[0]["verdict"]


def test_a_masking_finding_names_its_chance_level_the_verbs_named_at_random_not_the_labs():
    rows = frame([row(study="masking", probe="top-k", model="toy-vilt", condition="full image", subset="all",
                      metric="accuracy", value=0.9, ci=(0.88, 0.93), n=600, chance=5 / 24),
                  row(study="masking", probe="top-k", model="toy-vilt", condition="full image − text only",
                      subset="all", metric="accuracy_diff", value=0.6, ci=(0.55, 0.65), n=600, chance=0.0)])
    full, gain = masking.findings(rows)
    assert full.chance == masking.TOPK_CHANCE and full.verdict == lab.ABOVE
    assert render([full]).split("\n")[0].endswith(
        f"*above chance* (chance 20.8%: {masking.TOPK_CHANCE}); the paper reports no number for this.")
    assert "(chance" not in render([gain])   # a difference is judged against 0, no chance level said
    plain = Finding("x", full.row, full.verdict)
    assert "(chance 20.8%);" in render([plain])   # a finding that says nothing of its level gives the number alone


def _verbs_rows(place: tuple[float, float, float]) -> pd.DataFrame:
    value, low, high = place
    return frame([row(study="verbs", probe="svo-verb-cue", model="toy-vilt", subset=PLACE, metric="pairwise",
                      value=value, ci=(low, high), n=400, chance=0.5)])


def test_a_row_within_the_chance_margin_is_at_chance_and_one_reaching_past_it_is_not_resolved():
    at = verbs.findings(_verbs_rows((0.51, 0.47, 0.545)))
    assert [f.verdict for f in at] == [lab.AT_CHANCE]
    wide = verbs.findings(_verbs_rows((0.51, 0.44, 0.58)))
    assert [f.verdict for f in wide] == [lab.NOT_RESOLVED]
    above = verbs.findings(_verbs_rows((0.62, 0.57, 0.66)))
    assert [f.verdict for f in above] == [lab.ABOVE]
    assert "*at chance*" in render(at) and "*at chance*" not in render(wide)


def test_a_difference_whose_interval_holds_0_is_not_resolved():
    rows = frame([row(study="prednoun", probe="pairs", model="toy-vilt", condition="cropped − full",
                      metric="pair_accuracy_diff", value=0.02, ci=(-0.01, 0.05), n=800, chance=0.0)])
    [gain] = prednoun.findings(rows)
    assert gain.verdict == UNRESOLVED and gain.paper is None
    assert "*not resolved*" in render([gain])


def test_the_lead_opens_with_the_headlines_only_and_a_run_without_rows_has_no_findings():
    rows, lines = committed("verbs")
    found = verbs.findings(rows, lines)
    text = lead(found)
    assert all((cell(f.row, with_n=True, unit=True) in text) == f.headline for f in found if f.row["model"] in
               ("toy-vilt", "toy-clip"))
    assert verbs.findings(rows.iloc[0:0]) == [] and lead([]) == ""


@pytest.mark.parametrize("study", list(STUDIES))
def test_the_headline_figure_draws_every_headline_row(study):
    rows, _ = committed(study)
    fig = findings.headline_figure(rows, study)
    bars = [p for ax in fig.axes for p in ax.patches if p.get_height() > 0]
    heads = [h for h in STUDIES[study].headlines if not h["metric"].endswith("_diff")]
    expected = sum(len(rows[(rows["source"] == "ours")].pipe(lambda r: r.loc[
        pd.concat([r[k] == v for k, v in h.items()], axis=1).all(axis=1)])) for h in heads)
    assert len(bars) == expected > 0


def test_the_patching_claims_are_one_table_a_row_per_setting_and_the_papers_numbers_stay_sentences():
    from probekit.claims import claim
    from probekit.studies.conceptual.page import PATCHING_COLUMNS, patching_reported, patching_table

    def diff(setting, metric, value, ci):
        return row(study="conceptual", probe="patching", model="toy-clip", condition=f"{setting} − original",
                   subset="general", metric=metric, value=value, ci=ci, n=278)

    claims = [claim("both α=0.2: probe", HIGHER, "{a}", {"a": diff("both, α = 0.2", "mu_c_diff", 0.01, (0.005, 0.02))}),
              claim("both α=0.2: general task", UNRESOLVED, "{a}",
                    {"a": diff("both, α = 0.2", "top1_diff", -0.002, (-0.01, 0.008))}),
              claim("text α=1: probe", HIGHER, "{a}", {"a": diff("text, α = 1", "mu_c_diff", 0.03, (0.02, 0.04))}),
              claim("paper: patching", "reported", "the paper")]
    shown = patching_table(claims)
    assert list(shown.index) == ["both, α = 0.2", "text, α = 1"]
    assert shown.loc["both, α = 0.2", PATCHING_COLUMNS["top1_diff"]].endswith(f": {UNRESOLVED}")
    assert shown.loc["text, α = 1", PATCHING_COLUMNS["top1_diff"]] == ""
    assert [c.topic for c in patching_reported(claims)] == ["paper: patching"]


def test_a_lab_finding_says_whether_it_is_pooled_over_training_seeds_that_agree_or_rests_on_one():
    from probekit.report.finding import seeds
    from probekit.studies.lab_pooling import ONE, POOLED, TUNED

    disagree = [{"seed": 0, "verdict": "above chance"}, {"seed": 1, "verdict": "not resolved"}]
    pooled = {"seeds_kind": POOLED, "seeds": "[0, 1]", "seeds_disagree": json.dumps(disagree),
              "seeds_note": "not read: the fields say it"}
    assert seeds(pooled) == (" (pooled over training seeds 0 and 1, which disagree: seed 0 above chance, "
                             "seed 1 not resolved)")
    assert seeds({**pooled, "seeds_disagree": "[]"}) == " (pooled over training seeds 0 and 1, which agree)"
    assert seeds({"seeds_kind": ONE, "seeds": "[0]", "seeds_disagree": "[]"}) == " (one training seed)"
    # a fine-tune's claim: pooled over its fine-tuning seeds, the zoo model they fine-tune one seed's
    tuned = "pooled over 5 fine-tuning seeds of the zoo model trained with seed 0; not over the zoo's seeds"
    assert seeds({"seeds_kind": TUNED, "seeds": "[0, 1, 2, 3, 4]", "seeds_note": tuned}) == f" ({tuned})"
    assert seeds({"rows": "[]"}) == ""   # no other seed's items at hand: nothing said
    # the verbs page's last finding, on the committed lab lines: the parent is pooled over seeds 0 and 1
    lines = pd.read_parquet(Path(__file__).parents[1] / "book" / "chapters" / "verbs.lab.parquet")
    parent = verbs.findings(load(Path(__file__).parents[1] / "book" / "chapters" / "verbs.results.parquet"), lines)[-1]
    assert "pooled over training seeds 0 and 1" in parent.text


def test_the_noverb_finding_names_the_chance_level_its_lab_line_carries():
    """The masking lab's knock-out is judged against what the caption alone allows (24.8% at k = 5): its finding
    says that level, from the verdict line, beside "at chance"."""
    from probekit.studies import lab_holm
    from probekit.studies.masking import findings as masking_page, lab as masking_lab

    check = masking_lab.CHECKS[0]
    r = row(study="masking", model=check.model, value=0.24, ci=(0.207, 0.275), n=600, chance=0.248, **check.where)
    checks, claims = lab_holm.family(lab.checks(frame([r]), [check]), lab.claims(frame([r]), []))
    lines = lab_holm.lines("masking", checks, claims)
    [found] = masking_page.findings(frame([]), lines)
    assert found.verdict == lab.AT_CHANCE and found.row["chance"] == 0.248
    assert render([found]).split("\n")[0].endswith(
        f"*at chance* (chance 24.8%: {masking_lab.CHANCE_WORDS}); the paper reports no number for this.")
