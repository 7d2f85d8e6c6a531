"""The summary page's selection (hand-made result files) and the data files a chapter's last call writes."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from probekit import results
from probekit.report import summary
from probekit.report.lab import HOLM
from probekit.report.export import LAB_FILE, RESULTS_FILE, write
from probekit.studies import STUDIES, lab_holm, lab_seeds


def _row(study, probe, model, value, *, subset="all", metric="pairwise", condition="", chance=0.5, n=40,
         source=results.OURS, ci=0.05):
    return results.row(study=study, probe=probe, model=model, condition=condition, subset=subset, metric=metric,
                       value=value, ci=(value - ci, value + ci) if ci else (math.nan, math.nan), n=n,
                       chance=chance, source=source)


VERBS = [_row("verbs", "svo", "toy-vilt", 0.61), _row("verbs", "svo", "toy-clip", 0.72),
         _row("verbs", "svo", "toy-clip", 0.55, subset="verb"),
         _row("verbs", "svo", "ViLBERT", 0.70, source="Hendricks & Nematzadeh 2021, Table 4", ci=0, n=math.nan)]
MASKING = [_row("masking", "top-k", "toy-bert", 0.30, condition="full image", metric="accuracy", chance=0.1),
           _row("masking", "top-k", "toy-bert", 0.08, condition="full image − subject ablated",
                metric="accuracy_diff", chance=0.0),
           _row("masking", "top-k", "toy-bert", 0.20, condition="subject ablated", metric="accuracy", chance=0.1)]
HEADS = {"verbs": [dict(probe="svo", subset="all", metric="pairwise"), dict(probe="svo", subset="verb")],
         "masking": [dict(probe="top-k", condition="full image", metric="accuracy"),
                     dict(probe="top-k", metric="accuracy_diff")]}


@pytest.fixture
def chapters_dir(tmp_path):
    results.save(results.frame(VERBS), tmp_path / "verbs.results.parquet")
    results.save(results.frame(MASKING), tmp_path / "masking.results.parquet")
    return tmp_path


def test_only_executed_chapters_have_results(chapters_dir):
    loaded = summary.load_results(chapters_dir, STUDIES)
    assert list(loaded) == ["verbs", "masking"]  # reading order; prednoun, conceptual have no result file
    assert len(loaded["verbs"]) == 4


def test_headline_rows_are_ours_in_headline_order(chapters_dir):
    rows = summary.headline_rows(summary.load_results(chapters_dir), HEADS)
    got = list(zip(rows["study"], rows["model"], rows["subset"], rows["condition"], rows["metric"]))
    assert got == [("verbs", "toy-vilt", "all", "", "pairwise"), ("verbs", "toy-clip", "all", "", "pairwise"),
                   ("verbs", "toy-clip", "verb", "", "pairwise"),
                   ("masking", "toy-bert", "all", "full image", "accuracy"),
                   ("masking", "toy-bert", "all", "full image − subject ablated", "accuracy_diff")]
    assert "ViLBERT" not in set(rows["model"])       # the paper's row is not a headline unless asked for
    assert rows[summary.LINK].iloc[0].startswith('<a href="verbs.html">')
    assert rows[summary.LINK].iloc[-1].startswith('<a href="masking.html">')


def test_a_headline_may_ask_for_the_papers_rows(chapters_dir):
    heads = {"verbs": [dict(probe="svo", source="Hendricks & Nematzadeh 2021, Table 4")], "masking": []}
    rows = summary.headline_rows(summary.load_results(chapters_dir), heads)
    assert list(rows["model"]) == ["ViLBERT"]


def test_summary_table_cells_chance_and_blanks(chapters_dir):
    rows = summary.headline_rows(summary.load_results(chapters_dir), HEADS)
    wide = summary.summary_table(rows)
    assert list(wide.columns) == ["chance", "toy-vilt", "toy-clip", "toy-bert"]
    assert len(wide) == 4                            # verbs all, verbs verb, masking full, masking diff
    first = wide.iloc[0]
    assert first["chance"] == "50.0%"
    assert first["toy-vilt"] == "61.0 [56.0, 66.0] (n = 40)"
    assert first["toy-bert"] == ""                   # not a model of that chapter
    diff = wide.iloc[3]
    assert diff["chance"] == "+0.0 pts" and diff["toy-bert"] == "+8.0 [+3.0, +13.0] (n = 40)"


def test_no_results_gives_an_empty_selection(tmp_path):
    rows = summary.headline_rows(summary.load_results(tmp_path), {})
    assert len(rows) == 0 and summary.LABEL in rows.columns


def test_every_study_names_its_headlines():
    heads = summary.headlines(STUDIES)
    for study in STUDIES:
        assert 1 <= len(heads[study]) <= 3, study
        for where in heads[study]:
            assert set(where) <= set(results.KEYS), (study, where)


def test_exported_rows_read_back_as_they_were(tmp_path):
    rows = results.frame(VERBS)
    write(results.StudyResult("verbs", {}, rows), tmp_path)
    back = results.load(tmp_path / RESULTS_FILE)
    pd.testing.assert_frame_equal(back, rows)
    assert math.isnan(back["n"].iloc[3]) and math.isnan(back["ci_low"].iloc[3])
    assert not (tmp_path / LAB_FILE).exists()      # no lab: no verdict lines


def _lab_result() -> results.StudyResult:
    """A study result whose lab judged two checks (one as it should be, one not), showed a text floor, and
    tested two claims (hand-made rows, judged by the lab's own functions, once, as a run judges them)."""
    from probekit.studies import lab
    def r(model, value, low, high, subset):
        return {**_row("verbs", "svo", model, value, subset=subset), "ci_low": low, "ci_high": high}

    rows = results.frame([r("blind", 0.5, 0.4, 0.6, "verb"), r("blind", 0.8, 0.7, 0.9, "subj"),
                          r("ko", 0.9, 0.8, 1.0, "verb"), r("a", 0.9, 0.85, 0.95, "all"),
                          r("b", 0.65, 0.55, 0.75, "all"), r("c", 0.65, 0.55, 0.75, "all")])   # above chance 0.5
    checks = [lab.Check("blind", lab.BLIND, "verb", dict(subset="verb")),
              lab.Check("ko", lab.TARGET, "verb", dict(subset="verb")),
              lab.Check("blind", lab.FLOOR, "subj", dict(subset="subj"))]
    claims = [lab.PaperClaim("a beats b", "P, Table 1", ("a", dict(subset="all")), ("b", dict(subset="all"))),
              lab.PaperClaim("b beats c", "P, Table 2", ("b", dict(subset="all")), ("c", dict(subset="all")))]
    result = results.StudyResult("verbs", {}, results.frame(VERBS), {"lab_checks": lab.checks(rows, checks),
                                                                     "lab_claims": lab.claims(rows, claims)})
    lab_holm.judge(result)
    return result


def test_lab_verdicts_travel_with_the_rows_and_the_summary_counts_them(tmp_path):
    write(_lab_result(), tmp_path / "exported")
    assert len(summary.load_lab(tmp_path)) == 0   # the summary reads the file beside the page,
    (tmp_path / "exported" / LAB_FILE).rename(tmp_path / "verbs.lab.parquet")   # where the executor moves it
    lab = summary.load_lab(tmp_path)
    assert list(lab["kind"]) == ["check", "check", "check", "claim", "claim"]
    assert list(lab["verdict"]) == ["not above chance", "above chance", "above chance", "holds", "not resolved"]
    assert list(lab["as_expected"]) == [True, False, None, None, None]   # the text floor is shown, not judged
    over = summary.lab_overview(lab)
    assert over.to_dict(orient="records") == [{"holds": 1, "does not hold": 0, "not resolved": 1,
                                               "decided by construction": 0, "not comparable": 0, "not testable": 0,
                                               "checks as they should be": "1 of 2",
                                               # judged: the blind check, ko's and both claims (the floor is shown);
                                               # ko's above chance (p ~ 1e-14) and "a beats b" survive, the others
                                               # resolved nothing
                                               "survive Holm (5%)": "2 of 4 judged"}]
    assert [None if pd.isna(s) else s for s in lab["survives_holm"]] == [None, True, None, True, None]
    assert str(lab["survives_holm"].dtype) == "boolean"   # a nullable boolean, as the run judged it
    assert summary.lab_claims(lab)[HOLM].tolist() == ["✓ p = 3.5e-05", "○ p = 1"]
    cells = summary.lab_claims(lab).iloc[:, 0].tolist()
    assert [c.split("</a>: ")[1].split("<br>")[0] for c in cells] == ["a beats b", "b beats c"]
    assert [c.split('"pk-ci">')[1].split("</span>")[0] for c in cells] == ["a vs b", "b vs c"]
    # a chapter executed without a lab (or before verdicts were exported) adds nothing
    assert len(summary.load_lab(tmp_path / "nowhere")) == 0


def test_the_page_its_data_file_and_the_summary_read_the_lines_the_run_judged_once(tmp_path, monkeypatch):
    from probekit.report import findings
    from probekit.report import lab as lab_report

    calls = []
    family = lab_holm.family
    monkeypatch.setattr(lab_holm, "family", lambda *a: calls.append(1) or family(*a))
    result = _lab_result()
    lab_report.checks_table(result.data["lab_checks"])
    lab_report.claims_table(result.data["lab_claims"])
    lab_report.judgements(result.lab_lines)
    findings.of_result(result)
    write(result, tmp_path)
    (tmp_path / LAB_FILE).rename(tmp_path / "verbs.lab.parquet")
    summary.lab_overview(summary.load_lab(tmp_path))
    assert len(calls) == 1
    back = summary.load_lab(tmp_path)
    assert back["holm"].tolist() == pytest.approx(result.lab_lines["holm"].tolist(), nan_ok=True)


def test_each_claim_is_set_beside_its_verdict_under_the_other_seed():
    from probekit.studies.lab_seeds import NOT_RETRAINED, OTHER_RUN

    def line(study, what, verdict):
        return dict(study=study, kind="claim", what=what, models="a|b", verdict=verdict, as_expected=None,
                    rows=f'[{{"model": "a", "value": {len(what) / 100}}}]')
    page = pd.DataFrame([line("verbs", "kept", "holds"), line("verbs", "changed", "not resolved"),
                         line("masking", "waiting", "holds"), line("prednoun", "run otherwise", "does not hold"),
                         {**line("verbs", "a check", "passes"), "kind": "check"}])
    seeds = pd.DataFrame([{**line("verbs", w, v0), "seed 0 (shipped)": v0, "seed 1 (cpu, 1 thread)": v1,
                           "agree": None if v1 == NOT_RETRAINED else v0 == v1, "waits_for": ""}
                          for w, v0, v1 in (("kept", "holds", "holds"), ("changed", "not resolved", "holds"),
                                            ("waiting", "holds", NOT_RETRAINED), ("run otherwise", "holds", "holds"))]
                         ).drop(columns=["verdict", "as_expected"]).rename(columns={"rows": "seed 0 (shipped) rows"})
    seeds["study"] = ["verbs", "verbs", "masking", "prednoun"]
    claims = summary.lab_claims(page, seeds)
    assert list(claims.columns) == ["claim (study: the claim; the rows compared)", "verdict",
                                    "under seed 1 (cpu, 1 thread)"]
    assert claims["under seed 1 (cpu, 1 thread)"].tolist() == ["holds", "holds", NOT_RETRAINED, OTHER_RUN]
    assert list(claims.index) == [1, 2, 3, 4]
    assert summary.seed_sentences(claims) == (
        "Retrained under seed 1 (cpu, 1 thread), with every chapter at its defaults, the zoo gives the verdict shown "
        "for 1 of 2 claims compared (not compared: 1 waiting for zoo members not retrained yet, 1 whose chapter was "
        "run here otherwise than in the comparison).")
    assert summary.seed_sentences(summary.lab_claims(page)) == ""   # no comparison shipped: nothing said


def test_the_committed_pages_were_executed_by_code_that_exports_each_verdicts_rows():
    """A verdict is set beside the seed comparison only with the rows it was decided from (``lab_seeds.beside``):
    a committed page executed before its lab lines carried them (the verbs, prednoun and masking pages of 4666b02)
    loses every seed-1 cell on the summary.  Re-execute the chapters (``make book``) after changing what they
    export."""
    from pathlib import Path

    lab = summary.load_lab(Path(__file__).resolve().parents[1] / "book" / "chapters")
    assert set(lab["study"]) == {s.name for s in STUDIES.values() if s.lab}
    stale = lab.loc[lab["rows"].isna(), ["study", "what"]]
    assert not len(stale), stale.to_string()


def test_a_toy_models_hard_headline_above_95_percent_is_flagged_and_controls_are_not():
    PAIRS = "pair_accuracy"
    heads = {"prednoun": [dict(probe="pairs", condition="full"), dict(probe="pairs", condition="cropped")],
             "masking": [dict(probe="top-k", condition="full image", metric="accuracy"),
                         dict(probe="top-k", metric="accuracy_diff")]}
    rows = summary.headline_rows({
        "prednoun": results.frame([_row("prednoun", "pairs", "toy-clip", 0.94, condition="full", metric=PAIRS),
                                   _row("prednoun", "pairs", "toy-clip", 0.98, condition="cropped", metric=PAIRS),
                                   _row("prednoun", "pairs", "CLIP ViT-B/32", 0.99, condition="full", metric=PAIRS)]),
        "masking": results.frame([_row("masking", "top-k", "toy-vilt", 0.951, condition="full image",
                                       metric="accuracy"),
                                  _row("masking", "top-k", "toy-vilt", 0.97, condition="full image − subject ablated",
                                       metric="accuracy_diff")])}, heads)
    hard = summary.hard_toy_rows(rows, summary.controls(["prednoun", "masking"]))
    # the cropped control, the paired difference and the paper-mode model are not hard toy headlines
    assert sorted(zip(hard["study"], hard["model"], hard["condition"])) == [
        ("masking", "toy-vilt", "full image"), ("prednoun", "toy-clip", "full")]
    assert summary.hard_toy_rows(rows, {})["condition"].tolist().count("cropped") == 1   # no controls named
    assert [summary.is_share(m) for m in ("pair_accuracy", "accuracy_diff", "r")] == [True, False, False]
    above = summary.above_ceiling(hard)
    assert list(above["study"]) == ["masking"] and "95.1" in summary.ceiling_text(hard)
    at_bar = hard.assign(value=[summary.CEILING, 0.5])   # exactly at the bar is not above it
    assert not len(summary.above_ceiling(at_bar))
    assert "95.0" in summary.ceiling_text(at_bar) and summary.ceiling_text(hard.iloc[:0]) == ""


def test_the_headlines_are_the_cross_patch_parts_and_the_within_patch_parts_their_controls():
    from probekit.studies.prednoun import study as prednoun
    from probekit.studies.verbs import study as verbs
    alike = dict(probe="pairs-limbs", condition="full", metric="pair_accuracy")
    assert prednoun.HEADLINES == [{**alike, "subset": "limbs alike"}, {**alike, "subset": "limbs differ"},
                                  dict(probe="pairs", condition="cropped", subset="all", metric="pair_accuracy")]
    assert prednoun.CONTROLS == prednoun.HEADLINES[1:]
    cue = dict(probe="svo-verb-cue", metric="pairwise")
    assert verbs.HEADLINES == [{**cue, "subset": "the object's place"}, {**cue, "subset": "the pose"}]
    assert verbs.CONTROLS == verbs.HEADLINES[1:]
    # on data the toy world's split does not apply to, the whole probe stands in for its hard part
    assert summary.wholes(["prednoun", "verbs", "masking"]) == {
        "prednoun": [(prednoun.HEADLINES[0], dict(probe="pairs", condition="full", subset="all",
                                                   metric="pair_accuracy"))],
        "verbs": [(verbs.HEADLINES[0], dict(probe="svo", subset="verb", metric="pairwise"))], "masking": []}


def test_a_part_headline_missing_from_a_run_shows_the_whole_probe_and_the_ceiling_reads_the_parts():
    PAIRS = "pair_accuracy"
    toy = [_row("prednoun", "pairs-limbs", "toy-vilt", 0.30, subset="limbs alike", condition="full", metric=PAIRS,
                chance=0.25, ci=0.1),
           _row("prednoun", "pairs-limbs", "toy-vilt", 0.99, subset="limbs differ", condition="full", metric=PAIRS,
                chance=0.25, ci=0.01),
           _row("prednoun", "pairs", "toy-vilt", 0.64, condition="full", metric=PAIRS, chance=0.25),
           _row("verbs", "svo-verb-cue", "toy-vilt", 0.62, subset="the object's place"),
           _row("verbs", "svo-verb-cue", "toy-vilt", 0.97, subset="the pose"),
           _row("verbs", "svo", "toy-vilt", 0.80, subset="verb")]
    studies = ["prednoun", "verbs"]
    heads, ctrl, whole = summary.headlines(studies), summary.controls(studies), summary.wholes(studies)
    split = summary.headline_rows({s: results.frame([r for r in toy if r["study"] == s]) for s in studies}, heads,
                                  whole)
    # the parts are shown, not the whole probes' averages (64%, 80%); the hard ones are the cross-patch parts
    assert sorted(zip(split["probe"], split["subset"])) == [
        ("pairs-limbs", "limbs alike"), ("pairs-limbs", "limbs differ"), ("svo-verb-cue", "the object's place"),
        ("svo-verb-cue", "the pose")]
    hard = summary.hard_toy_rows(split, ctrl)
    assert list(hard["value"]) == [0.30, 0.62] and not len(summary.above_ceiling(hard))
    # 30% [20, 40] holds the 25% chance: no model shown is above chance on the binding part
    assert summary.at_floor(hard) == [hard.iloc[0][summary.LABEL]]
    # a run without the parts (real data): the whole probe stands in for the hard part; the controls are not there
    unsplit = {s: results.frame([r for r in toy if r["study"] == s and r["probe"] in ("pairs", "svo")])
               for s in studies}
    shown = summary.headline_rows(unsplit, heads, whole)
    assert sorted(zip(shown["probe"], shown["subset"], shown["value"])) == [("pairs", "all", 0.64),
                                                                          ("svo", "verb", 0.80)]
    assert not len(summary.headline_rows(unsplit, heads))                         # without ``whole``: nothing
    assert summary.at_floor(summary.hard_toy_rows(shown, ctrl)) == []


def test_a_headline_without_a_chance_level_is_not_said_to_be_at_the_floor_and_a_control_is_not_counted():
    """The summary said no toy model was above chance on Probe-B's mAP (no chance level on those rows) while a
    random ranking gets 36.2% there and toy-clip 74.8%."""
    MAP = dict(condition="black", subset="x̃1", metric="map", n=180)
    toy = [_row("conceptual", "probe-b", "toy-vilt", 0.435, chance=math.nan, ci=0.03, **MAP),
           _row("conceptual", "probe-b", "toy-clip", 0.748, chance=math.nan, ci=0.03, **MAP),
           _row("prednoun", "pairs-limbs", "toy-vilt", 0.30, subset="limbs alike", condition="full",
                metric="pair_accuracy", chance=0.25, ci=0.1),
           # the control (limbs differ) has no chance level and is at chance: it is no headline of the floor
           _row("prednoun", "pairs-limbs", "toy-vilt", 0.26, subset="limbs differ", condition="full",
                metric="pair_accuracy", chance=math.nan, ci=0.1)]
    studies = ["prednoun", "conceptual"]
    def hard_of(rows):
        shown = summary.headline_rows({s: results.frame([r for r in rows if r["study"] == s]) for s in studies},
                                      summary.headlines(studies), summary.wholes(studies))
        return summary.hard_toy_rows(shown, summary.controls(studies))
    hard = hard_of(toy)
    binding, probe_b = list(dict.fromkeys(hard[summary.LABEL]))
    assert "limbs differ" not in " ".join(hard[summary.LABEL])          # the control is not a hard row
    assert summary.at_floor(hard) == [binding] and summary.without_chance(hard) == [probe_b]
    text = summary.ceiling_text(hard)
    assert f"above chance on {binding}." in text and f"above chance on {probe_b} is not said" in text
    # with the random ranking's chance level on the mAP rows, toy-clip is above it: no probe-b in either list
    known = hard_of([{**r, "chance": 0.362} if r["probe"] == "probe-b" else r for r in toy])
    assert summary.at_floor(known) == [binding] and summary.without_chance(known) == []
    assert summary.ceiling_text(known).endswith(f"No toy-zoo model shown is above chance on {binding}.")
    # a model above chance settles a probe even where another row has no chance level
    mixed = hard_of([{**r, "chance": 0.362} if r["model"] == "toy-clip" else r for r in toy])
    assert probe_b not in summary.at_floor(mixed) + summary.without_chance(mixed)


def test_an_empty_text_shows_nothing(monkeypatch):
    """An empty Markdown output rendered as its repr on the conceptual page ("<IPython.core.display.Markdown
    object>", where the fine-tuning notice is empty)."""
    from probekit.report import show

    shown = []
    monkeypatch.setattr(show, "display", lambda obj, **kw: shown.append(obj))
    show.show_text("")
    show.show_text("  \n")
    show.show_text("a *line*")
    assert [s.data for s in shown] == ["a *line*"]


def test_the_claims_table_shows_each_claim_whole_its_rows_its_verdict_chip_and_same_where_a_seed_agrees():
    lab = pd.DataFrame({"kind": ["claim", "claim", "check"], "study": ["verbs", "masking", "verbs"],
                        "what": ["A model pretrained on noisier captions over-predicts matches: its accuracy on "
                                 "negative pairs is lower (34.8 vs 60.9)", "x " * 60, "a check"],
                        "models": ["toy-vilt-noisy|toy-vilt", "toy-vilt|toy-vilt", "toy-vilt"],
                        "verdict": ["holds", "not resolved", "at chance"]})
    claims = summary.lab_claims(lab)
    first, second = claims.iloc[:, 0]
    assert first.startswith('<a href="verbs.html"') and ": A model pretrained on noisier captions over-predicts " \
        "matches: its accuracy on negative pairs is lower (34.8 vs 60.9)<br>" in first   # whole, not cut at ": "
    assert "toy-vilt-noisy vs toy-vilt" in first and ("x " * 60).strip() in second
    assert second.endswith('<span class="pk-ci">toy-vilt</span>')          # one model's two rows: one name
    seeded = claims.assign(**{"under seed 1": ["holds", lab_seeds.NOT_RETRAINED]})
    agreed = summary.seed_agreement(seeded)
    assert agreed["under seed 1"].tolist() == ["same", lab_seeds.NOT_RETRAINED]
    shown = summary.with_chips(agreed.assign(**{"under seed 1": ["does not hold", lab_seeds.NOT_RETRAINED]}))
    assert list(shown.columns)[0] == "verdict"                             # beside the row's number
    assert shown["verdict"].tolist() == ['<span class="pk-chip pk-holds">holds</span>',
                                         '<span class="pk-chip pk-not-resolved">not resolved</span>']
    assert shown["under seed 1"].tolist() == ['<span class="pk-chip pk-does-not-hold">does not hold</span>',
                                              lab_seeds.NOT_RETRAINED]     # not a verdict: no chip