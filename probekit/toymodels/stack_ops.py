"""The pieces of the stacked forwards (``vilt_stack``, ``clip_stack``, ``bert_stack``): members' weights stacked on
a leading axis (one tensor per parameter of the HF model, named as there) and the layers written over that axis, so
that each matrix product of M members is one batched product.  Dropout draws each member's masks from that
member's own generator, each of the shape the member's own forward would draw (``dropout``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def stack(models) -> dict[str, torch.Tensor]:
    """Each parameter of ``models`` (HF models of one configuration; tied ones once) stacked on a new leading
    axis, as fresh leaf tensors."""
    names = [n for n, _ in models[0].named_parameters()]
    return {n: torch.stack([dict(m.named_parameters())[n].detach() for m in models]).contiguous() for n in names}


def unstack(params: dict[str, torch.Tensor], i: int, model) -> None:
    """Copy member ``i`` of the stacked ``params`` into ``model`` (a model of their configuration)."""
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(params[n][i])


def linear(x, p, name, bias: bool = True):
    """``x`` [M, ..., in] through each member's ``name`` Linear: one batched product."""
    w = p[name + ".weight"]
    m, out = w.shape[0], w.shape[1]
    flat = x.reshape(m, -1, x.shape[-1])
    y = torch.baddbmm(p[name + ".bias"][:, None, :], flat, w.transpose(1, 2)) if bias \
        else torch.bmm(flat, w.transpose(1, 2))
    return y.reshape(*x.shape[:-1], out)


def norm(x, p, name, eps):
    """Each member's LayerNorm ``name`` over the last axis of ``x`` [M, ...]."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:], eps=eps) * p[name + ".weight"].view(shape) + p[name + ".bias"].view(shape)


def lookup(table, ids):
    """Each member's rows of ``table`` [M, V, H] at ``ids`` [M, ...]."""
    m, v = table.shape[:2]
    offset = (torch.arange(m, device=ids.device) * v).view((m,) + (1,) * (ids.dim() - 1))
    return F.embedding(ids + offset, table.reshape(m * v, -1))


def patches(pixels, p, name, cell: int, bias: bool = True):
    """Each member's patch embedding (the Conv2d ``name`` of stride ``cell``) of ``pixels`` [M, B, C, S, S]: the
    patches [M, B, (S / cell)**2, H] in grid order, row by row (``Conv2d`` then ``flatten(2)``)."""
    m, b, c = pixels.shape[:3]
    g = pixels.shape[-1] // cell
    flat = pixels.reshape(m, b, c, g, cell, g, cell).permute(0, 1, 3, 5, 2, 4, 6).reshape(m, b, g * g, -1)
    w = p[name + ".weight"]
    proj = {"x.weight": w.reshape(m, w.shape[1], -1), **({"x.bias": p[name + ".bias"]} if bias else {})}
    return linear(flat, proj, "x", bias)


def heads(p, x, names: tuple[str, str, str], n: int):
    """The queries, keys and values [M * B, heads, T, H / heads] of ``x`` [M, B, T, H] (Linears ``names``)."""
    m, b, t, _ = x.shape
    return [linear(x, p, name).reshape(m * b, t, n, -1).transpose(1, 2) for name in names]


def merge(a, m: int):
    """Attention outputs [M * B, heads, T, d] back to [M, B, T, heads * d]."""
    mb, n, t, d = a.shape
    return a.transpose(1, 2).reshape(m, mb // m, t, n * d)


class Dropout:
    """Dropout for stacked members whose own forwards (unpadded, ``lengths`` tokens each) draw their masks from
    ``generators``: member i's mask at a site is what ``torch.nn.functional.dropout`` on the CPU draws
    (``bernoulli_(1 - p)`` on a tensor of the member's own shape, scaled by 1 / (1 - p)), from generator i, padded
    to the stack's length; so each member sees the masks it would see trained alone, in the same order."""

    def __init__(self, generators: list[torch.Generator], lengths: list[int]):
        self.generators, self.lengths = generators, lengths

    def __call__(self, x, p: float, token_axes: tuple[int, ...]):
        """``x`` [M, ...] with dropout of probability ``p``; ``token_axes``: the axes of ``x[i]`` over tokens."""
        if not p:
            return x
        masks = []
        for g, n in zip(self.generators, self.lengths):
            shape = [n if axis in token_axes else size for axis, size in enumerate(x.shape[1:])]
            keep = torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(1 - p, generator=g)
            pad = [w for axis in reversed(range(len(shape))) for w in (0, x.shape[1 + axis] - shape[axis])]
            masks.append(F.pad(keep.div_(1 - p), pad, value=1.0))
        return x * torch.stack(masks)
