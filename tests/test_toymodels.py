"""The shipped toy checkpoints load offline like hub ids and have learned; train-toy runs end to end."""

import json
import math
import os

import numpy as np
import pytest
import torch
from PIL import Image

from probekit.scorers import REGISTRY
from probekit.toymodels import evaluate as ev
from probekit.toymodels.train import CHECKPOINTS, main

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    torch.set_num_threads(1)
    return ev.HeldOut(seed=5, n=40, data_dir=tmp_path_factory.mktemp("heldout"))


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


def test_mlm_masking_masks_words_only_and_at_least_one_per_caption():
    from probekit.toymodels.batches import mask_tokens
    _, tok, _ = _load("toy-vilt")
    ids = tok(["a man holds a ball", "a dog runs", "a girl is kicking a small red cup"], padding=True,
              return_tensors="pt")["input_ids"]
    for prob in (0.0, 0.5, 1.0):
        masked, labels = mask_tokens(ids, tok, prob, np.random.default_rng(3))
        chosen = labels != -100
        special = torch.isin(ids, torch.tensor(tok.all_special_ids))
        assert not (chosen & special).any()                       # [CLS], [SEP], [PAD] never masked
        assert (chosen.sum(1) >= 1).all()                         # every caption has a masked word
        assert torch.equal(labels[chosen], ids[chosen])           # the labels are the masked tokens
        assert (masked[chosen] == tok.mask_token_id).all() and torch.equal(masked[~chosen], ids[~chosen])
        if prob == 0.0:
            assert (chosen.sum(1) == 1).all()
        if prob == 1.0:
            assert torch.equal(chosen, ~special)


def test_training_batches_encode_each_text_once_and_pad_as_the_tokenizer_does(monkeypatch):
    from probekit.toymodels import build
    from probekit.toymodels.batches import Batches
    from probekit.toyworld import stream
    tok = build.tokenizer()
    data = Batches(stream.pool(40, seed=2), seed=2, tok=tok)
    texts = [*data.captions, *(c for negs in data.negatives for c, _ in negs)]   # lengths from 2 words to 9
    for batch in (texts[:64], texts[20:90], texts[:64]):
        got, want = data.tokens(batch), tok(batch, padding=True, return_tensors="pt")
        assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
    calls, encode = [], type(tok).__call__
    monkeypatch.setattr(type(tok), "__call__", lambda self, text, **kw: calls.append(text) or encode(self, text, **kw))
    data.tokens(texts[:90])
    assert calls == []                                   # every text seen before: nothing encoded again
    data.tokens([texts[0], "a cat eats a hat"])
    assert calls == ["a cat eats a hat"]


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


@pytest.mark.parametrize("name", ["toy-clip", "toy-clip-hardneg", "toy-clip-unbound"])
def test_object_control_far_above_chance(heldout, name):
    scorer = ev.load(CHECKPOINTS / name, REGISTRY[name].family)
    assert ev.two_way(scorer, heldout.obj_images, heldout.obj_true, heldout.obj_wrong).mean() >= 0.8  # chance 0.5


def test_the_unbound_knockout_fails_binding_only(heldout):
    """toy-clip-unbound never read which noun goes with which predicate: on full images it is right on no more
    triplets than chance allows, while its parent, trained on the same stream with the binding told, binds most of
    them (by the limbs' colour: see the predicate-noun chapter's lab); cropped to one agent it still names noun and
    pose."""
    full = heldout.pn_full
    unbound, parent = (ev.load(CHECKPOINTS / m, "clip") for m in ("toy-clip-unbound", "toy-clip-hardneg"))
    assert heldout._prednoun(unbound, full)["triplet_acc"] <= 0.7                 # chance 0.5, n = 40 triplets
    assert heldout._prednoun(parent, full)["triplet_acc"] >= 0.7
    assert heldout._prednoun(unbound, heldout.pn_crop)["pair_acc"] >= 0.8


