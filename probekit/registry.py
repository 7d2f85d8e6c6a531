"""One pattern for the package's tables of named things (model families, probe sources, papers, studies): a name
maps to a ``"module:object"`` entry, imported only when it is used, so that reading a table imports nothing."""

from __future__ import annotations

import difflib
from importlib import import_module


def load(entry: str):
    """The object an entry names: ``"package.module:name"``, or the module itself for ``"package.module"``."""
    module, _, name = entry.partition(":")
    found = import_module(module)
    return getattr(found, name) if name else found


class Registry(dict):
    """name -> ``"module:object"`` entry; :meth:`load` imports the entry of a name, and an unknown name is a
    KeyError naming the nearest one and every valid one."""

    def __init__(self, what: str, entries: dict):
        super().__init__(entries)
        self.what = what

    def entry(self, name) -> str:
        if name not in self:
            near = difflib.get_close_matches(str(name), [str(k) for k in self], n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise KeyError(f"unknown {self.what} {name!r}{hint}; valid: {', '.join(map(str, self))}")
        return self[name]

    def load(self, name):
        return load(self.entry(name))
