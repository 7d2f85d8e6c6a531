"""The fine-tune cache: a fine-tuned CLIP per (base checkpoint, settings, training triplets), trained only when
missing, with its alpha-patched models beside it.  The toy chapter's own fine-tunes ship beside the zoo
(``<zoo>/finetuned/<key>``, written by ``probekit train-toy``): a key found there is copied into the cache instead
of trained.  The key holds the base's file hash, the settings and the triplets, so a shipped fine-tune is used
only for exactly the run that made it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from probekit.studies.conceptual.finetune import FinetuneConfig, finetune_clip


IMAGES = ["image", "negative_image"]
TRIPLETS = ["image", "caption", "negative_caption", "negative_image"]


def fingerprint(triplets: pd.DataFrame, columns: Sequence[str] = TRIPLETS, images: Sequence[str] = IMAGES) -> str:
    """The training triplets' identity: captions, and image paths relative to the folder that holds them all, so
    that the same data under another data folder (another user, another machine) has the same fingerprint (any
    table's: its ``columns``, of which ``images`` hold image paths)."""
    paths = [os.path.dirname(str(p)) for c in images for p in triplets[c].dropna()]
    top = os.path.commonpath(paths) if paths else ""
    table = triplets[list(columns)].astype(object).copy()
    for c in images:
        table[c] = [None if pd.isna(p) else os.path.relpath(str(p), top) if top else str(p) for p in table[c]]
    blob = pd.util.hash_pandas_object(table.astype(str), index=False).to_numpy().tobytes()
    return hashlib.sha256(blob).hexdigest()[:12]


def base_identity(base: str) -> str:
    """What a fine-tune starts from: a local checkpoint's (a registry name's resolved directory,
    ``PROBEKIT_TOY_CHECKPOINTS`` included) file names and bytes, so that the same weights in another checkout or
    another user's copy give the same key and a retrained or swapped base never reuses another base's fine-tune;
    for a hub id, its name and revision."""
    from probekit.cache import model_fingerprint
    from probekit.scorers import model_spec, resolve_source

    source = resolve_source(model_spec(str(base)).source)
    if not Path(source).is_dir():
        return model_fingerprint(str(base), source)
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(source).rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{base}-{digest.hexdigest()[:16]}"


def run_key(base: str, config: FinetuneConfig, triplets: pd.DataFrame) -> str:
    text = json.dumps({"base": base_identity(base), "config": dataclasses.asdict(config),
                       "data": fingerprint(triplets)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


SHIPPED = "finetuned"   # the folder beside the zoo's members that holds the chapter's fine-tunes


def shipped_roots() -> list[Path]:
    """Where shipped fine-tunes are looked for: a retrained zoo's (``$PROBEKIT_TOY_CHECKPOINTS``), then the
    package's."""
    from probekit.scorers.registry import TOY_CHECKPOINTS

    zoo = os.environ.get("PROBEKIT_TOY_CHECKPOINTS")
    return ([Path(zoo) / SHIPPED] if zoo else []) + [TOY_CHECKPOINTS / SHIPPED]


def finetuned_cached(base: str, triplets: pd.DataFrame, config: FinetuneConfig, cache_root: str | Path,
                     device: str = "cpu",
                     progress: bool = True) -> Path:
    """The fine-tuned model directory for these settings: cached, else copied from a shipped one with the same key,
    else trained."""
    key = run_key(base, config, triplets)
    out = Path(cache_root) / key / "finetuned"
    if (out / "finetune.json").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    shipped = next((r / key for r in shipped_roots() if (r / key / "finetune.json").is_file()), None)
    if shipped is not None:   # copied under a temporary name, then renamed: an interrupted copy leaves no model
        tmp = out.with_name(".finetuned.partial")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(shipped, tmp)
        os.replace(tmp, out)
        return out
    return finetune_clip(base, triplets, config, out, device=device, progress=progress)


#: beside the fine-tunes: each extra fine-tuning seed's sweep as numbers (:mod:`probekit.studies.conceptual.finetune_seeds`)
SEEDS = "seeds"


def ship(cache_root: str | Path, out: str | Path, seeds: Iterable[int] | None = None) -> list[Path]:
    """Copy every fine-tune under ``cache_root`` (``<base>/<key>/finetuned``) trained with a fine-tuning seed in
    ``seeds`` (None: every one) to ``out/finetuned/<key>``, where :func:`finetuned_cached` finds it, and every
    sweep kept as numbers (``<base>/seeds/<key>.parquet``) to ``out/finetuned/seeds``; the shipped folder then
    holds these only."""
    target = Path(out) / SHIPPED
    shutil.rmtree(target, ignore_errors=True)
    copied = []
    for tuned in sorted(Path(cache_root).glob("*/*/finetuned")):
        if (tuned / "finetune.json").is_file() and (seeds is None or trained_config(tuned)["seed"] in seeds):
            shutil.copytree(tuned, target / tuned.parent.name)
            copied.append(target / tuned.parent.name)
    for numbers in sorted(Path(cache_root).glob(f"*/{SEEDS}/*.parquet")):
        (target / SEEDS).mkdir(parents=True, exist_ok=True)
        copied.append(Path(shutil.copy(numbers, target / SEEDS / numbers.name)))
    return copied


def patch_path(finetuned: Path, alpha: float) -> Path:
    return Path(finetuned).parent / f"alpha-{alpha:.3f}"


def _record(finetuned: str | Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((Path(finetuned) / "finetune.json").read_text())
    return record


def training_history(finetuned: str | Path) -> pd.DataFrame:
    return pd.DataFrame(_record(finetuned)["history"])


def trained_config(finetuned: str | Path) -> dict[str, Any]:
    """The settings a fine-tuned model was trained with (:class:`FinetuneConfig` as a dict)."""
    config: dict[str, Any] = _record(finetuned)["config"]
    return config
