import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from probekit.studies.conceptual.finetune import FinetuneConfig, swap_losses, swap_triplets
from probekit.studies.conceptual.patching import interpolate, patched_model
from probekit.studies.conceptual import finetune_cache
from probekit.studies.conceptual.finetune_cache import finetuned_cached, patch_path, run_key, trained_config, training_history
from probekit.scorers.registry import TOY_CHECKPOINTS
from probekit.scorers.testing import save_tiny


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("ft")
    base = save_tiny("clip", d / "base")
    colours = {"red": (220, 30, 30), "blue": (40, 80, 230), "green": (30, 150, 40)}
    rows = []
    for name, rgb in colours.items():
        for shape in ("ball", "car"):
            img = np.zeros((32, 32, 3), np.uint8)
            img[8:24, 8:24] = rgb if shape == "car" else [v // 2 for v in rgb]
            Image.fromarray(img).save(d / f"{name}_{shape}.png")
            other = next(c for c in colours if c != name)
            rows.append({"image": str(d / f"{name}_{shape}.png"), "caption": f"a {name} {shape}",
                         "negative_caption": f"a {other} {shape}", "negative_image": None})
    return base, pd.DataFrame(rows), d


def _state(path):
    from transformers import CLIPModel
    return CLIPModel.from_pretrained(str(path)).state_dict()


def test_finetuning_lowers_the_loss_caches_and_patches_exactly(world):
    base, triplets, d = world
    cfg = FinetuneConfig(encoders="both", steps=40, batch_size=6, lr=1e-3, optimizer="adamw")
    ft = finetuned_cached(base, triplets, cfg, d / "cache", progress=False)
    loss = training_history(ft)["loss"]
    assert loss.tail(5).mean() < loss.iloc[0] - 0.3
    assert (trained_config(ft)["batch_size"], trained_config(ft)["steps"], len(loss)) == (6, 40, 40)
    stamp = (ft / "finetune.json").stat().st_mtime_ns
    assert finetuned_cached(base, triplets, cfg, d / "cache", progress=False) == ft
    assert (ft / "finetune.json").stat().st_mtime_ns == stamp          # cached: not trained again
    theta0, theta1 = _state(base), _state(ft)
    assert any(not torch.equal(theta0[k], theta1[k]) for k in theta0)
    for alpha, expected in ((0.0, theta0), (1.0, theta1)):
        got = interpolate(theta0, theta1, alpha)
        assert all(torch.equal(got[k], expected[k]) for k in theta0), alpha
    half = _state(patched_model(base, ft, 0.5, patch_path(ft, 0.5)))
    k = "text_projection.weight"
    assert torch.allclose(half[k], (theta0[k] + theta1[k]) / 2)
    assert (patch_path(ft, 0.5) / "tokenizer.json").exists() and (patch_path(ft, 0.5) / "preprocessor_config.json").exists()


def test_a_retrained_base_is_fine_tuned_afresh(world, tmp_path, monkeypatch):
    _, triplets, _ = world
    cfg = FinetuneConfig()
    shipped = run_key("toy-clip", cfg, triplets)
    assert run_key("toy-clip", cfg, triplets) == shipped
    shutil.copytree(TOY_CHECKPOINTS / "toy-clip", tmp_path / "toy-clip")
    monkeypatch.setenv("PROBEKIT_TOY_CHECKPOINTS", str(tmp_path))
    assert run_key("toy-clip", cfg, triplets) == shipped          # the same weights elsewhere: the same key
    weights = tmp_path / "toy-clip" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + b"\x01")
    assert run_key("toy-clip", cfg, triplets) != shipped          # another zoo's toy-clip: trained afresh
    monkeypatch.delenv("PROBEKIT_TOY_CHECKPOINTS")
    assert run_key("toy-clip", cfg, triplets) == shipped


