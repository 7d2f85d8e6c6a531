"""Whether a rebuilt page shows what the published one shows: each code cell's outputs, images aside.

Two executed notebooks, normalised (:func:`probekit.chapters.reproduce.normalise`: positional cell ids, no
timestamps, no memory addresses), are compared code cell by code cell, by position: each output's type, its text
(``text/plain``, ``text/html``, ``text/markdown`` and any other non-image data, stream text, an error's name, value
and traceback) and the number of images the cell shows; an image's bytes (``image/png``, ``image/svg+xml``) are
left aside.  A cell is *identical* when all of these are equal; a difference of float noise is a difference here,
named as such (:data:`NOISE`): the written numbers differ, each by at most one unit of its last digit, written to
the same digits, and nothing else does (the words, the outputs, the images; a table's HTML id aside, a hash of its
content: :func:`probekit.report.show.show_table`).

Which page a rebuild keeps (:attr:`Cells.keeps_page`, with :func:`~probekit.chapters.reproduce.reproduces`): the
previous page and its files stay byte for byte when its numbers are the same (result values, tables) and every cell
is identical or differs by :data:`NOISE` only, a value crossing a rounding edge by float noise, which the values'
rule (:mod:`probekit.chapters.same`) judges the same.  A changed word, an output, image or cell more or fewer, a
number off by more than its last digit rewrites the page.  So a true reproduction leaves ``git status`` clean (an
image's bytes or a last digit's noise keep the page), and a page whose words changed is never kept.

``python -m probekit.chapters.same_outputs OLD NEW`` compares two executed notebooks, or two ``book/chapters``
folders (each notebook of NEW with its namesake in OLD, and the result values beside them): exit status 0 when every
cell is identical and every result value equal.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probekit.chapters.same import last_digit

#: how a cell differing by float noise only is named
NOISE = "numbers off by their last digit"
#: a written number (not digits inside a name, "row0"): sign, digits, decimals, exponent
NUMBER = re.compile(r"(?<!\w)[-+\u2212]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
#: a table's HTML id, a hash of its content (pandas' ``T_<uuid>``), which a number's noise changes
TABLE_ID = re.compile(r"\bT_[0-9a-f]{8}")
#: how many differing cells a line names
NAMED = 3


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def shown(cell) -> tuple[tuple[str, ...], int]:
    """A code cell's outputs as compared: the text of each (its type, then the text) and how many images it shows."""
    texts, images = [], 0
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            texts.append(f"stream {out.get('name')}\n{_text(out.get('text', ''))}")
        elif kind == "error":
            texts.append(f"error {out.get('ename')}: {out.get('evalue')}\n" + "\n".join(out.get("traceback", [])))
        else:
            data = out.get("data", {})
            images += any(mime.startswith("image/") for mime in data)
            texts += [f"{kind} {mime}\n{_text(data[mime])}" for mime in sorted(data) if not mime.startswith("image/")]
    return tuple(texts), images


def _noise(old: str, new: str) -> bool:
    """Whether two texts differ only in written numbers with decimals, each by at most one unit of its last digit,
    written to the same digits (tables' HTML ids aside); a whole number (a count, a percent written without
    decimals) must be equal ("-0" and "0" are)."""
    old, new = TABLE_ID.sub("T_", old), TABLE_ID.sub("T_", new)
    return NUMBER.split(old) == NUMBER.split(new) and all(
        _apart(a.replace("\u2212", "-"), b.replace("\u2212", "-"))
        for a, b in zip(NUMBER.findall(old), NUMBER.findall(new)))


def _apart(a: str, b: str) -> bool:
    """Whether two written numbers, written to the same digits, are equal, or both with decimals and one unit of
    their last digit apart at most."""
    x, y, step = float(a), float(b), last_digit(a)
    return step == last_digit(b) and (x == y or (bool(re.search(r"[.e]", a)) and abs(x - y) <= step * (1 + 1e-9)))


def _first_change(old: tuple[str, ...], new: tuple[str, ...]) -> str:
    """Where the texts first differ (tables' HTML ids aside): the new line there and the old, 60 characters at
    most from the line's start or 20 characters before."""
    a, b = (TABLE_ID.sub("T_", "\n".join(texts)) for texts in (old, new))
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(a.rfind("\n", 0, at) + 1, at - 20)
    cut = lambda text: text[start:].partition("\n")[0][:60]
    return f"{cut(b)!r}, was {cut(a)!r}"


