"""The toy CLIP's training forward for many members at once (``stack_ops``: weights stacked on a leading axis,
named as ``CLIPModel``'s parameters): HF's ``CLIPModel`` forward written out for the toy configuration
(``build.clip_config``): the text tower (token and position embeddings, pre-LN layers under a causal mask and the
padding mask, the final layernorm, pooled at each text's first [SEP], its ``eos_token_id``), the vision tower
([CLS] and the patch embeddings, ``pre_layrnorm``, the layers, ``post_layernorm`` of [CLS]), the two projections,
the normalised embeddings' products scaled by ``logit_scale.exp()``, and ``trainers.train_clip``'s loss.

HF builds its masks with data-dependent branches (which ``torch.func.vmap`` refuses); here they are boolean
masks of one shape for every member.  A stack's members may have different numbers of texts (``toy-clip``: the
batch's captions; ``toy-clip-hardneg``: the captions, then each one's swap): the texts are padded to the most of
the step with placeholder rows (``texts`` False) whose logits are -inf, so they take no part in any softmax.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .stack_ops import heads, linear, lookup, merge, norm, patches


def _quick_gelu(x):
    return x * torch.sigmoid(1.702 * x)


def _tower(p, config, x, attend, prefix):
    """HF's CLIPEncoder over ``x`` [M, B, T, H], keys and queries allowed by ``attend`` [M * B, 1, T, T]."""
    m, eps = x.shape[0], config.layer_norm_eps
    for i in range(config.num_hidden_layers):
        layer = f"{prefix}encoder.layers.{i}."
        q, k, v = heads(p, norm(x, p, layer + "layer_norm1", eps),
                        tuple(f"{layer}self_attn.{n}_proj" for n in "qkv"), config.num_attention_heads)
        x = x + linear(merge(F.scaled_dot_product_attention(q, k, v, attn_mask=attend), m), p,
                       layer + "self_attn.out_proj")
        y = _quick_gelu(linear(norm(x, p, layer + "layer_norm2", eps), p, layer + "mlp.fc1"))
        x = x + linear(y, p, layer + "mlp.fc2")
    return x


def text_embeds(p, config, ids, mask):
    """The projected text embeddings [M, T, D] of ``ids`` [M, T, L] (padded on the right; ``mask`` 1 on tokens)."""
    c, e = config.text_config, "text_model.embeddings."
    m, t, length = ids.shape
    x = lookup(p[e + "token_embedding.weight"], ids) + p[e + "position_embedding.weight"][:, None, :length]
    causal = torch.ones(length, length, dtype=torch.bool, device=ids.device).tril()
    attend = (causal & mask.bool().reshape(m * t, 1, 1, length))
    x = norm(_tower(p, c, x, attend, "text_model."), p, "text_model.final_layer_norm", c.layer_norm_eps)
    eos = (ids == c.eos_token_id).int().argmax(-1)                          # each text's first [SEP]
    pooled = x.gather(2, eos[..., None, None].expand(m, t, 1, x.shape[-1]))[:, :, 0]
    return linear(pooled, p, "text_projection", bias=False)


def image_embeds(p, config, pixels):
    """The projected image embeddings [M, B, D] of ``pixels`` [M, B, C, S, S]."""
    c, e = config.vision_config, "vision_model.embeddings."
    m, b = pixels.shape[:2]
    x = patches(pixels, p, e + "patch_embedding", c.patch_size, bias=False)
    x = torch.cat([p[e + "class_embedding"][:, None, None].expand(m, b, 1, -1), x], dim=2)
    x = norm(x + p[e + "position_embedding.weight"][:, None], p, "vision_model.pre_layrnorm", c.layer_norm_eps)
    x = _tower(p, c, x, None, "vision_model.")
    pooled = norm(x[:, :, 0], p, "vision_model.post_layernorm", c.layer_norm_eps)
    return linear(pooled, p, "visual_projection", bias=False)


def logits_per_image(p, config, ids, mask, pixels, texts=None):
    """CLIPModel's ``logits_per_image`` [M, B, T] of each member; placeholder texts (``texts`` [M, T] False) -inf."""
    image, text = image_embeds(p, config, pixels), text_embeds(p, config, ids, mask)
    image = image / image.norm(dim=-1, keepdim=True)
    text = text / text.norm(dim=-1, keepdim=True)
    logits = torch.bmm(image, text.transpose(1, 2)) * p["logit_scale"].exp()[:, None, None]
    return logits if texts is None else logits.masked_fill(~texts[:, None, :], float("-inf"))


def losses(p, config, batch: dict) -> torch.Tensor:
    """Each member's training loss [M] (``trainers.train_clip``'s step): the symmetric InfoNCE of its B images
    against its texts (positives first, then any hard negatives), and of its B positive texts against its images."""
    logits = logits_per_image(p, config, batch["input_ids"], batch["attention_mask"], batch["pixel_values"],
                              batch["texts"])
    m, b = logits.shape[:2]
    target = torch.arange(b, device=logits.device).expand(m, b)
    images = F.cross_entropy(logits.transpose(1, 2), target, reduction="none").mean(1)
    texts = F.cross_entropy(logits[:, :, :b], target, reduction="none").mean(1)
    return (images + texts) / 2
