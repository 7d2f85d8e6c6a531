"""Are the lab's verdicts a property of the training conditions or of one training run?

``python -m probekit.studies.lab_seeds DIR [DIR ...]`` runs every study's lab (chapter defaults, toy world, CPU)
once per zoo directory (a zoo retrained with ``probekit train-toy --seed S --out DIR``; ``shipped`` = the
checkpoints in the package) and prints, per check and claim, the verdict under each zoo and whether they agree.
Each verdict is kept with the rows it was decided from (``<zoo> rows``, the line's ``rows``).  A zoo directory may hold only some members
(a long retraining done a few members at a time): a line whose models are not all retrained there reads "not
retrained" under that zoo (``waits_for`` names the members) and is left out of the comparison (the lab scores the
missing members from the shipped zoo, so its verdict there would be seed 0's), unless the ``--out`` file of an
earlier run, with its members retrained then, compared it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from probekit.studies import STUDIES
from probekit.studies.lab import same_rows
from probekit.studies.lab_pooling import POOLED, unpooled
from probekit.toymodels import seed_items
from probekit.toymodels.seed_table import LINE, ROWS, zoo_columns

NOT_RETRAINED = "not retrained"
#: where a line's verdict on a page cannot be set beside the comparison's (see :func:`beside`)
OTHER_RUN = "not compared: this page's run differs"
#: a page's line the comparison has no line for (a check or claim added, or renamed, since the seeds were compared)
NOT_IN = "not compared: not in the seed comparison"
UNDER = "under "   # a page's column of verdicts under a retrained zoo: "under seed 1 (cpu, 1 thread)"


def verdicts(zoo: str | None, studies: Iterable[str] = STUDIES, data_dir: str | None = None,
             items: list[pd.DataFrame] | None = None) -> pd.DataFrame:
    """One line per check and claim of every study's lab under the zoo in ``zoo`` (None: the shipped one), with
    the rows each verdict was decided from (``rows``, JSON); each judged on this zoo alone (not pooled with a
    ``seed_items.parquet`` beside it).  ``items``: a list that gets each study's lab items (``lab_items``)."""
    old = os.environ.get("PROBEKIT_TOY_CHECKPOINTS")
    if zoo:
        os.environ["PROBEKIT_TOY_CHECKPOINTS"] = str(zoo)
    try:
        out = []
        for study in (STUDIES[name] for name in studies if STUDIES[name].lab):  # a study without a lab: none
            with unpooled():
                result = study.run(study.parameters(dataset="toy", device="cpu", data_dir=data_dir))
            out.append(result.lab_lines[[*LINE, "verdict", "rows"]])   # judged by the run (lab_holm.judge)
            if items is not None:
                items.append(result.data["lab_items"])
        return pd.concat(out, ignore_index=True)
    finally:
        if old is None:
            os.environ.pop("PROBEKIT_TOY_CHECKPOINTS", None)
        else:
            os.environ["PROBEKIT_TOY_CHECKPOINTS"] = old


@functools.cache
def _sources() -> dict[str, str]:
    from probekit.scorers.registry import list_models

    reg = list_models()
    return dict(zip(reg["name"], reg["source"]))


def members(models: str) -> set[str]:
    """The zoo members behind a line's models: "toy-clip, both, α = 1|toy-bert-blind" -> {toy-clip, toy-bert} (a
    derived row names its model before the comma; a registry name maps to the checkpoint it loads)."""
    source = _sources()
    names = {m.split(",")[0].strip() for m in models.split("|")}
    return {source[n][4:] if source.get(n, "").startswith("toy:") else n for n in names}


def saved(zoo: str) -> set[str] | None:
    """The members with saved weights in a zoo directory (None for the shipped zoo: every member)."""
    if zoo == "shipped":
        return None
    from probekit.scorers.registry import WEIGHTS

    return {p.parent.name for p in Path(zoo).glob(f"*/{WEIGHTS}")}


