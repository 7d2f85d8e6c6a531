"""The Scorer contract: the public questions a model answers, and the hooks every family adapter fills in.

An adapter (one small module per family) loads its model and implements some of these hooks:

* ``_prepare_images(pils) -> dict``            preprocessing of decoded RGB images (in the DataLoader workers; with
                                               ``device_pixels``, of uint8 tensors on the device: pixels.py)
* ``_tokenize(texts) -> dict``                 text inputs
* ``_embed_images(inputs)``/``_embed_texts``   unit-norm embeddings (B, D)         -> capability "similarity"
* ``_logit_scale_bias() -> (scale, bias)``     similarity logits = scale * cos + bias
* ``_match_probs(inputs) -> (B,)``             ITM probability of paired inputs    -> capability "match"
* ``_mlm_logits(inputs) -> (B, L, V)``         masked-LM logits at the text tokens -> capability "fill_mask"
* ``_prepare_detection(pils, queries)``/``_detect_boxes(inputs)``  one box (or None) per pair -> "detect"

Public methods check the capability, build one cache key per item and hand the work to the batching engine
(:mod:`probekit.scorers.engine`: dedupe, cache, batches, NaN/None for unreadable images, progress bars).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from probekit import images as imgs
from probekit.cache import item_key, loaded_identity, model_fingerprint
from probekit.device import precision_for, resolve_device
from probekit.scorers import mlm, registry
from probekit.scorers.engine import Engine
from probekit.scorers.pixels import DevicePixels

MASK = mlm.MASK


class CapabilityError(Exception):
    """The model cannot answer this question (e.g. CLIP has no ITM head; BERT sees no image)."""


class Scorer(mlm.MaskedWords, DevicePixels, Engine):
    """One model behind the questions ``match``, ``similarity`` (+ ``choose_text``/``choose_image``), ``fill_mask``
    (+ ``token_logprobs``, ``mask_logprobs``) and ``detect``."""
    family: str = ""
    #: which head answers choose_text/choose_image by default: "similarity" (softmax over candidates) or "match"
    choice_head: str = "match"
    #: whether fill_mask needs an image (False for text-only models, None when both work)
    mlm_needs_image: bool | None = True
    text_only: bool = False
    family_capabilities = property(lambda self: registry.FAMILY_CAPABILITIES.get(self.family, ()))  # plugins: a tuple
    #: a plugin family's head (how its scores are computed and normalised, one line; built-ins: FAMILY_HEADS) ...
    head_description: str = ""
    model_types: tuple[str, ...] = ()  # ... and the config model_type values it scores (built-ins: MODEL_TYPES)
    #: what else a detection depends on (query template, threshold): part of its cache key
    detect_setting: str = ""
    loaded_from, load_settings = (), ""  # files _load read (default: source) and settings beyond them: the cache key

    def __init__(self, name: str, source: str, capabilities: Sequence[str] | None, *, device="auto", batch_size: int = 32,
                 cache_dir=None, num_workers: int = 0, half: bool | None = None, revision: str | None = None,
                 head: str = "", options: dict | None = None, device_pixels: bool | None = None):
        self.name = self.label = name   # label: what progress bars call it (a caller may name a checkpoint better)
        self.source = source
        #: None until _load: adapters may narrow it to the heads the checkpoint actually has
        self.capabilities: frozenset[str] = (  # a set once __init__ returns
            frozenset(capabilities) if capabilities else None)  # type: ignore[assignment]  # None until _load
        self.head = head
        self.device = resolve_device(device)
        self.precision = precision_for(self.device, half)  # "fp32", or autocast to "fp16"/"bf16"
        self.batch_size = int(batch_size)
        self.num_workers = int(num_workers)
        self.skipped: list[str] = []
        self.patch_size: int | None = None
        self.image_size: int | None = None
        self.preprocessing: str = ""
        self.forward_seconds = 0.0  # wall time spent inside model forwards (see benchmarks/scoring.py)
        self.revision = revision
        self._cache_root = cache_dir
        self._load(source, **(options or {}))
        if self.capabilities is None:
            self.capabilities = frozenset(self.family_capabilities)
        extra = self.capabilities - frozenset(self.family_capabilities)
        if extra:
            raise CapabilityError(f"{self.family} models have no {sorted(extra)} capability; "
                                  f"they have: {', '.join(self.family_capabilities)}")
        self.device_pixels = self._resolve_device_pixels(device_pixels)
        self.model_revision = self._resolved_revision()
        self.fingerprint = model_fingerprint(name, source, self.model_revision) + (  # each cached apart
            "" if self.precision == "fp32" else f"-{self.precision}") + ("-devpix" if self.device_pixels else "")
        self._caches: dict = {}
        self._loader = None  # probekit.images.Loader, made at the first batch of images

    # ------------------------------------------------------------------------------------------------ hooks
    def _load(self, source: str, **options) -> None:
        raise NotImplementedError

    def _resolved_revision(self) -> str | None:
        """The bytes of the files the weights came from (:func:`probekit.cache.loaded_identity`), else a commit."""
        commit = getattr(getattr(getattr(self, "model", None), "config", None), "_commit_hash", None)
        return loaded_identity(self.family, self.loaded_from or (self.source,), self.load_settings,
                               self._cache_root) or commit or self.revision

    def _prepare_images(self, pils: list) -> dict:
        raise NotImplementedError

    def _tokenize(self, texts: list[str]) -> dict:
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------------ helpers
    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.family} {sorted(self.capabilities)} on {self.device}>"

    def _require(self, capability: str, what: str) -> None:
        if capability not in self.capabilities:
            has = ", ".join(sorted(self.capabilities)) or "nothing"
            raise CapabilityError(f"{self.name} ({self.family}) cannot {what}: it has no {capability!r} capability; "
                                  f"it has: {has}")

    def _prepare_only_texts(self, _pils: list, texts: list) -> dict:
        return self._tokenize(list(texts))

    # --------------------------------------------------------------------------------------------- embeddings
    def _image_embeddings(self, images: Sequence[Any], meanwhile=None) -> np.ndarray:
        """(M, D) unit embeddings; each unique image embedded once (and cached); NaN rows for unreadable images."""
        rows = self._compute("image_embed", [item_key(k) for k in imgs.image_keys(images)],
                             lambda inputs: self._forward(self._embed_images, inputs).numpy(),
                             prepare="_prepare_only_images", images=images, desc="images", meanwhile=meanwhile)
        dim = next((r.shape[0] for r in rows if r is not None), 1)
        return np.stack([r if r is not None else np.full(dim, np.nan, np.float32) for r in rows]) if rows \
            else np.zeros((0, dim), np.float32)

    def _text_embeddings(self, texts: Sequence[str]) -> np.ndarray:
        """(N, D) unit embeddings; each unique text embedded once (and cached)."""
        texts = [str(t) for t in texts]
        rows = self._compute("text_embed", [item_key("text", t) for t in texts],
                             lambda inputs: self._forward(self._embed_texts, inputs).numpy(),
                             prepare="_prepare_only_texts", extras=texts, desc="texts")
        return np.stack(rows) if rows else np.zeros((0, 1), np.float32)

    def _pair_logits(self, img_emb: np.ndarray, txt_emb: np.ndarray) -> np.ndarray:
        """scale x cosine (+ bias) of aligned rows of unit embeddings (broadcast over the leading axes)."""
        scale, bias = self._logit_scale_bias()
        return scale * np.einsum("...d,...d->...", img_emb.astype(np.float64), txt_emb.astype(np.float64)) + bias

    def _logits(self, img_emb: np.ndarray, txt_emb: np.ndarray) -> np.ndarray:
        scale, bias = self._logit_scale_bias()
        return scale * (img_emb.astype(np.float64) @ txt_emb.astype(np.float64).T) + bias

    # ----------------------------------------------------------------------------------------------- public
    def similarity(self, images: Sequence[Any], texts: Sequence[str]) -> np.ndarray:
        """(M, N) similarity logits (the model's scale x cosine [+ bias]) of every image x every text.

        Each unique image and text is embedded once; rows of unreadable images are NaN.
        """
        self._require("similarity", "compute image-text similarities")
        return self._logits(*self._embeddings(list(images), list(texts)))

    def match(self, images: Sequence[Any], texts: Sequence[str]) -> np.ndarray:
        """(N,) probability that image i and text i match, in [0, 1]; NaN where the image is unreadable."""
        self._require("match", "score image-text matching (no ITM head)")
        images, texts = list(images), [str(t) for t in texts]
        if len(images) != len(texts):
            raise ValueError(f"match() needs one text per image: got {len(images)} images and {len(texts)} texts")
        if "similarity" in self.capabilities and self.choice_head == "similarity":
            # dual encoder with a pairwise-calibrated head (SigLIP): sigmoid of the pair's logit
            logit = self._pair_logits(*self._embeddings(images, texts))
            return 1.0 / (1.0 + np.exp(-logit))
        return self._pair_scores(images, texts)

    def _pair_scores(self, images: list, texts: list[str]) -> np.ndarray:
        """Cross-encoder ITM probabilities: unique (image, text) pairs, grouped by image, batched, cached."""
        ikeys = imgs.image_keys(images)
        rows = self._compute("match", [item_key(ik, t) for ik, t in zip(ikeys, texts)],
                             lambda inputs: self._forward(self._match_probs, inputs).numpy(),
                             prepare="_prepare_pairs", images=images, extras=texts, sort_keys=ikeys, desc="pairs")
        return np.array([np.nan if r is None else float(r[0]) for r in rows], dtype=np.float64)

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
        img_emb, txt_emb = self._embeddings(images, [t for c in cands for t in c])
        return _softmax(self._pair_logits(img_emb[:, None], txt_emb.reshape(len(images), k, -1)))

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
        img_emb, txt_emb = self._embeddings([im for c in lists for im in c], texts)
        return _softmax(self._pair_logits(img_emb.reshape(len(texts), k, -1), txt_emb[:, None]))

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
        for t in texts:
            if MASK not in t:
                raise ValueError(f"fill_mask() text has no {MASK}: {t!r}")
        rows = self._mlm("fill_mask", texts, images, (k,), [t.replace(MASK, self.mask_token) for t in texts],
                         lambda inputs: self._forward(mlm.top_k_words, self._mlm_logits, inputs, self.tokenizer, k))
        return [None if res is None else [[(w, p) for w, p in pos] for pos in res] for res in rows]

    def token_logprobs(self, texts: Sequence[str], images: Sequence[Any] | None = None) -> list:
        """Per text, an array with, for every sub-word token (special tokens, [UNK] included, excluded), log P(true
        token | the text with only that token replaced by the mask token), from the masked-LM head; None where
        the image is unreadable.  ``mlm.pseudo_perplexity`` of an entry is the text's exact pseudo-perplexity."""
        self._require("fill_mask", "score the tokens of a text with its masked-LM head")
        texts = [str(t) for t in texts]
        special, mask_id = self.tokenizer.all_special_ids, self.tokenizer.mask_token_id
        return self._mlm("token_logprobs", texts, images, (), texts, lambda inputs: [v.numpy() for v in self._forward(
            mlm.true_token_logprobs, self._mlm_logits, inputs, special, mask_id, self.batch_size)])

    def _mlm(self, method: str, texts: list[str], images, key_parts: tuple, model_texts: list, forward,
             prepare: str = "") -> list:
        """A masked-LM method: one cache key per (image, text, *key_parts), text-only or paired batches (or batches
        made by the scorer's method named ``prepare``)."""
        if images is not None:
            if self.text_only:
                raise CapabilityError(f"{self.name} ({self.family}) is text-only: it sees no image; call "
                                      f"{method}(texts) without images (it has: {', '.join(sorted(self.capabilities))})")
            images = list(images)
            if len(images) != len(texts):
                raise ValueError(f"{method}() needs one image per text: {len(images)} vs {len(texts)}")
        elif self.mlm_needs_image:
            raise ValueError(f"{self.name} ({self.family}) predicts masked words from an image and a text: pass "
                             f"images=... (for a blank-image ablation pass a blank image file; for a text-only "
                             f"baseline use a text-only model such as 'toy-bert' or 'bert-base')")
        ikeys = imgs.image_keys(images) if images is not None else [""] * len(texts)
        return self._compute(method, [item_key(ik, t, *key_parts) for ik, t in zip(ikeys, texts)], forward,
                             prepare=prepare or ("_prepare_only_texts" if images is None else "_prepare_pairs"),
                             images=images, extras=model_texts, json=method == "fill_mask", sort_keys=ikeys,
                             desc=method)

    # ---------------------------------------------------------------------------------------------- detect
    def detect(self, images: Sequence[Any], queries: Sequence[str]) -> list:
        """One box per (image, query) pair: the detector's highest-scoring box of the query above its threshold, as
        normalised (x, y, w, h) fractions of the image; None where nothing is detected or the image is unreadable
        (those are listed in ``skipped``)."""
        self._require("detect", "detect objects")
        images, queries = list(images), [str(q) for q in queries]
        if len(images) != len(queries):
            raise ValueError(f"detect() needs one query per image: {len(images)} vs {len(queries)}")
        ikeys = imgs.image_keys(images)
        rows = self._compute("detect", [item_key(ik, q, self.detect_setting) for ik, q in zip(ikeys, queries)],
                             lambda inputs: self._forward(self._detect_boxes, inputs), json=True,
                             prepare="_prepare_detection", images=images, extras=queries, sort_keys=ikeys,
                             desc="detect")
        return [tuple(r) if r else None for r in rows]


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