def _how(old, new) -> str:
    if old is None or new is None:
        return "a cell not there before" if old is None else "a cell no longer there"
    (old_texts, old_images), (new_texts, new_images) = shown(old), shown(new)
    if old_images != new_images:
        return f"{new_images} images, were {old_images}"
    if len(old_texts) != len(new_texts):
        return f"{len(new_texts)} outputs, were {len(old_texts)}"
    if all(_noise(a, b) for a, b in zip(old_texts, new_texts)):
        return NOISE
    return "text: " + _first_change(old_texts, new_texts)


@dataclass(frozen=True)
class Cells:
    """A rebuilt page's code cells compared with the previous page's: how many, and those that differ as (cell id,
    how it differs), in order."""
    total: int
    differ: tuple[tuple[str, str], ...]

    @property
    def identical(self) -> int:
        return self.total - len(self.differ)

    @property
    def keeps_page(self) -> bool:
        """Whether the previous page may be kept: every cell identical or differing by :data:`NOISE` only."""
        return all(how == NOISE for _, how in self.differ)

    def __str__(self) -> str:
        named = "; ".join(f"{cell}: {how}" for cell, how in self.differ[:NAMED])
        more = f"; {len(self.differ) - NAMED} more" if len(self.differ) > NAMED else ""
        return f"{self.identical} of {self.total} cell outputs identical (images aside)" + (
            f" (differ: {named}{more})" if self.differ else "")


def compare(old, new) -> Cells:
    """``new``'s code cells compared with ``old``'s (notebooks, normalised), by position; ``old`` None (no page
    before): none identical."""
    code = lambda nb: [c for c in nb.cells if c.cell_type == "code"] if nb is not None else []
    before, after = code(old), code(new)
    total = max(len(before), len(after))
    pad = lambda cells: cells + [None] * (total - len(cells))
    differ = []
    for i, (a, b) in enumerate(zip(pad(before), pad(after))):
        if a is None or b is None or shown(a) != shown(b):
            differ.append((str((b or a).get("id", f"code cell {i}")), _how(a, b)))
    return Cells(total, tuple(differ))


def line(name: str, values: tuple[int, int], cells: Cells) -> str:
    """A page's line of a rebuild's report: its result values, then its cells."""
    return f"{name}: {values[0]} of {values[1]} result values equal; {cells}"


def _read(path: Path):
    import nbformat

    from probekit.chapters.reproduce import normalise
    nb = nbformat.read(path, as_version=4)
    normalise(nb)
    return nb


def compare_paths(old: Path, new: Path, log=print) -> bool:
    """Compare two executed notebooks, or each notebook of the folder ``new`` with its namesake in ``old`` (and
    their result values, where both have a ``<name>.results.parquet``), one line each to ``log``; whether every
    cell of every notebook is identical and every result value equal."""
    from probekit.chapters.reproduce import tally
    from probekit.results import load

    pairs = [(old / p.name, p) for p in sorted(new.glob("*.ipynb"))] if new.is_dir() else [(old, new)]
    alike = True
    for before, after in pairs:
        cells = compare(_read(before) if before.exists() else None, _read(after))
        rows = [p.with_name(p.stem + ".results.parquet") for p in (before, after)]
        values = tally(load(rows[0]), load(rows[1])) if all(p.exists() for p in rows) else None
        log(line(after.stem, values, cells) if values else f"{after.stem}: {cells}")
        alike = alike and not cells.differ and (values is None or values[0] == values[1])
    for gone in sorted({p.name for p in old.glob("*.ipynb")} - {a.name for _, a in pairs}) if new.is_dir() else ():
        log(f"{Path(gone).stem}: a page no longer there")
        alike = False
    return alike


if __name__ == "__main__":   # pragma: no cover - a command-line wrapper around compare_paths
    if len(sys.argv) != 3:
        sys.exit("usage: python -m probekit.chapters.same_outputs OLD NEW  (two notebooks, or two chapters folders)")
    sys.exit(0 if compare_paths(Path(sys.argv[1]), Path(sys.argv[2])) else 1)
