"""The toy BERT's training forward for many members at once (``stack_ops``: weights stacked on a leading axis,
named as ``BertForMaskedLM``'s parameters): HF's forward written out for the toy configuration
(``build.bert_config``): word, position and token-type embeddings, post-LN layers over the padding mask, the MLM
head with its decoder tied to the word embeddings, and the MLM loss over the masked tokens.

Dropout (``hidden_dropout_prob`` and ``attention_probs_dropout_prob``, 0.1) sits where HF puts it: after the
embeddings' layernorm, on the attention probabilities, and on each sublayer's output before its residual
layernorm.  ``stack_ops.Dropout`` draws each member's masks from its own generator in HF's order and at the
member's own text length, so that on the CPU a member trained in a stack sees the masks it sees trained alone
(its generator holds the state the global one would hold there; ``tests/test_batched.py`` checks the weights).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .stack_ops import Dropout, heads, linear, lookup, merge, norm

E, L = "bert.embeddings.", "bert.encoder.layer."


def mlm_logits(p, config, ids, mask, drop: Dropout):
    """BertForMaskedLM's logits [M, B, T, V] of ``ids`` [M, B, T] (``mask`` 1 on tokens), dropping out by ``drop``."""
    m, b, t = ids.shape
    eps = config.layer_norm_eps
    x = lookup(p[E + "word_embeddings.weight"], ids) + p[E + "token_type_embeddings.weight"][:, None, None, 0] \
        + p[E + "position_embeddings.weight"][:, None, :t]
    hidden, attention = config.hidden_dropout_prob, config.attention_probs_dropout_prob
    x = drop(norm(x, p, E + "LayerNorm", eps), hidden, (1,))
    bias = torch.zeros(m * b, 1, 1, t, dtype=x.dtype, device=x.device)
    bias.masked_fill_(~mask.bool().reshape(m * b, 1, 1, t), torch.finfo(x.dtype).min)
    n = config.num_attention_heads
    for i in range(config.num_hidden_layers):
        layer = f"{L}{i}."
        names = (f"{layer}attention.self.query", f"{layer}attention.self.key", f"{layer}attention.self.value")
        q, k, v = heads(p, x, names, n)
        probs = torch.softmax(q @ k.transpose(2, 3) * q.shape[-1] ** -0.5 + bias, dim=-1)
        probs = drop(probs.reshape(m, b, n, t, t), attention, (2, 3)).reshape(m * b, n, t, t)
        a = drop(linear(merge(probs @ v, m), p, layer + "attention.output.dense"), hidden, (1,))
        x = norm(a + x, p, layer + "attention.output.LayerNorm", eps)
        y = F.gelu(linear(x, p, layer + "intermediate.dense"))
        x = norm(drop(linear(y, p, layer + "output.dense"), hidden, (1,)) + x, p, layer + "output.LayerNorm", eps)
    h = "cls.predictions."
    x = norm(F.gelu(linear(x, p, h + "transform.dense")), p, h + "transform.LayerNorm", eps)
    return linear(x, {"d.weight": p[E + "word_embeddings.weight"], "d.bias": p[h + "bias"]}, "d")


def losses(p, config, batch: dict, drop: Dropout) -> torch.Tensor:
    """Each member's MLM loss [M] (``trainers.train_bert``'s step): the cross-entropy over its masked tokens."""
    logits = mlm_logits(p, config, batch["input_ids"], batch["attention_mask"], drop)
    labels = batch["labels"]
    each = F.cross_entropy(logits.flatten(1, 2).transpose(1, 2), labels.flatten(1), reduction="none")
    return each.sum(1) / (labels != -100).flatten(1).sum(1)
