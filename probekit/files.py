"""Writing files that other processes may be reading or writing at the same time."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path


def save_png(img, path: Path) -> Path:
    """Save the PIL image ``img`` as ``path`` atomically: written under a name no other process uses, then
    renamed, so a reader never sees half a file and two processes writing the same image never collide."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.png")
    try:
        img.save(tmp, format="PNG")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


@contextmanager
def replaced(path: Path):
    """Yield a temporary name beside ``path`` to write to; when the block ends without an error, move it to
    ``path`` in one step, so a reader never sees half a file (the name is removed if the block fails)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.partial")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
