"""The summary page across studies: every model × every headline probe, from the chapters' result files.

Each executed chapter leaves its rows in ``book/chapters/<study>.results.parquet``; each study module names
its headline rows in ``HEADLINES`` (a list of :func:`probekit.results.select` conditions, e.g.
``dict(probe="svo", subset="all", metric="pairwise")``).  :func:`headline_rows` picks those rows (ours only,
unless a headline names its ``source``), :func:`summary_table` lays them out, and :func:`show` puts the table,
a heatmap, the toy lab's verdicts (:func:`lab_overview`, :func:`lab_claims`, read from the files the executor
writes beside each page by :func:`load_lab`) and the list of chapters (executed or not) on the page.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from probekit.claims import ABOVE, NO_CHANCE, versus_chance
from probekit.report.figures import heatmap
from probekit.numbers import cell, is_plain, number
from probekit.report.format import table
from probekit.report.layout import chip
from probekit.report.show import show_figure, show_table, show_text
from probekit.results import COLUMNS, KEYS, OURS, load, select
from probekit.report.lab import HOLM, holm_cell
from probekit.studies import STUDIES, lab, lab_holm, lab_seeds
from probekit.toymodels import seed_table
from probekit.toymodels.zoo import ZOO

LABEL, LINK = "headline probe", "_link"
#: a toy-zoo model's hard-condition headline above this share says the toy world is too easy for that probe
CEILING = 0.95
#: a claim's verdicts, in the order the lab overview counts them
VERDICTS = (lab.HOLDS, lab.DOES_NOT_HOLD, lab.NOT_RESOLVED, lab.BY_CONSTRUCTION, lab.NOT_COMPARABLE,
            lab.NOT_TESTABLE)


def load_results(chapters_dir: str | Path, studies: Iterable[str] = STUDIES) -> dict[str, pd.DataFrame]:
    """{study: its rows} for every study whose chapter has a result file (the others were not executed)."""
    files = {s: Path(chapters_dir) / f"{s}.results.parquet" for s in studies}
    return {s: load(path) for s, path in files.items() if path.is_file()}


def load_lab(chapters_dir: str | Path, studies: Iterable[str] = STUDIES) -> pd.DataFrame:
    """The lab verdicts of every executed chapter (``<study>.lab.parquet``, written beside its page), in study
    order (``lab.verdict_lines``)."""
    files = [Path(chapters_dir) / f"{s}.lab.parquet" for s in studies]
    parts = [pd.read_parquet(path) for path in files if path.is_file()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=lab.VERDICT_COLUMNS)


def lab_overview(lab: pd.DataFrame) -> pd.DataFrame:
    """One line per study: how many of its papers' claims hold, do not hold, are not resolved on the toy zoo or
    are decided by construction (claims about concepts, in a drawn world) or not comparable (rows on different
    items or chance levels),
    and how many of its judged checks come out as they should (the others are shown, not judged, or not run); and
    how many of the chapter's judged lines (checks and claims, one family) have a verdict that survives Holm's
    correction (``survives_holm``, :func:`probekit.studies.lab_holm.lines`; shown where the lines carry it)."""
    holm = f"survive Holm ({lab_holm.ALPHA:.0%})"
    out: list[dict[str, Any]] = []
    for study, mine in lab.groupby("study", sort=False):
        claims, checks = mine[mine["kind"] == "claim"], mine[mine["kind"] == "check"]
        judged = checks[checks["as_expected"].notna()]
        verdicts = claims["verdict"].value_counts()
        out.append({"study": f'<a href="{study}.html">{study}</a>',
                    **{v: int(verdicts.get(v, 0)) for v in VERDICTS},
                    "checks as they should be": f"{int(judged['as_expected'].astype(bool).sum())} of {len(judged)}",
                    **({holm: _survivors(mine)} if "holm" in mine else {})})
    return pd.DataFrame(out, columns=["study", *VERDICTS, "checks as they should be",
                                      *([holm] if "holm" in lab else [])]).set_index("study")


def _survivors(lines: pd.DataFrame) -> str:
    """"5 of 22 judged": the lines whose verdict survives Holm, of the lines a test judged (a p)."""
    n = lab_holm.tally(lines)
    return f"{n['survive']} of {n['checks'] + n['claims']} judged"


def _claim_cell(study: str, what: str, models: str) -> str:
    compared = " vs ".join(dict.fromkeys(models.split("|")))
    return (f'<a href="{study}.html" title="{html.escape(what)}">{study}</a>: {html.escape(what)}'
            f'<br><span class="pk-ci">{html.escape(compared)}</span>')


def lab_claims(lab: pd.DataFrame, seeds: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every paper's claim the lab tested: its study (linked to the chapter's lab section) and the claim whole
    (claims of one paper often share their first words), over the zoo's rows it compares ("a vs b"; one name when
    both are one model's), and its verdict on the toy zoo; with a seed comparison (``seed_table.read()``), a column per
    retrained zoo: the claim's verdict there (``lab_seeds.beside``)."""
    claims = lab[lab["kind"] == "claim"].reset_index(drop=True)
    out = pd.DataFrame({"claim (study: the claim; the rows compared)": [
                            _claim_cell(s, w, m) for s, w, m in zip(claims["study"], claims["what"], claims["models"])],
                        "verdict": claims["verdict"]})
    if "holm" in claims:
        out[HOLM] = [holm_cell(p, s) for p, s in zip(claims["holm"], claims["survives_holm"])]
    if seeds is not None and len(claims):
        out = out.join(lab_seeds.beside(claims, seeds))
    return out.set_axis(pd.RangeIndex(1, len(out) + 1, name="#"))


