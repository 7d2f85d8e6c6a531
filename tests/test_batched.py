"""train-toy --batched: the stacked ViLT forward is HF's, and the batched trainer gives each member the loss curve
and weights that train-toy gives it (CPU, fp32, a few steps of tiny models), resuming as train-toy does."""

import json

import pytest
import torch
from safetensors.torch import load_file

from probekit.toymodels import batched, build, loop, stack_ops, train, vilt_stack
from probekit.toymodels.budget import make as make_budget

pytest.importorskip("transformers")

#: the equality's tolerance: largest |difference| of a weight, and of a loss-curve point (fp32, 4 steps; measured
#: 1.2e-6 and 2.4e-7: the stacked products sum in another order than HF's)
WEIGHTS_TOL, LOSS_TOL = 1e-5, 1e-5
TINY = dict(steps=4, evaluate=False, size="small", pool=48, batch=8, log=lambda *a: None)
MODELS = ["toy-vilt", "toy-vilt-hardneg", "toy-vilt-cc15"]   # cc15's captions add words: a stack of its own


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
    assert max((mine[k] - theirs[k]).abs().max().item() for k in mine) <= WEIGHTS_TOL


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
    assert json.loads((tmp_path / "0" / "training.json").read_text())["models"]["toy-vilt-cc15"]["batched"] == 1
    assert not list(tmp_path.glob("*/*.resume.pt"))         # every member finished: no resume file left


def _killed_after_first_save(monkeypatch):
    real = loop.save

    def killed(*args):   # the run stops right after writing its first resume file (step 2)
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "save", killed)
    return real


@pytest.mark.parametrize("batched_first", [True, False])
def test_a_stopped_member_resumes_under_the_batched_trainer_to_the_same_weights(batched_first, plain, tmp_path,
                                                                                  monkeypatch):
    real = _killed_after_first_save(monkeypatch)
    with pytest.raises(train.Interrupted):
        train.train(tmp_path, models=["toy-vilt"], save_every=2, batched=batched_first, **TINY)
    assert loop.resume_path(tmp_path / "toy-vilt").exists()
    monkeypatch.setattr(loop, "save", real)
    logged = []
    record = train.train(tmp_path, models=["toy-vilt"], save_every=2, batched=True, **{**TINY, "log": logged.append})
    assert f"[toy-vilt] resuming at step 3 of 4 from {loop.resume_path(tmp_path / 'toy-vilt')}" in logged
    _same(record, plain[0], tmp_path, plain["out"] / "0", "toy-vilt")


def test_batched_runs_in_one_process():
    with pytest.raises(SystemExit):
        train.main(["--batched", "--jobs", "2", "--no-eval"])
