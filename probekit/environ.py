"""Environment variables set for the duration of a block (a profile's variables for the chapters' kernels,
progress bars off for a short inner job)."""

from __future__ import annotations

import os
from contextlib import contextmanager


@contextmanager
def environment(env: dict[str, str]):
    """Set ``env`` for the duration of the block; every variable is as it was afterwards (unset if it was)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
