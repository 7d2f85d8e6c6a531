"""Rebuilds that reproduce the published pages, and say so.

An executed chapter is written without what changes on every run (cell ids by position, no execution timestamps,
no papermill timings or temporary paths: :func:`normalise`), with the identity of what made it (the source
fingerprint, package versions, commit, device: :func:`identity`).  When a rebuild is made with the same code,
versions and parameters and its data files hold the page's previous numbers, each at the precision that suits it
(:mod:`probekit.chapters.same`: a result row's numbers as a page writes them), the previous page and its files are
kept byte for byte (:func:`reproduces`) when its cells' outputs are the same too
(:attr:`probekit.chapters.same_outputs.Cells.keeps_page`: images aside, a last digit's float noise kept), so
``git status`` stays clean; any other difference writes the new page.  ``probekit book`` says per chapter how many
result values equal the previous ones (:func:`tally`) and how many cells' outputs are identical.
"""

from __future__ import annotations

import hashlib
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path

import pandas as pd

from probekit.chapters.same import NUMBERS, same_column, same_numbers
from probekit.results import KEYS

#: the packages whose versions can change a number on a page
PACKAGES = ("probekit", "torch", "torchvision", "transformers", "open_clip_torch", "numpy", "pandas", "scipy",
            "scikit-learn")
ADDRESS = re.compile(r"<[^<>]* at 0x[0-9a-f]+>")


def normalise(nb) -> None:
    """Drop from an executed notebook what differs between two runs of the same code: cell ids (numbered by
    position instead), the kernel's execution timestamps, papermill's timings, paths and environment, and an
    object's plain-text repr with its memory address ("<Styler at 0x7f55...>") beside the HTML the page shows."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
        cell.metadata.pop("execution", None)
        cell.metadata.pop("papermill", None)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if len(data) > 1 and ADDRESS.fullmatch(str(data.get("text/plain", ""))):
                del data["text/plain"]
    nb.metadata.pop("papermill", None)


def sources(root: Path) -> tuple[Path, Path]:
    """What a page's numbers come from besides its parameters: the probekit package that runs (code and shipped
    checkpoints) and the book's chapter sources."""
    import probekit

    return Path(probekit.__file__).parent, Path(root) / "book" / "src"


