"""Chapters are thin: parameters, one study call, report calls and prose.  Study logic, metrics, plot helpers and
scorer loading live in probekit, so a chapter source holds at most 80 lines of code and defines nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

from probekit import chapters as ch

ROOT = Path(__file__).resolve().parents[1]
MAX_CODE_LINES = 80


def _code_cells(chapter: str):
    nb = jupytext.read(ch.source_path(ROOT, chapter), fmt="md:myst")
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("chapter", list(ch.CHAPTERS))
def test_chapter_is_thin(chapter):
    cells = _code_cells(chapter)
    lines = [line for c in cells for line in c.source.splitlines() if line.strip()]
    assert len(lines) <= MAX_CODE_LINES, f"{chapter}: {len(lines)} lines of code (at most {MAX_CODE_LINES})"
    calls = []
    for cell in cells:
        tree = ast.parse(cell.source)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)), \
                f"{chapter}: defines a function or class (line {node.lineno}); move it into probekit"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert all(n.split(".")[0] in {"probekit"} for n in names), \
                    f"{chapter}: imports {names}; a chapter imports only probekit (no plotting or pandas code)"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.attr == "run":
                calls.append(node.func.value.id)
    assert calls == [chapter], f"{chapter}: expected exactly one {chapter}.run(...) call, found {calls}"
    assert cells[-1].source.strip() == "report.export(result)"
    assert "remove-cell" in cells[-1].metadata.get("tags", [])
