"""True-token log-probabilities (``Scorer.token_logprobs``) equal masking one token at a time by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

from probekit.scorers import load_scorer
from probekit.scorers.mlm import pseudo_perplexity
from probekit.scorers.registry import TOY_CHECKPOINTS
from probekit.scorers.testing import save_tiny

torch.set_num_threads(1)

TEXTS = ["a man is riding a horse", "the dog holding a ball", "a small striped cat", "a man is riding a horse"]
TOY_TEXTS = ["a man is riding a bike", "the dog holding a ball", "a woman kicks the ball", "a man is riding a bike"]


def one_at_a_time(model, tokenizer, text, **image_inputs):
    """The reference: tokenize, then for each non-special token mask it alone and read log P(true token)."""
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"][0]
    out = []
    for j, token in enumerate(ids.tolist()):
        if token in tokenizer.all_special_ids:
            continue
        masked = ids.clone()
        masked[j] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(**{**enc, "input_ids": masked[None]}, **image_inputs).logits
        out.append(float(logits[0, j].log_softmax(-1)[token]))
    return np.array(out)


def test_pseudo_perplexity_by_hand():
    assert pseudo_perplexity(np.log([0.5, 0.25])) == pytest.approx(math.exp(-(math.log(0.5) + math.log(0.25)) / 2))
    assert pseudo_perplexity(np.log([0.1] * 3)) == pytest.approx(10.0)
    assert math.isnan(pseudo_perplexity(np.array([]))) and math.isnan(pseudo_perplexity(None))


@pytest.mark.skipif(not (TOY_CHECKPOINTS / "toy-bert").is_dir(), reason="toy checkpoints not built")
def test_toy_bert_equals_masking_each_token_by_hand(tmp_path):
    from transformers import AutoTokenizer, BertForMaskedLM

    scorer = load_scorer("toy-bert", device="cpu", cache_dir=tmp_path, batch_size=3)
    got = scorer.token_logprobs(TOY_TEXTS + ["a small striped zebra"])
    model = BertForMaskedLM.from_pretrained(TOY_CHECKPOINTS / "toy-bert").eval()
    tok = AutoTokenizer.from_pretrained(TOY_CHECKPOINTS / "toy-bert")
    assert [len(v) for v in got] == [6, 5, 5, 6, 3]  # toy words are single pieces; "zebra" is [UNK], not scored
    for text, values in zip(TOY_TEXTS, got):
        np.testing.assert_allclose(values, one_at_a_time(model, tok, text), atol=1e-5)
        assert (values < 0).all()
    # cached: a second scorer reads the same numbers back without a forward
    again = load_scorer("toy-bert", device="cpu", cache_dir=tmp_path)
    np.testing.assert_array_equal(again.token_logprobs(TOY_TEXTS[:2])[1], got[1])
    assert again.forward_seconds == 0.0


def test_tiny_bert_through_the_registry_path(tmp_path):
    from transformers import AutoTokenizer, BertForMaskedLM

    path = save_tiny("bert", tmp_path / "bert")
    scorer = load_scorer(path, family="bert", device="cpu", cache_dir=False, batch_size=2)
    model, tok = BertForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    got = scorer.token_logprobs(TEXTS)
    for text, values in zip(TEXTS, got):
        np.testing.assert_allclose(values, one_at_a_time(model, tok, text), atol=1e-5)
    assert pseudo_perplexity(got[0]) == pytest.approx(math.exp(-got[0].mean()))
    with pytest.raises(Exception, match="text-only"):
        scorer.token_logprobs(TEXTS[:1], images=[None])


def test_tiny_vilt_with_an_image_and_an_unreadable_one(tmp_path):
    from transformers import AutoImageProcessor, AutoTokenizer, ViltForMaskedLM

    path = save_tiny("vilt", tmp_path / "vilt")
    image = tmp_path / "img.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (32, 48, 3), dtype=np.uint8)).save(image)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    scorer = load_scorer(path, family="vilt", device="cpu", cache_dir=False)
    got = scorer.token_logprobs(TEXTS[:2] + TEXTS[:1], [str(image), str(image), str(broken)])
    model = ViltForMaskedLM.from_pretrained(path).eval()
    tok, proc = AutoTokenizer.from_pretrained(path), AutoImageProcessor.from_pretrained(path)
    pixels = proc(images=[Image.open(image).convert("RGB")], return_tensors="pt")
    for text, values in zip(TEXTS[:2], got):
        np.testing.assert_allclose(values, one_at_a_time(model, tok, text, **pixels), atol=1e-5)
    assert got[2] is None and str(broken) in scorer.skipped
