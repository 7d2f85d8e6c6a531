"""Are the lab's verdicts a property of the training conditions or of one training run?

``python -m probekit.studies.lab_seeds DIR [DIR ...]`` runs every study's lab (chapter defaults, toy world, CPU)
once per zoo directory (a zoo retrained with ``probekit train-toy --seed S --out DIR``; ``shipped`` = the
checkpoints in the package) and prints, per check and claim, the verdict under each zoo and whether they agree.
``--only`` keeps the checks and claims whose models all come from the listed zoo models (those retrained: members
missing from a zoo directory are taken from the shipped zoo).
"""

from __future__ import annotations

import argparse
import json
import os
from importlib import import_module
from pathlib import Path

import pandas as pd

from probekit.studies.lab import verdict_lines

STUDIES = ("verbs", "prednoun", "masking", "conceptual")


def verdicts(zoo: str | None, studies=STUDIES, data_dir=None) -> pd.DataFrame:
    """One line per check and claim of every study's lab under the zoo in ``zoo`` (None: the shipped one)."""
    old = os.environ.get("PROBEKIT_TOY_CHECKPOINTS")
    if zoo:
        os.environ["PROBEKIT_TOY_CHECKPOINTS"] = str(zoo)
    try:
        out = []
        for study in studies:
            result = import_module(f"probekit.studies.{study}").run(dataset="toy", device="cpu", data_dir=data_dir)
            lines = verdict_lines(study, result.data["lab_checks"], result.data["lab_claims"])
            out.append(lines[["study", "kind", "what", "models", "verdict"]])
        return pd.concat(out, ignore_index=True)
    finally:
        if old is None:
            os.environ.pop("PROBEKIT_TOY_CHECKPOINTS", None)
        else:
            os.environ["PROBEKIT_TOY_CHECKPOINTS"] = old


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m probekit.studies.lab_seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("zoos", nargs="+", help="zoo directories ('shipped' for the package's checkpoints)")
    p.add_argument("--only", nargs="*", default=None, help="keep lines whose models are all among these")
    p.add_argument("--out", default=None, help="write the table as CSV here (the model card shows it when it is "
                                               "the zoo's seed_verdicts.csv)")
    a = p.parse_args(argv)
    names = labels(a.zoos)
    tables = [verdicts(None if z == "shipped" else z).rename(columns={"verdict": n}) for z, n in zip(a.zoos, names)]
    table = tables[0]
    for t in tables[1:]:
        table[t.columns[-1]] = t.iloc[:, -1].to_numpy()
    if a.only is not None:
        keep = set(a.only)
        # a derived row's model reads "toy-clip, both, α = 1": it belongs to the model before the comma
        table = table[[{m.split(",")[0] for m in ms.split("|")} <= keep for ms in table["models"]]]
    table["agree"] = table[names].nunique(axis=1) == 1
    if a.out:
        table.to_csv(a.out, index=False)
    with pd.option_context("display.width", 200, "display.max_colwidth", 90, "display.max_rows", 200):
        print(table.to_string(index=False))
    print(f"\n{int(table['agree'].sum())} of {len(table)} verdicts agree")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