def compare(tables: list[pd.DataFrame], names: list[str], retrained: list[set[str] | None]) -> pd.DataFrame:
    """One table of verdicts, a column per zoo (and ``<zoo> rows``, the numbers behind it, where the tables have
    them); a line whose members are not all in that zoo's ``retrained`` set reads "not retrained" there,
    ``waits_for`` names the members, and ``agree`` (the compared zoos give one verdict) is empty for it."""
    table = tables[0][["study", "kind", "what", "models"]].copy()
    needed = table["models"].map(members)
    waits: list[set[str]] = [set() for _ in range(len(table))]
    numbers = {}
    for t, name, have in zip(tables, names, retrained):
        lacking = [ms - have if have is not None else set() for ms in needed]
        table[name] = [NOT_RETRAINED if m else v for m, v in zip(lacking, t["verdict"])]
        if "rows" in t:
            numbers[name + ROWS] = ["" if m else r for m, r in zip(lacking, t["rows"])]
        waits = [w | m for w, m in zip(waits, lacking)]
    compared = ~table[names].eq(NOT_RETRAINED).any(axis=1)
    table["agree"] = (table[names].nunique(axis=1) == 1).where(compared, None)
    table["waits_for"] = [", ".join(sorted(w)) for w in waits]
    return table.assign(**numbers)


