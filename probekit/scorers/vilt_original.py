"""ViLT's pretrained checkpoint in its authors' layout -> a Hugging Face ``ViltModel`` plus the 2-way ITM head.

The ITM head the SVO-Probes and predicate–noun papers threshold is ``itm_score`` of ViLT's pretrained checkpoint
``vilt_200k_mlm_itm.ckpt`` (the GitHub release of dandelin/ViLT); no Hugging Face ViLT class keeps it
(``ViltForMaskedLM`` keeps only the MLM head, ``ViltForImageAndTextRetrieval`` is a retrieval fine-tune with one
rank logit).  :func:`converted` downloads the checkpoint once (an http(s) or file:// URL, or a local path), maps
its weights (:func:`hf_weights`) and caches the converted directory (``$PROBEKIT_MODELS`` or
``~/.cache/probekit/models``): ``save_pretrained`` of the ``ViltModel``, the ITM head in ``itm_head.safetensors``,
and the tokenizer and image processor (by default those of ``dandelin/vilt-b32-mlm``: bert-base-uncased with 40
text positions, shorter side 384, the preprocessing the authors' checkpoint was trained with).

The authors' key layout (``text_embeddings`` a BERT embedding, ``token_type_embeddings`` the modality embedding,
``transformer`` a timm ViT, ``pooler.dense``, ``itm_score.fc``) maps onto ``ViltModel`` as in
:data:`TOP_LEVEL` / :data:`BLOCK`; timm's fused ``attn.qkv`` (rows: query, key, value) is split in three.  The
mapped dict is loaded with ``strict=True``, so every parameter of the ``ViltModel`` built from the checkpoint's
shapes is filled and every shape checked.  Left out: the MLM head, timm's classifier and buffers.  The image
patches are all used (``max_image_length=-1``, deterministic, as the Hugging Face ViLT configurations do; the
authors sampled 200 patches only in training) and one LayerNorm epsilon (1e-12) serves every layer, as there.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import urllib.parse
import urllib.request
import uuid
import warnings
from pathlib import Path

import torch

from probekit.checksums import VILT_ITM_URL, verify_file
from probekit.environ import mirrored

PROCESSOR_SOURCE = "dandelin/vilt-b32-mlm"
HEAD_FILE = "itm_head.safetensors"
#: authors' prefix -> ViltModel prefix, outside the transformer blocks
TOP_LEVEL = {"text_embeddings.": "embeddings.text_embeddings.",
             "token_type_embeddings.": "embeddings.token_type_embeddings.",
             "transformer.patch_embed.proj.": "embeddings.patch_embeddings.projection.",
             "transformer.cls_token": "embeddings.cls_token", "transformer.pos_embed": "embeddings.position_embeddings",
             "transformer.norm.": "layernorm.", "pooler.dense.": "pooler.dense."}
#: inside ``transformer.blocks.N.`` -> inside ``encoder.layer.N.`` (``attn.qkv`` is split, see hf_weights)
BLOCK = {"norm1.": "layernorm_before.", "attn.proj.": "attention.output.dense.", "norm2.": "layernorm_after.",
         "mlp.fc1.": "intermediate.dense.", "mlp.fc2.": "output.dense."}
#: weights of the checkpoint that the ITM scorer does not use
UNUSED = ("mlm_score.", "transformer.head.", "transformer.pre_logits.")


def models_dir() -> Path:
    return Path(os.environ.get("PROBEKIT_MODELS") or Path.home() / ".cache" / "probekit" / "models").expanduser()


def _renamed(key: str, table: dict, into: str = "") -> str | None:
    prefix = next((p for p in table if key.startswith(p)), None)
    return None if prefix is None else into + table[prefix] + key[len(prefix):]


def hf_weights(state: dict) -> tuple[dict, dict, list[str]]:
    """(ViltModel state dict, ITM head {"weight", "bias"}, keys left unmapped) of an authors'-layout state dict."""
    model, head, unmapped = {}, {}, []
    for key, value in state.items():
        if key.startswith("itm_score.fc."):
            head[key.rsplit(".", 1)[1]] = value
            continue
        if key.endswith("position_ids") or key.startswith(UNUSED):
            continue
        if key.startswith("transformer.blocks."):
            number, rest = key[len("transformer.blocks."):].split(".", 1)
            layer = f"encoder.layer.{number}."
            if rest.startswith("attn.qkv."):  # timm's fused projection: rows of query, then key, then value
                for part, chunk in zip(("query", "key", "value"), value.chunk(3, dim=0)):
                    model[f"{layer}attention.attention.{part}.{rest.rsplit('.', 1)[1]}"] = chunk.clone()
                continue
            new = _renamed(rest, BLOCK, layer)
        else:
            new = _renamed(key, TOP_LEVEL)
        if new is None:
            unmapped.append(key)
        else:
            model[new] = value
    return model, head, unmapped


