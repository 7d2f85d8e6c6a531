"""Are two runs of the book the same? Compares every chapter's result rows and lab verdict lines in two folders.

    PYTHONPATH=. python benchmarks/same_numbers.py BEFORE_DIR AFTER_DIR [--tol 1e-9]

Each folder holds ``<chapter>.results.parquet`` and ``<chapter>.lab.parquet`` (the files the executor writes beside
each page; for pages executed before it wrote the lab file, the lab lines are read from ``<chapter>.ipynb``).  Rows are
matched on the result keys; numbers must agree within ``--tol`` (NaN equals NaN), everything else exactly; a lab
line's ``rows`` (JSON of the numbers it was decided from) is compared number by number; the text each executed page
shows (``<chapter>.ipynb``'s outputs: tables, captions, sentences) must be the same.  Exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

import pandas as pd

from probekit.results import KEYS, load
from probekit.studies import STUDIES
from probekit.studies.lab import VERDICT_COLUMNS

MIME = "application/vnd.probekit.results+json"   # how pages executed before the lab file carried their lab lines


def lab_lines(folder: Path, chapter: str) -> pd.DataFrame:
    path = folder / f"{chapter}.lab.parquet"
    if path.is_file():
        return pd.read_parquet(path)
    nb = json.loads((folder / f"{chapter}.ipynb").read_text())
    return pd.DataFrame([line for cell in nb["cells"] for out in cell.get("outputs", [])
                         for line in out.get("data", {}).get(MIME, {}).get("lab", [])], columns=VERDICT_COLUMNS)


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def same(a, b, tol: float) -> bool:
    if isinstance(a, str) and isinstance(b, str) and a != b and isinstance(_json(a), list | dict):
        return same(_json(a), _json(b), tol)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol
    return (a is None or a != a) and (b is None or b != b) or a == b


def differences(before: pd.DataFrame, after: pd.DataFrame, keys: list[str], tol: float) -> list[str]:
    if len(before) != len(after) or list(before.columns) != list(after.columns):
        return [f"{len(before)} vs {len(after)} lines, columns {list(before.columns)} vs {list(after.columns)}"]
    a, b = (t.sort_values(keys, kind="stable").reset_index(drop=True) for t in (before, after))
    return [f"{dict(a.loc[i, keys])}: {col} {a.at[i, col]!r} vs {b.at[i, col]!r}"
            for i in range(len(a)) for col in a.columns if not same(a.at[i, col], b.at[i, col], tol)]


def largest_difference(before: pd.DataFrame, after: pd.DataFrame) -> float:
    """The largest absolute difference between two row tables' numbers (same keys, same order once sorted)."""
    a, b = (t.sort_values(KEYS, kind="stable").reset_index(drop=True) for t in (before, after))
    numbers = a.select_dtypes("number").columns
    return float((a[numbers] - b[numbers]).abs().max().max()) if len(a) else 0.0


def page_text(folder: Path, chapter: str) -> list[str]:
    """What the executed page shows as text (tables, captions, sentences), table ids made neutral (pandas draws
    a random id per styled table)."""
    nb = json.loads((folder / f"{chapter}.ipynb").read_text())
    found = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = next((data[k] for k in ("text/html", "text/markdown", "text/plain") if k in data), out.get("text"))
            if text is not None:
                found.append(re.sub(r"T_[0-9a-f]{5}", "T_", "".join(text)))
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--tol", type=float, default=1e-9)
    a = p.parse_args(argv)
    bad = 0
    for chapter in STUDIES:
        if not (a.after / f"{chapter}.results.parquet").is_file():
            print(f"{chapter}: not executed in {a.after}")
            continue
        before, after = (load(folder / f"{chapter}.results.parquet") for folder in (a.before, a.after))
        rows = differences(before, after, KEYS, a.tol)
        lab = differences(lab_lines(a.before, chapter), lab_lines(a.after, chapter), ["kind", "what", "models"], a.tol)
        largest = "" if rows else f" (largest difference of a number: {largest_difference(before, after):.3g})"
        pages = page_text(a.before, chapter), page_text(a.after, chapter)
        shown = [f"page output {i + 1} differs" for i, (x, y) in enumerate(zip(*pages)) if x != y]
        shown += [] if len(pages[0]) == len(pages[1]) else [f"{len(pages[0])} vs {len(pages[1])} page outputs"]
        print(f"{chapter}: {'same' if not rows + lab + shown else 'DIFFERENT'} result rows, lab lines and page "
              f"text{largest}" + "".join(f"\n  {d}" for d in (rows + lab + shown)[:20]))
        bad += bool(rows + lab + shown)
    if (a.before / "summary.ipynb").is_file() and (a.after / "summary.ipynb").is_file():
        same_summary = page_text(a.before, "summary") == page_text(a.after, "summary")
        print(f"summary: {'same' if same_summary else 'DIFFERENT'} page text")
        bad += not same_summary
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
