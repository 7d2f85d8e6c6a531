"""One rank of a sharded scoring job, for tests/test_shard.py (started by torchrun with 2 ranks):

    python -m torch.distributed.run --standalone --nproc_per_node 2 tests/shard_job.py OUT_DIR

Rank 0 makes the images (``shard.rank_zero_first``) while rank 1 waits; on rank 1 every image then has another
cache key (as if it had written them again: another modification time), and both score the same pairs with
toy-vilt into one cache.  Each rank writes ``OUT_DIR/rank<R>.json``: its scores, the order in
which the ranks made the images, and whether a call with another number of items on each rank was refused.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

from pictures import random_pngs
from probekit import images as imgs
from probekit import shard
from probekit.scorers import load_scorer

out = Path(sys.argv[1])
rank = int(os.environ["RANK"])
os.environ[shard.ACTIVE] = "1"   # as probekit run sets it for a chapter kernel
log = out / "made.txt"
images = shard.rank_zero_first(lambda: log.open("a").write(f"{rank}\n") and random_pngs(out / "images", 6))
if rank == 1:  # as if rank 1 had written the images again: another modification time, so other cache keys
    real = imgs.image_key
    imgs.image_key = lambda img: real(img) + "|written again"
scorer = load_scorer("toy-vilt", device="cpu", cache_dir=out / "scores", batch_size=4)
texts = [f"a dog holding ball number {i}" for i in range(10)]
torch.manual_seed(0)
scores = scorer.match([images[i % 6] for i in range(10)], texts)
try:
    scorer.match(images[:2 + rank], texts[:2 + rank])   # another number of items on each rank
    refused = ""
except RuntimeError as err:
    refused = str(err)
(out / f"rank{rank}.json").write_text(json.dumps({"scores": scores.tolist(), "made": log.read_text().split(),
                                                  "refused": refused}))
