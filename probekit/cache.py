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


#: sha256 of files already hashed by this process: (path, size, mtime, ctime, inode) -> hex digest
_DIGESTS: dict[str, str] = {}


def file_digest(path: str | os.PathLike, memo: str | os.PathLike | None = None) -> str:
    """SHA-256 of a file's bytes, memoised by its absolute path, size, mtime, ctime and inode: in this process, and
    as one small file per hashed file under ``memo`` (when given), so a multi-GB checkpoint is read once, not on
    every run, and a file rewritten in place (even with the same size and mtime: its ctime changes) is read again."""
    path = Path(path).resolve()
    st = path.stat()
    key = hashlib.blake2b(f"{path}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}".encode(),
                          digest_size=16).hexdigest()
    if key in _DIGESTS:
        return _DIGESTS[key]
    stored = Path(memo) / key if memo is not None else None
    with contextlib.suppress(OSError):
        if stored is not None and len(text := stored.read_text().strip()) == 64:
            _DIGESTS[key] = text
            return text
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**22), b""):
            digest.update(block)
    _DIGESTS[key] = digest.hexdigest()
    if stored is not None:
        with contextlib.suppress(OSError):  # a memo that cannot be written only costs a re-read next run
            stored.parent.mkdir(parents=True, exist_ok=True)
            tmp = stored.with_name(f".{key}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(_DIGESTS[key])
            os.replace(tmp, stored)
    return _DIGESTS[key]


def hash_memo(cache_root) -> Path | None:
    """Where :func:`file_digest` remembers hashes for a score cache at ``cache_root`` (None: the default one; False:
    no cache, so nothing is remembered on disk)."""
    return None if cache_root is False else Path(cache_root or default_cache_dir()) / ".file-hashes"


def _files_of(path: Path) -> list[tuple[str, Path]]:
    """(name, file) of a checkpoint directory's files (none under a dot-folder: hub download metadata, partial
    files), or ("", path) for one file: a weights file's own name does not change what it holds."""
    if not path.is_dir():
        return [("", path)]
    return [(str(f.relative_to(path)), f) for f in sorted(path.rglob("*"))
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)]


def files_fingerprint(*paths: str | os.PathLike, memo: str | os.PathLike | None = None) -> str:
    """Hash of the names, sizes and contents (:func:`file_digest`) of what a model was loaded from: checkpoint
    directories (weights, config, processor files) and/or single files.  The same bytes under another path give the
    same fingerprint; weights overwritten in place give another."""
    h = hashlib.blake2b(digest_size=8)
    for path in map(Path, paths):
        for name, f in _files_of(path):
            h.update(f"{name}|{f.stat().st_size}|{file_digest(f, memo)}\n".encode())
    return h.hexdigest()


def loaded_identity(family: str, paths, settings: str, cache_root) -> str | None:
    """What identifies a model loaded from local ``paths`` (those that exist; None when none does): its family, the
    :func:`files_fingerprint` of their bytes (hashes remembered beside the score cache at ``cache_root``, see
    :func:`hash_memo`) and the ``settings`` it was built with beyond them."""
    local = [p for p in paths if os.path.exists(p)]
    return f"{family}|files:{files_fingerprint(*local, memo=hash_memo(cache_root))}|{settings}" if local else None


def model_fingerprint(name: str, source: str, revision: str | None = None) -> str:
    """A directory-safe fingerprint: the model's name plus a hash of what is scored.

    ``revision`` is what identifies the weights: a :func:`files_fingerprint` (prefixed ``files:``; then the source
    path is left out, so a byte-identical copy elsewhere hashes alike), or the commit a hub id resolved to (or the
    requested revision).  Without one, a local ``source`` is fingerprinted here.
    """
    if revision is None and os.path.exists(source):
        revision = "files:" + files_fingerprint(source)
    identity = revision if revision and "files:" in revision else f"{source}@{revision}"
    tag = hashlib.blake2b(identity.encode(), digest_size=8).hexdigest()
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
            self._load().update(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))

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
        self._load()[key] = value

    def flush(self) -> None:
        pass
