"""``probekit check``'s look at a model: resolved the way ``run`` will load it, offline, without loading weights.

A checkpoint directory (given, or a hub id's snapshot in the local hub cache) must hold its config, weights and, for
a family that reads them, its tokenizer and image processor, and its ``model_type`` must be one its family scores;
hub and open_clip weights must be in the local cache, or else the run downloads them (a note), which offline it
cannot (a problem).  Offline is decided once: ``HF_HUB_OFFLINE`` set, or the hub unreachable
within a second (:func:`probekit.environ.offline`).
"""

from __future__ import annotations

import os
from pathlib import Path

from probekit.environ import offline
from probekit.scorers.registry import FAMILIES

WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")
TOKENIZER = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer_config.json")
PROCESSOR = ("preprocessor_config.json", "processor_config.json")
#: families that read no image processor
TEXT_ONLY = {"bert", "blind"}
#: (family given, family of the config's model_type) pairs that load fine: a blind baseline reads a text MLM
COMPATIBLE = {("blind", "bert")}


def _why_offline() -> str:
    return "HF_HUB_OFFLINE is set" if os.environ.get("HF_HUB_OFFLINE") else "the hub cannot be reached"


def directory_problem(name: str, family: str, path: Path) -> str | None:
    """What a checkpoint directory lacks for ``family`` (config, weights, tokenizer, image processor, a matching
    ``model_type``), one line; None when it is complete."""
    from probekit.scorers.registry import FAMILIES
    from probekit.scorers.resolve import CONFIG, _read_json, model_types

    if not (path / CONFIG).is_file():
        return f"{name}: {path} holds no {CONFIG}; fix: point at the directory save_pretrained wrote"
    model_type = _read_json(name, path / CONFIG).get("model_type")
    known = model_types().get(model_type) if model_type is not None else None
    if family in FAMILIES and known != family and (family, known) not in COMPATIBLE:
        return (f"{name}: family {family} given, but {path / CONFIG} has model_type {model_type!r} "
                f"({'family ' + known if known else 'no probekit family'}); fix: "
                f"{known + ':' + str(path) if known else 'name a family that scores it'}")
    needs = {"weights": WEIGHTS, "tokenizer": TOKENIZER, "image processor": () if family in TEXT_ONLY else PROCESSOR}
    lacking = [what for what, names in needs.items() if names and not any((path / n).is_file() for n in names)]
    if lacking:
        return (f"{name}: {path} has no {' and no '.join(lacking)} (none of "
                f"{', '.join(n for what in lacking for n in needs[what])}); fix: save them there too "
                f"(model.save_pretrained and the processor's save_pretrained into one directory)")
    return None


def _hub_cached(repo: str, filename: str = "config.json") -> Path | None:
    from huggingface_hub import try_to_load_from_cache

    # the cache as the environment names it now (huggingface_hub reads it once, at import; a profile may set it later)
    cache = os.environ.get("HF_HUB_CACHE") or (os.environ.get("HF_HOME") and os.path.join(os.environ["HF_HOME"], "hub"))
    hit = try_to_load_from_cache(repo, filename, cache_dir=cache or None)
    return Path(hit) if isinstance(hit, str) else None


def _download(name: str, what: str) -> tuple[str | None, str | None]:
    """(problem, note) of weights not in the local cache: a download at run time, impossible offline."""
    if offline():
        return (f"{name}: {what} is not in the local cache and {_why_offline()}, so the run cannot download it; "
                f"fix: run once where the hub is reachable (or `huggingface-cli download`), or copy the cache "
                f"(HF_HOME) here", None)
    return None, f"{name}: {what} is not in the local cache; downloaded at run time (size: as the hub lists it)"


def _open_clip(name: str, source: str) -> tuple[str | None, str | None]:
    from probekit.scorers.resolve import open_clip_download

    arch, _, tag = source.partition(":")
    if source.startswith("hf-hub:") or os.path.exists(tag) or not tag:
        repo = source[len("hf-hub:"):] if source.startswith("hf-hub:") else None
        return (_download(name, f"hub repository {repo}") if repo and not _hub_cached(repo, "open_clip_config.json")
                else (None, None))
    repo, filename = open_clip_download(arch, tag)
    if repo is not None:
        if _hub_cached(repo, filename) or _hub_cached(repo, "open_clip_model.safetensors"):
            return None, None
        return _download(name, f"open_clip weights {repo}/{filename}")
    if (Path.home() / ".cache" / "clip" / os.path.basename(filename)).is_file():
        return None, None
    return _download(name, f"open_clip weights {filename}")


def model_findings(name: str) -> tuple[str | None, str | None]:
    """(problem, note) of one model a chapter names, resolved as ``run`` loads it (already a valid name)."""
    from probekit.scorers import model_spec, resolve_source
    from probekit.scorers.vilt_original import HEAD_FILE, PROCESSOR_SOURCE, models_dir

    spec = model_spec(name)
    if spec.source.startswith("toy:"):
        return None, None
    if spec.family not in FAMILIES:   # a plugin family loads its checkpoints its own way: its adapter checks them
        return None, None
    if spec.family == "open_clip":
        if Path(spec.source).is_dir():
            return None, None
        return _open_clip(name, spec.source)
    if spec.family == "vilt-itm":   # the authors' checkpoint (not from the hub), converted with a hub processor
        if "://" not in spec.source or (models_dir() / "vilt_200k_mlm_itm-hf" / HEAD_FILE).is_file():
            return None, None
        cached = any(_hub_cached(PROCESSOR_SOURCE, f) for f in ("preprocessor_config.json", "processor_config.json"))
        if not cached and offline():
            return _download(name, f"{PROCESSOR_SOURCE}'s processor (to convert ViLT's checkpoint with)")
        return None, (f"{name}: ViLT's checkpoint {spec.source} is downloaded and converted at run time "
                      f"(not verifiable: no known hash)")
    path = Path(resolve_source(spec.source)).expanduser()
    if path.is_dir():
        return directory_problem(name, spec.family, path), None
    config = _hub_cached(spec.source)
    if config is None:
        return _download(name, f"hub model {spec.source}")
    return directory_problem(name, spec.family, config.parent), None
