"""The toy trainers' data: random batches over a pool of rendered training examples (normalised pixels, captions,
hard negatives) and BERT-style masking of caption tokens."""

from __future__ import annotations

import copy

import numpy as np
import torch

from ..toyworld import stream


class Batches:
    """Random batches over a pool of training examples: normalised pixels, captions (token ids by ``tok``) and hard
    negatives."""

    def __init__(self, examples: list[stream.Example], seed: int, tok, device: str = "cpu"):
        self.seed = seed
        self.tok = tok
        self.device = torch.device(device)
        self.pixels = torch.from_numpy(np.stack([e.image for e in examples])).permute(0, 3, 1, 2).contiguous()
        self.captions = [e.caption for e in examples]
        self.negatives = [e.negatives for e in examples]
        self.rng = np.random.default_rng([seed, 31])
        self._ids: dict[str, list[int]] = {}   # each text's token ids, encoded once (see ``tokens``)

    def fork(self) -> "Batches":
        """Another stream over the same pool, drawing as this one did at the start (members that share a recipe and
        a seed each draw their own batches, as they do when trained one after another)."""
        other = copy.copy(self)
        other.rng = np.random.default_rng([self.seed, 31])
        return other

    def images(self, idx) -> torch.Tensor:
        x = self.pixels[idx].to(self.device).float() / 255.0
        return (x - 0.5) / 0.5   # build.MEAN / build.STD

    def tokens(self, texts: list[str]) -> dict:
        """What ``self.tok(texts, padding=True, return_tensors="pt")`` gives (ids padded on the right, attention
        mask), on the device, from each text's ids encoded once: a pool's captions and negatives recur every few
        hundred steps, and encoding a batch anew took 1-3% of a training step."""
        ids = [self._ids.get(t) or self._ids.setdefault(t, self.tok(t)["input_ids"]) for t in texts]
        padded = np.full((len(ids), max(map(len, ids))), self.tok.pad_token_id, dtype=np.int64)
        mask = np.zeros(padded.shape, dtype=np.int64)
        for row, x in enumerate(ids):
            padded[row, :len(x)] = x
            mask[row, :len(x)] = 1
        return {"input_ids": torch.from_numpy(padded).to(self.device),
                "attention_mask": torch.from_numpy(mask).to(self.device)}

    def sample(self, n: int) -> np.ndarray:
        return self.rng.integers(0, len(self.captions), n)

    def negative(self, i: int, hard_p: float) -> str:
        negs = self.negatives[i]
        if negs and self.rng.random() < hard_p:
            return negs[self.rng.integers(len(negs))][0]
        while True:
            j = int(self.rng.integers(len(self.captions)))
            if self.captions[j] != self.captions[i]:
                return self.captions[j]


def mask_tokens(ids: torch.Tensor, tok, prob: float, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT-style masking of word tokens (at least one per caption); labels are -100 where nothing is masked."""
    special = torch.isin(ids, torch.tensor(tok.all_special_ids, device=ids.device))
    draw = torch.from_numpy(rng.random(ids.shape)).to(ids.device) < prob
    pick = torch.from_numpy(rng.random(ids.shape)).to(ids.device).masked_fill(special, -1).argmax(1)
    chosen = (draw & ~special)
    chosen[torch.arange(len(ids), device=ids.device), pick] = True
    labels = ids.masked_fill(~chosen, -100)
    masked = ids.clone()
    masked[chosen] = tok.mask_token_id
    return masked, labels
