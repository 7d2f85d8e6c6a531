"""A chapter's parameters: read from its study's parameters dataclass, written into its ``parameters`` cell, and
values for them checked.

The parameters, their defaults, help and roles are the fields of the study's dataclass (:mod:`probekit.parameters`;
nothing here repeats them), and the executor writes the chapter's ``parameters`` cell from them.  A value given on
the command line, in a params file or in a profile is checked against the parameter's type, and model and dataset
names against the scorer and dataset registries, before any work starts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from probekit.chapters.project import CHAPTERS, ParameterError, _near, check_chapter
from probekit.parameters import DATASET, DEVICE, PATH, Parameter, cell, describe, out_of_bounds
from probekit.studies import STUDIES

PAPER_SUITE = "paper"  # for a chapter over several probes: each probe's own real release
DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


class ValueProblem(ParameterError):
    """A value a chapter's parameter does not take: ``text`` says what is wrong and the valid choices without
    naming the chapter or the parameter, which the message (and ``probekit check``'s line) names once."""

    def __init__(self, chapter: str, parameter: str, text: str):
        self.chapter, self.parameter, self.text = chapter, parameter, text
        super().__init__(f"{chapter}: parameter {parameter!r}: {text}")


def write_parameters(nb, chapter: str) -> None:
    """Fill the chapter notebook's one ``parameters`` cell with its study's parameters and their defaults
    (:func:`probekit.parameters.cell`); papermill injects the values given below it."""
    cells = [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ParameterError(f"chapter {chapter!r} has {len(cells)} code cells tagged 'parameters'; a chapter "
                             "needs exactly one")
    cells[0].source = cell(STUDIES[chapter].parameters)


def parameters(chapter: str) -> dict[str, Parameter]:
    """The parameters of ``chapter`` with their defaults, help and roles, read from its study's parameters
    dataclass (:data:`probekit.studies.STUDIES`)."""
    return describe(STUDIES[check_chapter(chapter)].parameters)


def model_names() -> list[str]:
    from probekit.scorers.registry import REGISTRY
    return list(REGISTRY)


def dataset_choices(chapter: str) -> list[str]:
    """Valid ``dataset`` values: the probe's registered sources; for a chapter over several probes, the
    sources all of them share plus ``paper`` (each probe's own release)."""
    from probekit.datasets import sources
    probes = CHAPTERS[chapter].probes
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
    names: dict[type | None, str] = {bool: "true/false", int: "an integer", float: "a number", str: "a string",
                                     list: "a list (a,b,c or [a, b])", dict: "a mapping"}
    return names.get(kind, "a value")


def coerce(chapter: str, param: Parameter, value: Any) -> Any:
    """``value`` (text from the command line, or a YAML value) as the parameter's type, checked."""
    if isinstance(value, str) and param.kind is not str:
        value = _from_text(value, param.kind)
    elif isinstance(value, str) and value.strip().lower() in ("none", "null") and param.optional:
        value = None
    if value is None:
        if param.optional:
            return None
        raise ValueProblem(chapter, param.name, f"cannot be None; give {_type_name(param.kind)} (default {param.default!r})")
    kind = param.kind
    ok = (kind is None or (kind is float and isinstance(value, (int, float)) and not isinstance(value, bool))
          or (kind is int and isinstance(value, int) and not isinstance(value, bool))
          or (kind not in (int, float) and isinstance(value, kind)))
    if not ok:
        raise ValueProblem(chapter, param.name, f"must be {_type_name(kind)}, got {value!r} (default {param.default!r})")
    if kind is float:
        value = float(value)
    if kind is list and param.default:
        elem = type(param.default[0])
        if elem is not str:  # entries of "a,b,c" are text
            value = [_from_text(v, elem) if isinstance(v, str) else v for v in value]
        for v in value:
            if not (isinstance(v, elem) or (elem is float and isinstance(v, int) and not isinstance(v, bool))):
                raise ValueProblem(chapter, param.name, f"entry {v!r} must be {_type_name(elem)} like {param.default[0]!r}")
    return value


def check_value(chapter: str, param: Parameter, value: Any) -> None:
    """Checks beyond the type: registry names, dataset sources, device strings, positive limits."""
    if value is None:
        return
    if param.is_models:
        from probekit.scorers.resolve import UnknownModelError, model_spec
        for name in ([value] if isinstance(value, str) else value):
            if not isinstance(name, str):
                raise ValueProblem(chapter, param.name, f"model {name!r} is not a registry name or directory")
            try:
                if name:
                    model_spec(name)
            except UnknownModelError as err:
                raise ValueProblem(chapter, param.name, str(err)) from None
    elif param.means == DATASET:
        valid = dataset_choices(chapter)
        if value not in valid:
            raise ValueProblem(chapter, param.name, f"unknown dataset {value!r}{_near(value, valid)}; "
                                                        f"valid: {', '.join(valid)}")
    elif param.means == DEVICE and not DEVICE_RE.match(str(value)):
        raise ValueProblem(chapter, param.name, f"unknown device {value!r}; valid: auto, cpu, cuda, cuda:N, mps")
    elif param.kind in (int, float) and (why := out_of_bounds(param, value)):
        raise ValueProblem(chapter, param.name, f"{why}, got {value!r} (default {param.default!r})")


def resolve(chapter: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """Validated overrides of ``chapter``'s parameters (only those given); raises ParameterError."""
    params = parameters(chapter)
    out = {}
    for name, value in overrides.items():
        if name not in params:
            raise ValueProblem(chapter, name, f"no such parameter{_near(name, params)}; valid: {', '.join(params)}")
        out[name] = _absolute(params[name], coerce(chapter, params[name], value))
        check_value(chapter, params[name], out[name])
    return out


def _absolute(param: Parameter, value: Any) -> Any:
    """Paths as absolute paths: chapters run with the project root as working directory, not the caller's."""
    if param.means == PATH and isinstance(value, str) and value:
        return str(Path(value).expanduser().resolve())
    if param.is_models and value:
        from probekit.scorers.resolve import canonical
        entries = [canonical(v) if isinstance(v, str) else v for v in ([value] if isinstance(value, str) else value)]
        return entries[0] if isinstance(value, str) else entries
    return value


def read_params_file(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"params file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ParameterError(f"params file {str(path)!r} is not valid YAML: {' '.join(str(err).split())}; fix: "
                             "write one 'name: value' per line") from None
    if not isinstance(data, dict):
        raise ParameterError(f"params file {str(path)!r} must hold a mapping 'name: value'")
    return data
