"""The one batching engine every scorer method runs through: dedupe -> cache lookup -> batch -> forward -> cache.

``Engine._compute`` takes one cache key per item (image identity and/or text and options, see
:func:`probekit.cache.item_key`), computes each distinct key not yet in the method's :class:`ScoreCache` once, in
batches, and returns the cached value of every item (None where its image is missing or unreadable; such images
are listed in ``scorer.skipped``).  Items with images are decoded and preprocessed by the scorer's
:class:`probekit.images.Loader` (in persistent worker processes when ``num_workers > 0``, ahead of the forward,
pinned for CUDA); text-only items are chunked here, and a dual encoder's texts are embedded while the workers
decode the first image batches (``meanwhile``, see :meth:`Engine._embeddings`).  Forwards run under inference
mode (and mixed-precision autocast when ``precision`` is fp16/bf16) and are timed (``forward_seconds``).  A batch
that runs out of GPU memory is split in halves until it fits; the scorer then keeps the smaller ``batch_size``
and warns, naming it (see :func:`fitting_batch`).  Under ``torchrun`` each rank scores its share of the items
not yet cached and reads the others' from the shared cache (:mod:`probekit.shard`).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable, Iterable, Literal, Sequence

import torch

from probekit import images as imgs
from probekit import shard
from probekit.cache import NullCache, ScoreCache
from probekit.device import autocast
from probekit.progress import bar, record

#: bump when the way a method computes its numbers changes, so old cached scores are not reused
RECIPES = {"image_embed": 1, "text_embed": 1, "match": 1, "fill_mask": 2, "mask_logprobs": 1, "token_logprobs": 1,
           "detect": 1}


def progress(total: int, batch_size: int, desc: str):
    return bar(total=total, desc=desc, disable=total <= max(2 * batch_size, 100), leave=False)


class Engine:
    """Batching, caching and skipping for a :class:`probekit.scorers.base.Scorer` (its base class).

    Expects ``name``, ``device``, ``precision`` ("fp32", "fp16" or "bf16"), ``batch_size``, ``num_workers``,
    ``skipped``, ``forward_seconds``, ``fingerprint``, ``_cache_root`` (None, a directory, or False for an
    in-memory cache), ``_caches`` (a dict) and ``_loader`` (None until the first batch of images) on the instance,
    and ``device_pixels``, ``decode_on_device`` and ``_device_inputs`` (see :mod:`probekit.scorers.pixels`).
    """

    # what the Scorer sets (declared here for the type checker; nothing is set on the class)
    name: str
    label: str
    device: torch.device
    precision: str
    batch_size: int
    num_workers: int
    skipped: list[str]
    forward_seconds: float
    fingerprint: str
    _cache_root: str | os.PathLike[str] | None | Literal[False]
    _caches: dict[str, ScoreCache]
    _loader: imgs.Loader | None
    device_pixels: bool
    decode_on_device: bool
    _device_inputs: Callable[[dict[str, Any]], dict[str, Any]]
    _image_embeddings: Callable[..., Any]
    _text_embeddings: Callable[[Sequence[str]], Any]
    # and the hooks only the families with the head define, which the Scorer calls
    _embed_images: Callable[[dict[str, Any]], Any]
    _embed_texts: Callable[[dict[str, Any]], Any]
    _logit_scale_bias: Callable[[], tuple[float, float]]
    _match_probs: Callable[[dict[str, Any]], Any]
    _detect_boxes: Callable[..., Any]

    def _cache(self, method: str) -> ScoreCache:
        if method not in self._caches:
            if self._cache_root is False:
                self._caches[method] = NullCache()
            else:
                self._caches[method] = ScoreCache(self._cache_root, self.fingerprint, method, RECIPES[method],
                                                  flush_every=self.batch_size * 8)
        return self._caches[method]

    def _forward(self, fn, *args):
        """Run one model forward in inference mode (and mixed-precision autocast), timing it; tensors come back
        as float32 on the CPU."""
        t0 = time.perf_counter()
        with torch.inference_mode(), autocast(self.device, self.precision):
            out = fn(*args)
            if isinstance(out, torch.Tensor):
                out = out.float().cpu()
            elif isinstance(out, tuple):
                out = tuple((o.float() if o.is_floating_point() else o).cpu() for o in out)
        self.forward_seconds += time.perf_counter() - t0
        return out

    def _embeddings(self, images: list, texts: list) -> tuple:
        """Image and text embeddings (``_image_embeddings``, ``_text_embeddings``); the texts are embedded while
        the loader workers decode the first batches of images."""
        txt: list = []
        img = self._image_embeddings(images, meanwhile=lambda: txt.append(self._text_embeddings(texts)))
        return img, txt[0] if txt else self._text_embeddings(texts)

    def _skip(self, img: Any) -> None:
        desc = imgs.describe(img)
        if desc not in self.skipped:
            self.skipped.append(desc)

    def _compute(self, method: str, keys: Sequence[str], forward: Callable[[dict], Iterable], *,
                 prepare: str, images: Sequence[Any] | None = None,
                 extras: Sequence[Any] | None = None, json: bool = False, sort_keys: Sequence[str] | None = None,
                 desc: str = "", meanwhile: Callable[[], Any] | None = None) -> list:
        """The cached value of every item: each distinct key computed once, batched, then read back.

        ``prepare`` names the scorer's method ``prepare(pils, extras) -> inputs`` that builds a batch (``pils`` is
        empty for text-only items, i.e. when ``images`` is None; a name, so that worker processes can call it); ``forward(inputs)`` returns one value per row (an array, or a JSON-able value when
        ``json``).  ``sort_keys`` (one per item, e.g. image keys) orders the work so that rows sharing an image
        are batched together, images in the order of their first use (so batches do not depend on file paths).  None for an item whose image is missing or unreadable.  ``meanwhile`` (if any) is
        called once there is work, after the loader workers were handed the first batches (so that it runs while
        they decode), before the first forward.
        """
        cache = self._cache(method)
        get, put = (cache.get_json, cache.put_json) if json else (cache.get_array, cache.put_array)
        first = first_positions(keys)
        todo = [key for key in first if cache.get(key) is None]
        if sort_keys is not None:  # group rows by image, images in order of first use (not by key: keys hold paths)
            rank = first_positions(sort_keys)
            todo.sort(key=lambda key: rank[sort_keys[first[key]]])
        sharded = shard.active() and cache.dir is not None  # several ranks, one shared cache: see probekit.shard
        if sharded:  # every rank scores and reads under rank 0's keys
            keys, todo = shard.agree(list(keys), todo)
            first = first_positions(keys)
        bad: set[str] = set()
        try:
            if todo:
                mine = shard.share(todo, self.batch_size) if sharded else todo
                self._run(mine, first, forward, prepare, images, extras, put, bad, desc, meanwhile)
        finally:
            cache.flush()
        if sharded:
            shard.gather(cache)
        out = []
        for i, key in enumerate(keys):
            value = get(key)
            if value is None and key not in bad and images is not None:
                self._skip(images[i])
            out.append(value)
        return out

    def _run(self, todo, first, forward, prepare: str, images, extras, put, bad: set, desc: str,
             meanwhile=None) -> None:
        t0 = time.perf_counter()
        todo_extras = [extras[first[key]] for key in todo] if extras is not None else None
        if images is None:
            prep = getattr(self, prepare)
            assert todo_extras is not None  # items without images are their extras (texts)
            loader: Iterable[tuple[list[int], Any, list[Any]]] = ((list(range(s, min(s + self.batch_size, len(todo)))),
                       prep([], todo_extras[s:s + self.batch_size]), [])
                      for s in range(0, len(todo), self.batch_size))
            srcs: list = []
        else:
            if self._loader is None:
                load = imgs.load_encoded if self.device_pixels and self.decode_on_device else imgs.load_image
                self._loader = imgs.Loader(self, self.num_workers, pin_memory=self.device.type == "cuda", load=load)
            srcs = [images[first[key]] for key in todo]
            loader = self._loader.batches(prepare, srcs, todo_extras, self.batch_size)
        if meanwhile is not None:
            meanwhile()
        progress_bar = progress(len(todo), self.batch_size, f"{self.label}: {desc}")
        for ok, inputs, bad_idx in loader:
            for j in bad_idx:
                bad.add(todo[j])
                self._skip(srcs[j])
            if ok:
                inputs = self._device_inputs(imgs.to_device(inputs, self.device))
                for j, value in zip(ok, self._fitting(forward, inputs, len(ok))):
                    put(todo[j], value)
            progress_bar.update(len(ok) + len(bad_idx))
        progress_bar.close()
        record(model=self.name, job=desc, items=len(todo), seconds=time.perf_counter() - t0)

    def _fitting(self, forward, inputs: dict, n: int) -> list:
        """``forward(inputs)`` in slices of at most ``batch_size`` rows; a slice that runs out of GPU memory is
        halved (and ``batch_size`` lowered to what fits, with a warning naming it) until one row alone does not fit."""
        out: list = []
        s, failed = 0, 0
        while s < n:
            size = min(self.batch_size, n - s)
            try:
                out.extend(forward(inputs if size == n else rows(inputs, s, s + size, n)))
            except torch.OutOfMemoryError as err:
                self.batch_size, failed = fitting_batch(size, err, self.name), failed or size
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                continue
            if failed:
                warnings.warn(f"probekit: {self.name}: a batch of {failed} ran out of {self.device.type} memory; "
                              f"continuing with batch_size={self.batch_size} (pass batch_size={self.batch_size} to "
                              f"load_scorer to start there)", stacklevel=2)
                failed = 0
            s += size
        return out


def first_positions(keys: Sequence) -> dict:
    """{key: the position of its first item}."""
    first: dict = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    return first


def fitting_batch(size: int, err: BaseException, name: str = "model") -> int:
    """The batch size to try after ``size`` ran out of memory: half of it; an error naming the way out when
    even one item does not fit."""
    if size <= 1:
        raise torch.OutOfMemoryError(f"probekit: {name}: one item alone does not fit in GPU memory ({err}); free "
                                     f"the GPU, use a smaller model, or load it with device='cpu'") from err
    return size // 2


def rows(inputs: dict, start: int, stop: int, n: int) -> dict:
    """Rows ``start:stop`` of a batch of ``n``: every tensor whose first axis is the batch axis is sliced."""
    return {k: (v[start:stop] if isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == n else v)
            for k, v in inputs.items()}