def seed_agreement(claims: pd.DataFrame) -> pd.DataFrame:
    """:func:`lab_claims` as shown: a retrained zoo's verdict reads "same" where it is the verdict shown."""
    out = claims.copy()
    for col in [c for c in claims.columns if c.startswith(lab_seeds.UNDER)]:
        out[col] = ["same" if v == verdict else v for v, verdict in zip(claims[col], claims["verdict"])]
    return out


def with_chips(claims: pd.DataFrame) -> pd.DataFrame:
    """:func:`seed_agreement`'s table as shown: the verdict first, beside the row's number (in view on a phone,
    where the claims scroll), and every verdict (the toy zoo's, and a retrained zoo's where it differs) as a chip
    coloured by its class (:func:`probekit.report.layout.chip`)."""
    out = claims[["verdict", *[c for c in claims.columns if c != "verdict"]]].copy()
    for col in ["verdict", *[c for c in claims.columns if c.startswith(lab_seeds.UNDER)]]:
        out[col] = [chip(v) if v in VERDICTS else v for v in claims[col]]
    return out


def seed_sentences(claims: pd.DataFrame) -> str:
    """Per retrained zoo column of :func:`lab_claims`: how many claims compared keep the verdict shown, and how
    many were not compared (members not retrained; a chapter run otherwise than the comparison)."""
    out = []
    for col in [c for c in claims.columns if c.startswith(lab_seeds.UNDER)]:
        cells = claims[col]
        waiting, other = int((cells == lab_seeds.NOT_RETRAINED).sum()), int((cells == lab_seeds.OTHER_RUN).sum())
        new = int((cells == lab_seeds.NOT_IN).sum())
        compared = cells[~cells.isin([lab_seeds.NOT_RETRAINED, lab_seeds.OTHER_RUN, lab_seeds.NOT_IN])]
        kept = int((compared == claims.loc[compared.index, "verdict"]).sum())
        left = [f"{waiting} waiting for zoo members not retrained yet"] if waiting else []
        left += [f"{other} whose chapter was run here otherwise than in the comparison"] if other else []
        left += [f"{new} added to the lab since the seeds were compared"] if new else []
        out.append(f"Retrained under {col[len(lab_seeds.UNDER):]}, with every chapter at its defaults, the zoo gives "
                   f"the verdict shown for {kept} of {len(compared)} claims compared"
                   + (f" (not compared: {', '.join(left)})" if left else "") + ".")
    return " ".join(out)


def headlines(studies: Sequence[str]) -> dict[str, list[dict]]:
    """{study: its headline rows (:data:`probekit.studies.STUDIES`)}."""
    return {s: STUDIES[s].headlines for s in studies}


