"""Masked-LM computations shared by every adapter with a ``fill_mask`` head (pure torch/numpy, no model loading).

* :func:`top_k_words`: the vocabulary softmax at every mask position of a batch, its top k words.
* :func:`mask_logprobs`: at every mask position of a row, the log-probability of the row's own target piece
  (:class:`MaskedWords` gives every scorer the public method).
* :func:`true_token_logprobs`: for every sub-word token of each text, log P(true token | the text with only that
  token replaced by the mask token): each row is expanded into one copy per scored token, masked there.
* :func:`pseudo_perplexity`: exp of the mean negative of those log-probabilities (Salazar et al. 2020).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch

MASK = "[MASK]"   # the mask token in probekit's texts (each scorer puts its tokenizer's own in its place)
#: the inputs key of each row's target piece ids (padded with -1), taken out before the model sees the batch
TARGETS = "target_ids"


class MaskedWords:
    """The masked-LM question "how probable is this word here?" (a mixin of :class:`probekit.scorers.base.Scorer`,
    whose ``tokenizer``, ``word_pieces``, ``_require``, ``_mlm``, ``_forward``, ``_mlm_logits``, ``_prepare_pairs``
    and ``_tokenize`` it uses)."""

    # what the Scorer sets (declared here for the type checker; nothing is set on the class)
    tokenizer: Any
    word_pieces: Callable[[str], list[str]]
    _require: Callable[[str, str], None]
    _mlm: Callable[..., list[Any]]
    _forward: Callable[..., Any]
    _mlm_logits: Callable[[dict[str, Any]], torch.Tensor]
    _prepare_pairs: Callable[[list[Any], list[str]], dict[str, Any]]
    _tokenize: Callable[[list[str]], dict[str, Any]]

    def mask_logprobs(self, texts: Sequence[str], words: Sequence[str], images=None) -> list:
        """Per text, the log-probability of each piece of its word (``words[i]``, split by ``word_pieces``) at the
        text's MASKs, one MASK per piece in order, each position's softmax over the vocabulary as in ``fill_mask``
        (positions predicted independently); None where the image is unreadable."""
        self._require("fill_mask", "score masked words")
        texts, words = [str(t) for t in texts], [str(w) for w in words]
        if len(words) != len(texts):
            raise ValueError(f"mask_logprobs() needs one word per text: {len(words)} vs {len(texts)}")
        tok = self.tokenizer
        extras = [(t.replace(MASK, tok.mask_token), tok.convert_tokens_to_ids(self.word_pieces(w)))
                  for t, w in zip(texts, words)]
        return self._mlm("mask_logprobs", [f"{t}\n{w}" for t, w in zip(texts, words)], images, (), extras,
                         lambda inputs: self._forward(mask_logprobs, self._mlm_logits, inputs, tok.mask_token_id),
                         prepare="_prepare_targets")

    def _prepare_targets(self, pils: list, extras: list) -> dict:
        """A batch of (text, target piece ids) items: the texts' inputs (with their images' when ``pils``) and
        :data:`TARGETS`."""
        texts, ids = [t for t, _ in extras], [list(i) for _, i in extras]
        inputs = self._prepare_pairs(pils, texts) if pils else self._tokenize(texts)
        width = max(map(len, ids))
        inputs[TARGETS] = torch.tensor([i + [-1] * (width - len(i)) for i in ids], dtype=torch.long)
        return inputs


def pseudo_perplexity(logprobs: Sequence[float] | np.ndarray) -> float:
    """``exp(-mean(logprobs))`` of a text's true-token log-probabilities; NaN for an empty or missing text."""
    if logprobs is None:
        return float("nan")
    values = np.asarray(logprobs, dtype=np.float64)
    return float(np.exp(-values.mean())) if values.size else float("nan")