def test_cropped_triplets_split_by_which_word_differs(heldout):
    """The cropped control, split into noun swaps and predicate swaps: toy-clip reads both the agent and its pose
    (chance 0.5 each), and the two parts weigh back to the whole."""
    clip = ev.load(CHECKPOINTS / "toy-clip", "clip")
    res = heldout._prednoun(clip, heldout.pn_crop)
    nouns = (heldout.pn["pos"] == "subject").to_numpy()
    assert 0 < nouns.sum() < len(nouns)
    assert res["noun_triplet_acc"] >= 0.75 and res["predicate_triplet_acc"] >= 0.75   # n = 40 triplets in all
    whole = (res["noun_triplet_acc"] * nouns.sum() + res["predicate_triplet_acc"] * (~nouns).sum()) / len(nouns)
    assert whole == pytest.approx(res["triplet_acc"])
    assert heldout.quick(clip)["crop_predicate"] == \
        round(res["predicate_triplet_acc"], 3)                                      # the training curve reads it too


def test_the_text_alone_names_the_masked_verb_no_better_than_the_stated_prior(heldout):
    from probekit.toyworld.vocab import prior_topk
    scorer = ev.load(CHECKPOINTS / "toy-bert", "bert")
    top = ev.verb_topk(scorer, heldout.mask_texts)
    assert np.mean([g in t for g, t in zip(heldout.mask_gold, top)]) <= prior_topk(5) + 0.2   # 24.8%, n = 40 captions


def test_checks_follow_the_heads_not_the_name(heldout):
    bert = heldout.evaluate_dir("toy-bert", CHECKPOINTS / "toy-bert")
    clip = heldout.evaluate_dir("toy-clip", CHECKPOINTS / "toy-clip")
    assert set(bert) == {"masking_top5_text_only", "masking_top1_text_only"}  # fill_mask only, no image
    assert "verbs_itm" not in clip and "masking_top5_with_image" not in clip  # no match head, no MLM head
    assert {"object_control_acc", "prednoun_full", "verbs_image_choice"} <= set(clip)


def test_training_probe_scores_the_in_memory_model_like_its_checkpoint(heldout):
    from transformers import BertForMaskedLM, CLIPModel
    model = CLIPModel.from_pretrained(CHECKPOINTS / "toy-clip")
    assert heldout.probe_for("toy-clip")(model) == heldout.quick(ev.load(CHECKPOINTS / "toy-clip", "clip"))
    bert = heldout.probe_for("toy-bert")(BertForMaskedLM.from_pretrained(CHECKPOINTS / "toy-bert"))
    assert bert == heldout.quick(ev.load(CHECKPOINTS / "toy-bert", "bert")) and list(bert) == ["masked_top1"]
    assert bert["masked_top1"] == heldout.evaluate(ev.load(CHECKPOINTS / "toy-bert", "bert"))["masking_top1_text_only"]


def test_the_vilt_probe_adds_its_mlm_head_and_leaves_the_training_rng_alone(heldout):
    from probekit.toymodels import build
    from probekit.toymodels.train import untrained
    torch.manual_seed(3)
    model = untrained("vilt", build.tokenizer())
    probe = heldout.probe_for("toy-vilt")
    torch.manual_seed(1)
    both = probe(model)
    after = torch.rand(4)
    torch.manual_seed(1)
    assert torch.equal(torch.rand(4), after)                      # the probe drew nothing from the global RNG
    itm = probe(model.itm)                                         # the ITM head alone, as saved before
    assert list(both) == ["object", "prednoun_pair", "crop_predicate", "verb_choice", "masked_top1"]
    assert {k: v for k, v in both.items() if k != "masked_top1"} == itm


