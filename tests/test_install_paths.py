"""Every install path resolves to the same versions: ``make venv``, ``environment.yml``'s pip section and the
README's pip commands all install probekit with ``constraints.txt``, on the Python it was frozen with, and the
torch pins they name agree with it."""

from __future__ import annotations

import re

import yaml

from conftest import REPO


def _pins() -> dict[str, str]:
    lines = (REPO / "constraints.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if "==" in line and not line.startswith("#"))


def _readme_installs() -> list[str]:
    """Every pip install command in the README's console blocks."""
    blocks = re.findall(r"```console\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)
    return [cmd for block in blocks for line in block.splitlines() for cmd in line.split("&&") if "pip install" in cmd]


def test_every_install_of_probekit_is_constrained():
    pip = yaml.safe_load((REPO / "environment.yml").read_text())["dependencies"][-1]["pip"]
    assert "-c constraints.txt" in pip and any(entry.startswith("-e .") for entry in pip)
    makefile = [line for line in (REPO / "Makefile").read_text().splitlines() if "pip install" in line]
    installs = _readme_installs() + makefile
    of_probekit = [cmd for cmd in installs if "-e " in cmd]
    assert len(of_probekit) >= 3 and all("-c constraints.txt" in cmd for cmd in of_probekit), of_probekit


def test_named_versions_agree_with_the_constraints():
    pins = _pins()
    named = [pin for cmd in _readme_installs() for pin in re.findall(r"([A-Za-z0-9_.-]+)==([^\s']+)", cmd)]
    assert named and all(pins[name.lower()] == version for name, version in named), named
    python = yaml.safe_load((REPO / "environment.yml").read_text())["dependencies"][0]
    venvs = re.findall(r"(python[\d.]*) -m venv", (REPO / "README.md").read_text())
    assert python == "python=3.11" and venvs and set(venvs) == {"python3.11"}, venvs