def carry(table: pd.DataFrame, earlier: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Lines this run could not compare take the cells of an earlier run's table (same columns) that compared
    them, where both runs give the same verdict under every zoo this run has for the line: a zoo retrained a few
    members per session is compared line by line as its members come (a member retrained with the same seed,
    device and thread count on the same kind of CPU gets the same weights, so the runs share one zoo)."""
    if list(earlier.columns) != list(table.columns):
        return table
    key = LINE   # one claim quoted for two comparisons (two noisy members against toy-vilt) differs in its models
    cells = [c for c in table.columns if c not in key]
    old = earlier.assign(waits_for=earlier["waits_for"].astype(object).fillna(""))   # all empty: read as NaN
    old = old.drop_duplicates(key, keep=False).set_index(key)
    out = table.copy()
    for i, row in out[out["agree"].isna()].iterrows():
        k = tuple(row[key])
        if k not in old.index or pd.isna(old.at[k, "agree"]):
            continue
        here = [n for n in names if row[n] != NOT_RETRAINED]
        if all(old.at[k, n] == row[n] for n in here):
            out.loc[i, cells] = old.loc[k, cells].to_numpy()
    return out


def labels(zoos: list[str]) -> list[str]:
    """A column name per zoo: "seed S" from its training.json, with where it was trained when recorded ("cpu, 2
    threads": a seed reproduces a zoo only on the same device and thread count, since float reductions differ) and
    "shipped" for the package's zoo; the directory itself where training.json is missing or two zoos share a name."""
    from probekit.scorers.registry import TOY_CHECKPOINTS

    out = []
    for z in zoos:
        record = (TOY_CHECKPOINTS if z == "shipped" else Path(z)) / "training.json"
        rec = json.loads(record.read_text()) if record.exists() else {}
        if rec.get("seed") is None:
            out.append(z)
            continue
        where = ["shipped"] if z == "shipped" else []
        where += [rec["device"]] if rec.get("device") else []
        where += [f"{rec['threads']} thread" + ("s" if rec["threads"] != 1 else "")] if rec.get("threads") else []
        out.append(f"seed {rec['seed']}" + (f" ({', '.join(where)})" if where else ""))
    return out if len(set(out)) == len(out) else list(zoos)


def own_seed_rows(line: pd.Series) -> str | None:
    """The rows a page's line pooled over training seeds (:mod:`probekit.studies.lab_pooling`) was decided from under
    its own run's seed alone (its ``seed_rows`` of the first seed, as :func:`~probekit.studies.lab.deciding` writes
    rows); None for a line not pooled over training seeds (its ``rows`` are its own run's)."""
    pooled = line.get("seed_rows")
    if not isinstance(pooled, str) or line.get("seeds_kind") != POOLED:
        return None
    own = json.loads(line["seeds"])[0]   # the seeds it rests on, its own run's first (lab_pooling._seeds_of)
    return json.dumps([{k: v for k, v in r.items() if k != "seed"} for r in json.loads(pooled) if r["seed"] == own])


def beside(lines: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """For a page's verdict lines (:func:`~probekit.studies.lab.verdict_lines`, scored with the comparison's first
    zoo): one column per other zoo of ``table``, that zoo's verdict for the line ("not retrained" where it waits
    for members). Only a line whose verdict and numbers (``rows``, within :data:`~probekit.studies.lab.SAME_RTOL`)
    on the page are the first zoo's in the comparison is set beside it (a line the page pooled over training seeds:
    its own seed's rows, :func:`own_seed_rows`); a line the comparison holds with
    other numbers or another verdict (run with other parameters, another zoo) reads :data:`OTHER_RUN`, a line it
    does not hold :data:`NOT_IN`."""
    first, *others = zoo_columns(table)
    known = table.drop_duplicates(LINE, keep=False).set_index(LINE)
    out = pd.DataFrame(index=lines.index, columns=[UNDER + z for z in others], dtype=object)
    for i, line in lines.iterrows():
        k = tuple(line[LINE])
        own = own_seed_rows(line)
        same = (k in known.index and (own is not None or known.at[k, first] == line["verdict"])
                and same_rows(known.at[k, first + ROWS], own if own is not None else line["rows"]))
        out.loc[i] = [known.at[k, z] if same else OTHER_RUN if k in known.index else NOT_IN for z in others]
    return out


def retrained_items(zoo: str, items: list[pd.DataFrame]) -> pd.DataFrame:
    """A retrained zoo's lab items (``items``: :func:`verdicts`' list) with its ``seed`` (training.json), the rows of
    members it does not hold left out (the lab scored those from the shipped zoo)."""
    found = pd.concat(items, ignore_index=True)
    have = saved(zoo)
    mine = found["model"].map(lambda m: members(m) <= have) if have is not None else True
    return found[mine].assign(seed=seed_items.zoo_seed(zoo))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m probekit.studies.lab_seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("zoos", nargs="+", help="zoo directories ('shipped' for the package's checkpoints)")
    p.add_argument("--out", default=None, help="write the table as CSV here (the model card shows it when it is "
                                               "the zoo's seed_verdicts.csv); lines this run cannot compare keep "
                                               "that file's cells where it compared them")
    p.add_argument("--items", nargs="?", default=None, const=str(seed_items.zoo() / seed_items.ITEMS_FILE),
                   help="also write every retrained zoo's lab items, with its seed, here (default: "
                        f"{seed_items.ITEMS_FILE} beside the zoo in use): the pages then judge each lab line pooled "
                        "over this zoo's seed and the file's")
    a = p.parse_args(argv)
    names = labels(a.zoos)
    kept: dict[str, list[pd.DataFrame]] = {z: [] for z in a.zoos}
    table = compare([verdicts(None if z == "shipped" else z, items=kept[z]) for z in a.zoos], names,
                    [saved(z) for z in a.zoos])
    if a.items:
        retrained = [z for z in a.zoos if z != "shipped"]
        if len({seed_items.zoo_seed(z) for z in retrained}) < len(retrained):
            raise SystemExit("two retrained zoos share a seed (training.json): their items cannot be told apart")
        found = pd.concat([retrained_items(z, kept[z]) for z in retrained], ignore_index=True)
        print(f"{seed_items.write(found, a.items)}: {len(found)} item values of seeds "
              f"{', '.join(map(str, sorted(found['seed'].unique())))}")
    if a.out and Path(a.out).exists():
        table = carry(table, pd.read_csv(a.out), names)
    if a.out:
        table.to_csv(a.out, index=False)
    with pd.option_context("display.width", 200, "display.max_colwidth", 90, "display.max_rows", 200):
        print(table[[c for c in table.columns if not c.endswith(ROWS)]].to_string(index=False))
    done = table["agree"].notna()
    print(f"\n{int(table.loc[done, 'agree'].sum())} of {int(done.sum())} compared verdicts agree "
          f"({int((~done).sum())} need members not retrained)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
