"""Scoring a chapter on several processes: ``torchrun --nproc_per_node N -m probekit run CHAPTER ...``.

torchrun starts N copies of ``probekit run`` (on one node, or on several with its ``--nnodes``, ``--node-rank`` and
``--rdzv-endpoint`` options).  Each executes the chapter: rank 0 into the book, as one process would, the others
into a temporary directory they discard.  In their chapter kernels (:func:`kernel_environment` marks them), every
scorer call that has items not yet in the score cache shards them (:meth:`probekit.scorers.engine.Engine._compute`):

1. the ranks take rank 0's cache keys of the call's items and its list of those to score (:func:`agree`): they
   run the same chapter on the same data, but a file written by each rank (a generated image, say) has its own
   modification time on each, which is part of an image's key;
2. each scores its own contiguous share of whole batches (:func:`share`), the batches one process would have
   made, into the shared score cache;
3. all wait for each other (:func:`gather`), then read every item's score back from the cache.

What a chapter writes and then loads (its data set: downloads, generated or cropped images; a model: converted
or fine-tuned) is made by rank 0 first, the others waiting and then finding it made (:func:`rank_zero_first`,
around ``load_dataset``, ``load_scorer`` and the fine-tuning cache), so two ranks never write one file at once
and all load the same files.

So each item is scored once, by one rank, and every rank reads the same scores: the chapter's rows equal a
single-process run's.  The ranks exchange only the keys to score, over gloo (TCP); the scores go through the cache,
so on several nodes ``cache_dir`` (or ``PROBEKIT_CACHE``) must be one directory every node sees.  Scorers without an
on-disk cache (``cache_dir=False``) are not sharded: each rank scores everything.  On a machine with several GPUs,
rank ``LOCAL_RANK`` uses the ``LOCAL_RANK``-th visible GPU.  A rank waits for the others at most ``TIMEOUT``.
"""

from __future__ import annotations

import datetime
import os
from typing import Callable, TypeVar

T = TypeVar("T")

#: set (to "1") in the environment of the chapter kernels of a sharded run
ACTIVE = "PROBEKIT_SHARDED"
TIMEOUT = datetime.timedelta(days=1)  # rank 0 may be downloading a data set meanwhile


def launched() -> tuple[int, int]:
    """(rank, world size) a launcher such as torchrun gave this process; (0, 1) without one."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def kernel_environment(gpu_count: int | None = None) -> dict[str, str]:
    """What a rank's chapter kernel is started with: the mark that shards its scoring and, where there are GPUs,
    the one of its local rank (``CUDA_VISIBLE_DEVICES``; ranks share GPUs round robin when there are fewer)."""
    env = {ACTIVE: "1"}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        if gpu_count is None:
            import torch
            gpu_count = torch.cuda.device_count()
        gpus = [str(i) for i in range(gpu_count)]
    else:
        gpus = [g for g in visible.split(",") if g.strip()]
    if gpus:
        env["CUDA_VISIBLE_DEVICES"] = gpus[int(os.environ.get("LOCAL_RANK", 0)) % len(gpus)]
    return env


_in_turn = False  # inside rank_zero_first: no collective (the ranks are not in step there)


def active() -> bool:
    """Whether this process's scoring is sharded (a chapter kernel of a run with several ranks)."""
    return os.environ.get(ACTIVE) == "1" and launched()[1] > 1 and not _in_turn


def rank_zero_first(make: Callable[[], T]) -> T:
    """``make()``, on rank 0 before the other ranks (which then find what it wrote: a data set, a converted or
    fine-tuned model), when sharded; calls inside it run alone on each rank.  Just ``make()`` otherwise."""
    if not active():
        return make()
    dist = _group()
    if dist.get_rank() != 0:
        dist.barrier()   # until rank 0 has made it
    out = _alone(make)
    if dist.get_rank() == 0:
        dist.barrier()
    return out


def _alone(make):
    global _in_turn
    _in_turn = True
    try:
        return make()
    finally:
        _in_turn = False


def _group():
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("gloo", init_method="env://", timeout=TIMEOUT)
    return dist


def agree(keys: list[str], todo: list[str]) -> tuple[list[str], list[str]]:
    """Rank 0's cache keys of a call's items and its keys to score, on every rank; on every rank, an error
    naming the way out where the ranks have different numbers of items."""
    dist = _group()
    sizes: list = [None] * dist.get_world_size()
    dist.all_gather_object(sizes, len(keys))
    if len(set(sizes)) > 1:
        raise RuntimeError(f"probekit: the ranks have {sizes} items (rank 0 first) in one scoring call: every rank "
                           "must run the same chapter with the same parameters and data")
    box: list[tuple[list[str], list[str]] | None] = [(keys, todo) if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    assert box[0] is not None  # the broadcast filled it from rank 0
    return box[0]


def share(todo: list, batch_size: int, rank: int | None = None, world: int | None = None) -> list:
    """This rank's part of ``todo``: a contiguous run of whole batches of ``batch_size`` (the ranks' parts, in
    rank order, are ``todo``)."""
    if rank is None or world is None:
        dist = _group()
        rank, world = dist.get_rank(), dist.get_world_size()
    batches = -(-len(todo) // batch_size)
    first, last = rank * batches // world, (rank + 1) * batches // world
    return todo[first * batch_size:last * batch_size]


def gather(cache) -> None:
    """Wait until every rank has scored its part into the shared cache, then read what they wrote."""
    cache.flush()
    _group().barrier()
    cache.refresh()
