"""Executing a chapter (or the summary page) into the notebook the book renders, shaped for readers.

``execute`` runs a chapter's source through papermill into a temporary notebook.  Its last cell,
``report.export(result)``, writes the study's data files into a temporary folder (:mod:`probekit.report.export`).
Only when every cell ran does it move the notebook to ``book/chapters/<name>.ipynb`` and the files beside it: the
result rows as ``<name>.results.parquet``, the lab's verdict lines as ``<name>.lab.parquet`` (what the summary page
reads) and the item rows as ``<name>.items.parquet``; a failing chapter changes none of them, nor any other
page.  For readers, every code cell is folded (tag ``hide-input``; the parameters too, so that a chapter's first
screen is its findings: the page's box says which parameters were given), the kernel starts quiet
(:func:`probekit.progress.quiet_kernel`: no bars and no warnings on the page, its scoring bars on the terminal),
and anything a library still writes to stderr goes to the terminal, not the page.
"""

from __future__ import annotations

import io
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probekit.chapters.params import parameters, write_parameters
from probekit.chapters.project import (CHAPTERS, SUMMARY, ChapterFailed, items_path, lab_path, output_path,
                                       read_source, results_path, source_path)
from probekit.environ import environment
from probekit.files import replaced
from probekit.progress import is_terminal, kernel_startup, progress_enabled

if TYPE_CHECKING:
    from probekit.chapters.same_outputs import Cells


def kernel_arguments(bars: bool) -> list[str]:
    """The kernel's options: its log (the "running over TCP without encryption" warning) kept off the terminal,
    its stderr descriptor left alone (its scoring bars reach the terminal, never the page), quiet start-up."""
    return ["--IPKernelApp.log_level=CRITICAL", "--IPKernelApp.capture_fd_output=False",
            f"--IPKernelApp.exec_lines={kernel_startup(bars)}"]

#: code cells left as they are: removed, or folded already
LEFT_AS_THEY_ARE = {"remove-cell", "remove-input", "hide-input"}


def fold_code(nb) -> None:
    """Tag every code cell ``hide-input`` (its source folded, its outputs shown), the parameters and those a run
    injected included, except cells already removed or folded."""
    for cell in nb.cells:
        if cell.cell_type == "code" and not LEFT_AS_THEY_ARE & set(cell.metadata.get("tags", [])):
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), "hide-input"]


def drop_stderr(nb, name: str, log) -> None:
    """Remove stderr outputs from the executed notebook, passing them on to ``log`` (the terminal)."""
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                log(f"probekit: {name}, cell [{cell.get('execution_count')}] wrote to stderr (not shown on the "
                    f"page): {out['text'].strip()[:500]}")
            else:
                kept.append(out)
        if "outputs" in cell:
            cell.outputs = kept