def top_k_words(mlm_logits: Callable[[dict], torch.Tensor], inputs: dict, tokenizer, k: int) -> list:
    """Per row of ``inputs``, per mask position, the k most probable words of the vocabulary softmax there, as
    JSON-able ``[[word, prob], ...]`` (positions predicted independently)."""
    logits = mlm_logits(inputs)
    rows, cols = (inputs["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    probs = logits[rows, cols].float().softmax(-1)
    top = probs.topk(min(k, probs.shape[-1]), dim=-1)
    values, ids, rows = top.values.cpu(), top.indices.cpu(), rows.cpu()
    return [[_words(tokenizer, values[i], ids[i]) for i in (rows == row).nonzero().flatten().tolist()]
            for row in range(len(inputs["input_ids"]))]


def mask_logprobs(mlm_logits: Callable[[dict], torch.Tensor], inputs: dict, mask_id: int) -> list:
    """Per row of ``inputs``, the log-softmax over the vocabulary at its j-th mask position read at its j-th target
    id (``inputs[TARGETS]``, which the model never sees); a row needs one mask per target."""
    inputs = dict(inputs)
    targets = inputs.pop(TARGETS)
    logits = mlm_logits(inputs)
    rows, cols = (inputs["input_ids"] == mask_id).nonzero(as_tuple=True)
    counts = torch.bincount(rows, minlength=len(targets)).cpu()
    if not torch.equal(counts, (targets >= 0).sum(1).cpu()):
        raise ValueError("every text needs one mask per piece of its word")
    wanted = targets[targets >= 0].to(logits.device)   # row by row, as the mask positions are
    logprobs = logits[rows, cols].float().log_softmax(-1).gather(1, wanted.unsqueeze(1)).squeeze(1).cpu()
    return [v.numpy() for v in logprobs.split(counts.tolist())]


def _words(tokenizer, probs: torch.Tensor, ids: torch.Tensor) -> list:
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    # a byte-level BPE / SentencePiece piece keeps its word-start marker ("Ġ"/"▁"): piece joining needs it
    return [[t[0] * t.startswith(("Ġ", "▁")) + tokenizer.convert_tokens_to_string([t]).strip(), float(p)]
            for t, p in zip(tokens, probs.tolist())]


def scored_positions(inputs: dict, special_ids: Sequence[int]) -> torch.Tensor:
    """(B, L) bool: the real (not padding) sub-word tokens of each row that are not special tokens."""
    ids = inputs["input_ids"]
    keep = ~torch.isin(ids, torch.as_tensor(list(special_ids), dtype=ids.dtype, device=ids.device))
    if "attention_mask" in inputs:
        keep &= inputs["attention_mask"].bool()
    return keep


def true_token_logprobs(mlm_logits: Callable[[dict], torch.Tensor], inputs: dict, special_ids: Sequence[int],
                        mask_id: int, chunk: int) -> list[torch.Tensor]:
    """Per row of ``inputs``, the log-probability of each scored token when it alone is masked.

    Row b with n_b scored tokens becomes n_b copies (all its inputs, the image's too, repeated), copy j with
    token j replaced by ``mask_id``; the copies run through ``mlm_logits`` ``chunk`` at a time.
    """
    ids = inputs["input_ids"]
    keep = scored_positions(inputs, special_ids)
    rows, cols = keep.nonzero(as_tuple=True)
    out = torch.empty(len(rows), dtype=torch.float32)
    for s in range(0, len(rows), max(1, chunk)):
        r, c = rows[s:s + chunk], cols[s:s + chunk]
        batch = {k: (v[r] if isinstance(v, torch.Tensor) and v.shape[:1] == ids.shape[:1] else v)
                 for k, v in inputs.items()}
        masked = batch["input_ids"].clone()
        at = torch.arange(len(r), device=masked.device)
        masked[at, c] = mask_id
        batch["input_ids"] = masked
        logits = mlm_logits(batch)[at, c].float().log_softmax(-1)
        out[s:s + len(r)] = logits.gather(1, ids[r, c].unsqueeze(1)).squeeze(1).cpu()
    counts = keep.sum(1).tolist()
    return list(out.split(counts))
