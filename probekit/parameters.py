"""A study's parameters: one frozen dataclass per study (``probekit.studies.<study>.params``), each field written
once with its default, type, help and role.

The chapter's parameters cell is written from it at execution (:func:`cell`; papermill injects the values given
below it), the page hands the cell's values back to the study (:meth:`Parameters.of`), and ``probekit list`` and
``probekit check`` read the fields (:func:`describe`).  These modules import nothing heavy, so checking stays fast.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Self


#: what a parameter's value means, where the checks treat it beyond its type (``param``'s ``means``)
MODELS = "models"     # registry names or model directories (``probekit check`` resolves them; made canonical)
PATH = "path"         # a directory (made absolute: chapters run with the project root as working directory)
DATASET = "dataset"   # a source registered for the study's probes
DEVICE = "device"     # auto, cpu, cuda, cuda:N or mps


def param(default: Any, help: str = "", role: tuple[str, ...] = (), *, bounds: tuple | None = None,
          means: str | None = None, toy_world_only: bool = False):
    """A field of a parameters dataclass: its default (a list is copied for each instance), the help the parameters
    cell and ``probekit list`` show, for a model parameter its role (the questions of
    :func:`probekit.scorers.head_for` each model given must answer, at least one of them; ``probekit check``), for
    a number the range its value must lie in, ``bounds`` = (lowest, highest), None = unbounded (every numeric
    parameter declares one: tests/test_check_models.py), what its value ``means`` (:data:`MODELS`, :data:`PATH`,
    :data:`DATASET`, :data:`DEVICE`), and whether it is read on the toy world only (its toy models are no
    problem on real data)."""
    meta = {"help": help, "role": tuple(role), "bounds": bounds, "means": means, "toy_world_only": toy_world_only}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


class Parameters:
    """Base of a study's parameters dataclass."""

    @classmethod
    def of(cls, namespace: dict[str, Any]) -> Self:
        """The parameters holding the values a notebook's parameters cell left in ``namespace`` (its globals)."""
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # the subclasses are dataclasses, this base is not
        return cls(**{f.name: namespace[f.name] for f in fields})


@dataclass(frozen=True)
class CommonParams(Parameters):
    """The fields every study has, with their bounds and meanings; a study restates ``models``, ``dataset`` and
    ``limit`` with its own default and help (:func:`common`) and adds its own fields, ``lab_models`` last
    (:func:`lab_zoo`)."""
    models: list[str] = param([], "registry names", means=MODELS)
    dataset: str = param("toy", "a source registered for the study's probes", means=DATASET)
    data_dir: str | None = param(None, "None -> probekit.datasets.default_data_dir()", means=PATH)
    limit: int | None = param(None, "max items (None = all; the toy world's default size)", bounds=(1, None))
    seed: int = param(0, bounds=(0, None))
    device: str = param("auto", means=DEVICE)
    batch_size: int = param(32, bounds=(1, None))
    cache_dir: str | None = param(None, "None -> default score cache", means=PATH)


def common(name: str, default: Any, help: str, role: tuple[str, ...] = ()):
    """A field of :class:`CommonParams` restated by a study with its own default, help and role, keeping the
    field's bounds and meaning."""
    meta = CommonParams.__dataclass_fields__[name].metadata
    return param(default, help, role, bounds=meta["bounds"], means=meta["means"])


def lab_zoo(default: tuple[str, ...], help: str, role: tuple[str, ...]):
    """The ``lab_models`` field of a study with a toy lab: the zoo members its lab sections score (toy world only;
    [] = no lab).  Declared by each study after its own fields, so the parameters cell lists it last."""
    return param(list(default), help, role, means=MODELS, toy_world_only=True)


def out_of_bounds(parameter: Parameter, value: Any) -> str | None:
    """Why a numeric ``value`` of ``parameter`` lies outside its bounds (``"must be at least 1"``); None when it
    is inside or the parameter declares none."""
    if parameter.bounds is None:
        return None
    low, high = parameter.bounds
    if (low is not None and value < low) or (high is not None and value > high):
        return f"must be at least {low}" if high is None else f"must lie in [{low}, {high}]"
    return None


@dataclass(frozen=True)
class Parameter:
    """One field of a parameters dataclass as the CLI and the checks read it."""
    name: str
    default: Any
    help: str
    kind: type | None  # bool, int, float, str, list, dict; None = any value
    role: tuple[str, ...] = ()
    bounds: tuple | None = None     # (lowest, highest) of a number, None = unbounded
    means: str | None = None        # MODELS, PATH, DATASET, DEVICE or None
    toy_world_only: bool = False

    @property
    def is_models(self) -> bool:
        return self.means == MODELS

    @property
    def optional(self) -> bool:
        return self.default is None


def _kind(hint) -> type | None:
    """The type a value of a field annotated ``hint`` must have: ``list[str] | None`` -> list; Any -> None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(h for h in typing.get_args(hint) if h is not type(None))
    hint = typing.get_origin(hint) or hint
    return hint if hint in (bool, int, float, str, list, dict) else None


def _default(f: dataclasses.Field[Any]) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[operator]  # else a factory


def describe(cls: type) -> dict[str, Parameter]:
    """Every field of a parameters dataclass, in order, with its default, help, type and role."""
    hints = typing.get_type_hints(cls)
    return {f.name: Parameter(f.name, _default(f), f.metadata.get("help", ""), _kind(hints[f.name]),
                              f.metadata.get("role", ()), f.metadata.get("bounds"), f.metadata.get("means"),
                              f.metadata.get("toy_world_only", False)) for f in dataclasses.fields(cls)}


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(_literal, value)) + "]"
    return repr(value)


COMMENT_AT = 37   # the column where a line's help starts, when the assignment is shorter


def cell(cls: type) -> str:
    """The chapter's parameters cell: one ``name = default  # help`` line per field."""
    lines = []
    for p in describe(cls).values():
        code = f"{p.name} = {_literal(p.default)}"
        lines.append(f"{code:<{COMMENT_AT - 1}} # {p.help}" if p.help and len(code) < COMMENT_AT - 1
                     else f"{code}  # {p.help}" if p.help else code)
    return "\n".join(lines)
