"""Any model a chapter names, resolved to a :class:`~probekit.scorers.registry.ModelSpec` before any work.

A model is named by one of:

* a registry name (``toy-vilt``, ``clip-vit-b32``; ``probekit list``);
* a local checkpoint directory: its family is read from ``config.json``'s ``model_type`` (a transformers
  ``save_pretrained`` directory) or from ``open_clip_config.json`` (open_clip's local-dir layout), and a two-head
  family's heads from the config's ``architectures``;
* a hub id not in the registry (``my-org/my-vilt``): the same detection from its ``config.json`` (or
  ``open_clip_config.json``, loaded as ``hf-hub:``), fetched by huggingface_hub (honouring ``HF_HUB_OFFLINE``);
* ``FAMILY:SOURCE`` with an explicit family (``vilt:my-org/my-vilt``, ``blind:./my-bert``): no detection;
* open_clip's ``ARCH:TAG`` (``RN50:yfcc15m``) or ``ARCH:/path/to/weights.pt``.

Nothing here loads weights: a local directory resolves offline, so ``probekit check`` can answer in seconds.
Every failure is an :class:`UnknownModelError` of one line that names the input and the fix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from probekit.scorers.registry import FAMILIES, REGISTRY, ModelSpec, adapter, families, family_capabilities

CONFIG, OPEN_CLIP_CONFIG = "config.json", "open_clip_config.json"

#: a transformers config's ``model_type`` -> the family whose adapter scores it
MODEL_TYPES = {"clip": "clip", "siglip": "siglip", "vilt": "vilt", "blip": "blip", "bridgetower": "bridgetower",
               "flava": "flava", "bert": "bert", "owlvit": "owlvit"}

#: families whose ITM and MLM heads are separate model classes: capability -> class; a checkpoint whose config
#: lists some of these classes in ``architectures`` has only those heads
HEAD_CLASSES = {
    "vilt": {"match": "ViltForImageAndTextRetrieval", "fill_mask": "ViltForMaskedLM"},
    "bridgetower": {"match": "BridgeTowerForImageAndTextRetrieval", "fill_mask": "BridgeTowerForMaskedLM"},
}

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _forms() -> str:
    return (f"a registry name (probekit list), a checkpoint directory, a hub id, FAMILY:SOURCE (families: "
            f"{', '.join(families())}) or an open_clip ARCH:TAG")


class UnknownModelError(ValueError):
    """A model name that resolves to nothing: not in the registry, not a checkpoint directory, hub id,
    ``FAMILY:SOURCE`` or open_clip ``ARCH:TAG``."""


def capabilities_from_architectures(family: str, architectures) -> tuple[str, ...]:
    """The heads a checkpoint of ``family`` has: for a two-head family those whose class its config lists (all of
    the family's when it lists none of them); for any other family the family's own."""
    heads = HEAD_CLASSES.get(family)
    if heads:
        listed = tuple(cap for cap, cls in heads.items() if cls in (architectures or ()))
        if listed:
            return listed
    return family_capabilities(family)


def _error(name: str, why: str, fix: str) -> UnknownModelError:
    return UnknownModelError(f"model {name!r}: {why}; fix: {fix}")


def _spec(name: str, family: str, source: str, config: dict | None, how: str) -> ModelSpec:
    caps = capabilities_from_architectures(family, (config or {}).get("architectures"))
    return ModelSpec(name, family, source, caps, note=how)


def model_types() -> dict[str, str]:
    """``model_type`` -> family: :data:`MODEL_TYPES` and the ``model_types`` each plugin adapter declares."""
    from probekit.plugins import SCORERS, plugins
    plugged = {t: family for family in plugins(SCORERS) if family not in FAMILIES
               for t in adapter(family).model_types}
    return {**plugged, **MODEL_TYPES}


def _family_of_config(name: str, config: dict, where: str) -> str:
    model_type, known = config.get("model_type"), model_types()
    if model_type not in known:
        raise _error(name, f"{where} has model_type {model_type!r}, which no probekit family scores "
                           f"(known: {', '.join(known)})",
                     f"name the family explicitly, e.g. vilt:{name}, or add a family (README: Adding a model family)")
    return known[model_type]


def _read_json(name: str, path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise _error(name, f"{path} is not readable JSON ({' '.join(str(err).split())})",
                     "point at a directory written by save_pretrained") from None
    if not isinstance(data, dict):
        raise _error(name, f"{path} does not hold a JSON object", "point at a directory written by save_pretrained")
    return data


def _from_directory(name: str, path: Path) -> ModelSpec:
    has_hf, has_oc = (path / CONFIG).is_file(), (path / OPEN_CLIP_CONFIG).is_file()
    if has_hf and has_oc:
        family = _family_of_config(name, _read_json(name, path / CONFIG), str(path / CONFIG))
        raise _error(name, f"{path} is ambiguous: it holds both a transformers {CONFIG} ({family}) and an "
                           f"{OPEN_CLIP_CONFIG}", f"name the family, {family}:{name} or open_clip:{name}")
    if has_oc:
        return ModelSpec(name, "open_clip", str(path), family_capabilities("open_clip"),
                         note=f"open_clip local directory ({OPEN_CLIP_CONFIG})")
    if not has_hf:
        raise _error(name, f"{path} holds no {CONFIG} or {OPEN_CLIP_CONFIG}, so it is not a checkpoint directory",
                     "point at the directory save_pretrained wrote (the one with config.json)")
    config = _read_json(name, path / CONFIG)
    family = _family_of_config(name, config, str(path / CONFIG))
    return _spec(name, family, str(path), config, f"local checkpoint, family from {CONFIG} "
                                                  f"(model_type {config['model_type']!r})")


def _hub_file(repo: str, filename: str, revision: str | None = None) -> Path:
    """``filename`` of hub repository ``repo``: from the local cache only when offline (decided once,
    :func:`probekit.environ.offline`), so an offline hub id fails at once instead of after retries."""
    from huggingface_hub import hf_hub_download

    from probekit.environ import offline
    return Path(hf_hub_download(repo, filename, revision=revision, local_files_only=offline()))


def _from_hub(name: str) -> ModelSpec:
    from huggingface_hub.errors import EntryNotFoundError

    try:
        try:
            config = _read_json(name, _hub_file(name, CONFIG))
        except EntryNotFoundError:
            _hub_file(name, OPEN_CLIP_CONFIG)
            return ModelSpec(name, "open_clip", f"hf-hub:{name}", family_capabilities("open_clip"),
                             note=f"open_clip hub repository ({OPEN_CLIP_CONFIG})")
    except Exception as err:  # offline, no such repository, gated, no config: all one line
        if isinstance(err, UnknownModelError):
            raise
        why = " ".join(str(err).split()).split(". ")[0][:160]
        raise _error(name, f"not a registry name or local directory, and its config could not be read from the hub "
                           f"({type(err).__name__}: {why})",
                     f"check the hub id (offline, only ids in the local hub cache resolve), or name its family "
                     f"(FAMILY:{name}) or pass a downloaded directory; "
                     f"valid: {_forms()}") from None
    family = _family_of_config(name, config, f"{name}/{CONFIG}")
    return _spec(name, family, name, config, f"hub id, family from {CONFIG} (model_type {config['model_type']!r})")


def _open_clip(name: str, arch: str, rest: str) -> ModelSpec | None:
    """``ARCH:TAG`` or ``ARCH:/path/weights`` when ``arch`` is an open_clip architecture, else None."""
    try:
        import open_clip
    except ImportError:
        return None
    if arch not in open_clip.list_models():
        return None
    if os.sep in rest or Path(rest).suffix:
        if not Path(rest).expanduser().is_file():
            raise _error(name, f"open_clip weights file {rest} does not exist", "give the path of a weights file")
    else:
        tags = open_clip.list_pretrained_tags_by_model(arch)
        if rest not in tags:
            raise _error(name, f"open_clip has no pretrained tag {rest!r} for {arch}",
                         f"one of {', '.join(tags) or '(none: pass ARCH:/path/to/weights.pt)'}")
    return ModelSpec(name, "open_clip", name, family_capabilities("open_clip"), note="open_clip ARCH:TAG")


def open_clip_download(arch: str, tag: str) -> tuple[str | None, str]:
    """Where open_clip downloads ``ARCH:TAG``'s weights from: (hub repository, file name), or (None, URL)."""
    import open_clip

    cfg = open_clip.get_pretrained_cfg(arch, tag)
    if not cfg.get("hf_hub"):
        return None, cfg.get("url", "")
    repo, filename = cfg["hf_hub"].rstrip("/"), "open_clip_pytorch_model.bin"
    return tuple(repo.rsplit("/", 1)) if "/" in repo.split("/", 1)[1] else (repo, filename)


def model_spec(name: str) -> ModelSpec:
    """The registry entry of ``name``, or one resolved from its form (module docstring); raises
    :class:`UnknownModelError` (one line) when it resolves to nothing."""
    name = os.fspath(name)
    if name in REGISTRY:
        return REGISTRY[name]
    prefix, colon, rest = name.partition(":")
    if colon and prefix in families() and rest:
        path = Path(rest).expanduser()
        if rest.startswith((".", "/", "~")) and not path.exists():
            raise _error(name, "no such directory", "check the path")
        config = None
        if path.is_dir() and (path / CONFIG).is_file():
            config = _read_json(name, path / CONFIG)
        return _spec(name, prefix, str(path) if path.exists() else rest, config, f"family {prefix} given")
    path = Path(name).expanduser()
    if path.is_dir():
        return _from_directory(name, path)
    if colon and not re.match(r"^[A-Za-z]:[\\/]", name):
        spec = _open_clip(name, prefix, rest)
        if spec is not None:
            return spec
    if path.exists():
        raise _error(name, f"{path} is a file, not a checkpoint directory",
                     "point at the directory save_pretrained wrote (an open_clip weights file: ARCH:/path)")
    if name.startswith((".", "/", "~")) or os.sep in name and not HUB_ID.match(name):
        raise _error(name, "no such directory", "check the path")
    if HUB_ID.match(name):
        return _from_hub(name)
    import difflib
    near = difflib.get_close_matches(name, REGISTRY, n=3, cutoff=0.4)
    hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
    raise UnknownModelError(f"unknown model {name!r}{hint}; valid: {_forms()}; registered: {', '.join(REGISTRY)}")


def canonical(name: str) -> str:
    """``name`` with any local path in it made absolute (chapters run with the project root as working
    directory, not the caller's); registry names, hub ids and open_clip tags unchanged."""
    if name in REGISTRY:
        return name
    prefix, colon, rest = name.partition(":")
    if colon and rest and (prefix in families() or "/" in rest or os.sep in rest) and Path(rest).expanduser().exists():
        return f"{prefix}:{Path(rest).expanduser().resolve()}"
    path = Path(name).expanduser()
    return str(path.resolve()) if path.is_dir() else name
