"""``vilt-itm``: ViLT's pretrained 2-way ITM head, converted from the authors' checkpoint layout.

A tiny checkpoint in the authors' key layout (``{"state_dict": ..., "hyper_parameters": {"config": ...}}``, as
PyTorch Lightning writes ``vilt_200k_mlm_itm.ckpt``) is built here with random weights; it is converted offline
(served by a file:// URL), and the converted Hugging Face model plus ITM head must give the logits of a
hand-written forward of the authors' architecture on the original weights.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from probekit.scorers import REGISTRY, head_for, load_scorer
from probekit.scorers.registry import TOY_CHECKPOINTS
from probekit.scorers.testing import vilt_authors_state
from probekit.scorers.vilt_original import HEAD_FILE, converted, hf_weights, load_itm_head, vilt_config

H, HEADS, LAYERS, MLP, VOCAB, TEXT, PATCH, GRID = 32, 4, 2, 48, 144, 24, 16, 4  # vocab/text: the toy tokenizer's
TOY_VILT = str(TOY_CHECKPOINTS / "toy-vilt")


def authors_state(seed: int = 0) -> dict:
    """Random weights under the authors' names (BERT text embeddings, timm ViT, pooler, itm_score, mlm_score)."""
    return vilt_authors_state(VOCAB, TEXT, PATCH, GRID, hidden=H, layers=LAYERS, mlp=MLP, seed=seed)


def authors_forward(s: dict, ids: torch.Tensor, pixels: torch.Tensor) -> torch.Tensor:
    """ITM logits by the authors' architecture: BERT embeddings + modality 0; patches, CLS, positions + modality
    1; pre-norm ViT blocks (fused qkv); final norm; tanh pooler on the first token; itm_score.fc."""
    n, length = ids.shape
    text = (s["text_embeddings.word_embeddings.weight"][ids] + s["text_embeddings.position_embeddings.weight"][:length]
            + s["text_embeddings.token_type_embeddings.weight"][0])
    text = F.layer_norm(text, (H,), s["text_embeddings.LayerNorm.weight"], s["text_embeddings.LayerNorm.bias"], 1e-12)
    patches = F.conv2d(pixels, s["transformer.patch_embed.proj.weight"], s["transformer.patch_embed.proj.bias"],
                       stride=PATCH).flatten(2).transpose(1, 2)
    image = torch.cat([s["transformer.cls_token"].expand(n, -1, -1), patches], 1) + s["transformer.pos_embed"]
    x = torch.cat([text + s["token_type_embeddings.weight"][0], image + s["token_type_embeddings.weight"][1]], 1)
    for i in range(LAYERS):
        b = f"transformer.blocks.{i}."
        h = F.layer_norm(x, (H,), s[b + "norm1.weight"], s[b + "norm1.bias"], 1e-12)
        q, k, v = F.linear(h, s[b + "attn.qkv.weight"], s[b + "attn.qkv.bias"]).reshape(
            n, x.shape[1], 3, HEADS, H // HEADS).permute(2, 0, 3, 1, 4)
        attended = ((q @ k.transpose(-2, -1)) * (H // HEADS) ** -0.5).softmax(-1) @ v
        x = x + F.linear(attended.transpose(1, 2).reshape(n, -1, H), s[b + "attn.proj.weight"], s[b + "attn.proj.bias"])
        h = F.layer_norm(x, (H,), s[b + "norm2.weight"], s[b + "norm2.bias"], 1e-12)
        x = x + F.linear(F.gelu(F.linear(h, s[b + "mlp.fc1.weight"], s[b + "mlp.fc1.bias"])), s[b + "mlp.fc2.weight"],
                         s[b + "mlp.fc2.bias"])
    x = F.layer_norm(x, (H,), s["transformer.norm.weight"], s["transformer.norm.bias"], 1e-12)
    pooled = torch.tanh(F.linear(x[:, 0], s["pooler.dense.weight"], s["pooler.dense.bias"]))
    return F.linear(pooled, s["itm_score.fc.weight"], s["itm_score.fc.bias"])


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("vilt-itm")
    state = authors_state()
    path = root / "vilt_tiny_itm.ckpt"
    torch.save({"state_dict": state, "hyper_parameters": {"config": {"num_heads": HEADS}}}, path)
    out = converted(path.as_uri(), root / "models", processor_source=TOY_VILT)
    return state, path, out


def test_every_weight_lands_where_it_belongs():
    from transformers import ViltModel

    state = authors_state()
    weights, head, unmapped = hf_weights(state)
    assert unmapped == [] and set(head) == {"weight", "bias"}
    ViltModel(vilt_config(state, HEADS)).load_state_dict(weights, strict=True)  # all filled, all shapes right
    qkv, qkv_bias = state["transformer.blocks.1.attn.qkv.weight"], state["transformer.blocks.1.attn.qkv.bias"]
    layer = "encoder.layer.1."
    assert torch.equal(weights[layer + "attention.attention.query.weight"], qkv[:H])
    assert torch.equal(weights[layer + "attention.attention.key.weight"], qkv[H:2 * H])
    assert torch.equal(weights[layer + "attention.attention.value.bias"], qkv_bias[2 * H:])
    pairs = {"embeddings.position_embeddings": "transformer.pos_embed", "embeddings.cls_token": "transformer.cls_token",
             "embeddings.token_type_embeddings.weight": "token_type_embeddings.weight",
             "embeddings.text_embeddings.LayerNorm.bias": "text_embeddings.LayerNorm.bias",
             "embeddings.patch_embeddings.projection.weight": "transformer.patch_embed.proj.weight",
             layer + "layernorm_before.weight": "transformer.blocks.1.norm1.weight",
             layer + "attention.output.dense.weight": "transformer.blocks.1.attn.proj.weight",
             layer + "layernorm_after.bias": "transformer.blocks.1.norm2.bias",
             layer + "intermediate.dense.weight": "transformer.blocks.1.mlp.fc1.weight",
             layer + "output.dense.bias": "transformer.blocks.1.mlp.fc2.bias",
             "layernorm.weight": "transformer.norm.weight", "pooler.dense.weight": "pooler.dense.weight"}
    assert all(torch.equal(weights[new], state[old]) for new, old in pairs.items())
    assert torch.equal(head["weight"], state["itm_score.fc.weight"])
    config = vilt_config(state)  # no num_heads given: one head per 64 hidden units, at least one
    assert (config.num_hidden_layers, config.image_size, config.patch_size, config.num_attention_heads) == \
        (LAYERS, GRID * PATCH, PATCH, 1)
    assert hf_weights({**state, "vqa_classifier.0.weight": torch.zeros(1)})[2] == ["vqa_classifier.0.weight"]


def test_converted_model_gives_the_authors_itm_logits(checkpoint):
    from transformers import ViltModel

    state, path, out = checkpoint
    model, head = ViltModel.from_pretrained(out).eval(), load_itm_head(out)
    g = torch.Generator().manual_seed(1)
    ids, pixels = torch.randint(0, VOCAB, (3, 7), generator=g), torch.randn(3, 3, GRID * PATCH, GRID * PATCH,
                                                                             generator=g)
    with torch.no_grad():
        ours = head(model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids),
                          pixel_values=pixels, pixel_mask=torch.ones(3, GRID * PATCH, GRID * PATCH,
                                                                     dtype=torch.long)).pooler_output)
        theirs = authors_forward(state, ids, pixels)
    torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=1e-4)
    assert theirs.std() > 0.05  # the comparison is between non-trivial logits
    path.unlink()  # the conversion is cached: a second call needs no checkpoint
    assert converted(path.as_uri(), out.parent, processor_source=TOY_VILT) == out