def test_a_shipped_fine_tune_is_copied_instead_of_trained_and_only_for_its_own_key(world, tmp_path, monkeypatch):
    base, triplets, d = world
    cfg = FinetuneConfig(encoders="text", steps=3, batch_size=6, lr=1e-3)
    trained = finetuned_cached(base, triplets, cfg, tmp_path / "cache" / "base", progress=False)
    zoo = tmp_path / "zoo"
    shipped, = finetune_cache.ship(tmp_path / "cache", zoo)
    assert shipped == zoo / "finetuned" / trained.parent.name
    monkeypatch.setenv("PROBEKIT_TOY_CHECKPOINTS", str(zoo))

    def no_training(*args, **kwargs):
        raise AssertionError("trained although a shipped fine-tune has this key")

    monkeypatch.setattr(finetune_cache, "finetune_clip", no_training)
    copied = finetuned_cached(base, triplets, cfg, tmp_path / "fresh", progress=False)
    assert copied == tmp_path / "fresh" / trained.parent.name / "finetuned"
    assert (copied / "model.safetensors").read_bytes() == (trained / "model.safetensors").read_bytes()
    assert not any(p.name.endswith(".partial") for p in copied.parent.iterdir())
    other = FinetuneConfig(encoders="text", steps=4, batch_size=6, lr=1e-3)   # another setting: not shipped
    with pytest.raises(AssertionError, match="trained although"):
        finetuned_cached(base, triplets, other, tmp_path / "fresh", progress=False)


def test_shipping_keeps_the_first_seeds_weights_and_every_sweep_kept_as_numbers(world, tmp_path):
    base, triplets, d = world
    tuned = {s: finetuned_cached(base, triplets, FinetuneConfig(encoders="text", steps=2, batch_size=4, seed=s),
                                 tmp_path / "cache" / "base", progress=False) for s in (0, 1)}
    (tmp_path / "cache" / "base" / "seeds").mkdir()
    (tmp_path / "cache" / "base" / "seeds" / "k1.parquet").write_bytes(b"numbers")
    shipped = finetune_cache.ship(tmp_path / "cache", tmp_path / "zoo", seeds={0})
    assert shipped == [tmp_path / "zoo" / "finetuned" / tuned[0].parent.name,
                       tmp_path / "zoo" / "finetuned" / "seeds" / "k1.parquet"]
    assert not (tmp_path / "zoo" / "finetuned" / tuned[1].parent.name).exists()


def test_the_same_triplets_under_another_data_folder_have_the_same_key(world):
    _, triplets, d = world
    moved = triplets.assign(image=[str(Path("/elsewhere/data") / Path(p).name) for p in triplets["image"]])
    assert finetune_cache.fingerprint(moved) == finetune_cache.fingerprint(triplets)
    renamed = moved.assign(image=moved["image"].str.replace("red_ball", "red_bell"))
    assert finetune_cache.fingerprint(renamed) != finetune_cache.fingerprint(triplets)
    recaptioned = triplets.assign(caption=triplets["caption"].str.replace("red", "pink"))
    assert finetune_cache.fingerprint(recaptioned) != finetune_cache.fingerprint(triplets)


def test_the_shipped_fine_tunes_are_the_chapters_defaults():
    from probekit.studies.conceptual.params import Params
    from probekit.studies.conceptual.finetune_cache import SHIPPED

    params = Params()
    configs = sorted((trained_config(p)["encoders"], trained_config(p)["steps"], trained_config(p)["batch_size"],
                      trained_config(p)["lr"], trained_config(p)["optimizer"], trained_config(p)["seed"])
                     for p in (TOY_CHECKPOINTS / SHIPPED).iterdir() if (p / "finetune.json").is_file())
    assert configs == sorted((e, params.finetune_steps, params.finetune_batch, params.finetune_lr,
                              params.finetune_optimizer, params.seed) for e in params.finetune_encoders)
    # the other fine-tuning seeds' sweeps ship as numbers, one file each
    assert len(list((TOY_CHECKPOINTS / SHIPPED / finetune_cache.SEEDS).glob("*.parquet"))) == params.finetune_seeds - 1


def test_only_the_chosen_encoder_moves(world):
    base, triplets, d = world
    ft = finetuned_cached(base, triplets, FinetuneConfig(encoders="text", steps=3, batch_size=4, lr=0.5),
                          d / "cache", progress=False)
    theta0, theta1 = _state(base), _state(ft)
    vision = [k for k in theta0 if k.startswith(("vision_model", "visual_projection"))]
    text = [k for k in theta0 if k.startswith(("text_model", "text_projection"))]
    assert all(torch.equal(theta0[k], theta1[k]) for k in vision)
    assert any(not torch.equal(theta0[k], theta1[k]) for k in text)


