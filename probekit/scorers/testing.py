"""Tiny random models of every scorer family, built from configs and saved like a hub checkpoint (for tests).

``save_tiny(family, directory)`` writes a ``save_pretrained`` directory (model, word-level tokenizer, image
processor) that ``load_scorer(directory, family=family)`` loads through the same code path as a hub id; for
open_clip it writes a local-dir checkpoint (``open_clip_config.json`` + weights).  Offline, seconds on a CPU.
Any test in the project may use it to get a real (if untrained) model of a family.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

WORDS = ("a an the dog cat man woman child horse bird ball car tree red blue green big small striped holding "
         "riding wearing sitting jumping on in above under with park beach street kitchen and is are of .").split()
IMAGE = 32
PATCH = 16
HIDDEN = 32
#: a tiny model's transformer layers (every tower); ``save_tiny(..., dims=...)`` builds larger ones
TINY = dict(hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)


def word_tokenizer(mask_token: str = "[MASK]", max_length: int = 24, words=WORDS):
    """A PreTrainedTokenizerFast over ``words`` (default WORDS) with BERT-style special tokens: a word in ``words``
    is one token; one that is not is [UNK], unless ``words`` holds WordPiece continuations ("##ing", "##s") that
    spell it, as BERT splits a rare word ("throwing" -> "throw", "##ing")."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", mask_token]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(specials + list(words)))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.decoder = decoders.WordPiece(cleanup=False)
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token=mask_token, model_max_length=max_length)


def save_tiny(family: str, directory: str | Path, seed: int = 0, *, image: int = IMAGE, patch: int | None = None,
              processor: dict | None = None, words=WORDS, dims: dict | None = None) -> Path:
    """Build a tiny random model of ``family`` and save it (with tokenizer and image processor) to ``directory``.

    ``image`` and ``patch`` (default 16; OWL-ViT 8) size its vision tower and image processor, ``processor``
    overrides image processor settings (e.g. a hub checkpoint's ``image_mean``, ``size_divisor``), ``words`` is
    the word-level tokenizer's vocabulary (open_clip and OWL-ViT have their own), ``dims`` the width, depth, heads
    and MLP of every transformer (default :data:`TINY`; e.g. ViT-B's for a full-size stand-in: timing, not scores)."""
    import transformers as T

    dims = {**TINY, **(dims or {})}
    H = dims["hidden_size"]

    def _small(**kw):
        return {**dims, **kw}

    torch.manual_seed(seed)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    patch = patch or (8 if family == "owlvit" else PATCH)
    if family == "open_clip":
        return _save_open_clip(out)
    if family == "owlvit":
        return _save_owlvit(out, image, patch, processor or {}, dims)
    tok = word_tokenizer("<mask>" if family == "bridgetower" else "[MASK]", words=words)
    vocab = len(tok)
    text = _small(vocab_size=vocab, max_position_embeddings=32, pad_token_id=0)
    vision = _small(image_size=image, patch_size=patch)
    # each family builds its own config, model and processor classes: one name holds any of them
    cfg: Any
    itm: Any
    mlm: Any
    models: list[T.PreTrainedModel] = []
    proc: tuple[Any, dict[str, Any]] | None = None
    if family in ("clip", "siglip"):
        cls, tcfg, vcfg, ccls = ((T.CLIPModel, T.CLIPTextConfig, T.CLIPVisionConfig, T.CLIPConfig) if family == "clip"
                                 else (T.SiglipModel, T.SiglipTextConfig, T.SiglipVisionConfig, T.SiglipConfig))
        proj = {"projection_dim": H} if family == "clip" else {}
        tkw, vkw = dict(text, eos_token_id=3, bos_token_id=2, **proj), dict(vision, **proj)
        cfg = ccls(text_config=tcfg(**tkw).to_dict(), vision_config=vcfg(**vkw).to_dict())
        models = [cls(cfg)]
        proc = (T.CLIPImageProcessor, dict(size={"shortest_edge": image}, crop_size={"height": image, "width": image})
                ) if family == "clip" else (T.SiglipImageProcessor, dict(size={"height": image, "width": image}))
    elif family == "vilt":
        cfg = T.ViltConfig(**_small(vocab_size=vocab, max_position_embeddings=32, image_size=image, patch_size=patch,
                                    max_image_length=-1, num_images=-1, tie_word_embeddings=False))
        itm = T.ViltForImageAndTextRetrieval(cfg)
        mlm = T.ViltForMaskedLM(cfg)
        mlm.vilt = itm.vilt  # one backbone with both heads, as the toy checkpoint has
        models = [itm, mlm]
        proc = T.ViltImageProcessor, dict(size={"shortest_edge": image}, size_divisor=patch)
    elif family == "blip":
        cfg = T.BlipConfig(text_config=_small(vocab_size=vocab, max_position_embeddings=32, pad_token_id=0,
                                              encoder_hidden_size=H, bos_token_id=2, sep_token_id=3),
                           vision_config=_small(image_size=image, patch_size=patch), projection_dim=H,
                           image_text_hidden_size=H)
        models = [T.BlipForImageTextRetrieval(cfg)]
        proc = T.BlipImageProcessor, dict(size={"height": image, "width": image})
    elif family == "bridgetower":
        cfg = T.BridgeTowerConfig(text_config=dict(text, max_position_embeddings=34),
                                  vision_config=dict(hidden_size=max(H, 64), patch_size=patch, image_size=image,
                                                     num_hidden_layers=dims["num_hidden_layers"]),
                                  hidden_size=H, num_hidden_layers=dims["num_hidden_layers"],
                                  num_attention_heads=dims["num_attention_heads"],
                                  share_cross_modal_transformer_layers=True, tie_word_embeddings=False)
        itm = T.BridgeTowerForImageAndTextRetrieval(cfg)
        mlm = T.BridgeTowerForMaskedLM(cfg)
        mlm.bridgetower = itm.bridgetower
        models = [itm, mlm]
        proc = T.BridgeTowerImageProcessor, dict(size={"shortest_edge": image}, crop_size={"shortest_edge": image},
                                                 size_divisor=patch)
    elif family == "flava":
        cfg = T.FlavaConfig(image_config=_small(image_size=image, patch_size=patch, vocab_size=16),
                            text_config=dict(text, max_position_embeddings=32),
                            multimodal_config=_small(), image_codebook_config=dict(vocab_size=16, hidden_size=8),
                            hidden_size=H, projection_dim=H, init_codebook=False)
        models = [T.FlavaForPreTraining(cfg)]
        proc = T.FlavaImageProcessor, dict(size={"height": image, "width": image}, crop_size={"height": image,
                                                                                            "width": image})
    elif family == "bert":
        models = [T.BertForMaskedLM(T.BertConfig(**text))]
    else:
        raise ValueError(f"no tiny builder for family {family!r}")
    state = {}
    for m in models:
        m.eval()
        state.update(m.state_dict())
    models[0].save_pretrained(out, state_dict=state)
    cfg_path = out / "config.json"
    cfg_json = json.loads(cfg_path.read_text())
    cfg_json["architectures"] = [type(m).__name__ for m in models]
    cfg_path.write_text(json.dumps(cfg_json, indent=2))
    tok.save_pretrained(out)
    if proc is not None:
        cls, settings = proc
        cls(**{**settings, **(processor or {})}).save_pretrained(out)
    return out