def test_train_toy_tiny_budget(tmp_path):
    from transformers import BertForMaskedLM, CLIPModel, ViltForMaskedLM
    assert main(["--out", str(tmp_path), "--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]) == 0
    CLIPModel.from_pretrained(tmp_path / "toy-clip")
    ViltForMaskedLM.from_pretrained(tmp_path / "toy-vilt")
    BertForMaskedLM.from_pretrained(tmp_path / "toy-bert")
    assert (tmp_path / "training.json").exists()


def test_the_default_size_is_the_shipped_zoos_build():
    from probekit.toymodels import build
    from probekit.toymodels.train import untrained
    tok = build.tokenizer()
    vilt, clip, bert = (untrained(t, tok).config for t in ("vilt", "clip", "bert"))
    assert (vilt.hidden_size, vilt.num_hidden_layers, vilt.num_attention_heads, vilt.intermediate_size) == (128, 4, 4, 256)
    for tower in (clip.text_config, clip.vision_config, bert):
        assert (tower.hidden_size, tower.num_hidden_layers, tower.intermediate_size) == (128, 3, 256)
    assert clip.projection_dim == 128
    shipped = json.loads((CHECKPOINTS / "toy-vilt" / "config.json").read_text())
    assert {k: shipped[k] for k in ("hidden_size", "num_hidden_layers", "intermediate_size")} == {
        "hidden_size": 128, "num_hidden_layers": 4, "intermediate_size": 256}
    assert build.vilt_config(len(tok)).to_dict() == build.vilt_config(len(tok), "full").to_dict()


def test_size_sets_the_saved_widths_and_depths_and_the_record_and_card_say_it(tmp_path):
    from probekit.toymodels import build
    from probekit.toymodels.card import write
    tiny = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main(["--out", str(tmp_path), *tiny, "--size", "small", "--models", "toy-vilt", "toy-clip", "toy-bert"]) == 0
    small = build.SIZES["small"]
    vilt = json.loads((tmp_path / "toy-vilt" / "config.json").read_text())
    assert (vilt["hidden_size"], vilt["num_hidden_layers"], vilt["intermediate_size"]) == (64, 2, 128)
    clip = json.loads((tmp_path / "toy-clip" / "config.json").read_text())
    for tower in (clip["text_config"], clip["vision_config"], json.loads((tmp_path / "toy-bert" / "config.json")
                                                                        .read_text())):
        assert (tower["hidden_size"], tower["num_hidden_layers"]) == (small.width, small.tower_layers)
    assert json.loads((tmp_path / "training.json").read_text())["size"] == "small"
    card = write(tmp_path).read_text()
    assert "ViLT: one encoder (width 64, 2 layers" in card and "--seed 0 --size small --steps 2 --pool 16`" in card
    assert main(["--out", str(tmp_path / "full"), *tiny, "--models", "toy-bert"]) == 0
    assert "size" not in json.loads((tmp_path / "full" / "training.json").read_text())   # the default: as before


def test_a_zoo_of_another_size_is_refused(tmp_path, capsys):
    from probekit.toymodels import record
    tiny = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main(["--out", str(tmp_path), *tiny, "--size", "medium", "--models", "toy-bert"]) == 0
    capsys.readouterr()
    assert main(["--out", str(tmp_path), *tiny, "--models", "toy-clip"]) == 2
    err = capsys.readouterr().err
    assert "size: medium there, full here" in err and err.strip().endswith("or pass --size medium")
    assert not (tmp_path / "toy-clip").exists()
    assert main(["--out", str(tmp_path), *tiny, "--size", "medium", "--models", "toy-clip"]) == 0   # same size: fine
    # a record written before the option has no size: it is of the default size
    header = dict(seed=0, budget={"steps": 40}, quick=False, device="cpu", threads=1)
    record.save_entry(tmp_path / "old", header, "toy-clip", {"wall_s": 1})
    record.start(tmp_path / "old", header, ["toy-bert"])
    with pytest.raises(record.ZooError, match="size: full there, small here.*--size full$"):
        record.start(tmp_path / "old", {**header, "size": "small"}, ["toy-bert"])
    record.start(tmp_path / "old", {**header, "size": "small"}, ["toy-clip"])   # the only member retrained: fine
    assert json.loads((tmp_path / "old" / "training.json").read_text())["size"] == "small"
    record.start(tmp_path / "old", header, ["toy-clip"])
    assert "size" not in json.loads((tmp_path / "old" / "training.json").read_text())   # no stale size left


def test_a_resume_file_of_another_size_is_set_aside(tmp_path, capsys, monkeypatch):
    from probekit.toymodels import loop
    tiny = ["--out", str(tmp_path), "--steps", "4", "--pool", "16", "--no-eval", "--threads", "1", "--save-every", "2",
            "--models", "toy-bert"]
    real = loop.save

    def killed_after_saving(*args):   # a run stopped right after its resume file of step 2
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "save", killed_after_saving)
    assert main([*tiny, "--size", "small"]) == 130
    monkeypatch.setattr(loop, "save", real)
    assert loop.resume_path(tmp_path / "toy-bert").exists()
    capsys.readouterr()
    assert main(tiny) == 0                          # the default size does not resume the small model's file
    assert "was written under another budget, seed, device or size" in capsys.readouterr().out
    assert json.loads((tmp_path / "toy-bert" / "config.json").read_text())["hidden_size"] == 128


JOBS = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1", "--jobs", "2"]


def test_jobs_train_members_in_parallel_processes_into_one_out(tmp_path, capsys):
    from transformers import BertForMaskedLM, CLIPModel
    assert main(["--out", str(tmp_path), "--models", "toy-bert", "toy-clip", *JOBS]) == 0
    started = [line.split("]")[0][1:] for line in capsys.readouterr().out.splitlines() if "] started" in line]
    assert started == ["toy-clip", "toy-bert"]                    # the slower member first
    assert list(json.loads((tmp_path / "training.json").read_text())["models"]) == ["toy-clip", "toy-bert"]
    CLIPModel.from_pretrained(tmp_path / "toy-clip")
    BertForMaskedLM.from_pretrained(tmp_path / "toy-bert")
    assert "done in" in (tmp_path / "toy-bert.log").read_text()


def test_jobs_name_the_members_that_failed_and_why(tmp_path, capsys):
    from probekit.toymodels import record
    record.save_entry(tmp_path, dict(seed=1, budget={}, quick=False, device="cpu", threads=1), "toy-vilt", {})
    assert main(["--out", str(tmp_path), "--models", "toy-bert", "toy-clip", *JOBS]) == 2
    failed = capsys.readouterr().out.strip().splitlines()[-1]
    assert failed.startswith("probekit train-toy: 2 of 2 members failed: toy-clip (exit status 2")
    assert "seed: 1 there, 0 here" in (tmp_path / "toy-bert.log").read_text()


def test_missing_trains_only_the_members_the_zoo_does_not_hold_yet(tmp_path, capsys):
    tiny = ["--out", str(tmp_path), "--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main([*tiny, "--models", "toy-bert"]) == 0
    bert = tmp_path / "toy-bert" / "model.safetensors"
    before = bert.stat().st_mtime_ns, json.loads((tmp_path / "training.json").read_text())["models"]["toy-bert"]
    capsys.readouterr()
    assert main([*tiny, "--models", "toy-bert", "toy-clip", "--missing", "--jobs", "2"]) == 0
    started = [line.split("]")[0][1:] for line in capsys.readouterr().out.splitlines() if "] started" in line]
    assert started == ["toy-clip"]                                   # toy-bert was held: no process for it
    models = json.loads((tmp_path / "training.json").read_text())["models"]
    assert list(models) == ["toy-clip", "toy-bert"] and (bert.stat().st_mtime_ns, models["toy-bert"]) == before
    assert main([*tiny, "--models", "toy-bert", "toy-clip", "--missing", "--jobs", "2"]) == 0
    assert capsys.readouterr().out.strip().startswith(f"nothing to train: {tmp_path} holds every member")
    assert main([*tiny, "--steps", "3", "--models", "toy-bert", "--missing"]) == 2      # held under other settings
    assert "budget.steps: 2 there, 3 here" in capsys.readouterr().err


def test_a_device_torch_cannot_use_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device in ("cuda", "gpu"):
        with pytest.raises(SystemExit) as stop:
            main(["--out", str(tmp_path), "--models", "toy-bert", "--device", device])
        assert stop.value.code == 2 and f"error: --device {device}: " in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_slowest_members_start_first():
    from probekit.toymodels.jobs import slowest_first
    assert slowest_first(["toy-bert", "toy-clip", "toy-vilt-noisy", "toy-clip-hardneg"]) == [
        "toy-vilt-noisy", "toy-clip-hardneg", "toy-clip", "toy-bert"]


def test_runs_sharing_one_out_keep_each_others_members(tmp_path):
    from probekit.toymodels import record
    header = dict(seed=0, budget={"steps": 40, "pool": 64}, quick=False, device="cpu", threads=1)
    record.start(tmp_path, header, ["toy-clip"])          # run A starts
    record.start(tmp_path, header, ["toy-bert"])          # run B starts before A has saved anything
    record.save_entry(tmp_path, header, "toy-bert", {"wall_s": 2})
    merged = record.save_entry(tmp_path, header, "toy-clip", {"wall_s": 1})   # A did not see B's entry at its start
    assert list(merged["models"]) == ["toy-clip", "toy-bert"]                 # both kept, in the zoo's order
    assert json.loads((tmp_path / "training.json").read_text()) == merged
    other = {**header, "budget": {"steps": 30, "pool": 64}}
    with pytest.raises(record.ZooError, match=r"\['toy-bert'\].*budget.steps: 40 there, 30 here"):
        record.save_entry(tmp_path, other, "toy-clip", {"wall_s": 3})          # B's member is of another budget
    with pytest.raises(record.ZooError, match="or pass the rest of its record's settings$"):   # no option sets lr
        record.save_entry(tmp_path, {**header, "budget": {**header["budget"], "lr": 1e-3}}, "toy-clip", {})
    record.start(tmp_path / "one", header, ["toy-bert"])
    record.save_entry(tmp_path / "one", header, "toy-bert", {"wall_s": 2})
    record.start(tmp_path / "one", other, ["toy-bert"])   # retraining the only member under new settings is fine


def test_training_into_a_zoo_of_other_settings_is_refused_before_training(tmp_path, capsys):
    from dataclasses import asdict
    from probekit.toymodels import record
    from probekit.toymodels.train import Budget
    header = dict(seed=0, budget=asdict(Budget(steps=40, pool=16)), quick=False, device="cpu", threads=1)
    record.save_entry(tmp_path, header, "toy-clip", {"wall_s": 1})
    before = (tmp_path / "training.json").read_text()
    assert main(["--out", str(tmp_path), "--models", "toy-bert", "--steps", "2", "--pool", "16", "--seed", "1",
                 "--no-eval", "--threads", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "['toy-clip']" in err[0] and "seed: 0 there, 1 here" in err[0]
    assert err[0].endswith("budget.steps: 40 there, 2 here): train into another --out, or pass --seed 0 --steps 40")
    assert (tmp_path / "training.json").read_text() == before and not (tmp_path / "toy-bert").exists()


def test_rescore_rewrites_the_heldout_scores_and_the_card_without_training(tmp_path, capsys):
    import json
    import shutil
    shutil.copytree(CHECKPOINTS / "toy-bert", tmp_path / "toy-bert")
    record = json.loads((CHECKPOINTS / "training.json").read_text())
    record["models"]["toy-bert"]["heldout"] = {}
    (tmp_path / "training.json").write_text(json.dumps(record))
    weights = (tmp_path / "toy-bert" / "model.safetensors").read_bytes()
    assert main(["--out", str(tmp_path / "nothing"), "--rescore"]) == 2
    assert main(["--out", str(tmp_path), "--rescore", "--models", "toy-clip"]) == 2
    errors = capsys.readouterr().err.splitlines()                    # one line per bad call, naming what is wrong
    assert len(errors) == 2 and "training.json not found" in errors[0] and "'toy-clip'" in errors[1]
    assert json.loads((tmp_path / "training.json").read_text()) == record   # nothing written
    assert main(["--out", str(tmp_path), "--rescore", "--models", "toy-bert", "--threads", "1"]) == 0
    after = json.loads((tmp_path / "training.json").read_text())
    assert set(after["models"]["toy-bert"]["heldout"]) == {"masking_top5_text_only", "masking_top1_text_only"}
    assert after["models"]["toy-bert"]["history"] == record["models"]["toy-bert"]["history"]
    assert (tmp_path / "toy-bert" / "model.safetensors").read_bytes() == weights
    top5, top1 = (100 * after["models"]["toy-bert"]["heldout"][f"masking_top{k}_text_only"] for k in (5, 1))
    row = next(line for line in (tmp_path / "MODEL_CARD.md").read_text().splitlines()
               if line.startswith("| `toy-bert` |") and line.count("|") > 10)   # the held-out table's row
    assert row.endswith(f"| {top5:.1f} | {top1:.1f} |" + "  |" * 4)   # a text-only model: no hard sub-probe


def test_the_whole_zoo_is_shipped_registered_and_small():
    from probekit.toymodels.zoo import ZOO
    total = 0
    for name, member in ZOO.items():
        assert REGISTRY[name].source == f"toy:{name}"
        weights = list((CHECKPOINTS / name).glob("*.safetensors"))
        assert weights, name
        total += sum(w.stat().st_size for w in weights)
        assert member.parent is None or member.parent in ZOO
    assert total <= 40 * 2**20                                 # the budget for shipped checkpoints
    assert REGISTRY["toy-bert-blind"].source == "toy:toy-bert" and not REGISTRY["toy-bert-blind"].calibrated


def test_the_next_zoos_shipped_members_are_registered_with_their_record():
    """A member of the next zoo shipped beside the zoo (its weights copied in) has its registry entry, the family its
    trainer gives, and its training record with its parent; toy-vilt-unpaired and toy-clip-scenealways are shipped."""
    from probekit.toymodels.zoo import NEXT_ZOO, ZOO, shipped
    record = json.loads((CHECKPOINTS / "training.json").read_text())["models"]
    added = [name for name in NEXT_ZOO if name not in ZOO and shipped(name)]
    assert {"toy-vilt-unpaired", "toy-clip-scenealways"} <= set(added)
    for name in added:
        member = NEXT_ZOO[name]
        assert (REGISTRY[name].source, REGISTRY[name].family) == (f"toy:{name}", member.trainer)
        assert (record[name]["parent"], record[name]["factor"]) == (member.parent, member.factor)


def test_a_retrained_zoo_is_used_when_named(tmp_path, monkeypatch):
    import shutil
    from probekit.scorers.registry import resolve_source
    shutil.copytree(CHECKPOINTS / "toy-bert", tmp_path / "toy-bert")
    monkeypatch.setenv("PROBEKIT_TOY_CHECKPOINTS", str(tmp_path))
    assert resolve_source("toy:toy-bert") == str(tmp_path / "toy-bert")
    assert resolve_source("toy:toy-clip") == str(CHECKPOINTS / "toy-clip")     # not retrained: the shipped one
    (tmp_path / "toy-vilt").mkdir()                                # still training there: no weights saved yet
    with pytest.warns(UserWarning, match="toy-vilt.*no model.safetensors"):
        assert resolve_source("toy:toy-vilt") == str(CHECKPOINTS / "toy-vilt")
    with pytest.raises(FileNotFoundError, match="train-toy"):
        resolve_source("toy:toy-nothing")


def test_a_zoo_path_that_cannot_hold_the_member_is_an_error_not_the_shipped_model(tmp_path, monkeypatch):
    from probekit.scorers.registry import resolve_source
    monkeypatch.setenv("PROBEKIT_TOY_CHECKPOINTS", str(tmp_path / "zoo-typo"))
    with pytest.raises(FileNotFoundError, match="PROBEKIT_TOY_CHECKPOINTS=.*zoo-typo.*unset it"):
        resolve_source("toy:toy-clip")
    (tmp_path / "toy-clip").write_text("../zoo-60k/toy-clip")      # a link that became a file holding its target
    monkeypatch.setenv("PROBEKIT_TOY_CHECKPOINTS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="toy-clip is not a checkpoint directory.*--models toy-clip"):
        resolve_source("toy:toy-clip")
    (tmp_path / "toy-bert").symlink_to(tmp_path / "gone")         # a broken link
    with pytest.raises(FileNotFoundError, match="toy-bert is not a checkpoint directory"):
        resolve_source("toy:toy-bert")
    assert resolve_source("toy:toy-vilt") == str(CHECKPOINTS / "toy-vilt")   # not in this zoo: the shipped one


def test_progress_off_silences_probekit_bars_and_restores_them(capfd, monkeypatch):
    from probekit.progress import bar, off
    monkeypatch.delenv("PROBEKIT_PROGRESS", raising=False)             # bars on, as in a terminal
    monkeypatch.setenv("PROBEKIT_LINE_SECONDS", "0")                    # off a terminal: a line however short
    capfd.readouterr()
    with off():                                                          # what every held-out probe runs under
        list(bar(range(300), desc="inside"))
    assert "inside" not in capfd.readouterr().err
    list(bar(range(300), desc="outside"))
    assert "outside" in capfd.readouterr().err and "PROBEKIT_PROGRESS" not in os.environ


def test_the_training_log_has_lines_and_no_bars(tmp_path, capfd):
    capfd.readouterr()
    assert main(["--out", str(tmp_path), "--models", "toy-clip", "--steps", "100", "--pool", "64", "--threads", "1",
                 "--no-eval"]) == 0
    out = capfd.readouterr()
    assert out.err == "" and "[toy-clip] step 100/100 loss" in out.out       # no bar on stderr, the lines on stdout


def test_wsd_holds_the_peak_then_decays_and_cosine_is_unchanged():
    from probekit.toymodels import loop

    def rates(*args):
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        sched, out = loop.schedule(opt, 100, 0.1, *args), []
        for _ in range(100):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    wsd = rates("wsd", 0.2)
    assert wsd[9] == 1.0 and wsd[10:80] == [1.0] * 70 and 0.1 < wsd[99] < 0.11 and wsd[90] < wsd[85] < 1.0
    cosine = rates()
    assert cosine[:10] == wsd[:10] and cosine[50] == pytest.approx(0.1 + 0.45 * (1 + math.cos(math.pi * 40 / 90)))
    with pytest.raises(ValueError, match="unknown learning-rate schedule 'linear'"):
        rates("linear")


def test_schedule_and_precision_are_recorded_only_when_not_the_shipped_zoos(tmp_path, capsys):
    tiny = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main(["--out", str(tmp_path), *tiny, "--models", "toy-bert"]) == 0
    budget = json.loads((tmp_path / "training.json").read_text())["budget"]
    assert not {"schedule", "decay", "precision"} & set(budget)   # a record of the shipped zoo's settings, as before
    capsys.readouterr()
    assert main(["--out", str(tmp_path), *tiny, "--models", "toy-clip", "--schedule", "wsd"]) == 2
    assert capsys.readouterr().err.strip().endswith("or pass --schedule cosine")
    new = tmp_path / "new"
    assert main(["--out", str(new), *tiny, "--models", "toy-vilt", "--schedule", "wsd", "--precision", "bf16"]) == 0
    budget = json.loads((new / "training.json").read_text())["budget"]
    assert (budget["schedule"], budget["precision"]) == ("wsd", "bf16")
    capsys.readouterr()
    assert main(["--out", str(new), *tiny, "--models", "toy-bert"]) == 2
    assert capsys.readouterr().err.strip().endswith("or pass --schedule wsd --precision bf16")


def test_the_card_reproduces_a_next_zoo_with_its_budget_flags(tmp_path):
    from probekit.toymodels.card import write
    tiny = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main(["--out", str(tmp_path), *tiny, "--zoo", "next", "--models", "toy-bert", "toy-clip-noattr",
                 "--schedule", "wsd", "--warmup", "0.3", "--precision", "bf16"]) == 0
    card = write(tmp_path).read_text()
    assert ("`probekit train-toy --seed 0 --steps 2 --pool 16 --warmup 0.3 --schedule wsd --precision bf16 "
            "--zoo next`") in card


def test_the_card_reproduces_the_next_zoos_members_shipped_beside_the_zoo(tmp_path):
    from probekit.toymodels.card import write
    tiny = ["--steps", "2", "--pool", "16", "--no-eval", "--threads", "1"]
    assert main(["--out", str(tmp_path), *tiny, "--models", "toy-clip-noverb"]) == 0   # of the shipped zoo only
    assert main(["--out", str(tmp_path), *tiny, "--zoo", "next", "--models", "toy-clip-scenealways"]) == 0
    card = write(tmp_path).read_text()
    assert ("`probekit train-toy --seed 0 --steps 2 --pool 16` and, for `toy-clip-scenealways` (the next zoo's), "
            "`probekit train-toy --seed 0 --steps 2 --pool 16 --zoo next --models toy-clip-scenealways`") in card
