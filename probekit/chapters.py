"""The book's chapters: where their sources live, which parameters they take, and how one is executed.

A chapter is a jupytext MyST source ``book/src/<name>.md`` with exactly one code cell tagged ``parameters``.
Its parameters and their defaults are read from that cell (nothing here repeats them); a value given on the
command line, in a params file or in a profile is checked against the default's type, and model and dataset
names against the scorer and dataset registries, before any work starts.  ``execute`` runs the source through
papermill into a temporary notebook and moves it to ``book/chapters/<name>.ipynb`` only when every cell ran,
so a failing chapter never overwrites the last good page of any chapter.
"""

from __future__ import annotations

import ast
import datetime as _dt
import difflib
import io
import logging
import os
import re
import shutil
import tempfile
import time
import tokenize
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# Chapters in reading order, each with the probe(s) whose dataset sources its ``dataset`` parameter names.
CHAPTERS: dict[str, tuple[str, ...]] = {
    "verbs": ("verbs",),
    "prednoun": ("prednoun",),
    "masking": ("masking",),
    "conceptual": ("probe-r", "probe-c", "probe-b"),
}
PAPER_SUITE = "paper"  # for a chapter over several probes: each probe's own real release
DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


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
    for cand in [here, *here.parents, Path(__file__).resolve().parents[1]]:
        if (cand / "_toc.yml").is_file() and (cand / "book" / "src").is_dir():
            return cand
    raise ParameterError(f"no probekit book found above {here} (looked for _toc.yml and book/src/); "
                         "run from the repository or pass --root")


def source_path(root: Path, chapter: str) -> Path:
    return Path(root) / "book" / "src" / f"{chapter}.md"


def output_path(root: Path, chapter: str) -> Path:
    return Path(root) / "book" / "chapters" / f"{chapter}.ipynb"


def check_chapter(chapter: str) -> str:
    if chapter not in CHAPTERS:
        raise ParameterError(f"unknown chapter {chapter!r}{_near(chapter, CHAPTERS)}; "
                             f"valid chapters: {', '.join(CHAPTERS)}")
    return chapter


def _near(word: str, choices) -> str:
    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


# ---------------------------------------------------------------------------------------------- parameters

@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    help: str
    kind: type | None  # bool, int, float, str, list, dict; None = any value

    @property
    def is_models(self) -> bool:
        return self.name == "models" or self.name.endswith("_models") or self.name.endswith("_model")

    @property
    def optional(self) -> bool:
        return self.default is None


def _kind(name: str, default: Any) -> type | None:
    if default is not None:
        return type(default)
    if name == "limit":
        return int
    if name.endswith("_dir"):
        return str
    if name == "models" or name.endswith("_models"):
        return list
    if name.endswith("_model"):
        return str
    return None


def _notebook(src: Path):
    import jupytext
    return jupytext.read(src, fmt="md:myst")


def _parameters_cell(nb, src: Path):
    cells = [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ParameterError(f"{src} has {len(cells)} code cells tagged 'parameters'; a chapter needs exactly one")
    return cells[0]


def parse_parameters(code: str, where: str = "parameters cell") -> dict[str, Parameter]:
    """Parameters of a ``parameters`` cell: every ``name = <literal>`` line, its value as default and the
    comment after it (and comment-only lines below it) as help."""
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    tree = ast.parse(code)
    code_lines = {n for node in tree.body for n in range(node.lineno, node.end_lineno + 1)}
    params: dict[str, Parameter] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"{where}, line {node.lineno}: only 'name = literal' assignments are allowed")
        name = node.targets[0].id
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            raise ParameterError(f"{where}, line {node.lineno}: default of {name!r} is not a literal") from None
        help_lines = [comments[node.end_lineno]] if node.end_lineno in comments else []
        line = node.end_lineno + 1
        while line in comments and line not in code_lines:
            help_lines.append(comments[line])
            line += 1
        params[name] = Parameter(name, default, " ".join(help_lines), _kind(name, default))
    return params


