"""Model code lives only in the scorer adapters (and the toy models' builder and trainer): no other module of the
package imports ``transformers`` or ``open_clip``, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "probekit"
MODEL_LIBRARIES = {"transformers", "open_clip"}
ALLOWED = ("scorers/", "toymodels/build.py", "toymodels/trainers.py")


def model_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import of a model library anywhere in ``source`` (functions included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.split(".")[0] in MODEL_LIBRARIES]
    return found


def test_model_imports_are_found_at_any_depth():
    code = "import os\ndef f():\n    from transformers import AutoModel\n    import open_clip.tokenizer as t\n"
    assert model_imports(code) == [(3, "transformers"), (4, "open_clip.tokenizer")]
    assert model_imports("from .transformers import x\nimport transformers_like\n") == []


def test_only_scorer_adapters_import_model_libraries():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ALLOWED):
            continue
        bad += [f"probekit/{rel}:{line} imports {name}" for line, name in model_imports(path.read_text())]
    assert not bad, "model code outside probekit/scorers/:\n" + "\n".join(bad)
