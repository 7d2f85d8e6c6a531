"""SVO-Probes (Hendricks & Nematzadeh 2021): the released ``svo_probes.csv`` and its web images.

Layout under ``data_dir``::

    svo-probes/svo_probes.csv          downloaded once from SVO_CSV_URL (or put there by hand)
    svo-probes/images/<image_id>.<ext> fetched by ``fetch_images`` (or images a user already has)
    svo-probes/images/manifest.csv     every image id, its URL, and why it is missing if it is

Many of the image URLs are dead, and some hosts redirect a removed photo to a "photo unavailable" placeholder
(counted as missing, :mod:`probekit.data.placeholders`); such images get a path of None and the chapter drops
every row that lacks its positive or its negative image, as the authors do, and counts them.
The paper's reported numbers are rows of ``probekit.papers.svo_probes``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from probekit.checksums import SVO_CSV_URL, verify_file
from probekit.data.download import OfflineError, fetch_file, fetch_images, find_local_images, image_filename

CSV_COLUMNS = ["sentence", "pos_triplet", "neg_triplet", "pos_image_id", "neg_image_id", "pos_url", "neg_url",
               "subj_neg", "verb_neg", "obj_neg"]
FLAG_COLUMNS = ["subj_neg", "verb_neg", "obj_neg"]
class SvoCsvError(ValueError):
    """A malformed ``svo_probes.csv``; the message names the file, the row and the column at fault."""


_BOOL = {"true": True, "false": False, "1": True, "0": False, "t": True, "f": False, "yes": True, "no": False}


def svo_dir(data_dir: str | os.PathLike) -> Path:
    return Path(data_dir).expanduser() / "svo-probes"


def verb_lemma(triplet: str) -> str:
    """Lemma of the verb of a ``"subject,verb,object"`` triplet (``"dogs,running,park"`` -> ``"run"``)."""
    from lemminflect import getLemma

    verb = split_triplet(triplet)[1].lower()
    lemmas = getLemma(verb, upos="VERB")
    return lemmas[0] if lemmas else verb


def split_triplet(triplet: str) -> list[str]:
    parts = [p.strip() for p in str(triplet).split(",")]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"triplet {triplet!r} is not of the form 'subject,verb,object'")
    return parts


def _as_bool(column: pd.Series, name: str, source: Path) -> pd.Series:
    if column.dtype == bool:
        return column
    mapped = column.astype(str).str.strip().str.lower().map(_BOOL)
    bad = column[mapped.isna()]
    if len(bad):
        raise SvoCsvError(f"{source}, row {bad.index[0]}, column {name!r}: must hold booleans (True/False); found "
                          f"{bad.iloc[0]!r} in {len(bad)} row(s)")
    return mapped.astype(bool)


def read_svo_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate ``svo_probes.csv``: required columns present, flags boolean, triplets well formed.

    Returns the CSV's rows with ``item_id`` ("svo-<index>", from the CSV's ``index`` column when it has one,
    else the row number), image ids as strings and the three flags as booleans.
    """
    path = Path(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:  # also UnicodeDecodeError
        raise SvoCsvError(f"{path}: not a readable CSV ({' '.join(str(err).split())[:200]}). Delete it to "
                          f"download {SVO_CSV_URL} again.") from None
    table = table.rename(columns={"Unnamed: 0": "index"}) if "Unnamed: 0" in table.columns else table
    missing = [c for c in CSV_COLUMNS if c not in table.columns]
    if missing:
        raise SvoCsvError(f"{path} lacks column(s) {missing}; an SVO-Probes CSV has {CSV_COLUMNS} "
                          f"(found {list(table.columns)}). Delete it to download {SVO_CSV_URL} again.")
    for name in ("sentence", "pos_image_id", "neg_image_id"):
        empty = table.index[table[name].str.strip() == ""]
        if len(empty):
            raise SvoCsvError(f"{path}, row {empty[0]}, column {name!r}: empty (in {len(empty)} row(s))")
    index = table["index"].astype(str) if "index" in table.columns else pd.Series(range(len(table))).astype(str)
    table.insert(0, "item_id", "svo-" + index.values)
    for name in FLAG_COLUMNS:
        table[name] = _as_bool(table[name], name, path)
    for name in ("pos_image_id", "neg_image_id"):
        table[name] = table[name].astype(str).str.strip().str.replace(r"\.0$", "", regex=True)
    for name in ("pos_triplet", "neg_triplet"):
        for i, value in enumerate(table[name]):
            try:
                split_triplet(value)
            except ValueError as err:
                raise SvoCsvError(f"{path}, row {i}, column {name!r}: {err}") from None
    return table


def image_urls(table: pd.DataFrame) -> dict[str, str]:
    """``{image_id: url}`` over the positive and negative images of ``table`` (first URL seen for an id)."""
    pairs = pd.concat([table[["pos_image_id", "pos_url"]].set_axis(["id", "url"], axis=1),
                       table[["neg_image_id", "neg_url"]].set_axis(["id", "url"], axis=1)])
    pairs = pairs[pairs["url"].notna() & (pairs["url"].astype(str).str.strip() != "")].drop_duplicates("id")
    return dict(zip(pairs["id"], pairs["url"]))


def load_svo_probes(data_dir: str | os.PathLike, limit: int | None = None, seed: int = 0, split: str = "eval", *,
                    download: bool = True, workers: int = 16, progress: bool = True) -> pd.DataFrame:
    """Item table of SVO-Probes in the ``verbs`` schema, one row per sentence x negative image.

    ``limit`` keeps that many rows drawn at random under ``seed`` (in CSV order), and only their images are
    fetched.  With ``download=False`` nothing is fetched: only images already in ``svo-probes/images`` are used.
    ``items.attrs`` holds ``n_images``, ``n_images_missing`` (placeholders included), ``n_images_placeholder``
    and ``image_manifest`` (the downloader's record).
    """
    if split != "eval":
        raise ValueError(f"SVO-Probes has only an evaluation split; got split={split!r} (use split='eval')")
    root = svo_dir(data_dir)
    csv_path = root / "svo_probes.csv"
    what = "the SVO-Probes annotations (svo_probes.csv)"
    if download:
        fetch_file(SVO_CSV_URL, csv_path, what=what)   # checked against its recorded hash, cached or fetched
    elif not csv_path.exists():
        raise FileNotFoundError(f"{csv_path} is missing; download {SVO_CSV_URL} there")
    else:
        verify_file(csv_path, SVO_CSV_URL, what)
    table = read_svo_csv(csv_path)
    if limit is not None and limit < len(table):
        keep = np.sort(np.random.default_rng(seed).choice(len(table), size=limit, replace=False))
        table = table.iloc[keep].reset_index(drop=True)

    images_dir = root / "images"
    urls = image_urls(table)
    if download:
        try:
            fetched = fetch_images(urls, images_dir, workers=workers, progress=progress, desc="SVO-Probes images")
        except OfflineError as err:
            raise OfflineError(f"{err} To use SVO-Probes images you already have, place them in {images_dir} "
                               f"or pass data_dir=<folder> whose svo-probes/images holds them.") from None
        paths = {i: (p if isinstance(p, str) else None) for i, p in zip(fetched["id"], fetched["path"])}
        placeholders = int(fetched["placeholder"].sum())
    else:
        local = find_local_images(images_dir)
        paths = {i: (str(local[image_filename(i)]) if image_filename(i) in local else None) for i in urls}
        placeholders = 0

    items = table[["item_id", "sentence", "pos_triplet", "neg_triplet", "pos_image_id", "neg_image_id",
                   "subj_neg", "verb_neg", "obj_neg"]].copy()
    items["pos_image"] = pd.Series([paths.get(i) for i in items["pos_image_id"]], index=items.index, dtype=object)
    items["neg_image"] = pd.Series([paths.get(i) for i in items["neg_image_id"]], index=items.index, dtype=object)
    items["verb"] = [verb_lemma(t) for t in items["pos_triplet"]]
    all_ids = set(items["pos_image_id"]) | set(items["neg_image_id"])
    items.attrs.update(n_images=len(all_ids), n_images_missing=sum(paths.get(i) is None for i in all_ids),
                       n_images_placeholder=placeholders, image_manifest=str(images_dir / "manifest.csv"))
    return items.reset_index(drop=True)

