"""Concurrency: two real processes scoring overlapping inputs into one cache directory at once lose nothing and
corrupt nothing: every shard is whole, and the cache holds exactly what a single process puts there."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

JOB = str(Path(__file__).with_name("scoring_job.py"))


def _contents(cache: Path) -> dict[tuple[str, str], np.ndarray]:
    """(method directory, key) -> value of every shard; duplicates (computed by both processes) must agree."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for shard in sorted(cache.rglob("part-*.parquet")):
        table = pq.read_table(shard)  # raises on a partial or corrupt shard
        for key, raw in zip(table.column("key").to_pylist(), table.column("value").to_pylist()):
            value = np.frombuffer(raw, dtype=np.float32)
            where = (shard.parent.relative_to(cache).as_posix(), key)
            if where in out:
                np.testing.assert_allclose(out[where], value, atol=1e-5)
            out[where] = value
    return out


def _job(model, cache, images, start, stop, delay=0.0):
    return subprocess.Popen([sys.executable, JOB, model, str(cache), str(images), str(start), str(stop),
                             "--delay", str(delay)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("model", ["toy-vilt", "toy-clip"])
def test_two_processes_sharing_a_cache_lose_and_corrupt_nothing(tmp_path, model):
    shared, single, images = tmp_path / "shared", tmp_path / "single", tmp_path / "images"
    # overlapping halves: pairs 0-159 and 80-239, both running at the same time (the second starts once the
    # first has written a shard, so it also reads a cache another process is writing)
    first = _job(model, shared, images, 0, 160, delay=0.15)
    end = time.time() + 120
    while not list(shared.rglob("part-*.parquet")) and first.poll() is None and time.time() < end:
        time.sleep(0.05)
    second = _job(model, shared, images, 80, 240, delay=0.15)
    assert first.poll() is None, "the first job ended before the second started: slow it down"
    for proc in (first, second):
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    reference = _job(model, single, images, 0, 240)
    assert reference.wait(timeout=300) == 0, reference.stderr.read()

    assert not list(shared.rglob(".*tmp")) and not list(shared.rglob("*.part"))
    got, want = _contents(shared), _contents(single)
    assert set(got) == set(want) and len(want) >= 240
    for where, value in want.items():
        np.testing.assert_allclose(got[where], value, atol=1e-5, err_msg=str(where))
