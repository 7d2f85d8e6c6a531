"""Profiles: named sets of parameter values for every chapter, and the environment their kernels run in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from probekit.chapters.params import parameters, resolve
from probekit.chapters.project import CHAPTERS, ParameterError, _near, check_chapter


@dataclass
class Profile:
    name: str
    env: dict[str, str]
    params: dict[str, dict[str, Any]]  # chapter -> parameter values (validated by load_profile)


def profile_names(root: Path) -> list[str]:
    return sorted(p.stem for p in (Path(root) / "book" / "profiles").glob("*.yaml"))


def load_profile(root: Path, name: str) -> Profile:
    """A profile from ``book/profiles/<name>.yaml`` (or a YAML path): ``env`` (variables set while chapters
    run), ``all`` (values for every chapter that has the parameter) and ``chapters`` (per-chapter values)."""
    raw = read_profile(root, name)
    return Profile(raw.name, raw.env, {chapter: resolve(chapter, given) for chapter, given in raw.params.items()})


def profile_path(root: Path, name: str) -> Path:
    """The YAML file of profile ``name``: ``book/profiles/<name>.yaml``, or ``name`` itself when it is a YAML path."""
    return Path(name) if name.endswith((".yaml", ".yml")) else Path(root) / "book" / "profiles" / f"{name}.yaml"


def read_profile(root: Path, name: str) -> Profile:
    """The profile's values for every chapter as written (unchecked beyond its keys and chapter names)."""
    path = profile_path(root, name)
    if not path.is_file():
        valid = profile_names(root)
        raise ParameterError(f"unknown profile {name!r}{_near(name, valid)}; valid: {', '.join(valid)}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ParameterError(f"profile {str(path)!r} is not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(data, dict):
        raise ParameterError(f"profile {str(path)!r} must hold a mapping with env, all, chapters")
    unknown = set(data) - {"description", "env", "all", "chapters"}
    if unknown:
        raise ParameterError(f"profile {str(path)!r}: unknown key(s) {sorted(unknown)}; "
                             "valid: description, env, all, chapters")
    common = data.get("all") or {}
    per = data.get("chapters") or {}
    for chapter in per:
        check_chapter(chapter)
    known = {n for ch in CHAPTERS for n in parameters(ch)}
    for key in common:
        if key not in known:
            raise ParameterError(f"profile {str(path)!r}: no chapter has a parameter {key!r}{_near(key, known)}")
    params = {}
    for chapter in CHAPTERS:
        names = parameters(chapter)
        params[chapter] = {k: v for k, v in common.items() if k in names}
        params[chapter].update(per.get(chapter) or {})
    env = {str(k): str(v) for k, v in (data.get("env") or {}).items()}
    return Profile(path.stem, env, params)
