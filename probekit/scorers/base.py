"""The Scorer interface every family adapter fills in, and the batching / dedup / caching machinery they share.

An adapter (one small module per family) loads its model and implements some of these hooks:

* ``_prepare_images(pils) -> dict``            preprocessing of decoded RGB images (runs in DataLoader workers)
* ``_tokenize(texts) -> dict``                 text inputs
* ``_embed_images(inputs)``/``_embed_texts``   unit-norm embeddings (B, D)         -> capability "similarity"
* ``_logit_scale_bias() -> (scale, bias)``     similarity logits = scale * cos + bias
* ``_match_probs(inputs) -> (B,)``             ITM probability of paired inputs    -> capability "match"
* ``_mlm_logits(inputs) -> (B, L, V)``        masked-LM logits at the text tokens        -> capability "fill_mask"

Everything else (deduplication of images/texts/pairs, DataLoader batching, the parquet score cache, NaN for
unreadable images, progress bars, choice softmaxes) lives here, once.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import torch
from ..progress import bar

from probekit import images as imgs
from probekit.cache import NullCache, ScoreCache, item_key, model_fingerprint
from probekit.device import autocast, resolve_device, use_half

MASK = "[MASK]"

#: bump when the way a method computes its numbers changes, so old cached scores are not reused
RECIPES = {"image_embed": 1, "text_embed": 1, "match": 1, "fill_mask": 1}


class CapabilityError(Exception):
    """The model cannot answer this question (e.g. CLIP has no ITM head; BERT sees no image)."""


def _progress(total: int, batch_size: int, desc: str):
    return bar(total=total, desc=desc, disable=total <= max(2 * batch_size, 100), leave=False)


class Scorer:
    """One model behind the three questions: ``match``, ``similarity`` (+ ``choose_text``/``choose_image``), ``fill_mask``."""

    family: str = ""
    #: which head answers choose_text/choose_image by default: "similarity" (softmax over candidates) or "match"
    choice_head: str = "match"
    #: whether fill_mask needs an image (False for text-only models, None when both work)
    mlm_needs_image: bool | None = True
    text_only: bool = False
    family_capabilities: tuple[str, ...] = ()

    def __init__(self, name: str, source: str, capabilities: Sequence[str], *, device="auto", batch_size: int = 32,
                 cache_dir=None, num_workers: int = 0, half: bool | None = None, revision: str | None = None,
                 head: str = "", options: dict | None = None):
        self.name = name
        self.source = source
        #: None until _load: adapters may narrow it to the heads the checkpoint actually has
        self.capabilities = frozenset(capabilities) if capabilities else None
        self.head = head
        self.device = resolve_device(device)
        self.half = use_half(self.device, half)
        self.batch_size = int(batch_size)
        self.num_workers = int(num_workers)
        self.skipped: list[str] = []
        self.patch_size: int | None = None
        self.image_size: int | None = None
        self.preprocessing: str = ""
        self.forward_seconds = 0.0  # wall time spent inside model forwards (see benchmarks/scoring.py)
        self.revision = revision
        self._load(source, **(options or {}))
        if self.capabilities is None:
            self.capabilities = frozenset(self.family_capabilities)
        extra = self.capabilities - frozenset(self.family_capabilities)
        if extra:
            raise CapabilityError(f"{self.family} models have no {sorted(extra)} capability; "
                                  f"they have: {', '.join(self.family_capabilities)}")
        self.model_revision = self._resolved_revision()
        self.fingerprint = model_fingerprint(name, source, self.model_revision)
        self._cache_root = cache_dir
        self._caches: dict[str, ScoreCache] = {}

    # ------------------------------------------------------------------------------------------------ hooks
    def _load(self, source: str, **options) -> None:
        raise NotImplementedError

    def _resolved_revision(self) -> str | None:
        model = getattr(self, "model", None)
        commit = getattr(getattr(model, "config", None), "_commit_hash", None)
        return commit or self.revision

    def _prepare_images(self, pils: list) -> dict:
        raise NotImplementedError

    def _tokenize(self, texts: list[str]) -> dict:
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------------ helpers
    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.name!r} family={self.family} caps={sorted(self.capabilities)} "
                f"device={self.device}>")

    def _require(self, capability: str, what: str) -> None:
        if capability not in self.capabilities:
            has = ", ".join(sorted(self.capabilities)) or "nothing"
            raise CapabilityError(f"{self.name} ({self.family}) cannot {what}: it has no {capability!r} capability; "
                                  f"it has: {has}")

    def _cache(self, method: str) -> ScoreCache:
        if method not in self._caches:
            if self._cache_root is False:
                self._caches[method] = NullCache()
            else:
                self._caches[method] = ScoreCache(self._cache_root, self.fingerprint, method, RECIPES[method],
                                                  flush_every=self.batch_size * 8)
        return self._caches[method]

    def _forward(self, fn, *args):
        """Run one model forward under no-grad (and fp16 autocast on CUDA), timing it."""
        t0 = time.perf_counter()
        with torch.inference_mode(), autocast(self.device, self.half):
            out = fn(*args)
            if isinstance(out, torch.Tensor):
                out = out.float().cpu()
            elif isinstance(out, tuple):
                out = tuple(o.cpu() for o in out)
        self.forward_seconds += time.perf_counter() - t0
        return out

    def _skip(self, img: Any) -> None:
        desc = imgs.describe(img)
        if desc not in self.skipped:
            self.skipped.append(desc)

    def _prepare_pairs(self, pils: list, texts: list) -> dict:
        inputs = self._tokenize(list(texts))
        inputs.update(self._prepare_images(pils))
        return inputs

    def _prepare_only_images(self, pils: list, _extras: list) -> dict:
        return self._prepare_images(pils)

    # --------------------------------------------------------------------------------------------- embeddings
    def _image_embeddings(self, images: Sequence[Any]) -> np.ndarray:
        """(M, D) unit embeddings; each unique image embedded once (and cached); NaN rows for unreadable images."""
        keys = [imgs.image_key(x) for x in images]
        cache = self._cache("image_embed")
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        todo = [k for k in first if cache.get(item_key(k)) is None]
        bad: set[str] = set()
        try:
            if todo:
                srcs = [images[first[k]] for k in todo]
                bar = _progress(len(todo), self.batch_size, f"{self.name}: images")
                for ok, inputs, bad_idx in imgs.batches(srcs, self._prepare_only_images, batch_size=self.batch_size,
                                                        num_workers=self.num_workers):
                    for j in bad_idx:
                        bad.add(todo[j])
                        self._skip(srcs[j])
                    if ok:
                        emb = self._forward(self._embed_images, imgs.to_device(inputs, self.device)).numpy()
                        for j, e in zip(ok, emb):
                            cache.put_array(item_key(todo[j]), e)
                    bar.update(len(ok) + len(bad_idx))
                bar.close()
        finally:
            cache.flush()
        dim = None
        rows = []
        for i, k in enumerate(keys):
            if k in bad or k.startswith("missing:") or cache.get(item_key(k)) is None:
                if k not in bad:
                    self._skip(images[i])
                rows.append(None)
            else:
                rows.append(cache.get_array(item_key(k)))
                dim = rows[-1].shape[0]
        dim = dim if dim is not None else 1
        return np.stack([r if r is not None else np.full(dim, np.nan, np.float32) for r in rows]) if rows \
            else np.zeros((0, dim), np.float32)

    def _text_embeddings(self, texts: Sequence[str]) -> np.ndarray:
        """(N, D) unit embeddings; each unique text embedded once (and cached)."""
        texts = [str(t) for t in texts]
        cache = self._cache("text_embed")
        todo = [t for t in dict.fromkeys(texts) if cache.get(item_key("text", t)) is None]
        try:
            bar = _progress(len(todo), self.batch_size, f"{self.name}: texts")
            for s in range(0, len(todo), self.batch_size):
                chunk = todo[s:s + self.batch_size]
                emb = self._forward(self._embed_texts, imgs.to_device(self._tokenize(chunk), self.device)).numpy()
                for t, e in zip(chunk, emb):
                    cache.put_array(item_key("text", t), e)
                bar.update(len(chunk))
            bar.close()
        finally:
            cache.flush()
        if not texts:
            return np.zeros((0, 1), np.float32)
        return np.stack([cache.get_array(item_key("text", t)) for t in texts])

    def _logits(self, img_emb: np.ndarray, txt_emb: np.ndarray) -> np.ndarray:
        scale, bias = self._logit_scale_bias()
        return scale * (img_emb.astype(np.float64) @ txt_emb.astype(np.float64).T) + bias

    # ----------------------------------------------------------------------------------------------- public
    def similarity(self, images: Sequence[Any], texts: Sequence[str]) -> np.ndarray:
        """(M, N) similarity logits (the model's scale x cosine [+ bias]) of every image x every text.

        Each unique image and text is embedded once; rows of unreadable images are NaN.
        """
        self._require("similarity", "compute image-text similarities")
        return self._logits(self._image_embeddings(list(images)), self._text_embeddings(list(texts)))

    def match(self, images: Sequence[Any], texts: Sequence[str]) -> np.ndarray:
        """(N,) probability that image i and text i match, in [0, 1]; NaN where the image is unreadable."""
        self._require("match", "score image-text matching (no ITM head)")
        images, texts = list(images), [str(t) for t in texts]
        if len(images) != len(texts):
            raise ValueError(f"match() needs one text per image: got {len(images)} images and {len(texts)} texts")
        if "similarity" in self.capabilities and self.choice_head == "similarity":
            # dual encoder with a pairwise-calibrated head (SigLIP): sigmoid of the pair's logit
            img_emb, txt_emb = self._image_embeddings(images), self._text_embeddings(texts)
            scale, bias = self._logit_scale_bias()
            logit = scale * np.einsum("nd,nd->n", img_emb.astype(np.float64), txt_emb.astype(np.float64)) + bias
            return 1.0 / (1.0 + np.exp(-logit))
        return self._pair_scores(images, texts)

    def _pair_scores(self, images: list, texts: list[str]) -> np.ndarray:
        """Cross-encoder ITM probabilities: unique (image, text) pairs, grouped by image, batched, cached."""
        ikeys = [imgs.image_key(x) for x in images]
        keys = [item_key(ik, t) for ik, t in zip(ikeys, texts)]
        cache = self._cache("match")
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        todo = sorted((k for k in first if cache.get(k) is None), key=lambda k: ikeys[first[k]])
        bad: set[str] = set()
        try:
            if todo:
                srcs = [images[first[k]] for k in todo]
                bar = _progress(len(todo), self.batch_size, f"{self.name}: pairs")
                for ok, inputs, bad_idx in imgs.batches(srcs, self._prepare_pairs,
                                                        extras=[texts[first[k]] for k in todo],
                                                        batch_size=self.batch_size, num_workers=self.num_workers):
                    for j in bad_idx:
                        bad.add(todo[j])
                        self._skip(srcs[j])
                    if ok:
                        probs = self._forward(self._match_probs, imgs.to_device(inputs, self.device)).numpy()
                        for j, p in zip(ok, probs):
                            cache.put_array(todo[j], np.asarray([p]))
                    bar.update(len(ok) + len(bad_idx))
                bar.close()
        finally:
            cache.flush()
        out = np.full(len(keys), np.nan)
        for i, k in enumerate(keys):
            v = cache.get_array(k)
            if v is not None:
                out[i] = float(v[0])
            elif k not in bad:
                self._skip(images[i])
        return out

    def _choice_head(self, head: str | None) -> str:
        head = head or self.choice_head
        if head not in ("similarity", "match"):
            raise ValueError(f"head must be 'similarity' or 'match', not {head!r}")
        self._require(head, f"choose with the {head!r} head")
        return head

    def choose_text(self, images: Sequence[Any], candidates: Sequence[Sequence[str]], head: str | None = None
                    ) -> np.ndarray:
        """(N, K) scores of K candidate texts for each of N images.

        ``head="similarity"`` (dual encoders' default): softmax over the K texts of the similarity logits (rows sum
        to 1).  ``head="match"`` (ITM models' default): the match probability of each pair, not renormalised.
        """
        images = list(images)
        cands = [list(map(str, c)) for c in candidates]
        k = _same_length(cands, "candidates")
        if len(cands) != len(images):
            raise ValueError(f"choose_text() needs one candidate list per image: {len(images)} vs {len(cands)}")
        if self._choice_head(head) == "match":
            flat = self.match([im for im in images for _ in range(k)], [t for c in cands for t in c])
            return flat.reshape(len(images), k)
        img_emb = self._image_embeddings(images)
        txt_emb = self._text_embeddings([t for c in cands for t in c]).reshape(len(images), k, -1)
        scale, bias = self._logit_scale_bias()
        logits = scale * np.einsum("nd,nkd->nk", img_emb.astype(np.float64), txt_emb.astype(np.float64)) + bias
        return _softmax(logits)

    def choose_image(self, image_lists: Sequence[Sequence[Any]], texts: Sequence[str], head: str | None = None
                     ) -> np.ndarray:
        """(N, K) scores of K candidate images for each of N texts (same heads and normalisation as choose_text)."""
        lists = [list(c) for c in image_lists]
        texts = [str(t) for t in texts]
        k = _same_length(lists, "image_lists")
        if len(lists) != len(texts):
            raise ValueError(f"choose_image() needs one image list per text: {len(lists)} vs {len(texts)}")
        if self._choice_head(head) == "match":
            flat = self.match([im for c in lists for im in c], [t for t in texts for _ in range(k)])
            return flat.reshape(len(texts), k)
        img_emb = self._image_embeddings([im for c in lists for im in c]).reshape(len(texts), k, -1)
        txt_emb = self._text_embeddings(texts)
        scale, bias = self._logit_scale_bias()
        logits = scale * np.einsum("nkd,nd->nk", img_emb.astype(np.float64), txt_emb.astype(np.float64)) + bias
        return _softmax(logits)

    # --------------------------------------------------------------------------------------------- fill_mask
    @property
    def mask_token(self) -> str:
        return self.tokenizer.mask_token

    def word_pieces(self, word: str) -> list[str]:
        """How the tokenizer splits ``word`` as it appears after a space (insert that many MASKs to mask it)."""
        self._require("fill_mask", "predict masked words")
        lead = self.tokenizer.tokenize("a")
        return self.tokenizer.tokenize("a " + word)[len(lead):]

    def fill_mask(self, texts: Sequence[str], images: Sequence[Any] | None = None, k: int = 5) -> list:
        """Top-k words for every MASK in each text: per text, a list over masked positions of k (word, prob).

        Probabilities are the softmax over the vocabulary at that position (positions predicted independently).
        A text whose image is unreadable gets None.  Text-only models take ``images=None``.
        """
        self._require("fill_mask", "predict masked words")
        texts = [str(t) for t in texts]
        if images is not None:
            if self.text_only:
                raise CapabilityError(f"{self.name} ({self.family}) is text-only: it sees no image; call "
                                      f"fill_mask(texts) without images (it has: {', '.join(sorted(self.capabilities))})")
            images = list(images)
            if len(images) != len(texts):
                raise ValueError(f"fill_mask() needs one image per text: {len(images)} vs {len(texts)}")
        elif self.mlm_needs_image:
            raise ValueError(f"{self.name} ({self.family}) predicts masked words from an image and a text: pass "
                             f"images=... (for a blank-image ablation pass a blank image file; for a text-only "
                             f"baseline use a text-only model such as 'toy-bert' or 'bert-base')")
        for t in texts:
            if MASK not in t:
                raise ValueError(f"fill_mask() text has no {MASK}: {t!r}")
        ikeys = [imgs.image_key(x) for x in images] if images is not None else [""] * len(texts)
        keys = [item_key(ik, t, k) for ik, t in zip(ikeys, texts)]
        cache = self._cache("fill_mask")
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        todo = sorted((key for key in first if cache.get(key) is None), key=lambda key: ikeys[first[key]])
        bad: set[str] = set()
        try:
            if todo:
                bar = _progress(len(todo), self.batch_size, f"{self.name}: fill_mask")
                todo_texts = [texts[first[key]].replace(MASK, self.mask_token) for key in todo]
                if images is None:
                    loader = ((list(range(s, min(s + self.batch_size, len(todo)))),
                               self._tokenize(todo_texts[s:s + self.batch_size]), [])
                              for s in range(0, len(todo), self.batch_size))
                else:
                    srcs = [images[first[key]] for key in todo]
                    loader = imgs.batches(srcs, self._prepare_pairs, extras=todo_texts, batch_size=self.batch_size,
                                          num_workers=self.num_workers)
                for ok, inputs, bad_idx in loader:
                    for j in bad_idx:
                        bad.add(todo[j])
                        self._skip(srcs[j])
                    if ok:
                        probs, idx, rows = self._forward(self._mlm_top_k, imgs.to_device(inputs, self.device), k)
                        for row, j in enumerate(ok):
                            sel = (rows == row).nonzero().flatten().tolist()
                            cache.put_json(todo[j], [self._words(probs[i], idx[i]) for i in sel])
                    bar.update(len(ok) + len(bad_idx))
                bar.close()
        finally:
            cache.flush()
        out = []
        for i, key in enumerate(keys):
            res = cache.get_json(key)
            if res is None and key not in bad:
                self._skip(images[i])
            out.append(None if res is None else [[(w, p) for w, p in pos] for pos in res])
        return out

    def _mlm_top_k(self, inputs: dict, k: int):
        """Softmax over the vocabulary at every MASK position; top-k (probs, ids) and each position's row."""
        logits = self._mlm_logits(inputs)
        rows, cols = (inputs["input_ids"] == self.tokenizer.mask_token_id).nonzero(as_tuple=True)
        probs = logits[rows, cols].float().softmax(-1)
        top = probs.topk(min(k, probs.shape[-1]), dim=-1)
        return top.values, top.indices, rows

    def _words(self, probs: torch.Tensor, ids: torch.Tensor) -> list:
        tokens = self.tokenizer.convert_ids_to_tokens(ids.tolist())
        return [[self.tokenizer.convert_tokens_to_string([t]).strip(), float(p)] for t, p in zip(tokens, probs.tolist())]


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - np.max(x, axis=-1, keepdims=True) if x.size else x
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _same_length(lists: list[list], what: str) -> int:
    lengths = {len(c) for c in lists}
    if len(lengths) > 1:
        raise ValueError(f"every entry of {what} must have the same number of candidates; got lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 0


__all__ = ["Scorer", "CapabilityError", "MASK"]