def test_vilt_itm_scorer_thresholds_a_softmax_probability(checkpoint, tmp_path):
    _, _, out = checkpoint
    spec = REGISTRY["vilt-itm"]
    assert spec.source.endswith("/vilt_200k_mlm_itm.ckpt") and spec.capabilities == ("match",)
    assert REGISTRY["vilt-coco"].family == "vilt"  # kept for pairwise/ranking use
    models = tmp_path / "models"  # the registry entry's converted directory, already there: no download
    shutil.copytree(out, models / "vilt_200k_mlm_itm-hf")
    scorer = load_scorer("vilt-itm", device="cpu", cache_dir=False, models_dir=models)
    assert head_for(scorer, "threshold") == "match"
    images = []
    for i, size in enumerate([(64, 64), (96, 64), (64, 80)]):
        images.append(tmp_path / f"{i}.png")
        Image.fromarray(np.random.default_rng(i).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(
            images[-1])
    probs = scorer.match([str(p) for p in images] * 2, ["a dog", "a cat", "a child is kicking a ball"] * 2)
    assert probs.shape == (6,) and ((probs > 0) & (probs < 1)).all() and np.ptp(probs[:3]) > 0
    np.testing.assert_allclose(probs[:3], probs[3:], atol=1e-5)
    with pytest.raises(ValueError, match="itm_score"):
        no_head = {k: v for k, v in authors_state().items() if not k.startswith("itm_score")}
        bad = tmp_path / "no_head.ckpt"
        torch.save({"state_dict": no_head}, bad)
        converted(str(bad), tmp_path / "m2", processor_source=TOY_VILT)
    assert not (tmp_path / "m2" / "no_head-hf" / HEAD_FILE).exists()