def _cell_summary(source: str) -> str:
    first = next((ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return first if len(first) <= 70 else first[:67] + "..."


def _run_card(chapter: str, params: dict[str, Any], profile: str | None, items: bool) -> str:
    """The page's note on how it was made: with what, the command that re-runs it, and links to its rows (and
    item rows) for download.  No time of day: a rebuild that reproduces the page leaves it as it was."""
    from probekit import __version__
    given = ", ".join(f"`{k} = {v!r}`" for k, v in params.items()) or "none (the defaults above)"
    cmd = " ".join(["probekit run", chapter] + [f"-p {k} {_shell(v)}" for k, v in params.items()])
    prof = f", profile `{profile}`" if profile else ""
    return (f":::{{admonition}} How this page was made\n:class: note\n"
            f"Executed with probekit {__version__}{prof} (the book's start page says with what else). "
            f"Parameters given: {given}.\n\n{_own_models(chapter, params)}Re-run: `{cmd}`\n\nDownload: {{download}}`result rows "
            f"<{chapter}.results.parquet>`" + (f", {{download}}`item rows <{chapter}.items.parquet>`" if items else "")
            + f" (as CSV or JSON: `probekit export {chapter}{' --items' if items else ''} --format csv`)\n:::")


def _own_models(chapter: str, params: dict[str, Any]) -> str:
    """A paragraph naming, for every model given that is not a registry name, the family, checkpoint and head it
    was resolved to (registry models are described by ``probekit list`` and the methods page)."""
    from probekit.scorers import REGISTRY, model_spec
    models = {name for name, p in parameters(chapter).items() if p.is_models} if params else set()
    names = [v for k, value in params.items() if k in models
             for v in ([value] if isinstance(value, str) else value or []) if isinstance(v, str)]
    own = [model_spec(n) for n in dict.fromkeys(names) if n and n not in REGISTRY]
    return "".join(f"Model `{s.name}`: family {s.family}, checkpoint `{s.source}` (revision: the hub's latest where "
                   f"it is a hub id), {s.head}.\n\n" for s in own)


def _shell(value: Any) -> str:
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if re.fullmatch(r"[\w.,:/+-]+", text) else "'" + text.replace("'", "'\\''") + "'"


def _papermill(root: Path, name: str, params: dict[str, Any], tmp: Path, progress: bool, log):
    """Execute ``book/src/<name>.md`` with ``params`` in a quiet kernel; the executed notebook, folded and
    without stderr, or ChapterFailed (the failed notebook kept under ``_build/failed/``)."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    logging.getLogger("papermill").setLevel(logging.ERROR)  # it misreads trailing comments; we validate
    nb = read_source(source_path(root, name))
    if name in CHAPTERS:
        write_parameters(nb, name)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    fold_code(nb)
    inp, done = tmp / "source.ipynb", tmp / f"{name}.ipynb"
    nbformat.write(nb, inp)
    progress = progress and progress_enabled()
    cells = progress and is_terminal(sys.stderr)   # off a terminal the chapter's "done in" line stands for its bar
    bar = dict(desc=name, unit="cell", position=0, leave=False, dynamic_ncols=True,   # no ETA: cells differ
               bar_format="{desc}: cell {n_fmt}/{total_fmt}, {elapsed} so far") if cells else False
    try:
        papermill.execute_notebook(str(inp), str(done), parameters=params, kernel_name="python3",
                                   progress_bar=bar, cwd=str(root), request_save_on_cell_execute=False,
                                   extra_arguments=kernel_arguments(progress))
    except PapermillExecutionError as err:
        failed = root / "_build" / "failed" / f"{name}.ipynb"
        failed.parent.mkdir(parents=True, exist_ok=True)
        if done.exists():
            shutil.copyfile(done, failed)
        raise ChapterFailed(f"chapter {name!r} failed in cell {err.exec_count} "
                            f"({_cell_summary(err.source)!r}): {err.ename}: {err.evalue.strip()} "
                            f"[notebook with traceback: {failed}]") from None
    executed = nbformat.read(done, as_version=4)
    fold_code(executed)   # the cell papermill injected (the parameters given) too
    drop_stderr(executed, name, log)
    return executed


def _write(nb, out: Path, beside: dict[Path, bytes | None] | None = None) -> None:
    """Write the notebook (and the files beside it) only once all are complete: staged, then moved; ``beside``:
    path -> the bytes of a data file the chapter wrote (:mod:`probekit.report.export`), or None where this run
    wrote none (a file an earlier run left there is removed)."""
    import nbformat

    staged = out.with_name(f".{out.name}.partial")
    nbformat.write(nb, staged)
    for path, data in (beside or {}).items():
        if data is None:
            path.unlink(missing_ok=True)
            continue
        with replaced(path) as part:
            part.write_bytes(data)
    os.replace(staged, out)


def execute(root: Path, chapter: str, params: dict[str, Any], *, profile: str | None = None,
            progress: bool = True, log=print) -> Path:
    """Execute ``chapter`` with validated ``params`` (see ``resolve``) into ``book/chapters/<chapter>.ipynb``
    and the data files it exported beside it (``<chapter>.results.parquet``, ``.lab.parquet``, ``.items.parquet``).

    Cells run in a kernel of this Python with the project root as working directory.  The files are written
    only when every cell ran and the chapter exported its rows; on failure the notebook is kept under
    ``_build/failed/`` and ``ChapterFailed`` names the chapter, the cell and the error."""
    return rebuild(root, chapter, params, profile=profile, progress=progress, log=log)[0]


def rebuild(root: Path, chapter: str, params: dict[str, Any], *, profile: str | None = None,
            progress: bool = True, log=print) -> tuple[Path, Cells]:
    """:func:`execute`, and the executed page's cells compared with those of the page before (:mod:`same_outputs
    <probekit.chapters.same_outputs>`), which is kept when its numbers and outputs are the same (float noise of a
    last digit aside: :attr:`~probekit.chapters.same_outputs.Cells.keeps_page`)."""
    import nbformat
    import pandas as pd

    from probekit.chapters import reproduce, same_outputs
    from probekit.chapters.same import TOLERANCE
    from probekit.report.export import ITEMS_FILE, LAB_FILE, OUT, RESULTS_FILE
    from probekit.results import frame

    root = Path(root)
    out = output_path(root, chapter)
    out.parent.mkdir(parents=True, exist_ok=True)
    log(f"probekit: executing chapter {chapter!r}" + (f" with {params}" if params else ""))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"probekit-{chapter}-") as tmp:
        exported = Path(tmp) / "exported"
        exported.mkdir()
        with environment({OUT: str(exported)}):
            executed = _papermill(root, chapter, params, Path(tmp), progress, log)
        files = {name: (exported / name).read_bytes() if (exported / name).exists() else None
                 for name in (RESULTS_FILE, ITEMS_FILE, LAB_FILE)}
    seconds = time.perf_counter() - start
    exported_rows = files[RESULTS_FILE]
    if exported_rows is None:
        raise ChapterFailed(f"chapter {chapter!r} ran but exported no result rows: its last code cell must be "
                            "`report.export(result)`; no page was changed")
    at = max([i + 1 for i, c in enumerate(executed.cells)
              if {"parameters", "injected-parameters"} & set(c.metadata.get("tags", []))], default=0)
    rows = frame(pd.read_parquet(io.BytesIO(exported_rows)))
    new_items, lab = _table(files[ITEMS_FILE]), _table(files[LAB_FILE])
    card = _run_card(chapter, params, profile, new_items is not None)
    executed.cells.insert(at, nbformat.v4.new_markdown_cell(card))
    reproduce.normalise(executed)
    executed.metadata["probekit"] = {"chapter": chapter, "parameters": params, "profile": profile,
                                     "rows": len(rows), "built_with": reproduce.identity(root, _device(params))}
    previous = _previous(root, chapter)
    cells = same_outputs.compare(previous[0], executed)
    if cells.keeps_page and reproduce.reproduces(previous, (executed, rows, new_items, lab)):
        log(f"probekit: chapter {chapter!r} done in {seconds:.0f} s; it reproduced its page (every result value "
            f"{TOLERANCE}; {cells}): the page is kept as it was")
        return out, cells
    _write(executed, out, {results_path(root, chapter): exported_rows, items_path(root, chapter): files[ITEMS_FILE],
                           lab_path(root, chapter): files[LAB_FILE]})
    log(f"probekit: chapter {chapter!r} done in {seconds:.0f} s ({cells}) -> {out}")
    return out, cells


def _table(data: bytes | None):
    """A data file's table, from its bytes; None for none."""
    import pandas as pd
    return None if data is None else pd.read_parquet(io.BytesIO(data))


def _device(params: dict[str, Any]) -> str:
    from probekit.device import resolve_device
    return str(resolve_device(params.get("device", "auto")))


def _previous(root: Path, chapter: str) -> tuple:
    """The chapter's page, result rows, item rows and lab rows as they are before this run (None where missing or
    unreadable)."""
    import nbformat
    import pandas as pd

    from probekit.results import load
    paths = output_path(root, chapter), results_path(root, chapter), items_path(root, chapter), lab_path(root, chapter)
    readers = (lambda p: nbformat.read(p, as_version=4), load, pd.read_parquet, pd.read_parquet)
    found = []
    for path, read in zip(paths, readers):
        try:
            found.append(read(path) if path.exists() else None)
        except Exception:   # a damaged or foreign file: the new page replaces it
            found.append(None)
    return tuple(found)


def execute_only(root: Path, chapter: str, params: dict[str, Any], *, progress: bool = False, log=print) -> None:
    """Execute ``chapter`` as :func:`execute` does, keeping nothing: a rank > 0 of a sharded run (its scores went
    to the shared score cache, see :mod:`probekit.shard`); ChapterFailed as there."""
    from probekit.report.export import OUT

    with tempfile.TemporaryDirectory(prefix=f"probekit-{chapter}-") as tmp, environment({OUT: tmp}):
        _papermill(Path(root), chapter, params, Path(tmp), progress, log)


def execute_summary(root: Path, *, progress: bool = True, log=print) -> Path:
    """Execute the summary page (no parameters) into ``book/chapters/summary.ipynb`` from the chapters'
    result files as they are now, its cells compared with the previous page's on ``log``; ChapterFailed when it
    fails (the previous summary page stays)."""
    root = Path(root)
    out = output_path(root, SUMMARY)
    out.parent.mkdir(parents=True, exist_ok=True)
    log("probekit: executing the summary page")
    with tempfile.TemporaryDirectory(prefix="probekit-summary-") as tmp:
        executed = _papermill(root, SUMMARY, {}, Path(tmp), progress, log)
    from probekit.chapters import reproduce, same_outputs
    reproduce.normalise(executed)
    executed.metadata["probekit"] = {"chapter": SUMMARY}
    log(f"probekit: {SUMMARY}: {same_outputs.compare(_previous(root, SUMMARY)[0], executed)}")
    _write(executed, out)
    return out
