"""Where the book's chapters live: their names, sources, executed notebooks and result files.

A chapter is a jupytext MyST source ``book/src/<name>.md``; executing it writes ``book/chapters/<name>.ipynb``
and the result rows it exported beside it, ``book/chapters/<name>.results.parquet`` (and its lab's verdict lines,
``<name>.lab.parquet``, and its item rows, ``<name>.items.parquet``).  The summary page
(``book/src/summary.md`` -> ``book/chapters/summary.ipynb``) is executed the same way but takes no parameters.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from probekit.studies import STUDIES

#: chapters in reading order: one per study, the table of studies itself (each with the probes its ``dataset``
#: parameter names sources of)
CHAPTERS = STUDIES
SUMMARY = "summary"  # the page across chapters: executed after them, no parameters


class ParameterError(ValueError):
    """A bad chapter, parameter or value; the message is one line naming it and the valid choices."""


class ChapterFailed(RuntimeError):
    """A chapter's cell raised; the message names the chapter, the cell and the error."""


# ---------------------------------------------------------------------------------------------- project root

def find_root(start: str | os.PathLike | None = None) -> Path:
    """The project directory holding ``_toc.yml`` and ``book/src``: ``$PROBEKIT_ROOT``, the nearest
    such directory above ``start`` (default: the working directory), or the checkout this package is in."""
    if os.environ.get("PROBEKIT_ROOT"):
        return Path(os.environ["PROBEKIT_ROOT"]).resolve()
    here = Path(start or Path.cwd()).resolve()
    for cand in [here, *here.parents, Path(__file__).resolve().parents[2]]:
        if (cand / "_toc.yml").is_file() and (cand / "book" / "src").is_dir():
            return cand
    raise ParameterError(f"no probekit book found above {here} (looked for _toc.yml and book/src/); "
                         "run from the repository or pass --root")


def source_path(root: Path, chapter: str) -> Path:
    return Path(root) / "book" / "src" / f"{chapter}.md"


def output_path(root: Path, chapter: str) -> Path:
    return Path(root) / "book" / "chapters" / f"{chapter}.ipynb"


def results_path(root: Path, chapter: str) -> Path:
    """The result rows a chapter exported on its last successful run (read by the summary page)."""
    return Path(root) / "book" / "chapters" / f"{chapter}.results.parquet"


def lab_path(root: Path, chapter: str) -> Path:
    """The lab's verdict lines of a chapter's last successful run (read by the summary page; none without a lab)."""
    return Path(root) / "book" / "chapters" / f"{chapter}.lab.parquet"


def items_path(root: Path, chapter: str) -> Path:
    """The per-item rows a chapter exported on its last successful run (``probekit export --items``)."""
    return Path(root) / "book" / "chapters" / f"{chapter}.items.parquet"


def check_chapter(chapter: str) -> str:
    if chapter not in CHAPTERS:
        raise ParameterError(f"unknown chapter {chapter!r}{_near(chapter, CHAPTERS)}; "
                             f"valid chapters: {', '.join(CHAPTERS)}")
    return chapter


def _near(word: str, choices) -> str:
    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def read_source(src: Path):
    """A chapter source as a notebook (jupytext MyST)."""
    import jupytext
    return jupytext.read(src, fmt="md:myst")


def title(root: Path, chapter: str) -> str:
    for line in source_path(root, chapter).read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return chapter


def write_placeholder(root: Path, chapter: str) -> Path:
    """A page for a chapter (or the summary) never executed here, so the book builds and says how to fill it."""
    import nbformat
    out = output_path(root, chapter)
    out.parent.mkdir(parents=True, exist_ok=True)
    how = "`probekit book`" if chapter == SUMMARY else f"`probekit run {chapter}` (or `probekit book`)"
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(
        f"# {title(root, chapter)}\n\nThis page has not been executed yet. Run {how} to execute it and "
        "rebuild the book."))
    nb.metadata["probekit"] = {"chapter": chapter, "placeholder": True}
    nbformat.write(nb, out)
    return out