def fingerprint(root: Path) -> str:
    """The :func:`sources` as a hash of files by path and bytes."""
    digest = hashlib.sha256()
    for top in sources(root):
        for path in sorted(p for p in top.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")):
            digest.update(f"{top.name}/{path.relative_to(top)}".encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


NO_COMMIT = "not a git checkout"
#: after a commit where a shallow clone's history is cut: it or an earlier commit last changed the sources
SHALLOW = "-shallow"


def sources_commit(root: Path, tops=None) -> str:
    """The commit of the sources the pages are executed from (``tops``, by default the :func:`sources` the
    fingerprint reads): the last commit that changed them, its first 12 hex digits, with "-dirty" when they differ
    from it (changed or new files), or :data:`NO_COMMIT` (no git, or sources outside the checkout at ``root``).
    Executed pages and result files committed after it leave it as it is, so that a rebuild at a later commit of
    the same sources names the same commit, as the rebuild check (:func:`reproduces`) finds the same fingerprint.
    In a shallow clone (``git clone --depth 1``) the oldest commit fetched seems to change every file: found there,
    it is marked :data:`SHALLOW` (that commit or an earlier one)."""
    paths = [str(t) for t in (tops or sources(root))]
    try:
        last, status, shallow = (
            subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
            for args in (["log", "-1", "--format=%H", "--", *paths],
                         ["status", "--porcelain", "--untracked-files=all", "--", *paths],
                         ["rev-parse", "--path-format=absolute", "--git-path", "shallow"]))
    except (OSError, subprocess.SubprocessError):
        return NO_COMMIT
    if last.returncode or status.returncode or not last.stdout.strip():
        return NO_COMMIT
    commit = last.stdout.strip()
    cut = Path(shallow.stdout.strip()) if not shallow.returncode and shallow.stdout.strip() else None
    return (commit[:12] + (SHALLOW if cut and cut.exists() and commit in cut.read_text().split() else "")
            + ("-dirty" if status.stdout.strip() else ""))


_NAMED = re.compile(r"the sources of commit `([0-9a-f]{12})`")


def _commit(root: Path, out: Path, current: str) -> str:
    """The commit the start page names: :func:`sources_commit`; in a shallow clone that cannot tell, with the
    sources unchanged, the commit the paragraph already there names when it was written for the same sources
    (its pages' fingerprint), so that a rebuild of a shallow clone leaves it as committed."""
    commit = sources_commit(root)
    if not commit.endswith(SHALLOW) or not out.exists():
        return commit
    before = out.read_text()
    named = _NAMED.search(before)
    return named[1] if named and f"sources fingerprint `{current}`" in before else commit


def identity(root: Path, device: str) -> dict:
    """What a page was made with: the sources' fingerprint, package versions, Python, machine and device."""
    return {"sources": fingerprint(root), "versions": {p: _version(p) for p in PACKAGES},
            "python": platform.python_version(), "machine": f"{platform.system()} {platform.machine()}",
            "device": device}


def _path(value) -> bool:
    return isinstance(value, str) and value.startswith("/")


def tally(old: pd.DataFrame | None, new: pd.DataFrame) -> tuple[int, int]:
    """(values of ``new`` equal to ``old``'s as a page writes them, values of ``new``): each number of each row
    (value, interval, n: :func:`~probekit.chapters.same.same_numbers`), rows matched by their text columns (and
    order among equal ones)."""
    total = len(new) * len(NUMBERS)
    if old is None or old.empty or new.empty:
        return 0, total
    key = lambda df: df[KEYS].astype(str).agg("\x1f".join, axis=1) + "\x1f" + df.groupby(KEYS).cumcount().astype(str)
    before = dict(zip(key(old), old.to_dict("records")))
    return sum(sum(same_numbers(before[k], r)) for k, r in zip(key(new), new.to_dict("records")) if k in before), total


def same_table(old: pd.DataFrame | None, new: pd.DataFrame | None) -> bool:
    """Whether two tables (item rows, lab lines) hold the same rows: same columns and length, each column
    :func:`~probekit.chapters.same.same_column` (texts equal, numbers at the precision that suits them).  Columns
    of absolute file paths (the images an item showed) are left out: they name the
    machine's data folder and derived files named after file times, and the item's id and numbers say which it was."""
    if old is None or new is None:
        return old is None and new is None
    if list(old.columns) != list(new.columns) or len(old) != len(new):
        return False
    kept = [c for c in new.columns if not (new[c].map(_path).any() or old[c].map(_path).any())]
    return all(same_column(c, old[c], new[c]) for c in kept)


def reproduces(old: tuple, new: tuple) -> bool:
    """Whether a rebuilt page reproduces the previous one (each a tuple: notebook, result rows, then the tables
    saved beside them, item rows and lab rows, or None): made with the same sources, versions, parameters and
    profile, and every result value and table row the same (:func:`tally`, :func:`same_table`)."""
    (old_nb, old_rows, *old_tables), (new_nb, new_rows, *new_tables) = old, new
    if old_nb is None or old_rows is None:
        return False
    old_meta, new_meta = old_nb.metadata.get("probekit", {}), new_nb.metadata.get("probekit", {})
    fields = ("parameters", "profile", "built_with")
    if any(old_meta.get(f) != new_meta.get(f) for f in fields):
        return False
    equal, total = tally(old_rows, new_rows)
    return (len(old_rows) == len(new_rows) and equal == total
            and all(same_table(a, b) for a, b in zip(old_tables, new_tables, strict=True)))


BUILT_WITH = "book/chapters/built_with.md"   # included by the start page


def _describe(built: dict) -> str:
    versions = ", ".join(f"{p} {v}" for p, v in built["versions"].items() if v != "not installed")
    return (f"{versions}; Python {built['python']} on {built['machine']}, device `{built['device']}`; "
            f"sources fingerprint `{built['sources']}`")


def write_built_with(root: Path, pages: dict) -> Path:
    """The start page's paragraph on what the pages were built with (``pages``: chapter -> its notebook's
    ``built_with``): the commit of the sources they were executed from (:func:`sources_commit`), and a page
    executed from other sources (a chapter that failed and kept its previous page) marked as such.  Written only
    when it changes, so that a rebuild that reproduces the book leaves it alone."""
    out = Path(root) / BUILT_WITH
    current = fingerprint(root)
    groups: dict[str, list[str]] = {}
    for chapter, built in pages.items():
        if built:
            other = "" if built["sources"] == current else " (executed from other sources than this commit's)"
            groups.setdefault(_describe(built) + other, []).append(chapter)
    lines = [f"- {', '.join(chs)}: {text}." for text, chs in groups.items()] or ["- no chapter has been executed."]
    commit = _commit(root, out, current)
    shallow = (f"; `{SHALLOW}`: that commit or an earlier one, a shallow clone's history cannot tell"
               if SHALLOW in commit else "")
    text = (f"The pages of this book were executed from the sources of commit `{commit}` (the last commit that "
            f"changed `probekit/` or `book/src/`; `-dirty`: with changes to them not yet committed{shallow}; the "
            "sources fingerprint says which code exactly) with:\n\n" + "\n".join(lines) + "\n")
    if not (out.exists() and out.read_text() == text):
        out.write_text(text)
    return out
