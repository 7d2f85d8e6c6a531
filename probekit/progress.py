"""Progress bars for long loops, silenced where they would only clutter a rendered page.

Chapters are executed with ``PROBEKIT_PROGRESS=0`` (papermill shows progress per cell on the terminal instead);
set it yourself to silence every bar of probekit.
"""

from __future__ import annotations

import os

from tqdm import tqdm


def progress_enabled() -> bool:
    return os.environ.get("PROBEKIT_PROGRESS", "1") != "0"


def bar(iterable=None, *, total: int | None = None, desc: str | None = None, unit: str = "it",
        disable: bool = False, leave: bool = True) -> tqdm:
    """A tqdm bar, off when ``disable`` or when ``PROBEKIT_PROGRESS=0``."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=disable or not progress_enabled(), leave=leave)
