"""The shipped toy checkpoints load offline like hub ids and have learned; train-toy runs end to end."""

import numpy as np
import pytest
import torch
from PIL import Image

from probekit.toymodels import evaluate as ev
from probekit.toymodels.train import CHECKPOINTS, main

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    torch.set_num_threads(1)
    return ev.HeldOut(seed=5, n=24, data_dir=tmp_path_factory.mktemp("heldout"))


def _load(name):
    from transformers import AutoImageProcessor, AutoTokenizer
    path = CHECKPOINTS / name
    tok = AutoTokenizer.from_pretrained(path)
    proc = AutoImageProcessor.from_pretrained(path) if name != "toy-bert" else None
    return path, tok, proc


def test_tokenizer_has_specials():
    _, tok, _ = _load("toy-vilt")
    for t in ("[MASK]", "[CLS]", "[SEP]", "[PAD]", "[UNK]"):
        assert tok.convert_tokens_to_ids(t) != tok.unk_token_id or t == "[UNK]"
    assert tok.convert_ids_to_tokens(tok("A man holds a ball")["input_ids"]) == \
        ["[CLS]", "a", "man", "holds", "a", "ball", "[SEP]"]


def test_vilt_processor_keeps_native_size():
    _, _, proc = _load("toy-vilt")
    arr = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    out = proc(Image.fromarray(arr), return_tensors="pt")
    assert tuple(out["pixel_values"].shape) == (1, 3, 64, 64)
    expected = (torch.from_numpy(arr).permute(2, 0, 1).float() / 255 - 0.5) / 0.5
    assert torch.allclose(out["pixel_values"][0], expected, atol=1e-4)


def test_vilt_dir_loads_both_heads():
    from transformers import ViltForImageAndTextRetrieval, ViltForMaskedLM
    for cls in (ViltForImageAndTextRetrieval, ViltForMaskedLM):
        _, info = cls.from_pretrained(CHECKPOINTS / "toy-vilt", output_loading_info=True)
        assert not info["missing_keys"], (cls.__name__, info["missing_keys"])


@pytest.mark.parametrize("name,family", [("toy-clip", "CLIPModel"), ("toy-vilt", "ViltForImageAndTextRetrieval")])
def test_object_control_far_above_chance(heldout, name, family):
    path, tok, proc = _load(name)
    model = getattr(transformers, family).from_pretrained(path).eval()
    fn = ev.clip_scores if name == "toy-clip" else ev.itm_scores
    ok = fn(model, tok, proc, heldout.obj_images, heldout.obj_true) > \
        fn(model, tok, proc, heldout.obj_images, heldout.obj_wrong)
    assert ok.mean() >= 0.8          # chance 0.5


@pytest.mark.parametrize("name", ["toy-bert", "toy-vilt"])
def test_masked_verb_recovered(heldout, name):
    from transformers import BertForMaskedLM, ViltForMaskedLM
    path, tok, proc = _load(name)
    texts, images, gold = heldout.masked()
    if name == "toy-bert":
        top = ev.verb_topk(BertForMaskedLM.from_pretrained(path).eval(), tok, texts)
    else:
        top = ev.verb_topk(ViltForMaskedLM.from_pretrained(path).eval(), tok, texts, proc, images)
    assert np.mean([g in t for g, t in zip(gold, top)]) >= 0.8   # 12 verbs: chance of top-5 well below 0.5


def test_train_toy_tiny_budget(tmp_path):
    from transformers import BertForMaskedLM, CLIPModel, ViltForMaskedLM
    assert main(["--out", str(tmp_path), "--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]) == 0
    CLIPModel.from_pretrained(tmp_path / "toy-clip")
    ViltForMaskedLM.from_pretrained(tmp_path / "toy-vilt")
    BertForMaskedLM.from_pretrained(tmp_path / "toy-bert")
    assert (tmp_path / "training.json").exists()
