"""Preprocessing on the device (``device_pixels``, probekit.scorers.pixels), run here on CPU tensors: the same
pixels as each family's processor on PIL images (tolerance 1e-3 per pixel; measured 0), the same scores as the CPU
path, each distinct image carried once per batch, and unreadable files skipped as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from probekit import images as imgs
from probekit.scorers import hf, load_scorer, pixels
from probekit.scorers.testing import save_tiny

T = pytest.importorskip("transformers")
torch.set_num_threads(1)
TOLERANCE = 1e-3  # per pixel, after normalising (measured: 0 for every processor below)
CPU = torch.device("cpu")
FAMILIES = ["clip", "siglip", "blip", "vilt", "bridgetower", "flava", "open_clip"]


def smooth(rng, h: int, w: int, mode: str = "RGB") -> Image.Image:
    """A photo-like image (noise blurred a little, so that JPEG keeps it close)."""
    a = rng.integers(0, 256, (h + 2, w + 2, 3)).astype(float)
    a = (a[:-2, :-2] + a[1:-1, 1:-1] + a[2:, 2:]) / 3
    return Image.fromarray(a.astype(np.uint8)).convert(mode)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    """JPEGs (RGB and greyscale) and PNGs (RGB, RGBA) of several sizes and aspect ratios, one image twice."""
    root, rng = tmp_path_factory.mktemp("device-pixels"), np.random.default_rng(3)
    paths = []
    for i, (h, w, mode, fmt) in enumerate([(60, 80, "RGB", "JPEG"), (75, 50, "L", "JPEG"), (48, 48, "RGB", "PNG"),
                                           (33, 90, "RGBA", "PNG"), (120, 96, "RGB", "JPEG")]):
        path = root / f"{i}.{fmt.lower()}"
        smooth(rng, h, w, mode).save(path, format=fmt)
        paths.append(str(path))
    return paths + paths[:1]


def on_device(paths: list[str]) -> list[torch.Tensor]:
    """What the device path gives the processor: JPEGs decoded by torchvision, other files by PIL, as uint8."""
    from torchvision.transforms.functional import pil_to_tensor
    loaded = [imgs.load_encoded(p) for p in paths]
    return pixels.decoded([x if isinstance(x, torch.Tensor) else pil_to_tensor(x) for x in loaded], CPU)


def largest_difference(ref: dict, got: dict) -> float:
    assert sorted(ref) == sorted(got)
    for k in ref:
        assert ref[k].shape == got[k].shape and ref[k].dtype == got[k].dtype, k
    return max(float((ref[k].double() - got[k].double()).abs().max()) for k in ref)


def test_jpegs_travel_as_bytes_and_decode_to_pils_pixels(files, tmp_path):
    loaded = [imgs.load_encoded(p) for p in files]
    assert [isinstance(x, torch.Tensor) and x.dim() == 1 for x in loaded] == [True, True, False, False, True, True]
    for path, got in zip(files, on_device(files)):
        assert torch.equal(got, torch.from_numpy(np.asarray(imgs.load_image(path))).permute(2, 0, 1)), path
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(open(files[0], "rb").read()[:300])  # a download broken off: no end marker
    with pytest.warns(UserWarning, match="cannot decode"):
        assert imgs.load_encoded(str(cut)) is None   # left to PIL, which cannot decode it: skipped as before


@pytest.mark.parametrize("proc", [
    T.CLIPImageProcessor(size={"shortest_edge": 40}, crop_size={"height": 40, "width": 40}),
    T.SiglipImageProcessor(size={"height": 40, "width": 40}),
    T.BlipImageProcessor(size={"height": 40, "width": 40}),
    T.ViltImageProcessor(size={"shortest_edge": 40}, size_divisor=16),  # padded, with a pixel mask
    T.BridgeTowerImageProcessor(size={"shortest_edge": 40}, crop_size={"shortest_edge": 40}, size_divisor=16),
    T.FlavaImageProcessor(size={"height": 40, "width": 40}, crop_size={"height": 40, "width": 40}),
], ids=lambda p: type(p).__name__)
def test_each_processor_gives_the_same_pixels_from_device_tensors(files, proc):
    ref = hf.pixel_inputs(proc, [imgs.load_image(p) for p in files])
    got = hf.pixel_inputs(proc, on_device(files))
    assert largest_difference(ref, got) <= TOLERANCE


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {f: save_tiny(f, root / f) for f in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_familys_own_processor_settings_give_the_same_batch(tiny, files, family):
    cpu = load_scorer(tiny[family], family=family, device="cpu", cache_dir=False)
    dev = load_scorer(tiny[family], family=family, device="cpu", cache_dir=False, device_pixels=True)
    assert not cpu.device_pixels and dev.device_pixels and dev.fingerprint == cpu.fingerprint + "-devpix"
    pils = [imgs.load_image(p) for p in files]
    texts = [f"a picture number {i}" for i in range(len(files))]
    ref = imgs.expand_rows(cpu._prepare_pairs(pils, texts))
    load = imgs.load_encoded if dev.decode_on_device else imgs.load_image
    tasks = imgs._Tasks(load=load)  # as the loader reads them: a file read twice is one object
    sent = dev._prepare_pairs([tasks[(i, p, None, "")][1] for i, p in enumerate(files)], texts)
    assert len(sent[pixels.IMAGES]) == len(files) - 1  # the repeated file travels once
    assert largest_difference(ref, dev._device_inputs(sent)) <= TOLERANCE


@pytest.fixture
def backend(request, monkeypatch) -> str:
    """Every image processor loaded from here on of transformers' ``request.param`` backend ("pil": what it picks
    for FLAVA where torchvision < 0.27; its processors turn tensors into numpy arrays)."""
    load = T.AutoImageProcessor.from_pretrained.__func__
    monkeypatch.setattr(T.AutoImageProcessor, "from_pretrained",
                        classmethod(lambda cls, *a, **k: load(cls, *a, **k, backend=request.param)))
    return request.param


#: the Hugging Face families (open_clip's tensor steps are torchvision's Normalize, which reads its std with .item(),
#: something a meta tensor cannot give: its device path is the same arithmetic, checked above on the CPU)
HF_FAMILIES = [f for f in FAMILIES if f != "open_clip"]


@pytest.mark.parametrize("backend", ["torchvision", "pil"], indirect=True)
@pytest.mark.parametrize("family", HF_FAMILIES)
def test_the_device_path_is_taken_only_where_the_processor_runs_on_that_devices_tensors(tiny, files, family,
                                                                                          backend):
    """On a device other than the CPU (meta: like CUDA's, its tensors have no numpy view) a processor of the PIL
    backend cannot take the device's tensors: the loader preprocesses, and the batch is the same shape."""
    meta = load_scorer(tiny[family], family=family, device="meta", cache_dir=False, device_pixels=True)
    cpu = load_scorer(tiny[family], family=family, device="cpu", cache_dir=False)
    assert meta.image_processor.backend == cpu.image_processor.backend == backend
    texts = [f"a picture number {i}" for i in range(len(files))]
    load = imgs.load_encoded if meta.device_pixels else imgs.load_image
    got = meta._device_inputs(imgs.to_device(meta._prepare_pairs([load(p) for p in files], texts), meta.device))
    ref = imgs.expand_rows(cpu._prepare_pairs([imgs.load_image(p) for p in files], texts))
    assert {k: (v.device.type, v.shape) for k, v in got.items()} == {k: ("meta", v.shape) for k, v in ref.items()}
    assert meta.device_pixels == (backend == "torchvision") and bool(meta.device_pixels_note) == (backend == "pil")


@pytest.mark.parametrize("family, call", [
    ("vilt", lambda s, ims: s.match(ims, [f"a dog number {i}" for i in range(len(ims))])),
    ("clip", lambda s, ims: s.choose_image([ims[:3], ims[3:]], ["a dog", "a cat"])),
])
@pytest.mark.parametrize("workers", [0, 1])
@pytest.mark.filterwarnings("ignore:probekit. cannot decode")  # the broken file's warning (in the worker with 1)
def test_scores_equal_the_cpu_paths_and_unreadable_files_are_skipped(tiny, files, tmp_path, family, call, workers):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(open(files[0], "rb").read()[:300])
    ims = files[:4] + [str(broken), files[0]]
    out = {}
    for on in (False, True):
        s = load_scorer(tiny[family], family=family, device="cpu", cache_dir=False, num_workers=workers,
                        batch_size=4, device_pixels=on)
        torch.manual_seed(0)
        out[on] = (call(s, ims), s.skipped)
    assert np.array_equal(out[True][0], out[False][0], equal_nan=True)
    assert np.isnan(out[True][0]).any() and out[True][1] == out[False][1] == [str(broken)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda_jpegs_are_decoded_and_preprocessed_on_the_gpu(tiny, files):
    """nvJPEG and the GPU's resize round differently from the CPU (benchmarks/scoring_gpu.py prints by how much):
    the scores stay within the fp16 tolerance of the CPU path's fp32 ones."""
    gpu = load_scorer(tiny["vilt"], family="vilt", device="cuda", cache_dir=False)
    texts = [f"a dog number {i}" for i in range(len(files))]
    sent = gpu._prepare_pairs([imgs.load_encoded(p) for p in files], texts)
    assert gpu.device_pixels and gpu._device_inputs(imgs.to_device(sent, gpu.device))["pixel_values"].is_cuda
    torch.manual_seed(0)
    on_gpu = gpu.match(files, texts)
    torch.manual_seed(0)
    on_cpu = load_scorer(tiny["vilt"], family="vilt", device="cpu", cache_dir=False).match(files, texts)
    assert np.abs(on_gpu - on_cpu).max() <= 1e-2


def test_device_pixels_is_off_on_the_cpu_and_refused_where_a_family_lacks_it(tiny):
    assert not load_scorer("toy-vilt", device="cpu", cache_dir=False).device_pixels
    with pytest.raises(ValueError, match="not available for this family"):
        load_scorer("toy-bert", device="cpu", cache_dir=False, device_pixels=True)
