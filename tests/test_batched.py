"""train-toy --batched: the stacked ViLT, CLIP and BERT forwards are HF's (BERT's dropout masks too), and the batched
trainer gives each member the loss curve and weights that train-toy gives it (CPU, fp32, a few steps of tiny
models), resuming as train-toy does."""

import json

import pytest
import torch
from safetensors.torch import load_file

from probekit.toymodels import batched, bert_stack, build, clip_stack, loop, stack_ops, train, vilt_stack
from probekit.toymodels.budget import make as make_budget

pytest.importorskip("transformers")

#: the equality's tolerance: largest |difference| of a weight, and of a loss-curve point (fp32, 4 steps; measured
#: at most 9.3e-6 (CLIP; ViLT 1.2e-6, BERT 3.3e-7) and 2.4e-7: the stacked products sum in another order than HF's,
#: and AdamW's first steps move a weight by about the learning rate whatever its gradient's size, rounding included)
WEIGHTS_TOL, LOSS_TOL = 3e-5, 1e-5
#: attention key biases: their gradient is 0 but for rounding (a softmax over keys is blind to a shift shared by
#: all keys), which AdamW turns into steps of up to the learning rate: both trainers' stay within steps x lr of 0
KEY_BIASES = ("k_proj.bias", "attention.self.key.bias", "attention.attention.key.bias")
TINY = dict(steps=4, evaluate=False, size="small", pool=48, batch=8, log=lambda *a: None)
MODELS = ["toy-vilt", "toy-vilt-hardneg", "toy-vilt-cc15",   # cc15's captions add words: a stack of its own
          "toy-clip", "toy-clip-hardneg", "toy-bert"]          # one CLIP stack (B and 2B texts), BERT with dropout


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """train-toy's members, one after another: seed 0 (every MODELS) and seed 1 (toy-vilt)."""
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("plain")
    return {"out": out, 0: train.train(out / "0", seed=0, models=MODELS, **TINY),
            1: train.train(out / "1", seed=1, models=["toy-vilt"], **TINY)}


def _same(record: dict, reference: dict, out, ref_out, name: str) -> None:
    got, want = record["models"][name]["history"], reference["models"][name]["history"]
    assert got["step"] == want["step"] == [4]
    assert abs(got["loss"][0] - want["loss"][0]) <= LOSS_TOL
    mine, theirs = load_file(out / name / "model.safetensors"), load_file(ref_out / name / "model.safetensors")
    assert sorted(mine) == sorted(theirs)
    keys = [k for k in mine if k.endswith(KEY_BIASES)]
    assert keys and max(w[k].abs().max().item() for w in (mine, theirs) for k in keys) <= 4 * 1e-3   # steps x lr
    assert max((mine[k] - theirs[k]).abs().max().item() for k in mine if k not in keys) <= WEIGHTS_TOL


def test_the_stacked_forward_is_hfs_vilt_for_each_member():
    tok = build.tokenizer()
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(train.untrained("vilt", tok, "small").eval())
    params = stack_ops.stack(models)
    ids = torch.randint(5, len(tok), (3, 5, 9))
    mask = torch.ones(3, 5, 9, dtype=torch.long)
    mask[:, :2, 6:] = 0                                     # two texts padded
    pixels = torch.randn(3, 5, 3, 64, 64)
    itm = vilt_stack.itm_logits(params, models[0].config, ids, mask, pixels)
    mlm = vilt_stack.mlm_logits(params, models[0].config, ids, mask, pixels)
    ones = torch.ones(5, 64, 64, dtype=torch.long)
    for i, m in enumerate(models):                          # HF's forward, its image tokens in random order
        hf = dict(input_ids=ids[i], attention_mask=mask[i], pixel_values=pixels[i], pixel_mask=ones)
        assert torch.allclose(itm[i], m.itm(**hf).logits[:, 0], atol=1e-6, rtol=0)
        assert torch.allclose(mlm[i], m.mlm(**hf).logits, atol=1e-5, rtol=0)
    assert not torch.allclose(itm[0], itm[1])               # the members' own weights


def _members(trainer: str, n: int, train_mode: bool = False):
    tok = build.tokenizer()
    models = []
    for seed in range(n):
        torch.manual_seed(seed)
        models.append(train.untrained(trainer, tok, "small").train(train_mode))
    return tok, models, stack_ops.stack(models)