def test_swap_losses_reward_the_right_caption():
    e = torch.eye(4)
    img, txt = e[:2], e[:2]
    good_itm, _ = swap_losses(img, txt, e[2:4], e[2:4], torch.tensor(10.0), margin=0.2)
    bad_itm, _ = swap_losses(img, e[2:4], txt, e[2:4], torch.tensor(10.0), margin=0.2)
    assert good_itm.item() == 0.0 and bad_itm.item() == pytest.approx(1.2)  # both triplets: 0.2 - 0 + 1


def test_triplets_from_probe_tables():
    r = pd.DataFrame({"image": ["a.png", "a.png", "b.png"], "correct_prompt": ["x", "x", "a man"],
                      "wrong_prompt": ["y", "z", "x"], "kind": ["predicate_swap", "subject_swap", "subject_only"]})
    c = pd.DataFrame({"image_0": ["p.png", "s.png"], "image_1": ["q.png", "t.png"], "split": ["composition", "object"],
                      "caption_0": ["a red cup", "a red cup"], "caption_1": ["a green cup", "a red ball"]})
    t = swap_triplets(r, c)
    # RelComp's negatives only: the predicate swap (x vs y) and the attribute swap both ways; no subject swap
    # (x vs z), no object swap (cup vs ball), no subject-only prompt
    assert len(t) == 3 and set(t["negative_caption"]) == {"y", "a green cup", "a red cup"}
    assert t.iloc[2].tolist() == ["q.png", "a green cup", "a red cup", "p.png"]
    with pytest.raises(ValueError):
        FinetuneConfig(encoders="audio")


def test_paper_mode_without_a_training_file_skips_the_fine_tuning_and_says_why():
    from probekit.studies.conceptual.sweep import sweep_plan

    assert sweep_plan("toy", None, "toy", None) == {"skip": "", "general_task": "toy", "fallback": ""}
    paper = sweep_plan("paper", None, "imagenet", "/data/imagenet")
    assert "train_data" in paper["skip"] and paper["general_task"] == "imagenet" and not paper["fallback"]
    assert sweep_plan("paper", "relcomp.csv", "imagenet", "/data/imagenet")["skip"] == ""
    fallback = sweep_plan("paper", "relcomp.csv", "imagenet", None)
    assert fallback["general_task"] == "toy" and "imagenet_dir" in fallback["fallback"]


def test_per_kind_keeps_as_many_predicate_swaps_as_attribute_swaps_in_table_order():
    r = pd.DataFrame({"image": ["a.png", "b.png", "c.png", "d.png"], "correct_prompt": ["p1", "p2", "p3", "a man"],
                      "wrong_prompt": ["w1", "w2", "w3", "p1"],
                      "kind": ["predicate_swap", "predicate_swap", "predicate_swap", "subject_only"]})
    c = pd.DataFrame({"image_0": ["g0.png", "o.png", "h0.png"], "image_1": ["g1.png", "o1.png", "h1.png"],
                      "split": ["composition", "object", "composition"],
                      "caption_0": ["a red cup", "a red cup", "a big hat"],
                      "caption_1": ["a green cup", "a red ball", "a small hat"]})
    t = swap_triplets(r, c, per_kind=2)
    # the first two predicate swaps, and the first composition group's two triplets (one per image)
    assert t["negative_caption"].tolist() == ["w1", "w2", "a green cup", "a red cup"]
    assert t["image"].tolist() == ["a.png", "b.png", "g0.png", "g1.png"]
    assert swap_triplets(r, c, per_kind=3)["image"].tolist()[3:] == ["g0.png", "g1.png", "h0.png"]
    assert len(swap_triplets(r, c)) == 3 + 4


@pytest.mark.parametrize("n", [10, 25])
def test_the_toy_train_split_loaded_per_triplet_holds_n_triplets_of_each_kind(tmp_path, n):
    from probekit.datasets import load_dataset
    from probekit.studies.conceptual.sweep import TRAIN_ITEMS

    load = lambda probe: load_dataset(probe, "toy", data_dir=tmp_path, limit=TRAIN_ITEMS[probe] * n, split="train")
    t = swap_triplets(load("probe-r"), load("probe-c"), per_kind=n)
    assert t["negative_image"].isna().sum() == n and t["negative_image"].notna().sum() == n
    evaluation = set(load_dataset("probe-r", "toy", data_dir=tmp_path, split="eval")["image"])
    assert not set(t["image"]) & evaluation


