"""Masked-LM computations shared by every adapter with a ``fill_mask`` head (pure torch/numpy, no model loading).

* :func:`top_k_words`: the vocabulary softmax at every mask position of a batch, its top k words.
* :func:`true_token_logprobs`: for every sub-word token of each text, log P(true token | the text with only that
  token replaced by the mask token): each row is expanded into one copy per scored token, masked there.
* :func:`pseudo_perplexity`: exp of the mean negative of those log-probabilities (Salazar et al. 2020).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch


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