def vilt_authors_state(vocab: int, text: int, patch: int, grid: int, *, hidden: int = HIDDEN, layers: int = 1,
                       mlp: int = 64, seed: int = 0) -> dict:
    """Random weights of a ViLT in the layout of the authors' PyTorch Lightning checkpoint (BERT text embeddings of
    ``vocab`` words and ``text`` positions, a timm ViT of ``patch``-pixel patches on a ``grid`` x ``grid`` position
    table, pooler, itm_score, mlm_score), as ``vilt_200k_mlm_itm.ckpt`` holds them under ``state_dict``."""
    H = hidden
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=0.2, offset=0.0):
        return torch.randn(*shape, generator=g) * scale + offset

    state = {"text_embeddings.word_embeddings.weight": r(vocab, H), "text_embeddings.position_ids":
             torch.arange(text)[None], "text_embeddings.position_embeddings.weight": r(text, H),
             "text_embeddings.token_type_embeddings.weight": r(2, H), "text_embeddings.LayerNorm.weight":
             r(H, offset=1), "text_embeddings.LayerNorm.bias": r(H), "token_type_embeddings.weight": r(2, H),
             "transformer.cls_token": r(1, 1, H), "transformer.pos_embed": r(1, grid * grid + 1, H),
             "transformer.patch_embed.proj.weight": r(H, 3, patch, patch, scale=0.02),
             "transformer.patch_embed.proj.bias": r(H), "transformer.norm.weight": r(H, offset=1),
             "transformer.norm.bias": r(H), "pooler.dense.weight": r(H, H), "pooler.dense.bias": r(H),
             "itm_score.fc.weight": r(2, H), "itm_score.fc.bias": r(2), "mlm_score.decoder.weight": r(vocab, H),
             "transformer.head.weight": r(10, H), "transformer.head.bias": r(10)}
    for i in range(layers):
        b = f"transformer.blocks.{i}."
        state.update({b + "norm1.weight": r(H, offset=1), b + "norm1.bias": r(H), b + "attn.qkv.weight": r(3 * H, H),
                      b + "attn.qkv.bias": r(3 * H), b + "attn.proj.weight": r(H, H), b + "attn.proj.bias": r(H),
                      b + "norm2.weight": r(H, offset=1), b + "norm2.bias": r(H), b + "mlp.fc1.weight": r(mlp, H),
                      b + "mlp.fc1.bias": r(mlp), b + "mlp.fc2.weight": r(H, mlp), b + "mlp.fc2.bias": r(H)})
    return state