def parameters(root: Path, chapter: str) -> dict[str, Parameter]:
    """The parameters of ``chapter`` with their defaults, read from its source's ``parameters`` cell."""
    src = source_path(root, check_chapter(chapter))
    if not src.is_file():
        raise ParameterError(f"chapter {chapter!r} has no source {src}")
    return parse_parameters(_parameters_cell(_notebook(src), src).source, f"{src} parameters cell")


def title(root: Path, chapter: str) -> str:
    for line in source_path(root, chapter).read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return chapter


def model_names() -> list[str]:
    from probekit.scorers.registry import REGISTRY
    return list(REGISTRY)


def dataset_choices(chapter: str) -> list[str]:
    """Valid ``dataset`` values: the probe's registered sources; for a chapter over several probes, the
    sources all of them share plus ``paper`` (each probe's own release)."""
    from probekit.datasets import sources
    probes = CHAPTERS[chapter]
    if len(probes) == 1:
        return sources(probes[0])
    shared = [s for s in sources(probes[0]) if all(s in sources(p) for p in probes[1:])]
    return shared + [PAPER_SUITE]


def _from_text(text: str, kind: type | None) -> Any:
    if text.strip().lower() in ("none", "null", "~"):
        return None
    if kind is str:
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if kind is list and isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def _type_name(kind: type | None) -> str:
    return {bool: "true/false", int: "an integer", float: "a number", str: "a string",
            list: "a list (a,b,c or [a, b])", dict: "a mapping"}.get(kind, "a value")


def coerce(chapter: str, param: Parameter, value: Any) -> Any:
    """``value`` (text from the command line, or a YAML value) as the parameter's type, checked."""
    if isinstance(value, str) and param.kind is not str:
        value = _from_text(value, param.kind)
    elif isinstance(value, str) and value.strip().lower() in ("none", "null") and param.optional:
        value = None
    where = f"parameter {param.name!r} of chapter {chapter!r}"
    if value is None:
        if param.optional:
            return None
        raise ParameterError(f"{where} cannot be None; give {_type_name(param.kind)} (default {param.default!r})")
    kind = param.kind
    ok = (kind is None or (kind is float and isinstance(value, (int, float)) and not isinstance(value, bool))
          or (kind is int and isinstance(value, int) and not isinstance(value, bool))
          or (kind not in (int, float) and isinstance(value, kind)))
    if not ok:
        raise ParameterError(f"{where} must be {_type_name(kind)}, got {value!r} (default {param.default!r})")
    if kind is float:
        value = float(value)
    if kind is list and param.default:
        elem = type(param.default[0])
        if elem is not str:  # entries of "a,b,c" are text
            value = [_from_text(v, elem) if isinstance(v, str) else v for v in value]
        for v in value:
            if not (isinstance(v, elem) or (elem is float and isinstance(v, int) and not isinstance(v, bool))):
                raise ParameterError(f"{where}: entry {v!r} must be {_type_name(elem)} like {param.default[0]!r}")
    return value


def check_value(chapter: str, param: Parameter, value: Any) -> None:
    """Checks beyond the type: registry names, dataset sources, device strings, positive limits."""
    where = f"parameter {param.name!r} of chapter {chapter!r}"
    if value is None:
        return
    if param.is_models:
        names = model_names()
        for name in ([value] if isinstance(value, str) else value):
            if not isinstance(name, str):
                raise ParameterError(f"{where}: model {name!r} is not a registry name or directory")
            if name and name not in names and not Path(name).is_dir():
                raise ParameterError(f"unknown model {name!r}{_near(name, names)} in {where}; valid: "
                                     f"{', '.join(names)}, or a local checkpoint directory")
    elif param.name == "dataset":
        valid = dataset_choices(chapter)
        if value not in valid:
            raise ParameterError(f"unknown dataset {value!r}{_near(value, valid)} for chapter {chapter!r}; "
                                 f"valid: {', '.join(valid)}")
    elif param.name == "device" and not DEVICE_RE.match(str(value)):
        raise ParameterError(f"unknown device {value!r} in {where}; valid: auto, cpu, cuda, cuda:N, mps")
    elif param.name in ("limit", "batch_size") and value < 1:
        raise ParameterError(f"{where} must be at least 1, got {value!r}")


