"""Plugins: model families and probe sources that other installed packages add through entry points.

A package adds a model family (an adapter, :class:`probekit.scorers.Scorer`) with, in its ``pyproject.toml``::

    [project.entry-points."probekit.scorers"]
    myfamily = "mypackage.scorer:MyScorer"

and a probe source (an item-table loader, :mod:`probekit.datasets`) with::

    [project.entry-points."probekit.datasets"]
    "verbs:my-source" = "mypackage.items:load_items"

The README's section "Adding a model family or a probe" states what each must implement.
"""

from __future__ import annotations

from importlib.metadata import entry_points

SCORERS, DATASETS = "probekit.scorers", "probekit.datasets"


def plugins(group: str) -> dict[str, str]:
    """name -> ``"module:object"`` of every entry point installed packages declare in ``group`` (read on every
    call: a package installed in a running session is seen)."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def provenance(group: str) -> dict[str, str]:
    """name -> where an entry point of ``group`` comes from: ``"module:object, from <package> <version>"`` (the
    package that declares it; just the object where the entry point names no package)."""
    def where(ep) -> str:
        dist = getattr(ep, "dist", None)
        return f"{ep.value}, from {dist.name} {dist.version}" if dist is not None else ep.value
    return {ep.name: where(ep) for ep in entry_points(group=group)}

