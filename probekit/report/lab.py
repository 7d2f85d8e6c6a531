"""The lab sections' tables: knock-out and blind checks, and the papers' claims with their verdicts."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from probekit.numbers import cell
from probekit.studies import STUDIES, lab, lab_holm, lab_seeds
from probekit.toymodels import seed_table, zoo

_ROLE = {lab.PARENT: "target probe, its information there",
         lab.CONTROL: "knock-out, control", lab.TRAINED: "trained on everything, control",
         lab.BLIND: "blind (text only)",
         lab.FLOOR: "blind (text only), the probe's text floor",
         lab.KNOCK_IN: "knock-in, its information always there (positive control)"}


#: how a knock-out's target lost its information in training (:func:`probekit.toymodels.zoo.knockout`)
_TAKEN = {zoo.SCRAMBLES: "scrambled in training (shown, but paired at random)", zoo.REMOVES: "removed from training"}


def role(kind: str, model: str) -> str:
    """A check's role in words; a target's says whether its knock-out scrambles or removes the information."""
    if kind != lab.TARGET:
        return _ROLE[kind]
    found = zoo.knockout(model)
    return "target probe" + (f", its information {_TAKEN[found[1]]}" if found else "")


def knockouts_text(found: pd.DataFrame) -> str:
    """What each knock-out with a target among the checks ``found`` does in training, from its zoo recipe
    (:func:`probekit.toymodels.zoo.knockout`: scrambles or removes what, and how), and the members that would
    remove the same information instead but are not in the shipped zoo; "" without a knock-out."""
    models = [m for m in dict.fromkeys(found.loc[found["role"] == lab.TARGET, "model"]) if zoo.knockout(m)]
    out = []
    for m in models:
        what, how = zoo.knockout(m)  # type: ignore[misc]  # models holds only knock-outs
        done = zoo.member(m).factor.removeprefix("knock-out: ")
        instead = " rather than removing it" if how == zoo.SCRAMBLES else ""
        out.append(f"`{m}` {how} {what} in training{instead} ({done}).")
    for what in dict.fromkeys(zoo.knockout(m)[0] for m in models):  # type: ignore[index]  # knock-outs only
        waiting = [w for w in zoo.untrained_removals(what) if w not in set(found["model"])]
        if waiting:
            many = len(waiting) > 1
            out.append(f"The knock-out{'s' if many else ''} that remove{'' if many else 's'} {what} instead "
                       f"({', '.join(f'`{w}`' for w in waiting)}; `probekit/toyworld/knockouts.py`) "
                       f"{'are' if many else 'is'} not trained in the shipped zoo and not checked here.")
    return " ".join(out)


def _chance_words(study: str | None) -> str:
    """What a lab's cells call its rows' chance level: "chance", or where the lab's chance is not the one its study's
    tables give the same numbers, with the words its lab module declares (``CHANCE_WORDS``; masking: what the caption
    alone allows, where the study's tables name k of the verbs at random)."""
    found = STUDIES.get(study or "")
    words = found.chance_words if found is not None else ""
    return f"chance ({words})" if words else "chance"


def _chance(r, study: str | None = None) -> str:
    """A row's chance level for its cell ("; chance 50.0%", in :func:`_chance_words` for ``study``); "" without one."""
    chance = r.get("chance") if isinstance(r, Mapping) else None
    if chance is None or chance != chance:
        return ""
    level = cell({**r, "value": chance, "ci_low": None, "ci_high": None}, unit=True)
    return f"; {_chance_words(study)} {level}"


def _cell(r, study: str | None = None) -> str:
    if not isinstance(r, Mapping):   # None, or NaN where pandas turned a row of Nones into floats
        return "not run"
    return cell(r, with_n=True, unit=True) + _chance(r, study)


def _verdict(r, ok: bool, expected, verdict: str, study: str | None = None) -> str:
    """A check's verdict cell: the verdict, ✓ where it is the one the check expects (else ✗ and the one it expects;
    a row shown, not judged, says why), and the row's chance level."""
    level = _chance(r, study)
    if verdict == lab.NOT_RUN:
        return verdict
    if not isinstance(expected, str):   # None (pandas may hold it as NaN): a row shown, not judged
        mark = (", not judged (these items cannot be won without the image)" if verdict == lab.BY_DESIGN
                else ", not judged (a text floor by the paper's design)")
    else:
        mark = " ✓" if ok else f" ✗ (should be {expected})"
    return verdict + mark + level


_FLOOR_OF = {lab.CONTROL: "a knock-out", lab.TRAINED: "a model trained on everything"}


def resampled(study: str) -> str:
    """A caption's words for the unit ``study``'s 95% intervals resample: "95% intervals: a cluster bootstrap
    over the pair (...)"."""
    return f"95% intervals: a cluster bootstrap over {STUDIES[study].unit}"
#: how a claim's rows name their metric when it is not the one its paired difference is of
_METRIC_NAMES = {"map": "mAP", "delta_c_pts": "Δc (points)"}


def judged_by(found: pd.DataFrame) -> str:
    """How the checks of ``found`` are judged, for a caption: the interval, and the control floors they use."""
    floors = [f"{floor:.0%} ({_FLOOR_OF[role]})" for role, floor in lab.FLOORS.items() if role in set(found["role"])]
    target = lab.TARGET in set(found["role"])
    return "verdict from the 95% interval" + (
        f"; a target is {lab.AT_CHANCE} when its interval lies within chance ± {lab.CHANCE_MARGIN * 100:g} points (an "
        f"equivalence test), {lab.NOT_RESOLVED} when it holds chance but reaches further" if target else "") + (
        f"; a control passes when its interval lies at or above {' or '.join(floors)}, fails when it lies below, "
        f"and is {lab.AT_FLOOR} when it holds the floor" if floors else "")


def per_seed(seed_rows) -> str:
    """A pooled line's seeds in one cell, each seed's number before its value: "0: 61.2% · 1: 58.0%" (a line deciding
    on two rows: "a vs b"); "" for a line not judged over seeds."""
    if not isinstance(seed_rows, str) or not seed_rows:
        return ""
    each: dict = {}
    for e in json.loads(seed_rows):
        each.setdefault(e["seed"], []).append(cell({**e, "ci_low": None, "ci_high": None}, unit=True))
    return " · ".join(f"{s}: {' vs '.join(v)}" for s, v in each.items())


#: the seeds a lab line may be pooled over: the zoo's training seeds (:mod:`probekit.studies.lab_pooling`) and the
#: conceptual chapter's fine-tuning seeds (:mod:`probekit.studies.conceptual.finetune_seeds`): (rows column, note column, words)
SEED_KINDS = (("seed_rows", "seeds_note", "training seeds"),
              ("finetune_seed_rows", "finetune_seeds_note", "fine-tuning seeds"))


def _pooled(table: pd.DataFrame, found: pd.DataFrame, result: str) -> pd.DataFrame:
    """``table`` of a lab judged over seeds (the :data:`SEED_KINDS` with columns in ``found``): the ``result`` cell
    of a line pooled over seeds reads "pooled over <seeds>: ...", one column beside it each seed's value
    (:func:`per_seed`; headed "each training seed" or "each fine-tuning seed", or "each seed" with each cell naming
    its kind where the table's lines are pooled over both), the verdict with each kind's note ("seeds disagree: ...",
    or why a line is one seed's only)."""
    kinds = [k for k in SEED_KINDS if k[0] in found]
    if not kinds:
        return table
    pooled = {rows: [isinstance(r, str) and bool(r) for r in found[rows]] for rows, _, _ in kinds}
    mixed = sum(any(p) for p in pooled.values()) > 1
    results, verdicts, each = list(table[result]), list(table["verdict"]), [""] * len(table)
    for rows, note, over in kinds:
        for i, (r, n) in enumerate(zip(found[rows], found[note])):
            if pooled[rows][i]:
                results[i] = f"pooled over {over}: {results[i]}"
                kind = f"{over.removesuffix('s')} " if mixed else ""
                each[i] = "; ".join(filter(None, [each[i], kind + per_seed(r)]))
            verdicts[i] += f" ({n})" if isinstance(n, str) and n else ""
    shown = next((over for rows, _, over in kinds if any(pooled[rows])), kinds[0][2])
    table = table.assign(**{result: results, "verdict": verdicts})
    table.insert(table.columns.get_loc(result) + 1, "each seed" if mixed else f"each {shown.removesuffix('s')}", each)
    return table


def _beside(table: pd.DataFrame, lines: pd.DataFrame, study: str | None, seeds: pd.DataFrame | None):
    """``table`` with a column per zoo retrained from another seed (``lab_seeds.beside``; the shipped comparison
    unless ``seeds`` is given), when the study is named and a comparison exists; a lab judged over seeds shows its
    seeds itself (:func:`_pooled`) instead."""
    if set(lab.SEED_FIELDS) <= set(lines.columns):
        return table
    seeds = seed_table.read() if seeds is None and study else seeds
    if not study or seeds is None or not len(table):
        return table
    under = lab_seeds.beside(lines, seeds)   # line for line with the table, whose index (a model) may repeat
    return table.assign(**{column: under[column].to_numpy() for column in under.columns})


#: the Holm column's header: what its marks mean
HOLM = f"Holm {lab_holm.ALPHA:.0%}: ✓ survives, ✗ does not, ○ nothing resolved (adjusted p)"


def holm_cell(p: float, survives) -> str:
    """A line's Holm cell, short: ✓ where its resolved verdict survives, ✗ where it does not, ○ where it resolved
    nothing, with the adjusted p ("✓ p = 0.003"); "—" for a line not judged."""
    if p != p:
        return "—"
    return f"{'○' if pd.isna(survives) else '✓' if survives else '✗'} p = {p:.2g}"


def _holm(table: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a :data:`HOLM` column where its lines ``found`` were judged (:func:`lab_holm.judge`: the
    chapter's family's columns)."""
    if "holm" not in found:
        return table
    return table.assign(**{HOLM: [holm_cell(p, s) for p, s in zip(found["holm"], found["survives"])]})


def judgements(lines: pd.DataFrame) -> str:
    """A chapter's count of judgements from its verdict ``lines`` (``StudyResult.lab_lines``), for a caption: "18
    checks and 6 claims judged; 15 survive Holm at 5%"."""
    n = lab_holm.tally(lines)
    return (f"{n['checks']} checks and {n['claims']} claims judged; {n['survive']} of their verdicts survive "
            f"Holm's correction at {lab_holm.ALPHA:.0%} over the {n['checks'] + n['claims']}")


def checks_table(found: pd.DataFrame, study: str | None = None, seeds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Model | probe (role) | result [95% CI] (n) | verdict (✓ as it should be, or what it should be; the chance
    level) (| Holm, where the run judged the chapter's family | the verdict under each zoo retrained from another
    seed, for a named study)"""
    table = pd.DataFrame({
        "model": found["model"],
        "probe (role)": [f"{w} ({role(r, m)})" for w, r, m in zip(found["what"], found["role"], found["model"])],
        "result [95% CI] (n)": [cell(r, with_n=True, unit=True) if isinstance(r, Mapping) else lab.NOT_RUN
                                for r in found["row"]],
        "verdict": [_verdict(r, ok, e, v, study) for r, ok, e, v in
                    zip(found["row"], found["ok"], found["expected"], found["verdict"])],
    })
    table = _pooled(table, found, "result [95% CI] (n)")
    table = _holm(table, found).set_index("model")
    return _beside(table, lab.verdict_lines(study or "", found, None), study, seeds)


def untrained(r) -> str:
    """Why a claim line (:func:`probekit.studies.lab.claims`) is not testable: each row it presupposes learned
    (:func:`probekit.studies.lab.unlearned`) that did not, with its row."""
    gains = [g if isinstance(g, Mapping) else None for g in r.get("gains", [])]
    sides = [r[s] if isinstance(r[s], Mapping) else None for s in "ab"]
    missed = lab.unlearned(sides[0], sides[1], gains, r["expect"], bool(r.get("chance_floor", False)))
    rows = [f"{g['model']}: {g['metric']} {cell(g, unit=True)}" if g is not None else "a row not run" for g in missed]
    return (f"{lab.NOT_TESTABLE}: it compares settings that did not learn what it compares (not above chance, or "
            f"a gain not above 0: {'; '.join(rows)})")


def _paper(diff: Mapping, effect) -> str:
    """The paper's effect beside the toy's (a no-op without one): "; the paper's effect +17.7 pts (the toy's is
    3% of it)"."""
    if effect is None or effect != effect:
        return ""
    text = f"; the paper's effect {cell({**diff, 'value': effect, 'ci_low': None, 'ci_high': None}, unit=True)}"
    return text + f" (the toy's is {diff['value'] / effect:.0%} of it)" if effect else text


def _difference(r, diff: Mapping, metric: str = "") -> str:
    """The paired difference a claim line ``r`` is judged on, value [95% CI] (n), named by ``metric`` ("Δc (points) ")
    where its rows are of another metric; the paper's effect beside it; a no-difference claim's equivalence margin."""
    text = f"paired difference {metric}{cell(diff, with_n=True, unit=True)}" + _paper(diff, r.get("paper_effect"))
    margin = r.get("margin")
    if margin is not None and margin == margin:   # a no-difference claim: its equivalence margin
        size = f"{str(diff['metric']).removesuffix('_diff')}_size"   # unsigned, in the row's unit
        bound = {**diff, "metric": size, "value": margin, "ci_low": None, "ci_high": None}
        text += f"; no difference means within ± {cell(bound, unit=True)}"
    return text


def claims_table(found: pd.DataFrame, study: str | None = None, seeds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Claim (source) | toy comparison (each side named by its condition too where one model is on both; the
    paper's effect beside the toy's where given) | verdict (| Holm, where the run judged the chapter's family |
    the verdict under each zoo retrained from another seed, for a named study)."""
    def compared(r) -> str:
        diff = r["diff"] if isinstance(r["diff"], Mapping) else None
        # rows of another metric than the difference's (Probe-B: mAP of each view, Δc between them) are named
        other = diff is not None and isinstance(r["a"], Mapping) and diff["metric"] != f"{r['a']['metric']}_diff"
        def name(row) -> str:
            return f"{_METRIC_NAMES.get(row['metric'], row['metric'])} " if other and isinstance(row, Mapping) else ""
        # one model on both sides (two heads, or two inputs): each side named by its condition too
        same = r["a_model"] == r["b_model"] and all(isinstance(r[s], Mapping) for s in "ab") and \
            r["a"]["condition"] != r["b"]["condition"]
        who = {s: r[f"{s}_model"] + (f" ({r[s]['condition']})" if same else "") for s in "ab"}
        sides = (f"{who['a']}: {name(r['a'])}{_cell(r['a'], study)} vs "
                 f"{who['b']}: {name(r['b'])}{_cell(r['b'], study)}")
        if diff is None:
            text = sides
        elif other:   # judged on a difference the two rows are not the terms of: that difference first
            text = f"{who['a']} vs {who['b']}: {_difference(r, diff, name(diff))}; beside it, not judged: {sides}"
        else:
            text = f"{sides}; {_difference(r, diff)}"
        if isinstance(r.get("reason"), str) and r["reason"]:
            text += f"; {r['verdict']}: {r['reason']}"
        if r["verdict"] == lab.NOT_TESTABLE:
            text += "; " + untrained(r)
        return text
    table = pd.DataFrame({
        "the paper's claim": [f"{c} ({s})" for c, s in zip(found["claim"], found["source"])],
        "on the toy world": [compared(r) for _, r in found.iterrows()],
        "verdict": list(found["verdict"]),
    }, index=pd.RangeIndex(1, len(found) + 1, name="#"))
    table = _pooled(table, found.set_axis(table.index), "on the toy world")
    return _beside(_holm(table, found), lab.verdict_lines(study or "", None, found), study, seeds)
