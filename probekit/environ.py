"""Environment variables set for the duration of a block (a profile's variables for the chapters' kernels,
progress bars off for a short inner job)."""

from __future__ import annotations

import functools
import os
import socket
import urllib.parse
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


MIRROR = "PROBEKIT_MIRROR"


def mirrored(url: str) -> str:
    """The address ``url`` is fetched from: ``url`` itself, or, when ``$PROBEKIT_MIRROR`` names a server (e.g.
    ``http://127.0.0.1:8000``), that server's ``/<host>/<path>`` for an http(s) ``url``, so that every download of a
    data file, image or checkpoint goes to one server holding copies laid out by host (a local mirror, or the
    offline rehearsal of paper mode, :mod:`probekit.rehearsal`)."""
    import urllib.parse

    base = os.environ.get(MIRROR, "").rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if not base or parts.scheme not in ("http", "https"):
        return url
    return f"{base}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def offline() -> bool:
    """Whether the model hub cannot be used: ``HF_HUB_OFFLINE`` set, or its endpoint (``HF_ENDPOINT``, by default
    huggingface.co) not reachable within a second (tried once per process)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on") or _unreachable(
        os.environ.get("HF_ENDPOINT") or "https://huggingface.co")


@functools.cache
def _unreachable(endpoint: str) -> bool:
    url = urllib.parse.urlsplit(endpoint)
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout=1).close()
    except (OSError, TypeError):
        return True
    return False
