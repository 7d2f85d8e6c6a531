"""Careful downloads of data files and of many web images, shared by every real-data loader.

``fetch_images`` takes ``{image_id: url}`` and fills one folder with ``<id>.<ext>`` files: parallel threads,
per-request timeouts, retries with exponential backoff on transient errors, and every file checked to decode
as an image before it is kept.  Files are written to a temporary name and renamed, so an interrupted run
loses nothing and a re-run only fetches what is still missing.  The outcome of every id (including why it
failed) goes to ``manifest.csv`` in the folder; ids that failed for good (HTTP 404, not an image, a
placeholder) are not retried unless asked.  An image host's "photo unavailable" placeholder reached by a redirect
decodes as an image, so it is recognised by where the redirect went (:mod:`probekit.data.placeholders`); such ids
count as missing.  Images a user already has are used as they are when named ``<id>.<ext>`` in that
folder.  ``fetch_file`` downloads one data file with the same care and checks its recorded SHA-256 (``checksums``).
"""

from __future__ import annotations

import io
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from hashlib import sha1
from pathlib import Path
from typing import Mapping

import pandas as pd
from PIL import Image

from ..cache import disk_errors
from ..environ import mirrored
from ..checksums import verify, verify_file
from ..progress import bar as tqdm
from .placeholders import PLACEHOLDER, drop_shared_redirects, placeholder_target

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tif", ".tiff")
MANIFEST = "manifest.csv"
USER_AGENT = "probekit/0.1 (research data loader; +https://github.com)"
_EXT = {"JPEG": ".jpg", "PNG": ".png", "GIF": ".gif", "WEBP": ".webp", "BMP": ".bmp", "TIFF": ".tif", "MPO": ".jpg"}
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


class DownloadError(RuntimeError):
    """A file could not be obtained; the message says what is missing and how to provide it."""


class OfflineError(DownloadError):
    """No server could be reached and nothing was available locally."""


class _Failure(Exception):
    def __init__(self, message: str, permanent: bool, reached_server: bool, unknown_host: bool = False):
        super().__init__(message)
        self.permanent = permanent
        self.reached_server = reached_server
        self.unknown_host = unknown_host  # DNS said no: a dead domain when online, nothing when offline


def image_filename(image_id: str) -> str:
    """File stem for an id: the id itself when it is a safe file name, else a sanitised name plus a short hash."""
    image_id = str(image_id)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", image_id)
    if safe == image_id and safe not in {"", ".", ".."} and not safe.startswith("."):
        return safe
    return f"{safe.strip('.')[:80]}_{sha1(image_id.encode()).hexdigest()[:10]}"


def find_local_images(dest_dir: str | os.PathLike) -> dict[str, Path]:
    """Map file stem -> path for every image file in ``dest_dir`` (not recursive)."""
    dest = Path(dest_dir)
    if not dest.is_dir():
        return {}
    return {p.stem: p for p in dest.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS}


def check_image(data: bytes) -> str:
    """Return the file extension of an encoded image after checking that it fully decodes; raise ValueError if not."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
        with Image.open(io.BytesIO(data)) as img:  # verify() does not catch truncated files; decoding does
            fmt = img.format
            img.load()
    except Exception as err:  # PIL raises many types for bad input
        raise ValueError(f"not a decodable image ({type(err).__name__}: {err})") from None
    assert fmt is not None  # a file PIL opened has the format of the plugin that opened it
    return _EXT.get(fmt, f".{fmt.lower()}")


def _http_get(url: str, timeout: float, max_bytes: int) -> tuple[bytes, str]:
    """``url``'s body (from ``$PROBEKIT_MIRROR`` when set) and the URL after redirects (``url`` when none)."""
    request = urllib.request.Request(target := mirrored(url), headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data, final_url = response.read(max_bytes + 1), response.geturl()
    if len(data) > max_bytes:
        raise _Failure(f"larger than max_bytes={max_bytes}", permanent=True, reached_server=True)
    return data, url if final_url == target else final_url


def _get_with_retries(url: str, timeout: float, retries: int, backoff: float, max_bytes: int) -> tuple[bytes, str]:
    """GET ``url`` -> (body, URL after redirects); retry transient failures (timeouts, refused connections, 5xx,
    429) ``retries`` times."""
    for attempt in range(retries + 1):
        try:
            return _http_get(url, timeout, max_bytes)
        except urllib.error.HTTPError as err:
            failure = _Failure(f"HTTP {err.code} {err.reason}", permanent=err.code not in _RETRY_STATUS,
                               reached_server=True)
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            failure = _Failure(f"connection failed ({type(reason).__name__}: {reason})", permanent=False,
                               reached_server=False, unknown_host=isinstance(reason, socket.gaierror))
        except ValueError as err:  # malformed URL
            raise _Failure(f"bad URL ({err})", permanent=True, reached_server=False) from None
        except OSError as err:  # e.g. connection reset mid-read
            failure = _Failure(f"connection failed ({type(err).__name__}: {err})", permanent=False,
                               reached_server=False)
        if failure.permanent or attempt == retries:
            raise failure
        time.sleep(backoff * 2 ** attempt)
    raise AssertionError("unreachable")


def writing(directory: Path):
    """Turn a read-only or full ``directory`` into a one-line :class:`DiskError` naming it and the fix."""
    return disk_errors(directory, "the data directory", "data_dir (or PROBEKIT_DATA)")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}.part")
    with writing(path.parent):
        tmp.write_bytes(data)
        os.replace(tmp, path)


