"""The engine's speed paths: persistent loader workers, one preprocessing per repeated image, batches that run out
of GPU memory (a fake OOM), and mixed-precision autocast (bf16 on the CPU as the proxy for the GPU's fp16)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pictures import random_pngs
from probekit import images as imgs
from probekit.device import precision_for
from probekit.scorers import load_scorer

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    root = tmp_path_factory.mktemp("img")
    paths = random_pngs(root, 12, size=64, seed=3)
    (root / "broken.png").write_bytes(b"not a png")
    return paths, str(root / "broken.png")


TEXTS = ["a dog holds a ball", "a cat rides a horse", "a man kicks a ball", "a girl eats an apple"]


def toy(name, **kw):
    return load_scorer(name, device="cpu", cache_dir=False, **kw)


def pairs(paths, n):
    return [paths[i % len(paths)] for i in range(n)], [TEXTS[(i // 3) % len(TEXTS)] for i in range(n)]


def test_persistent_workers_score_like_the_calling_process_and_start_once(pictures):
    paths, broken = pictures
    ims, texts = pairs(paths + [broken], 26)
    torch.manual_seed(0)  # ViLT orders image patches at random (torch.multinomial)
    inline = toy("toy-vilt", batch_size=8).match(ims, texts)
    workers = toy("toy-vilt", batch_size=8, num_workers=1)
    torch.manual_seed(0)
    first = workers.match(ims[:13], texts[:13])
    pids = [w.pid for w in workers._loader._loader._iterator._workers]
    second = workers.match(ims[13:], texts[13:])
    assert [w.pid for w in workers._loader._loader._iterator._workers] == pids  # no new worker for a new call
    both = np.concatenate([first, second])
    assert np.isnan(both).tolist() == np.isnan(inline).tolist() and np.isnan(inline).sum() == 2
    assert np.nanmax(np.abs(both - inline)) <= 1e-5
    assert workers.skipped == [broken]


def test_every_scoring_job_reports_its_seconds_where_probekit_timings_says(pictures, tmp_path):
    """What benchmarks/paper_time.py reads: one line per job that computed anything, none without the variable."""
    import json

    from probekit.environ import environment

    ims, texts = pairs(pictures[0], 10)
    with environment({"PROBEKIT_TIMINGS": str(tmp_path / "t.jsonl")}):
        toy("toy-vilt").match(ims, texts)
    toy("toy-vilt").match(ims, texts)
    (line,) = [json.loads(t) for t in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert line["model"] == "toy-vilt" and line["job"] == "pairs" and line["items"] == 10 and line["seconds"] > 0


def test_a_repeated_image_is_preprocessed_once_and_lined_up_again(pictures):
    s = toy("toy-vilt")
    a, b = (imgs.load_image(p) for p in pictures[0][:2])
    seen = []

    def prepare(pils):
        seen.append(len(pils))
        return s._prepare_images(pils)

    once = imgs.prepare_unique(prepare, [a, a, b, a])
    every = s._prepare_images([a, a, b, a])
    assert seen == [2] and once["pixel_values"].shape[0] == 2  # the batch carries each image once ...
    assert torch.equal(once[imgs.IMAGE_ROWS], torch.tensor([0, 0, 1, 0]))
    lined_up = imgs.expand_rows(once)  # ... and its rows are repeated on the device
    assert lined_up.keys() == every.keys() and all(torch.equal(lined_up[k], every[k]) for k in every)


def test_a_batch_that_runs_out_of_memory_is_halved_until_it_fits(pictures):
    ims, texts = pairs(pictures[0], 24)
    torch.manual_seed(0)
    plain = toy("toy-vilt", batch_size=32).match(ims, texts)
    s = toy("toy-vilt", batch_size=32)
    real, sizes = s._match_probs, []

    def small_gpu(inputs):  # a device that holds 6 rows at most
        sizes.append(len(inputs["input_ids"]))
        if sizes[-1] > 6:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(inputs)

    s._match_probs = small_gpu
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="batch of 12 ran out of cpu memory; continuing with batch_size=6"):
        fitted = s.match(ims, texts)
    assert sizes == [12, 6, 6] and s.batch_size == 6  # 24 pairs, 12 of them distinct: one loader batch
    assert np.abs(fitted - plain).max() <= 1e-5

    def no_gpu(inputs):
        raise torch.OutOfMemoryError("CUDA out of memory")

    s._match_probs = no_gpu
    with pytest.raises(torch.OutOfMemoryError, match="one item alone does not fit"):
        s.match(ims[:1], ["a different text"])


def test_precision_flag():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert [precision_for(cpu, h) for h in (None, False, "fp32", "bf16")] == ["fp32", "fp32", "fp32", "bf16"]
    assert [precision_for(cuda, h) for h in (None, True, False, "bf16")] == ["fp16", "fp16", "fp32", "bf16"]
    for bad in (True, "fp16"):
        with pytest.raises(ValueError, match="not supported on cpu"):
            precision_for(cpu, bad)
    with pytest.raises(ValueError, match="one of"):
        precision_for(cpu, "int8")
    assert load_scorer("toy-bert", device="cpu", cache_dir=False).precision == "fp32"


def test_bf16_autocast_is_close_to_float32_on_the_toy_models(pictures):
    paths = pictures[0]
    masked = ["a dog [MASK] a ball", "a [MASK] rides a horse", "a man kicks a [MASK]"]
    out = {}
    for half in (False, "bf16"):
        clip, vilt, bert = (toy(n, half=half) for n in ("toy-clip", "toy-vilt", "toy-bert"))
        torch.manual_seed(0)
        out[half] = dict(choice=clip.choose_image([paths[i:i + 2] for i in range(4)], TEXTS),
                         match=vilt.match(paths[:8], TEXTS * 2),
                         vilt_fill=[dict(r[0]) for r in vilt.fill_mask(masked, paths[:3], k=3)],
                         bert_fill=[dict(r[0]) for r in bert.fill_mask(masked, k=3)])
        assert clip.fingerprint.endswith("-bf16") == (half == "bf16")  # cached apart from float32 scores
    for key, tol in (("choice", 2e-2), ("match", 1e-2)):   # toy CLIP's two-image softmax: 1.5e-2 measured
        gap = np.abs(out["bf16"][key] - out[False][key]).max()
        assert 0 < gap <= tol, key  # > 0: the forward really ran in bfloat16
    for key, tol in (("vilt_fill", 2e-2), ("bert_fill", 1.5e-2)):  # measured: toy ViLT 1.5e-2, toy BERT 1.2e-2
        gaps = [abs(a[w] - b[w]) for a, b in zip(out["bf16"][key], out[False][key]) for w in a if w in b]
        assert gaps and 0 < max(gaps) <= tol, key


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_batches_arrive_pinned_and_fp16_is_close(pictures):
    paths = pictures[0]
    s = load_scorer("toy-vilt", device="cuda", cache_dir=False, num_workers=1)
    _, inputs, _ = next(iter(imgs.Loader(s, 1, pin_memory=True).batches("_prepare_pairs", paths[:4], TEXTS)))
    # every tensor, those of the device path's list of each distinct image's pixels (under pixels.IMAGES) too
    tensors = [t for v in inputs.values() for t in (v if isinstance(v, list) else [v]) if isinstance(t, torch.Tensor)]
    assert s.device_pixels and tensors and all(t.is_pinned() for t in tensors)
    torch.manual_seed(0)
    half = s.match(paths[:8], TEXTS * 2)
    torch.manual_seed(0)
    full = toy("toy-vilt").match(paths[:8], TEXTS * 2)
    assert s.precision == "fp16" and np.abs(half - full).max() <= 1e-2
