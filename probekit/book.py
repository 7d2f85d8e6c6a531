"""Executing chapters in bulk and building the HTML book from the executed notebooks.

The book is a Jupyter Book 1 project (``_config.yml``, ``_toc.yml`` at the project root) that renders
``book/chapters/*.ipynb`` with ``execute_notebooks: off``: executing and rendering are separate steps, so a
chapter executed on a GPU machine renders anywhere.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from probekit import chapters as ch


def copy_project(root: Path, dest: Path, *, with_outputs: Path | None = None) -> Path:
    """Copy the book project at ``root`` (config, toc, pages, sources, profiles; no executed chapters, no
    build) to ``dest``, e.g. to execute and build elsewhere; ``with_outputs`` is a directory of executed
    ``<chapter>.ipynb`` (and their ``<chapter>.results.parquet`` and ``.items.parquet``) to put in place."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(Path(root) / name, dest / name)
    shutil.copytree(Path(root) / "book", dest / "book", ignore=shutil.ignore_patterns("chapters", ".*"))
    (dest / "book" / "chapters").mkdir()
    for pattern in ("*.ipynb", "*.results.parquet", "*.items.parquet") if with_outputs else ():
        for path in Path(with_outputs).glob(pattern):  # type: ignore[arg-type]  # patterns only with with_outputs
            shutil.copy2(path, dest / "book" / "chapters" / path.name)
    return dest


def execute_all(root: Path, params: dict[str, dict[str, Any]], *, profile: str | None = None,
                progress: bool = True, log=print) -> dict[str, str]:
    """Execute each chapter in ``params`` (in reading order) with its validated parameters, then the summary
    page; returns {chapter: error} for those that failed (their previous pages, and every other chapter's,
    stay; the summary shows the results of the last successful run of each chapter)."""
    from probekit.chapters import reproduce, same_outputs
    from probekit.chapters.same import TOLERANCE
    from probekit.results import load

    before = {c: load(ch.results_path(root, c)) for c in params if ch.results_path(root, c).exists()}
    failures, cells = {}, {}
    for chapter in (c for c in ch.CHAPTERS if c in params):
        try:
            cells[chapter] = ch.rebuild(root, chapter, params[chapter], profile=profile, progress=progress, log=log)[1]
        except ch.ChapterFailed as err:
            failures[chapter] = str(err)
            log(f"probekit: {err}")
    try:
        ch.execute_summary(root, progress=progress, log=log)
    except ch.ChapterFailed as err:
        failures[ch.SUMMARY] = str(err)
        log(f"probekit: {err}")
    counts = {c: reproduce.tally(before.get(c), load(ch.results_path(root, c))) for c in cells}
    for chapter, count in counts.items():
        log(f"probekit: {same_outputs.line(chapter, count, cells[chapter])}")
    log(f"probekit: {sum(e for e, _ in counts.values())} of {sum(t for _, t in counts.values())} result values equal "
        f"to those of the pages before this build (the committed ones, on a clean checkout), {TOLERANCE}; "
        f"{sum(c.identical for c in cells.values())} of {sum(c.total for c in cells.values())} cell outputs identical")
    reproduce.write_built_with(root, {c: _built_with(root, c) for c in ch.CHAPTERS})
    return failures


def _built_with(root: Path, chapter: str) -> dict | None:
    import nbformat
    path = ch.output_path(root, chapter)
    return nbformat.read(path, as_version=4).metadata.get("probekit", {}).get("built_with") if path.exists() else None


#: the part of ``_toc.yml`` :func:`write_toc` writes: its chapters, one line each
STUDIES_PART = "  - caption: Studies\n    chapters:\n"
CHAPTER_LINE = "      - file: "


def write_toc(root: Path) -> Path:
    """Write the Studies part of ``<root>/_toc.yml``: the summary page, then each study's chapter in reading order
    (:data:`probekit.studies.STUDIES`); the rest of the file stays as written.  The file is rewritten only when the
    part changes (a build from a clean checkout leaves it untouched)."""
    path = Path(root) / "_toc.yml"
    text = path.read_text()
    head, part, rest = text.partition(STUDIES_PART)
    if not part:
        raise ValueError(f"{path} has no Studies part (a line {STUDIES_PART.splitlines()[0].strip()!r} followed by "
                         "'chapters:')")
    lines = rest.splitlines(keepends=True)
    old = "".join(lines[:next((i for i, line in enumerate(lines) if not line.startswith(CHAPTER_LINE)), len(lines))])
    new = "".join(f"{CHAPTER_LINE}book/chapters/{chapter}\n" for chapter in [ch.SUMMARY, *ch.CHAPTERS])
    if new != old:
        path.write_text(head + part + new + rest[len(old):])
    return path


def build(root: Path, *, log=print) -> Path:
    """Build the HTML book into ``<root>/_build/html`` and return that directory, its table of contents' Studies
    part written from the studies (:func:`write_toc`). A chapter never executed here (or the summary page) gets a
    placeholder page saying how to execute it."""
    root = Path(root)
    write_toc(root)
    for chapter in [ch.SUMMARY, *ch.CHAPTERS]:
        if not ch.output_path(root, chapter).exists():
            ch.write_placeholder(root, chapter)
    from probekit.chapters import reproduce
    if not (root / reproduce.BUILT_WITH).exists():
        reproduce.write_built_with(root, {c: _built_with(root, c) for c in ch.CHAPTERS})
    cmd = [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
           "build", str(root), "--builder", "html"]
    log("probekit: building the book ...")
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode}):\n{tail}")
    for line in [ln for ln in proc.stderr.splitlines() if "WARNING" in ln][:20]:
        log("  " + re.sub(r"\x1b\[[0-9;]*m", "", line))
    html = root / "_build" / "html"
    log(f"probekit: book built -> {html / 'index.html'}")
    return html


def _unique_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop repeated <script> entries: sphinx-thebe 0.3 registers its inline config twice under Sphinx 7.4
    (once with filename None, once with ''), and the second ``const THEBE_JS_URL`` is a console error on
    every page."""
    seen, unique = set(), []
    for js in context.get("script_files", []):
        key = (getattr(js, "filename", js) or "", tuple(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"] = unique


def setup(app):
    """Sphinx extension (listed in ``_config.yml``): fixes to the rendered pages."""
    app.connect("html-page-context", _unique_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
