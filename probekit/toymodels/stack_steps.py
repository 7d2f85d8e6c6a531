"""One training step of stacked members, per trainer (``batched._fit``): each member draws its batch from its own
stream as its trainer does alone (``trainers.vilt_batch``, ``clip_batch``, ``bert_batch``), the batches become one
(texts padded to the step's longest), and the stacked forward (``vilt_stack``, ``clip_stack``, ``bert_stack``)
gives each member's loss [M]."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import bert_stack, clip_stack, vilt_stack
from .stack_ops import Dropout
from .trainers import bert_batch, clip_batch, vilt_batch


def stacked(batches: list[dict], pad: int) -> dict:
    """The members' batches as one: each tensor stacked on a new leading axis, texts padded on the right to the
    longest (pad tokens, attention 0, MLM label -100)."""
    length = max(b["input_ids"].shape[1] for b in batches)
    fill = {"input_ids": pad, "attention_mask": 0, "labels": -100}
    out = {}
    for k in batches[0]:
        xs = [b[k] for b in batches]
        if k in fill and xs[0].dim() == 2:
            xs = [F.pad(x, (0, length - x.shape[1]), value=fill[k]) for x in xs]
        out[k] = torch.stack(xs)
    return out


def vilt(states, params, config, budget) -> torch.Tensor:
    drawn = [vilt_batch(s.member, s.data, s.tok, budget) for s in states]
    itm, mlm = (stacked([d[k] for d in drawn], states[0].tok.pad_token_id) for k in (0, 1))
    return vilt_stack.losses(params, config, itm, mlm)


def clip(states, params, config, budget) -> torch.Tensor:
    """Members with fewer texts than the step's most (no hard negatives beside members with them) get placeholder
    texts (one token attended: no empty softmax), which ``clip_stack`` leaves out of every softmax."""
    drawn = [clip_batch(s.member, s.data, budget) for s in states]
    most, pad = max(len(d["input_ids"]) for d in drawn), states[0].tok.pad_token_id
    texts = []
    for d in drawn:
        n, length = d["input_ids"].shape
        texts.append(torch.arange(most, device=d["input_ids"].device) < n)
        extra = d["input_ids"].new_full((most - n, length), pad)
        d["input_ids"] = torch.cat([d["input_ids"], extra])
        d["attention_mask"] = torch.cat([d["attention_mask"], F.pad(torch.ones_like(extra[:, :1]), (0, length - 1))])
    return clip_stack.losses(params, config, {**stacked(drawn, pad), "texts": torch.stack(texts)})


def bert(states, params, config, budget) -> torch.Tensor:
    drawn = [bert_batch(s.data, s.tok, budget) for s in states]
    drop = Dropout([s.gen for s in states], [d["input_ids"].shape[1] for d in drawn])
    return bert_stack.losses(params, config, stacked(drawn, states[0].tok.pad_token_id), drop)


STEPS = {"vilt": vilt, "clip": clip, "bert": bert}