def _read_manifest(dest: Path) -> pd.DataFrame:
    path = dest / MANIFEST
    if not path.exists():
        return pd.DataFrame(columns=["id", "url", "path", "ok", "error", "permanent"])
    return pd.read_csv(path, dtype={"id": str, "url": str, "path": str, "error": str},
                       keep_default_na=False)


def _write_manifest(dest: Path, rows: dict[str, dict]) -> None:
    old = _read_manifest(dest)
    old = old[~old["id"].isin(rows)]
    new = pd.DataFrame(list(rows.values()), columns=["id", "url", "path", "ok", "error", "permanent"])
    table = pd.concat([old, new], ignore_index=True) if len(old) else new
    tmp = dest / f"{MANIFEST}.{uuid.uuid4().hex[:8]}.part"
    with writing(dest):
        table.to_csv(tmp, index=False)
        os.replace(tmp, dest / MANIFEST)


def fetch_images(urls: Mapping[str, str], dest_dir: str | os.PathLike, workers: int = 16, timeout: float = 10,
                 retries: int = 3, progress: bool = True, *, backoff: float = 0.5, retry_failed: bool = False,
                 max_bytes: int = 50_000_000, offline_after: int = 25, desc: str | None = None) -> pd.DataFrame:
    """Download the images ``{id: url}`` into ``dest_dir`` as ``<id>.<ext>``; return one row per id.

    Columns: ``id``, ``url``, ``path`` (absolute path of the image file, None when unavailable), ``ok``,
    ``error`` (why it is unavailable, "" when ok), ``cached`` (True when the file was already there),
    ``placeholder`` (True when the host redirected to its "photo unavailable" image: missing, not an image).
    Existing image files named after the id are used without a download, so ``dest_dir`` may hold images a
    user already has.  Ids whose earlier failure was permanent (HTTP 4xx, not an image) are skipped unless
    ``retry_failed``.  When the first ``offline_after`` attempts all fail without reaching any server, the
    network is taken as unreachable: the remaining ids are not tried; if no requested image is available at
    all an :class:`OfflineError` says which folder needs which files, otherwise a warning counts what is missing.
    """
    dest = Path(dest_dir).expanduser().resolve()
    with writing(dest):
        dest.mkdir(parents=True, exist_ok=True)
        for stale in dest.glob("*.part"):
            stale.unlink(missing_ok=True)
    urls = {str(k): str(v) for k, v in urls.items()}
    local = find_local_images(dest)
    previous = _read_manifest(dest).set_index("id")
    rows: dict[str, dict] = {}
    todo: list[str] = []
    for image_id, url in urls.items():
        stem = image_filename(image_id)
        if stem in local:
            rows[image_id] = dict(id=image_id, url=url, path=str(local[stem]), ok=True, error="", permanent=False,
                                  cached=True)
        elif (not retry_failed and image_id in previous.index
              and str(previous.at[image_id, "permanent"]) == "True" and previous.at[image_id, "url"] == url):
            rows[image_id] = dict(id=image_id, url=url, path=None, ok=False, error=previous.at[image_id, "error"],
                                  permanent=True, cached=True)
        else:
            todo.append(image_id)

    lock = threading.Lock()
    stats = {"attempted": 0, "reached": 0}
    offline = threading.Event()

    def fetch_one(image_id: str) -> dict:
        url = urls[image_id]
        row = dict(id=image_id, url=url, path=None, ok=False, error="", permanent=False, cached=False,
                   unknown_host=False, redirect="")
        if offline.is_set():
            row["error"] = "not attempted: network unreachable"
            return row
        data: bytes | None
        try:
            data, final_url = _get_with_retries(url, timeout, retries, backoff, max_bytes)
            reached = True
            row["redirect"] = final_url if final_url != url else ""
            if placeholder_target(url, final_url):
                data = None
                row.update(error=f"{PLACEHOLDER}: redirected to {final_url}", permanent=True)
        except _Failure as failure:
            data, reached = None, failure.reached_server
            row.update(error=str(failure), permanent=failure.permanent, unknown_host=failure.unknown_host)
        if data is not None:
            try:
                ext = check_image(data)
            except ValueError as err:
                row.update(error=str(err), permanent=True)
            else:
                path = dest / f"{image_filename(image_id)}{ext}"
                _atomic_write(path, data)
                row.update(path=str(path), ok=True)
        with lock:
            stats["attempted"] += 1
            stats["reached"] += reached
            if stats["attempted"] >= offline_after and stats["reached"] == 0:
                offline.set()
        return row

    def flush() -> None:
        if stats["reached"]:  # online: a host that does not resolve is gone, not worth retrying on every run
            for row in rows.values():
                if row.get("unknown_host"):
                    row["permanent"] = True
        _write_manifest(dest, rows)  # the manifest's columns of each row

    if todo:
        bar = tqdm(total=len(todo), desc=desc or f"images -> {dest.name}", unit="img", disable=not progress)
        done_since_flush = 0
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            futures = [pool.submit(fetch_one, i) for i in todo]
            for future in as_completed(futures):
                row = future.result()
                rows[row["id"]] = row
                bar.update(1)
                done_since_flush += 1
                if done_since_flush >= 500:
                    flush()
                    done_since_flush = 0
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            bar.close()
            drop_shared_redirects(rows)
            flush()  # also when interrupted
    else:
        flush()

    table = pd.DataFrame([rows[i] for i in urls], columns=["id", "url", "path", "ok", "error", "permanent", "cached"])
    table = table.drop(columns="permanent")
    table["placeholder"] = table["error"].astype(str).str.startswith(PLACEHOLDER)
    nothing_reached = stats["attempted"] > 0 and stats["reached"] == 0
    table["path"] = pd.Series([p if isinstance(p, str) else None for p in table["path"]], dtype=object)
    n_missing = int((~table["ok"]).sum())
    if offline.is_set() or (nothing_reached and not table["ok"].any()):
        message = (f"{n_missing} of {len(table)} images are missing from {dest} and no image server could be "
                   f"reached (network offline?). Put the image files there named <image id>.<ext> (e.g. "
                   f"{image_filename(next(iter(urls)))}.jpg), or re-run with network access; "
                   f"{dest / MANIFEST} lists every id, its URL and why it is missing.")
        if not table["ok"].any():
            raise OfflineError(message)
        warnings.warn(message, stacklevel=2)
    return table


def fetch_file(url: str, dest: str | os.PathLike, timeout: float = 60, retries: int = 3, *, backoff: float = 1.0,
               max_bytes: int = 2_000_000_000, what: str | None = None) -> Path:
    """Download ``url`` to ``dest`` unless it is there (temporary name, then renamed); check it against the SHA-256
    recorded for ``url`` (:func:`~probekit.checksums.verify`; a failing download is not kept).  Raises
    :class:`DownloadError` naming the file, the URL, the reason and how to provide the file by hand."""
    dest, what = Path(dest).expanduser(), what or Path(dest).name
    if dest.exists() and dest.stat().st_size > 0:
        return verify_file(dest, url, what)   # on every use, not only after a fetch
    with writing(dest.parent):
        dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        data, _ = _get_with_retries(url, timeout, retries, backoff, max_bytes)
    except _Failure as failure:
        cls = DownloadError if failure.reached_server else OfflineError
        raise cls(f"could not download {what} from {url}: {failure}. Download it by hand "
                  f"(e.g. `curl -L -o {dest} {url}`) and place it at {dest}, or pass a data_dir whose "
                  f"folder already holds it.") from None
    verify(data, url, f"downloaded, not kept at {dest}", what)
    _atomic_write(dest, data)
    return dest