def controls(studies: Sequence[str]) -> dict[str, list[dict]]:
    """{study: its headlines that are controls}."""
    return {s: STUDIES[s].controls for s in studies}


def is_share(metric: str) -> bool:
    """Whether ``metric`` is a share shown in percent: not a plain metric (e.g. Pearson's r), not a paired
    difference."""
    return not (is_plain(metric) or metric.endswith("_diff"))


def hard_toy_rows(rows: pd.DataFrame, ctrl: Mapping[str, Sequence[dict]]) -> pd.DataFrame:
    """The headline ``rows`` of toy-zoo models in a hard condition: shares (:func:`is_share`), not a study's
    controls (``ctrl``, e.g. cropped predicate-noun pairs)."""
    control = rows.index.isin([i for study, conditions in ctrl.items() for where in conditions
                               for i in select(rows, study=study, **where).index])
    return rows[rows["model"].isin(list(ZOO)) & rows["metric"].map(is_share) & ~control]


def above_ceiling(hard: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``hard`` (:func:`hard_toy_rows`) above CEILING: the toy world is too easy for their probes."""
    return hard[hard["value"] > CEILING]


def _floor_parts(hard: pd.DataFrame) -> dict[bool, list[str]]:
    """The headline probes (labels) of ``hard`` on which no toy-zoo model is above chance, split by whether every
    row there has a chance level (``True``) or some row has none (``False``: whether it is above chance is not
    known)."""
    out: dict = {True: [], False: []}
    for label, part in hard.groupby(LABEL, sort=False):
        verdicts = [versus_chance(r) for _, r in part.iterrows()]
        if ABOVE not in verdicts:
            out[NO_CHANCE not in verdicts].append(label)
    return out


def at_floor(hard: pd.DataFrame) -> list[str]:
    """The headline probes (labels) of :func:`hard_toy_rows` on which no toy-zoo model is above chance (its 95%
    interval wholly above the row's chance level): too hard for every model shown.  A probe with a row that has no
    chance level is not among them (:func:`without_chance`)."""
    return _floor_parts(hard)[True]


def without_chance(hard: pd.DataFrame) -> list[str]:
    """The headline probes (labels) of :func:`hard_toy_rows` on which no model is shown above chance because a row
    has no chance level: whether they are at the floor is not known."""
    return _floor_parts(hard)[False]


def ceiling_text(hard: pd.DataFrame) -> str:
    """What :func:`hard_toy_rows` (the hard parts of the probes, not their averages) say about the toy world: the
    rows above CEILING (the world too easy for those probes), else the highest one, and the probes on which no
    model is above chance (:func:`at_floor`) and those where a row has no chance level to say so
    (:func:`without_chance`); "" when there are none (no toy model among the headlines)."""
    if not len(hard):
        return ""
    above = above_ceiling(hard)
    said = lambda r: f"{r[LABEL]}, {r['model']}: {cell(r, with_n=True, unit=True)}"
    floor, unknown = at_floor(hard), without_chance(hard)
    low = (f" No toy-zoo model shown is above chance on {'; '.join(floor)}." if floor else
           " On every hard-condition headline with a chance level at least one toy-zoo model is above chance."
           if unknown else " On every hard-condition headline at least one toy-zoo model is above chance.")
    low += (f" Whether any toy-zoo model is above chance on {'; '.join(unknown)} is not said: a row there has no "
            f"chance level." if unknown else "")
    if len(above):
        many = len(above) > 1
        return (f"{len(above)} hard-condition headline{'s' if many else ''} of the toy zoo {'are' if many else 'is'} "
                f"above {CEILING:.0%}, so the toy world is too easy for {'those probes' if many else 'that probe'}: "
                + "; ".join(said(r) for _, r in above.iterrows()) + "." + low)
    top = hard.loc[hard["value"].idxmax()]
    return (f"No hard-condition headline of the toy zoo is above {CEILING:.0%}, the level above which the toy world "
            f"would be too easy for its probe (controls are meant to be high and are not counted). The highest is "
            f"{said(top)}." + low)


def _label(r: pd.Series) -> str:
    parts = [r["probe"], r["condition"], "" if r["subset"] == "all" else r["subset"], r["metric"]]
    return f"{r['study']}: " + " · ".join(p for p in parts if p)


def wholes(studies: Sequence[str]) -> dict[str, list[tuple[dict, dict]]]:
    """{study: (headline, the row shown instead where a run has none of it)} (:attr:`probekit.studies.Study.whole`)."""
    return {s: STUDIES[s].whole for s in studies}


def headline_rows(results: Mapping[str, pd.DataFrame], heads: Mapping[str, Sequence[dict]],
                  whole: Mapping[str, Sequence[tuple[dict, dict]]] | None = None) -> pd.DataFrame:
    """The headline rows of every study in ``results`` (in its order, then its HEADLINES' order), with two
    more columns: a label naming the probe, and that label as a link to the study's chapter page.  A headline
    of which a study's rows hold none is replaced by its row in ``whole`` (:func:`wholes`), if any: on real data,
    the probe the toy world splits into parts."""
    parts = []
    for study, rows in results.items():
        for where in heads[study]:
            picked = select(rows, **{"source": OURS, **where})
            instead = [w for part, w in (whole or {}).get(study, []) if part == where]
            if not len(picked) and instead:
                picked = select(rows, **{"source": OURS, **instead[0]})
            parts.append(picked.assign(**{LABEL: [_label(r) for _, r in picked.iterrows()]}))
    if not parts:
        return pd.DataFrame(columns=[*COLUMNS, LABEL, LINK])
    rows = pd.concat(parts, ignore_index=True).drop_duplicates(KEYS)
    return rows.assign(**{LINK: [f'<a href="{s}.html">{label}</a>' for s, label in zip(rows["study"], rows[LABEL])]})


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per headline probe (linked to its chapter), its chance level, then one column per model:
    "value [95% CI] (n = ...)"."""
    wide = table(rows, index=LINK, columns="model", with_n=True)
    chance = rows.drop_duplicates(LINK).set_index(LINK)
    wide.insert(0, "chance", [number(chance.at[k, "chance"], chance.at[k, "metric"])
                              if not math.isnan(chance.at[k, "chance"]) else "" for k in wide.index])
    wide.index.name = None  # the caption says what the lines are
    return wide


def show(chapters_dir: str | Path = "book/chapters", studies: Iterable[str] = STUDIES) -> None:
    """The summary page's content: the table, the heatmap, and each chapter with whether it was executed."""
    results = load_results(chapters_dir, studies)
    rows = headline_rows(results, headlines(list(results)), wholes(list(results)))
    if len(rows):
        show_table(summary_table(rows), caption="Headline probes of every executed chapter: value with its 95% "
                   "interval and n, per model; percent unless the metric is plain (e.g. Pearson's r)")
        shares = rows[rows["metric"].map(is_share)]
        if len(shares):
            show_figure(heatmap(shares, index=LABEL, columns="model", title="Headline probes in percent, coloured "
                                "against each one's chance level (white: at chance; paired differences and plain "
                                "metrics: table only; blank: model not in that chapter)"))
        if said := ceiling_text(hard_toy_rows(rows, controls(list(results)))):
            show_text(said)
    lab = load_lab(chapters_dir, list(results))
    if len(lab):
        show_table(lab_overview(lab), caption="The toy lab (each chapter's last two sections): the papers' claims "
                   "tested on the toy zoo by verdict, and the knock-out and blind checks that came out as they should")
        claims = lab_claims(lab, seed_table.read())
        show_table(with_chips(seed_agreement(claims)), caption="Every claim the toy lab tested, with its verdict "
                   "(the chapter shows the two rows compared, their 95% intervals and n) and, where the zoo was "
                   "retrained under another seed, its verdict there (\"same\": the verdict shown; the "
                   "model card gives the numbers behind both)")
        if said := seed_sentences(claims):
            show_text(said)
    listing = [f"- [{s}]({s}.html): " + (f"executed, {len(results[s])} result rows" if s in results
                                          else f"**not executed** (run `probekit run {s}`)") for s in studies]
    show_text("Chapters:\n\n" + "\n".join(listing))
