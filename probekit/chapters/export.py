"""``probekit export``: a chapter's result rows, and with ``items`` its per-item rows, out of the book as CSV,
JSON (an array of records) or parquet, read from the files its last run left in ``book/chapters/``."""

from __future__ import annotations

from pathlib import Path

from probekit.chapters.project import ParameterError, check_chapter, items_path, results_path
from probekit.files import replaced

FORMATS = ("csv", "json", "parquet")


def _write(table, path: Path, fmt: str) -> Path:
    with replaced(path) as part:
        if fmt == "csv":
            table.to_csv(part, index=False)
        elif fmt == "json":
            table.to_json(part, orient="records", indent=1, double_precision=15)
        else:
            table.to_parquet(part, index=False)
    return path


def export(root: Path, chapters: list[str], fmt: str = "csv", items: bool = False, out: Path = Path(".")
           ) -> list[Path]:
    """Write ``<out>/<chapter>.results.<fmt>`` (and ``<chapter>.items.<fmt>``) for each chapter; a chapter without
    the files is a :class:`ParameterError` naming it and the fix, before anything is written."""
    import pandas as pd

    if fmt not in FORMATS:
        raise ParameterError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
    wanted = [(c, "results", results_path(root, c)) for c in map(check_chapter, chapters)]
    wanted += [(c, "items", items_path(root, c)) for c, _, _ in list(wanted)] if items else []
    missing = [f"{c} ({path.name})" for c, _, path in wanted if not path.is_file()]
    if missing:
        raise ParameterError(f"nothing to export for {', '.join(missing)}: not executed here, or executed before "
                             f"item rows were kept; fix: probekit run CHAPTER, then export")
    Path(out).mkdir(parents=True, exist_ok=True)
    return [_write(pd.read_parquet(path), Path(out) / f"{c}.{kind}.{fmt}", fmt) for c, kind, path in wanted]
