"""On-disk score cache: parquet shards keyed by model fingerprint, method, scoring-recipe version and item.

Layout: ``<root>/<model fingerprint>/<method>-v<recipe>/part-*.parquet`` with columns ``key`` (a hash of the item:
image identity ``path|size|mtime`` and/or text) and ``value`` (bytes: a float32 array, or JSON for structured
results).  New entries are buffered and flushed as a new shard every ``flush_every`` entries and on ``flush()``,
so a run interrupted half way keeps what it computed and the next run resumes from there.  Shards are written to a
temporary name and renamed, so a crash never leaves a half-written shard behind, and processes sharing one cache
directory at once never read a partial shard nor overwrite one another's (each shard has a unique name; an item
both computed is stored twice with the same value; ``refresh`` reads the shards others wrote since).  A read-only or full directory raises :class:`DiskError`,
one line naming it and the fix.  The root is ``$PROBEKIT_CACHE`` or ``~/.cache/probekit/scores``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import uuid
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


#: errno values that mean "this directory cannot take the file": read-only, forbidden, full
NOT_WRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM}
FULL = {errno.ENOSPC, errno.EDQUOT}


class DiskError(OSError):
    """A directory probekit writes to is read-only or full; the message is one line naming it and the fix."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.errno = code


def disk_message(err: OSError, directory, what: str, setting: str) -> str | None:
    """One line for an ``OSError`` that means ``directory`` (``what``, chosen by ``setting``) is read-only or full;
    None for any other error."""
    if err.errno in FULL:
        return (f"{what} {directory} is full ({os.strerror(err.errno)}): free space there or set {setting} to a "
                "directory on another disk")
    if err.errno in NOT_WRITABLE:
        return (f"{what} {directory} is not writable ({os.strerror(err.errno)}): make it writable or set "
                f"{setting} to a writable directory")
    return None


@contextlib.contextmanager
def disk_errors(directory, what: str, setting: str):
    """Turn an ``OSError`` meaning ``directory`` is read-only or full into a one-line :class:`DiskError`."""
    try:
        yield
    except DiskError:
        raise
    except OSError as err:
        message = disk_message(err, directory, what, setting)
        if message is None:
            raise
        raise DiskError(message, err.errno) from None


def default_cache_dir() -> Path:
    return Path(os.environ.get("PROBEKIT_CACHE", Path.home() / ".cache" / "probekit" / "scores"))


def item_key(*parts: str) -> str:
    """Hash of an item's parts (image keys, texts, options) used as the cache key."""
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(str(p).encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def files_fingerprint(path: str | os.PathLike) -> str:
    """Hash of the names, sizes and modification times of the files of a checkpoint (a directory or one file)."""
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    h = hashlib.blake2b(digest_size=8)
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(path) if path.is_dir() else f.name}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def model_fingerprint(name: str, source: str, revision: str | None = None) -> str:
    """A directory-safe fingerprint: the model's name plus a hash of its source and weights revision.

    For a local checkpoint the revision is a hash of its files (size and mtime); for a hub id it is the commit
    hash the weights resolved to (or the requested revision).
    """
    if revision is None and os.path.exists(source):
        revision = files_fingerprint(source)
    tag = hashlib.blake2b(f"{source}@{revision}".encode(), digest_size=8).hexdigest()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-60:]
    return f"{safe}-{tag}"


class ScoreCache:
    """Key -> bytes store for one (model fingerprint, method, recipe version), persisted as parquet shards."""

    def __init__(self, root: str | os.PathLike | None, fingerprint: str, method: str, recipe: str | int,
                 flush_every: int = 2048):
        self.dir = Path(root if root is not None else default_cache_dir()) / fingerprint / f"{method}-v{recipe}"
        self.flush_every = flush_every
        self._store: dict[str, bytes] | None = None
        self._pending: dict[str, bytes] = {}
        self._read: set[str] = set()  # the shards in _store (read, or written by this process)

    def _load(self) -> dict[str, bytes]:
        if self._store is None:
            self._store = {}
            self._read_new()
        return self._store

    def _read_new(self) -> None:
        for shard in sorted(self.dir.glob("part-*.parquet")):
            if shard.name in self._read:
                continue
            self._read.add(shard.name)
            try:
                table = pq.read_table(shard)
            except Exception as err:  # a foreign or damaged file: ignore it, recompute its items
                warnings.warn(f"probekit: ignoring unreadable cache shard {shard}: {err}")
                continue
            self._store.update(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))

    def refresh(self) -> None:
        """Flush, then read the shards other processes wrote since (see :mod:`probekit.shard`)."""
        self.flush()
        if self._store is not None:
            self._read_new()

    def __len__(self) -> int:
        return len(self._load())

    def get(self, key: str) -> bytes | None:
        return self._load().get(key)

    def put(self, key: str, value: bytes) -> None:
        self._load()[key] = value
        self._pending[key] = value
        if len(self._pending) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Write pending entries as one new shard (atomically)."""
        if not self._pending:
            return
        table = pa.table({"key": pa.array(list(self._pending), pa.string()),
                          "value": pa.array(list(self._pending.values()), pa.binary())})
        name = f"part-{uuid.uuid4().hex}.parquet"
        tmp = self.dir / f".{name}.tmp"
        try:
            with disk_errors(self.dir.parents[1], "the score cache", "cache_dir (or PROBEKIT_CACHE)"):
                self.dir.mkdir(parents=True, exist_ok=True)
                pq.write_table(table, tmp)
                os.replace(tmp, self.dir / name)  # readers glob part-*.parquet: never a half-written shard
            self._read.add(name)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise
        self._pending = {}

    # typed helpers -------------------------------------------------------------------------------------------
    def get_array(self, key: str) -> np.ndarray | None:
        raw = self.get(key)
        return None if raw is None else np.frombuffer(raw, dtype=np.float32)

    def put_array(self, key: str, value: np.ndarray) -> None:
        self.put(key, np.ascontiguousarray(value, dtype=np.float32).tobytes())

    def get_json(self, key: str):
        raw = self.get(key)
        return None if raw is None else json.loads(raw.decode("utf-8"))

    def put_json(self, key: str, value) -> None:
        self.put(key, json.dumps(value).encode("utf-8"))


class NullCache(ScoreCache):
    """The same interface, kept in memory only (used when caching is switched off)."""

    def __init__(self):
        self.dir = None
        self.flush_every = 0
        self._store = {}
        self._pending = {}
        self._read = set()

    def put(self, key: str, value: bytes) -> None:
        self._store[key] = value

    def flush(self) -> None:
        pass
