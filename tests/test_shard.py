"""A chapter sharded with torch.distributed (probekit.shard): ``torchrun --nproc_per_node 2 -m probekit run verbs``
on the gloo backend gives the rows of one process, each item scored once by one rank; ranks whose keys of an image
differ score under rank 0's, after rank 0 made the files (tests/shard_job.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch

from conftest import copy_project
from probekit import shard
from probekit.cache import ScoreCache
from probekit.cli import main
from probekit.scorers import load_scorer

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [0, 1, 5, 9, 10, 23])
def test_the_ranks_parts_are_whole_batches_in_rank_order(world, n):
    todo = list(range(n))
    parts = [shard.share(todo, 3, rank, world) for rank in range(world)]
    assert sum(parts, []) == todo
    assert all(len(p) % 3 == 0 for p in parts[:-1] if p)  # the batches one process would have made
    assert max(map(len, parts)) - min(map(len, parts)) <= 3


@pytest.mark.parametrize("visible, local, gpus, want", [
    (None, "1", 4, "1"), (None, "5", 4, "1"), ("2,3", "1", 8, "3"), (None, "0", 0, None), ("", "1", 2, None)])
def test_each_local_rank_gets_its_own_gpu(monkeypatch, visible, local, gpus, want):
    monkeypatch.setenv("LOCAL_RANK", local)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    env = shard.kernel_environment(gpu_count=gpus)
    assert env[shard.ACTIVE] == "1" and env.get("CUDA_VISIBLE_DEVICES") == want


def test_a_cache_reads_what_another_process_wrote_when_refreshed(tmp_path):
    mine, theirs = (ScoreCache(tmp_path, "model", "match", 1) for _ in range(2))
    mine.put("a", b"1")
    assert theirs.get("a") is None
    theirs.put("b", b"2")
    theirs.flush()
    mine.refresh()   # flushes "a", reads "b"
    theirs.refresh()
    assert (mine.get("b"), theirs.get("a")) == (b"2", b"1")


def test_the_book_is_not_run_on_several_ranks(monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["--root", str(REPO), "book", "--quiet"]) == 2
    assert "torchrun ... -m probekit run CHAPTER" in capsys.readouterr().err


def scored_keys(cache: Path) -> tuple[dict[str, int], int]:
    """{(model, method, key): times stored} over every shard of a score cache, and the number of shards."""
    counts: dict = {}
    shards = sorted(cache.glob("*/*/part-*.parquet"))
    for part in shards:
        for key in pq.read_table(part).column("key").to_pylist():
            item = (part.parent.parent.name, part.parent.name, key)
            counts[item] = counts.get(item, 0) + 1
    return counts, len(shards)


def test_a_chapter_on_two_ranks_gives_the_rows_of_one_process(tmp_path):
    data, out = tmp_path / "data", {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    for ranks in (2, 1):  # two ranks first: they also make the toy data at once
        project = copy_project(tmp_path / f"project{ranks}")
        launcher = ([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
                    if ranks == 2 else [sys.executable])
        cmd = [*launcher, "-m", "probekit", "--root", str(project), "run", "verbs", "-p", "limit", "24", "-p",
               "data_dir", str(data), "-p", "cache_dir", str(tmp_path / f"scores{ranks}"), "--no-build", "--quiet"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        out[ranks] = [pd.read_parquet(project / "book" / "chapters" / f"verbs.{kind}.parquet")
                      for kind in ("results", "items")]
        assert not (project / "book" / "chapters" / "prednoun.ipynb").exists()  # one chapter only
    for one, two in zip(out[1], out[2]):
        assert len(one) and one.equals(two)
    alone, split = scored_keys(tmp_path / "scores1"), scored_keys(tmp_path / "scores2")
    assert alone[0].keys() == split[0].keys() and set(split[0].values()) == {1}  # every item scored once
    assert split[1] > alone[1]  # by two ranks, each writing its own shards


def test_ranks_score_under_rank_0s_keys_after_rank_0_made_the_files(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"),
                                                          os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(REPO / "tests" / "shard_job.py"), str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert ranks[0]["made"] == ["0", "1"]   # rank 0 made the images first, rank 1 then found them
    assert ranks[0]["scores"] == ranks[1]["scores"]
    alone = load_scorer("toy-vilt", device="cpu", cache_dir=False, batch_size=4)
    images = sorted(map(str, (tmp_path / "images").glob("*.png")), key=lambda p: int(Path(p).stem))
    torch.manual_seed(0)
    assert ranks[0]["scores"] == alone.match([images[i % 6] for i in range(10)],
                                             [f"a dog holding ball number {i}" for i in range(10)]).tolist()
    counts, _ = scored_keys(tmp_path / "scores")
    assert len(counts) == 10 and set(counts.values()) == {1}   # rank 0's keys, each scored once
    assert all("every rank must run the same chapter" in r["refused"] for r in ranks)
