"""The fine-tune cache: a fine-tuned CLIP per (base checkpoint, settings, training triplets), trained only when
missing, with its alpha-patched models beside it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pandas as pd

from probekit.studies.finetune import FinetuneConfig, finetune_clip


def fingerprint(triplets: pd.DataFrame) -> str:
    cols = ["image", "caption", "negative_caption", "negative_image"]
    blob = pd.util.hash_pandas_object(triplets[cols].astype(str), index=False).to_numpy().tobytes()
    return hashlib.sha256(blob).hexdigest()[:12]


def base_identity(base) -> str:
    """What a fine-tune starts from: a registry name's resolved checkpoint (``PROBEKIT_TOY_CHECKPOINTS`` included)
    or the path / hub id, with a hash of its files when it is local, so that a retrained or swapped base never
    reuses another base's fine-tune."""
    from probekit.cache import model_fingerprint
    from probekit.scorers import model_spec, resolve_source

    return model_fingerprint(str(base), resolve_source(model_spec(str(base)).source))


def run_key(base, config: FinetuneConfig, triplets: pd.DataFrame) -> str:
    text = json.dumps({"base": base_identity(base), "config": dataclasses.asdict(config),
                       "data": fingerprint(triplets)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def finetuned_cached(base, triplets: pd.DataFrame, config: FinetuneConfig, cache_root, device: str = "cpu",
                     progress: bool = True) -> Path:
    """The fine-tuned model directory for these settings, training it only when not cached."""
    out = Path(cache_root) / run_key(base, config, triplets) / "finetuned"
    if (out / "finetune.json").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    return finetune_clip(base, triplets, config, out, device=device, progress=progress)


def patch_path(finetuned: Path, alpha: float) -> Path:
    return Path(finetuned).parent / f"alpha-{alpha:.3f}"


def _record(finetuned) -> dict:
    return json.loads((Path(finetuned) / "finetune.json").read_text())


def training_history(finetuned) -> pd.DataFrame:
    return pd.DataFrame(_record(finetuned)["history"])


def trained_config(finetuned) -> dict:
    """The settings a fine-tuned model was trained with (:class:`FinetuneConfig` as a dict)."""
    return _record(finetuned)["config"]