def test_a_fine_tune_draws_its_bar_with_the_loss_unless_bars_are_off(world, tmp_path, capsys, monkeypatch):
    base, triplets, _ = world
    cfg = FinetuneConfig(encoders="text", steps=3, batch_size=4)
    monkeypatch.setenv("PROBEKIT_LINE_SECONDS", "0")   # a line however short the job
    finetuned_cached(base, triplets, cfg, tmp_path / "shown")
    err = capsys.readouterr().err
    assert "fine-tune CLIP (text): 3/3 it in " in err and "loss=" in err   # not a terminal: one line, last loss
    assert "\r" not in err
    assert "Writing model shards" not in err   # transformers' bar for the save: not ours to show
    monkeypatch.setenv("PROBEKIT_PROGRESS", "0")   # what `probekit --quiet` sets
    finetuned_cached(base, triplets, cfg, tmp_path / "quiet")
    assert "fine-tune CLIP" not in capsys.readouterr().err


def _text_only(base, triplets, out):
    from probekit.studies.conceptual.finetune import finetune_clip
    cfg = FinetuneConfig(encoders="text", steps=6, batch_size=4, lr=1e-2, optimizer="adamw")
    return _state(finetune_clip(base, triplets, cfg, out, progress=False))


def _images_encoded(monkeypatch) -> list[int]:
    """The batch sizes of every ``get_image_features`` call from now on."""
    from transformers import CLIPModel
    seen, real = [], CLIPModel.get_image_features

    def counted(self, pixel_values, **kw):
        seen.append(len(pixel_values))
        return real(self, pixel_values, **kw)
    monkeypatch.setattr(CLIPModel, "get_image_features", counted)
    return seen


def test_a_frozen_encoder_is_encoded_once_per_image_and_trains_the_same_weights(world, tmp_path, monkeypatch):
    from probekit.studies.conceptual import finetune
    base, triplets, _ = world
    seen = _images_encoded(monkeypatch)
    memo = _text_only(base, triplets, tmp_path / "memo")
    assert 4 <= sum(seen) <= triplets["image"].nunique()          # each image once (6 steps x 4 without the memo)
    monkeypatch.setattr(finetune, "_memo", lambda compute, keep=None: compute)   # every batch encoded afresh
    fresh = _text_only(base, triplets, tmp_path / "fresh")
    logits = [_logits(base, state) for state in (memo, fresh, _state(base))]
    assert torch.allclose(logits[0], logits[1], atol=1e-5)     # the same model, to round-off
    assert not torch.allclose(logits[0], logits[2], atol=1e-2)  # and a trained one


def _logits(base, state: dict) -> torch.Tensor:
    """Image-text logits of the CLIP model ``base`` with weights ``state`` on fixed random inputs.  Fine-tuned
    weights are compared through what they compute, not one by one: a key projection's bias gets no gradient in exact
    arithmetic (the softmax does not change when all of a query's logits move alike), so Adam turns its round-off into
    steps of the full learning rate that differ between two runs summing in another order (transformers 5.24)."""
    from transformers import CLIPModel
    model = CLIPModel.from_pretrained(str(base)).eval()
    model.load_state_dict(state)
    g, vis = torch.Generator().manual_seed(0), model.config.vision_config
    pixels = torch.randn(4, 3, vis.image_size, vis.image_size, generator=g)
    ids = torch.randint(5, model.config.text_config.vocab_size, (4, 7), generator=g)
    with torch.no_grad():
        return model(input_ids=ids, pixel_values=pixels).logits_per_image


def test_a_frozen_encoder_with_dropout_is_encoded_afresh_each_batch(world, tmp_path, monkeypatch):
    import json
    base, triplets, _ = world
    shutil.copytree(base, tmp_path / "drop")
    cfg = json.loads((tmp_path / "drop" / "config.json").read_text())
    cfg["vision_config"]["attention_dropout"] = 0.5
    (tmp_path / "drop" / "config.json").write_text(json.dumps(cfg))
    seen = _images_encoded(monkeypatch)
    _text_only(tmp_path / "drop", triplets, tmp_path / "out")
    assert seen == [4] * 6                                        # every step's batch, not once per image
