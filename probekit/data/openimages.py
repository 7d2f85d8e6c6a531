"""Open Images photos by id and split: found in a local copy, or downloaded once from the public bucket and cached.

A local copy is searched first, laid out either flat (``<dir>/<id>.jpg``) or by split (``<dir>/<split>/<id>.jpg``);
the directories searched are ``$PROBEKIT_OPENIMAGES_DIR`` (an existing Open Images copy of the user's) and the
download cache ``<data_dir>/openimages``.  Only what is in neither is fetched, with the shared downloader
(:func:`probekit.data.download.fetch_images`), into ``<data_dir>/openimages/<split>/``, so an interrupted run
resumes with what it already has.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pandas as pd

URL_PATTERN = "https://s3.amazonaws.com/open-images-dataset/{split}/{image_id}.jpg"
SPLITS = ("train", "validation", "test")
ENV_DIR = "PROBEKIT_OPENIMAGES_DIR"


def image_url(image_id: str, split: str) -> str:
    """The public bucket's address of one Open Images photo."""
    if split not in SPLITS:
        raise ValueError(f"unknown Open Images split {split!r} for image {image_id!r}; valid: {', '.join(SPLITS)}")
    return URL_PATTERN.format(split=split, image_id=image_id)


def cache_dir(data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / "openimages"


def _local_roots(data_dir: Path, local_dir: str | os.PathLike | None) -> list[Path]:
    roots = [Path(local_dir)] if local_dir else []
    if os.environ.get(ENV_DIR):
        roots.append(Path(os.environ[ENV_DIR]))
    roots.append(cache_dir(data_dir))
    return roots


def find_local(image_id: str, split: str, roots: Iterable[Path]) -> Path | None:
    """The first existing non-empty ``<root>/<split>/<id>.jpg`` or ``<root>/<id>.jpg``."""
    for root in roots:
        for candidate in (root / split / f"{image_id}.jpg", root / f"{image_id}.jpg"):
            if candidate.is_file() and candidate.stat().st_size > 0:
                return candidate.resolve()
    return None


def open_images(image_ids: Iterable[str], splits: Iterable[str], data_dir: str | os.PathLike, *,
                local_dir: str | os.PathLike | None = None, download: bool = True,
                progress: bool = True) -> pd.DataFrame:
    """Paths of Open Images photos, one row per unique ``(image_id, split)``.

    Returns a DataFrame with columns image_id, split, url, path (absolute str, or None when the photo is neither
    on disk nor downloadable) and error (why not, else None).  With ``download=False`` nothing is fetched and
    missing photos are reported as such.
    """
    data_dir = Path(data_dir)
    wanted = pd.DataFrame({"image_id": list(image_ids), "split": list(splits)}).drop_duplicates(ignore_index=True)
    wanted["url"] = [image_url(i, s) for i, s in zip(wanted["image_id"], wanted["split"])]
    roots = _local_roots(data_dir, local_dir)
    found = [find_local(i, s, roots) for i, s in zip(wanted["image_id"], wanted["split"])]
    wanted["path"] = [str(p) if p else None for p in found]
    wanted["error"] = [None if p else "not on disk" for p in found]
    missing = wanted["path"].isna()
    if missing.any() and download:
        from probekit.data.download import fetch_images

        for split, todo in wanted[missing].groupby("split"):
            got = fetch_images(dict(zip(todo["image_id"], todo["url"])), cache_dir(data_dir) / split,
                               progress=progress, desc=f"Open Images {split}").set_index("id")
            for row, image_id in zip(todo.index, todo["image_id"]):
                hit = got.loc[image_id]
                wanted.at[row, "path"] = str(hit["path"]) if bool(hit["ok"]) else None
                wanted.at[row, "error"] = None if bool(hit["ok"]) else str(hit["error"])
    return wanted
