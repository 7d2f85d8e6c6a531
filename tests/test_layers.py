"""The package's layering, scorers -> data -> metrics -> papers -> toymodels -> studies -> report -> book, holds for
every import (module-level or inside a function): no module imports one above it, and none reaches itself through
imports.  And no module is over ~300 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "probekit"

# lowest first; a module may import its own layer and the ones below it
LAYERS = [
    {"probekit", "probekit.progress", "probekit.stats", "probekit.results", "probekit.claims", "probekit.numbers",
     "probekit.device", "probekit.cache", "probekit.plugins", "probekit.images", "probekit.files", "probekit.theme",
     "probekit.environ", "probekit.registry", "probekit.parameters", "probekit.shard", "probekit.checksums"},
    {"probekit.scorers"},
    {"probekit.toyworld", "probekit.data", "probekit.datasets", "probekit.ablation", "probekit.fillers"},
    {"probekit.metrics"},
    {"probekit.papers"},
    {"probekit.toymodels"},
    {"probekit.studies"},
    {"probekit.report"},
    {"probekit.book", "probekit.chapters", "probekit.cli", "probekit.__main__", "probekit.rehearsal"},
]
MAX_LINES = 300
#: a study package's display code sits in the report layer: ``probekit.studies.<study>.findings`` (the findings its
#: page opens with) and ``.page`` (its page's own tables, figures and texts) may import probekit.report, and nothing
#: below the report layer imports them
DISPLAY = ("findings", "page")


def _layer(module: str) -> int:
    parts = module.split(".")
    if parts[:2] == ["probekit", "studies"] and len(parts) == 4 and parts[-1] in DISPLAY:
        return next(i for i, names in enumerate(LAYERS) if "probekit.report" in names)
    best = None
    for i, names in enumerate(LAYERS):
        for name in names:
            if module == name or (name != "probekit" and module.startswith(name + ".")):
                if best is None or len(name) > len(best[1]):
                    best = (i, name)
    if best is None:
        raise AssertionError(f"module {module} is in no layer of tests/test_layers.py: add it where it belongs")
    return best[0]


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(module: str, path: Path):
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("probekit"):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("probekit"):
                for alias in node.names:   # "from probekit.studies import verbs": x may be a module
                    sub = f"{target}.{alias.name}"
                    yield node.lineno, sub if _is_module(sub) else target


def test_no_module_imports_a_layer_above_it():
    bad = []
    for module, path in _modules():
        own = _layer(module)
        for line, target in _imports(module, path):
            try:
                other = _layer(target)
            except AssertionError:
                other = _layer(target.rsplit(".", 1)[0])
            if other > own:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target} (layer {other} > {own})")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def _module_graph() -> dict[str, set[str]]:
    """Module -> the probekit modules it imports (module-level or inside a function); ``from pkg import name``
    is an import of the module ``pkg.name`` where there is one, else of ``pkg``."""
    modules = dict(_modules())
    graph = {}
    for module, path in modules.items():
        found = set()
        for _, target in _imports(module, path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            found |= {target} - {module, ""}
        graph[module] = found
    return graph


def test_no_import_circle():
    """No module reaches itself through imports: a study hands its lab the functions it needs instead of the lab
    importing the study back (verbs, prednoun, masking), and the zoo's folder lives in zoo.py, not in train.py."""
    graph, circles = _module_graph(), []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    assert not circles, "import circles:\n" + "\n".join(sorted(set(circles))[:10])


def test_metrics_ask_no_model():
    """A metric takes score arrays and item tables and returns rows: nothing in metrics/ imports scorers/ (the
    studies ask the models, e.g. ``probekit.studies.pair_scores``)."""
    graph = _module_graph()
    bad = {m: sorted(t for t in targets if t.startswith("probekit.scorers")) for m, targets in graph.items()
           if m.startswith("probekit.metrics")}
    assert not {m: t for m, t in bad.items() if t}, bad


def test_the_layers_name_only_modules_that_exist():
    modules = {module for module, _ in _modules()}
    gone = sorted(name for names in LAYERS for name in names if name not in modules)
    assert not gone, f"tests/test_layers.py names modules that do not exist: {gone}"


def test_modules_are_small():
    big = [f"{path.relative_to(PACKAGE.parent)}: {n} lines" for _, path in _modules()
           if (n := len(path.read_text().splitlines())) > MAX_LINES]
    assert not big, f"modules over {MAX_LINES} lines (split them by what they hold):\n" + "\n".join(big)


@pytest.mark.parametrize("module,layer", [("probekit.scorers.base", 1), ("probekit.metrics.itm", 3),
                                          ("probekit.toymodels.train", 5), ("probekit.studies.verbs.study", 6),
                                          ("probekit.studies.verbs.page", 7), ("probekit.studies.verbs.findings", 7),
                                          ("probekit.studies.page", 6),
                                          ("probekit.cli", 8)])
def test_layer_lookup(module, layer):
    assert _layer(module) == layer


def _study_packages() -> set[str]:
    return {f"probekit.studies.{p.name}" for p in (PACKAGE / "studies").iterdir() if (p / "__init__.py").is_file()}


def test_a_study_package_imports_no_other_study_package():
    """A study is one package (``probekit.studies.<study>``): what two studies share sits beside the packages."""
    packages, graph = _study_packages(), _module_graph()
    assert {"probekit.studies.verbs", "probekit.studies.conceptual"} <= packages
    bad = [f"{module} imports {target}" for module, targets in graph.items() for target in targets
           for own in packages if module == own or module.startswith(own + ".")
           for other in packages - {own} if target == other or target.startswith(other + ".")]
    assert not bad, "\n".join(bad)


IMPORTERS = {"load", "import_module", "__import__"}


def _computed_imports(path: Path):
    """Calls of an importer (``registry.load``, ``importlib.import_module``, ``__import__``) whose module is built
    at run time (an f-string, a concatenation, a ``%`` or ``.format``): imports no reader of the code can follow."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in IMPORTERS and isinstance(node.args[0], (ast.JoinedStr, ast.BinOp)) or (
                    name in IMPORTERS and isinstance(node.args[0], ast.Call)
                    and getattr(node.args[0].func, "attr", None) == "format"):
                yield node.lineno


def test_no_module_imports_by_a_computed_name():
    bad = [f"{path.relative_to(PACKAGE.parent)}:{line}" for _, path in _modules() for line in _computed_imports(path)]
    assert not bad, "imports by a module name built at run time:\n" + "\n".join(bad)


def test_a_computed_import_is_found(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('from probekit.registry import load\nload(f"probekit.studies.{s}.lab")\nload("json:dumps")\n'
                    'import_module("probekit." + name)\n')
    assert list(_computed_imports(path)) == [2, 4]
