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


def param(default: Any, help: str = "", role: tuple[str, ...] = ()):
    """A field of a parameters dataclass: its default (a list is copied for each instance), the help the parameters
    cell and ``probekit list`` show, and for a model parameter its role: the questions of
    :func:`probekit.scorers.head_for` each model given must answer (at least one of them; ``probekit check``)."""
    meta = {"help": help, "role": tuple(role)}
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


def is_model_parameter(name: str) -> bool:
    """Whether a parameter names models: ``models``, ``*_models`` or ``*_model``."""
    return name == "models" or name.endswith(("_models", "_model"))


#: the range every numeric parameter's value must lie in, (lowest, highest), None = unbounded; a numeric parameter
#: missing here is an error of ``probekit list`` and ``check`` (tests/test_check.py reads every chapter's)
BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "limit": (1, None), "seed": (0, None), "batch_size": (1, None), "threshold": (0.0, 1.0),
    "min_triplet_negatives": (0, None), "top_k": (1, None), "n_resamples": (1, None), "min_concept_count": (1, None),
    "min_tuple_count": (1, None), "k": (1, None), "n_examples": (0, None), "finetune_steps": (1, None),
    "finetune_batch": (2, None), "finetune_lr": (0.0, 1.0), "finetune_triplets": (1, None),
    "finetune_eval_limit": (1, None), "finetune_seeds": (1, None),
}


def out_of_bounds(name: str, value: Any) -> str | None:
    """Why a numeric ``value`` of parameter ``name`` lies outside :data:`BOUNDS` (``"must be at least 1"``);
    None when it is inside."""
    if name not in BOUNDS:   # a study's own parameter that declares none (tests/test_check.py: every built-in one does)
        return None
    low, high = BOUNDS[name]
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

    @property
    def is_models(self) -> bool:
        return is_model_parameter(self.name)

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
                              f.metadata.get("role", ())) for f in dataclasses.fields(cls)}


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