def _save_open_clip(out: Path) -> Path:
    import open_clip

    model_cfg = {"embed_dim": HIDDEN,
                 "vision_cfg": {"image_size": IMAGE, "layers": 1, "width": HIDDEN, "patch_size": PATCH,
                                "head_width": 16},
                 "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": HIDDEN, "heads": 2, "layers": 1}}
    preprocess_cfg = {"size": IMAGE, "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25], "interpolation": "bicubic",
                      "resize_mode": "shortest"}
    (out / "open_clip_config.json").write_text(json.dumps({"model_cfg": model_cfg, "preprocess_cfg": preprocess_cfg}))
    model = open_clip.CLIP(**model_cfg)
    torch.save(model.state_dict(), out / "open_clip_pytorch_model.bin")
    return out


def _save_owlvit(out: Path, image: int, patch: int, processor: dict, dims: dict) -> Path:
    """A letter-level CLIP tokenizer (every word spelled out) and a one-layer OWL-ViT whose box head is zero, so
    its boxes are the patch grid's prior cells."""
    import transformers as T

    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {c: i for i, c in enumerate(letters)} | {c + "</w>": 26 + i for i, c in enumerate(letters)}
    vocab |= {"<|startoftext|>": 52, "<|endoftext|>": 53}
    (out / "vocab.json").write_text(json.dumps(vocab))
    (out / "merges.txt").write_text("#version: 0.2\n")
    tok = T.CLIPTokenizer(str(out / "vocab.json"), str(out / "merges.txt"), model_max_length=32)
    cfg = T.OwlViTConfig(text_config=dict(vocab_size=54, max_position_embeddings=32, bos_token_id=52, eos_token_id=53,
                                          pad_token_id=53, **dims),
                         vision_config=dict(image_size=image, patch_size=patch, **dims),
                         projection_dim=dims["hidden_size"])
    model = T.OwlViTForObjectDetection(cfg).eval()
    with torch.no_grad():
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.zero_()
    model.save_pretrained(out)
    size = {"height": image, "width": image}
    T.OwlViTProcessor(image_processor=T.OwlViTImageProcessor(**{"size": size, "crop_size": size, **processor}),
                      tokenizer=tok).save_pretrained(out)
    return out


def tiny_open_clip_arch(cfg: dict) -> dict:
    """ARCH's open_clip config shrunk to one narrow layer per tower, keeping its input size, patch, context length,
    vocabulary and activation."""
    vision, text = dict(cfg["vision_cfg"]), dict(cfg["text_cfg"])
    if isinstance(vision.get("layers"), (list, tuple)):                 # ModifiedResNet
        vision.update(layers=[1, 1, 1, 1], width=8, head_width=8)
    else:
        vision.update(layers=1, width=32, head_width=16)
    text.update(width=32, heads=2, layers=1)
    return {**{k: v for k, v in cfg.items() if k == "quick_gelu"}, "embed_dim": 32, "vision_cfg": vision,
            "text_cfg": text}


def tiny_open_clip_tag(source: str, configs: Path, shrink: bool = True) -> tuple[str, str, dict]:
    """For open_clip ``ARCH:TAG``: its tiny architecture (ARCH's own with ``shrink`` False) written to
    ``configs/ARCH.json`` (for ``PROBEKIT_OPEN_CLIP_CONFIGS``), and (hub repository, weights file name, random state
    dict) as open_clip would download the tag's weights."""
    import open_clip

    from probekit.scorers.resolve import open_clip_download

    arch, tag = source.split(":")
    repo, filename = open_clip_download(arch, tag)
    if repo is None:
        raise KeyError(f"open_clip {source} downloads from {filename}, not the hub: no tiny stand-in "
                       f"can be served for it")
    cfg = open_clip.get_model_config(arch)
    cfg = tiny_open_clip_arch(cfg) if shrink else cfg
    configs.mkdir(parents=True, exist_ok=True)
    (configs / f"{arch}.json").write_text(json.dumps(cfg))
    torch.manual_seed(0)
    return repo, filename, open_clip.CLIP(**cfg).state_dict()