def test_the_stacked_forward_is_hfs_clip_for_each_member_and_placeholder_texts_are_left_out():
    tok, models, params = _members("clip", 2)
    sep = tok.sep_token_id
    ids = torch.randint(5, len(tok), (2, 6, 9))
    ids[..., 0], ids[..., 8] = tok.cls_token_id, sep
    ids[:, :2, 5], ids[:, :2, 6:] = sep, tok.pad_token_id    # two texts end early: [SEP], then padding
    mask = (ids != tok.pad_token_id).long()
    pixels = torch.randn(2, 4, 3, 64, 64)
    texts = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])   # member 1: four texts and two placeholders
    got = clip_stack.logits_per_image(params, models[0].config, ids, mask, pixels, texts)
    for i, m in enumerate(models):
        n = int(texts[i].sum())
        want = m(input_ids=ids[i, :n], attention_mask=mask[i, :n], pixel_values=pixels[i]).logits_per_image
        assert torch.allclose(got[i, :, :n], want, atol=1e-5, rtol=0)
    assert torch.isneginf(got[1, :, 4:]).all() and torch.isfinite(got[0]).all()
    assert not torch.allclose(got[0, :, :4], got[1, :, :4])


def test_the_stacked_bert_draws_each_members_dropout_masks_as_hfs_forward_does():
    tok, models, params = _members("bert", 2, train_mode=True)
    ids = torch.randint(5, len(tok), (2, 5, 9))
    ids[1, :, 7:], ids[1, 0, 5:] = tok.pad_token_id, tok.pad_token_id   # member 1's own batch is 7 tokens long
    mask = (ids != tok.pad_token_id).long()
    lengths = [9, 7]
    gens = [torch.Generator().manual_seed(100 + i) for i in range(2)]
    got = bert_stack.mlm_logits(params, models[0].config, ids, mask, stack_ops.Dropout(gens, lengths))
    for i, m in enumerate(models):
        torch.manual_seed(100 + i)                          # HF's dropout draws from the global generator
        want = m(input_ids=ids[i, :, :lengths[i]], attention_mask=mask[i, :, :lengths[i]]).logits
        real = mask[i, :, :lengths[i]].bool()
        assert torch.allclose(got[i, :, :lengths[i]][real], want[real], atol=1e-5, rtol=0)
        assert torch.equal(gens[i].get_state(), torch.get_rng_state())   # as many draws as HF's
    assert torch.equal(bert_stack.mlm_logits(params, models[0].config, ids, mask, stack_ops.Dropout(gens, lengths)),
                       got) is False                        # dropout is on: new masks, new logits


def test_members_trained_at_once_get_the_curves_and_weights_of_members_trained_alone(plain, tmp_path):
    torch.set_num_threads(1)
    jobs = [batched.Job(m, 0, tmp_path / "0") for m in MODELS] + [batched.Job("toy-vilt", 1, tmp_path / "1")]
    batched.train_jobs(jobs, make_budget(steps=4, pool=48, batch=8), evaluate=False, size="small", log=lambda *a: None)
    for seed, names in ((0, MODELS), (1, ["toy-vilt"])):
        record = json.loads((tmp_path / str(seed) / "training.json").read_text())
        assert {k: record[k] for k in ("seed", "budget", "size")} == {k: plain[seed][k] for k in ("seed", "budget",
                                                                                                 "size")}
        for name in names:
            _same(record, plain[seed], tmp_path / str(seed), plain["out"] / str(seed), name)
    together = json.loads((tmp_path / "0" / "training.json").read_text())["models"]
    assert [together[m]["batched"] for m in MODELS] == [3, 3, 1, 2, 2, 1]   # ViLT: both seeds' toy-vilt in one
    assert not list(tmp_path.glob("*/*.resume.pt"))         # every member finished: no resume file left


def _killed_after_first_save(monkeypatch):
    real = loop.save

    def killed(*args):   # the run stops right after writing its first resume file (step 2)
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "save", killed)
    return real


@pytest.mark.parametrize("name", ["toy-vilt", "toy-bert"])   # BERT: the resume file keeps its dropout generator
@pytest.mark.parametrize("batched_first", [True, False])
def test_a_stopped_member_resumes_under_the_batched_trainer_to_the_same_weights(batched_first, name, plain,
                                                                                  tmp_path, monkeypatch):
    real = _killed_after_first_save(monkeypatch)
    with pytest.raises(train.Interrupted):
        train.train(tmp_path, models=[name], save_every=2, batched=batched_first, **TINY)
    assert loop.resume_path(tmp_path / name).exists()
    monkeypatch.setattr(loop, "save", real)
    logged = []
    record = train.train(tmp_path, models=[name], save_every=2, batched=True, **{**TINY, "log": logged.append})
    assert f"[{name}] resuming at step 3 of 4 from {loop.resume_path(tmp_path / name)}" in logged
    _same(record, plain[0], tmp_path, plain["out"] / "0", name)


def test_batched_runs_in_one_process():
    with pytest.raises(SystemExit):
        train.main(["--batched", "--jobs", "2", "--no-eval"])
