"""The toy ViLT's training forward for many members at once: the members' weights stacked on a leading axis (one
tensor per ``ViltMultiTask`` parameter, named as there) and every matrix product one batched product over the
members, so M members cost one computation, not M processes of small kernels.

It is HF's ``ViltModel`` forward written out (text embeddings, patch embeddings, the pre-LN encoder, the pooler,
the ITM ``rank_output`` and the MLM head with the decoder tied to the word embeddings), with one difference that
does not change the function: HF's ``ViltEmbeddings.visual_embed`` puts the image tokens in a random order
(``torch.multinomial``, one call per image, a host sync on a GPU), and this forward keeps them in grid order.  In
the toy models' case (``build.vilt_config``: ``max_image_length=-1``, square ``IMAGE_SIZE`` images, an all-ones
``pixel_mask``) HF keeps every patch: each image has ``(IMAGE_SIZE / CELL)**2`` valid patches and no padding, so
``max_image_length`` is that number and ``multinomial`` without replacement draws a permutation of all of them; its
position embeddings are interpolated to the grid's own size (with ``align_corners=True``: the identity) and travel
with their patches.  The encoder has no notion of token order besides those embeddings, the pooler reads the
[CLS] token and the MLM head the text tokens (both before the image tokens), so the two orders give the same
losses up to the order of floating-point sums (``tests/test_batched.py`` checks it against HF's forward).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .stack_ops import heads as _heads, linear as _linear, lookup as _lookup, merge, norm as _norm, patches as _patches

PREFIX = "itm.vilt."


def _embed(p, config, ids, mask, pixels):
    """HF's ViltEmbeddings: text tokens, then [CLS] and the patches in grid order; the sequence and its mask."""
    e, eps = PREFIX + "embeddings.", config.layer_norm_eps
    m, b, length = ids.shape
    text = _lookup(p[e + "text_embeddings.word_embeddings.weight"], ids) \
        + p[e + "text_embeddings.token_type_embeddings.weight"][:, None, None, 0] \
        + p[e + "text_embeddings.position_embeddings.weight"][:, None, :length]
    text = _norm(text, p, e + "text_embeddings.LayerNorm", eps)
    patches = _patches(pixels, p, e + "patch_embeddings.projection", config.patch_size)
    g2 = patches.shape[2]
    image = torch.cat([p[e + "cls_token"].expand(m, b, 1, -1), patches], dim=2)
    image = image + p[e + "position_embeddings"]
    modality = p[e + "token_type_embeddings.weight"]
    seq = torch.cat([text + modality[:, None, None, 0], image + modality[:, None, None, 1]], dim=2)
    keep = torch.cat([mask.bool(), mask.new_ones(m, b, g2 + 1, dtype=torch.bool)], dim=2)
    return seq, keep


def _encode(p, config, ids, mask, pixels):
    """The last hidden states [M, B, T, H] of HF's ViltModel (after its final layernorm)."""
    x, keep = _embed(p, config, ids, mask, pixels)
    m, b, t, h = x.shape
    eps = config.layer_norm_eps
    attend = keep.reshape(m * b, 1, 1, t)
    for i in range(config.num_hidden_layers):
        layer = f"{PREFIX}encoder.layer.{i}."
        y = _norm(x, p, layer + "layernorm_before", eps)
        q, k, v = _heads(p, y, tuple(f"{layer}attention.attention.{n}" for n in ("query", "key", "value")),
                         config.num_attention_heads)
        a = merge(F.scaled_dot_product_attention(q, k, v, attn_mask=attend), m)
        x = x + _linear(a, p, layer + "attention.output.dense")
        y = F.gelu(_linear(_norm(x, p, layer + "layernorm_after", eps), p, layer + "intermediate.dense"))
        x = x + _linear(y, p, layer + "output.dense")
    return _norm(x, p, PREFIX + "layernorm", eps)


def itm_logits(p, config, ids, mask, pixels):
    """ViltForImageAndTextRetrieval's logits [M, B]."""
    pooled = torch.tanh(_linear(_encode(p, config, ids, mask, pixels)[:, :, 0], p, PREFIX + "pooler.dense"))
    return _linear(pooled, p, "itm.rank_output")[..., 0]


def mlm_logits(p, config, ids, mask, pixels):
    """ViltForMaskedLM's logits [M, B, L, V] over the text tokens."""
    x = _encode(p, config, ids, mask, pixels)[:, :, :ids.shape[2]]
    x = _norm(F.gelu(_linear(x, p, "mlm.mlm_score.transform.dense")), p, "mlm.mlm_score.transform.LayerNorm",
              config.layer_norm_eps)
    decoder = {"d.weight": p[PREFIX + "embeddings.text_embeddings.word_embeddings.weight"],
               "d.bias": p["mlm.mlm_score.decoder.bias"]}
    return _linear(x, decoder, "d")


def losses(p, config, itm: dict, mlm: dict) -> torch.Tensor:
    """Each member's training loss [M] (``trainers.train_vilt``'s step): the ITM binary cross-entropy over its batch
    plus the MLM cross-entropy over its masked tokens (labels -100 elsewhere, padding included)."""
    logit = itm_logits(p, config, itm["input_ids"], itm["attention_mask"], itm["pixel_values"])
    itm_loss = F.binary_cross_entropy_with_logits(logit, itm["labels"], reduction="none").mean(1)
    logits = mlm_logits(p, config, mlm["input_ids"], mlm["attention_mask"], mlm["pixel_values"])
    labels = mlm["labels"]
    each = F.cross_entropy(logits.flatten(1, 2).transpose(1, 2), labels.flatten(1), reduction="none")
    return itm_loss + each.sum(1) / (labels != -100).flatten(1).sum(1)