def resolve(root: Path, chapter: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """Validated overrides of ``chapter``'s parameters (only those given); raises ParameterError."""
    params = parameters(root, chapter)
    out = {}
    for name, value in overrides.items():
        if name not in params:
            raise ParameterError(f"unknown parameter {name!r}{_near(name, params)} for chapter {chapter!r}; "
                                 f"valid: {', '.join(params)}")
        out[name] = _absolute(params[name], coerce(chapter, params[name], value))
        check_value(chapter, params[name], out[name])
    return out


def _absolute(param: Parameter, value: Any) -> Any:
    """Paths as absolute paths: chapters run with the project root as working directory, not the caller's."""
    if param.name.endswith("_dir") and isinstance(value, str) and value:
        return str(Path(value).expanduser().resolve())
    if param.is_models and value:
        entries = [str(Path(v).resolve()) if isinstance(v, str) and v not in model_names() and Path(v).is_dir()
                   else v
                   for v in ([value] if isinstance(value, str) else value)]
        return entries[0] if isinstance(value, str) else entries
    return value


def read_params_file(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"params file {str(path)!r} does not exist")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ParameterError(f"params file {str(path)!r} must hold a mapping 'name: value'")
    return data


# ---------------------------------------------------------------------------------------------- profiles

@dataclass
class Profile:
    name: str
    env: dict[str, str]
    params: dict[str, dict[str, Any]]  # chapter -> validated parameter values


def profile_names(root: Path) -> list[str]:
    return sorted(p.stem for p in (Path(root) / "book" / "profiles").glob("*.yaml"))


def load_profile(root: Path, name: str) -> Profile:
    """A profile from ``book/profiles/<name>.yaml`` (or a YAML path): ``env`` (variables set while chapters
    run), ``all`` (values for every chapter that has the parameter) and ``chapters`` (per-chapter values)."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else Path(root) / "book" / "profiles" / f"{name}.yaml"
    if not path.is_file():
        valid = profile_names(root)
        raise ParameterError(f"unknown profile {name!r}{_near(name, valid)}; valid: {', '.join(valid)}")
    data = yaml.safe_load(path.read_text()) or {}
    unknown = set(data) - {"description", "env", "all", "chapters"}
    if unknown:
        raise ParameterError(f"profile {str(path)!r}: unknown key(s) {sorted(unknown)}; "
                             "valid: description, env, all, chapters")
    common = data.get("all") or {}
    per = data.get("chapters") or {}
    for chapter in per:
        check_chapter(chapter)
    known = {n for ch in CHAPTERS for n in parameters(root, ch)}
    for key in common:
        if key not in known:
            raise ParameterError(f"profile {str(path)!r}: no chapter has a parameter {key!r}{_near(key, known)}")
    params = {}
    for chapter in CHAPTERS:
        names = parameters(root, chapter)
        merged = {k: v for k, v in common.items() if k in names}
        merged.update(per.get(chapter) or {})
        params[chapter] = resolve(root, chapter, merged)
    env = {str(k): str(v) for k, v in (data.get("env") or {}).items()}
    return Profile(path.stem, env, params)


# ---------------------------------------------------------------------------------------------- execution

def _cell_summary(source: str) -> str:
    first = next((ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return first if len(first) <= 70 else first[:67] + "..."


def _run_card(chapter: str, params: dict[str, Any], profile: str | None, seconds: float) -> str:
    from probekit import __version__
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    given = ", ".join(f"`{k} = {v!r}`" for k, v in params.items()) or "none (the defaults above)"
    cmd = " ".join(["probekit run", chapter] + [f"-p {k} {_shell(v)}" for k, v in params.items()])
    prof = f", profile `{profile}`" if profile else ""
    return (f":::{{admonition}} How this page was made\n:class: note\n"
            f"Executed {when} in {seconds:.0f} s with probekit {__version__}{prof}. "
            f"Parameters given: {given}.\n\nRe-run: `{cmd}`\n:::")


def _shell(value: Any) -> str:
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if re.fullmatch(r"[\w.,:/+-]+", text) else "'" + text.replace("'", "'\\''") + "'"


@contextmanager
def _no_progress_bars_in_page():
    """The kernel inherits PROBEKIT_PROGRESS=0: a bar's every refresh would be an output of the rendered page."""
    saved = os.environ.get("PROBEKIT_PROGRESS")
    os.environ["PROBEKIT_PROGRESS"] = "0"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PROBEKIT_PROGRESS", None)
        else:
            os.environ["PROBEKIT_PROGRESS"] = saved


def execute(root: Path, chapter: str, params: dict[str, Any], *, profile: str | None = None,
            progress: bool = True, log=print) -> Path:
    """Execute ``chapter`` with validated ``params`` (see ``resolve``) into ``book/chapters/<chapter>.ipynb``.

    Cells run in a kernel of this Python with the project root as working directory.  The notebook is
    written to a temporary file and moved into place only when every cell ran; on failure it is kept under
    ``_build/failed/`` and ``ChapterFailed`` names the chapter, the cell and the error."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    logging.getLogger("papermill").setLevel(logging.ERROR)  # it misreads trailing comments; we validate
    root = Path(root)
    src = source_path(root, chapter)
    out = output_path(root, chapter)
    out.parent.mkdir(parents=True, exist_ok=True)
    nb = _notebook(src)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    log(f"probekit: executing chapter {chapter!r}" + (f" with {params}" if params else ""))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"probekit-{chapter}-") as tmp:
        inp, done = Path(tmp) / "source.ipynb", Path(tmp) / f"{chapter}.ipynb"
        nbformat.write(nb, inp)
        try:
            with _no_progress_bars_in_page():
                papermill.execute_notebook(str(inp), str(done), parameters=params, kernel_name="python3",
                                           progress_bar=progress, cwd=str(root), request_save_on_cell_execute=False)
        except PapermillExecutionError as err:
            failed = root / "_build" / "failed" / f"{chapter}.ipynb"
            failed.parent.mkdir(parents=True, exist_ok=True)
            if done.exists():
                shutil.copyfile(done, failed)
            raise ChapterFailed(f"chapter {chapter!r} failed in cell {err.exec_count} "
                                f"({_cell_summary(err.source)!r}): {err.ename}: {err.evalue.strip()} "
                                f"[notebook with traceback: {failed}]") from None
        seconds = time.perf_counter() - start
        executed = nbformat.read(done, as_version=4)
        at = max([i + 1 for i, c in enumerate(executed.cells)
                  if {"parameters", "injected-parameters"} & set(c.metadata.get("tags", []))], default=0)
        executed.cells.insert(at, nbformat.v4.new_markdown_cell(_run_card(chapter, params, profile, seconds)))
        executed.metadata["probekit"] = {"chapter": chapter, "parameters": params, "profile": profile,
                                         "seconds": round(seconds, 1)}
        staged = out.with_name(f".{chapter}.ipynb.partial")
        nbformat.write(executed, staged)
        os.replace(staged, out)
    log(f"probekit: chapter {chapter!r} done in {seconds:.0f} s -> {out}")
    return out


def write_placeholder(root: Path, chapter: str) -> Path:
    """A page for a chapter never executed here, so the book builds and says how to fill it."""
    import nbformat
    out = output_path(root, chapter)
    out.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(
        f"# {title(root, chapter)}\n\nThis chapter has not been executed yet. Run `probekit run {chapter}` "
        f"(or `probekit book`) to execute it and rebuild the book."))
    nb.metadata["probekit"] = {"chapter": chapter, "placeholder": True}
    nbformat.write(nb, out)
    return out