def vilt_config(state: dict, num_heads: int | None = None):
    """The ``ViltConfig`` of an authors'-layout state dict, read from its shapes (heads: ``num_heads``, else one
    per 64 hidden units, ViLT-B/32's 12)."""
    from transformers import ViltConfig

    words, patches = state["text_embeddings.word_embeddings.weight"], state["transformer.patch_embed.proj.weight"]
    hidden, patch = words.shape[1], patches.shape[-1]
    grid = round((state["transformer.pos_embed"].shape[1] - 1) ** 0.5)
    layers = len({k.split(".")[2] for k in state if k.startswith("transformer.blocks.")})
    return ViltConfig(vocab_size=words.shape[0], hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=num_heads or max(1, hidden // 64),
                      intermediate_size=state["transformer.blocks.0.mlp.fc1.weight"].shape[0],
                      max_position_embeddings=state["text_embeddings.position_embeddings.weight"].shape[0],
                      type_vocab_size=state["text_embeddings.token_type_embeddings.weight"].shape[0],
                      modality_type_vocab_size=state["token_type_embeddings.weight"].shape[0],
                      image_size=grid * patch, patch_size=patch, num_channels=patches.shape[1],
                      max_image_length=-1, layer_norm_eps=1e-12, architectures=["ViltModel"])


def load_checkpoint(path: str | os.PathLike) -> tuple[dict, dict]:
    """(state dict, training config) of a PyTorch Lightning checkpoint ``{"state_dict": ..., "hyper_parameters"}``.

    Tensors only when the file allows it; the authors' file pickles their training config too, so it is read in
    full (it is the one release file named by the registry, or a file the user chose)."""
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    state = ckpt.get("state_dict", ckpt)
    config = (ckpt.get("hyper_parameters") or {}).get("config") or {}
    return state, dict(config)


def convert(checkpoint: str | os.PathLike, out_dir: str | os.PathLike, processor_source: str = PROCESSOR_SOURCE):
    """Write the converted directory for an authors'-layout checkpoint file; returns its path."""
    from safetensors.torch import save_file
    from transformers import AutoImageProcessor, AutoTokenizer, ViltModel

    state, train_config = load_checkpoint(checkpoint)
    weights, head, unmapped = hf_weights(state)
    if unmapped:
        warnings.warn(f"probekit: {checkpoint}: {len(unmapped)} weight(s) not used by the ITM scorer, e.g. "
                      f"{unmapped[:3]}")
    if set(head) != {"weight", "bias"} or head["weight"].shape[0] != 2:
        raise ValueError(f"{checkpoint} has no 2-way itm_score.fc head (found {sorted(head)}): not ViLT's "
                         f"pretrained MLM+ITM checkpoint")
    model = ViltModel(vilt_config(state, train_config.get("num_heads")), add_pooling_layer=True)
    model.load_state_dict(weights, strict=True)  # every parameter filled, every shape checked
    out = Path(out_dir)
    tmp = out.with_name(f"{out.name}.{uuid.uuid4().hex[:8]}.part")
    model.save_pretrained(tmp)
    save_file({k: v.contiguous() for k, v in head.items()}, str(tmp / HEAD_FILE))
    AutoTokenizer.from_pretrained(processor_source).save_pretrained(tmp)
    AutoImageProcessor.from_pretrained(processor_source).save_pretrained(tmp)
    (tmp / "conversion.json").write_text(json.dumps({"checkpoint": str(checkpoint), "processors": processor_source,
                                                     "unmapped": unmapped}))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return out


def fetch_checkpoint(source: str, root: Path) -> Path:
    """A local path as it is; an http(s)/file URL downloaded once to ``root/<file name>`` and checked against its
    recorded hash (:mod:`probekit.checksums`) on every use."""
    if "://" not in source:
        return Path(source).expanduser()
    dest = root / Path(urllib.parse.urlsplit(source).path).name
    if not dest.exists():
        root.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f"{dest.name}.{uuid.uuid4().hex[:8]}.part")
        with urllib.request.urlopen(mirrored(source), timeout=60) as response, open(tmp, "wb") as f:
            shutil.copyfileobj(response, f)
        os.replace(tmp, dest)
    return verify_file(dest, source, "ViLT's checkpoint")


def converted(source: str = VILT_ITM_URL, root: str | os.PathLike | None = None,
              processor_source: str = PROCESSOR_SOURCE) -> Path:
    """The converted directory of ``source`` (a checkpoint URL or file, or an already converted directory),
    converting (and downloading) only the first time."""
    if Path(source).is_dir() and (Path(source) / HEAD_FILE).exists():
        return Path(source)
    root = Path(root).expanduser() if root is not None else models_dir()
    out = root / f"{Path(urllib.parse.urlsplit(source).path).stem}-hf"
    if not (out / HEAD_FILE).exists():
        convert(fetch_checkpoint(source, root), out, processor_source)
    return out


def load_itm_head(directory: str | os.PathLike, device=None) -> torch.nn.Linear:
    """The 2-way ITM head (logits: no match, match) saved by :func:`convert`."""
    from safetensors.torch import load_file

    weights = load_file(str(Path(directory) / HEAD_FILE))
    head = torch.nn.Linear(weights["weight"].shape[1], weights["weight"].shape[0])
    head.load_state_dict(weights)
    return head.eval().to(device) if device is not None else head.eval()
