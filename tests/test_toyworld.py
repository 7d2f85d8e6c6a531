"""The toy world's generators: deterministic, schema-valid, split-disjoint, and their annotations are exact."""

import os

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit.datasets import SCHEMAS, load_dataset
from probekit.toyworld import glyphs, scene as drawn
from probekit.toyworld.vocab import ANTONYMS, OBJECTS

PROBES = list(SCHEMAS)
IMAGE_COLS = {"verbs": ["pos_image", "neg_image"], "prednoun": ["image"], "masking": ["image"],
              "probe-r": ["image"], "probe-c": ["image_0", "image_1"], "probe-b": ["image", "mask"],
              "classify": ["image"], "classify-pairs": ["image"]}


def _files(df, probe):
    return sorted({p for c in IMAGE_COLS[probe] for p in df[c]})


@pytest.mark.parametrize("probe", PROBES)
def test_schema_and_files(tmp_path, probe):
    df = load_dataset(probe, "toy", data_dir=tmp_path, limit=12, seed=1)
    assert len(df) == 12 and set(SCHEMAS[probe]) <= set(df.columns)
    for path in _files(df, probe):
        assert path.startswith(str(tmp_path.resolve() / "toy" / probe))
        assert Image.open(path).size == (64, 64)


@pytest.mark.parametrize("probe", PROBES)
def test_deterministic_and_reused(tmp_path, probe):
    a = load_dataset(probe, data_dir=tmp_path / "a", limit=10, seed=3)
    b = load_dataset(probe, data_dir=tmp_path / "b", limit=10, seed=3)
    roots = [str((tmp_path / d).resolve()) for d in "ab"]
    strip = lambda df: df.map(lambda v: str(v).replace(roots[0], "").replace(roots[1], ""))
    assert strip(a).equals(strip(b))
    fa, fb = _files(a, probe), _files(b, probe)
    assert all(open(x, "rb").read() == open(y, "rb").read() for x, y in zip(fa, fb))
    mtimes = [os.stat(p).st_mtime_ns for p in fa]
    load_dataset(probe, data_dir=tmp_path / "a", limit=10, seed=3)
    assert mtimes == [os.stat(p).st_mtime_ns for p in fa]
    other = load_dataset(probe, data_dir=tmp_path / "a", limit=10, seed=4)
    assert not strip(other).equals(strip(a))


def test_a_png_cached_by_older_drawing_code_is_redrawn_and_the_split_kept(tmp_path, monkeypatch):
    """What happened once: the limbs' colours changed, the scene keys did not, and a cache of the older drawing was
    scored as if it were the new one.  The file name now carries the drawing's fingerprint."""
    verbs = load_dataset("verbs", data_dir=tmp_path, limit=4, seed=0)
    before = {p: np.asarray(Image.open(p)) for p in _files(verbs, "verbs")}
    monkeypatch.setitem(glyphs.LIMBS, "man", (200, 0, 200))
    monkeypatch.setitem(glyphs.LIMBS, "boy", (200, 0, 200))
    drawn.drawing.cache_clear()
    redrawn = load_dataset("verbs", data_dir=tmp_path, limit=4, seed=0)
    drawn.drawing.cache_clear()
    assert redrawn.drop(columns=IMAGE_COLS["verbs"]).equals(verbs.drop(columns=IMAGE_COLS["verbs"]))
    after = _files(redrawn, "verbs")
    assert not set(after) & set(before) and all(os.path.exists(p) for p in before)
    changed = [not np.array_equal(np.asarray(Image.open(a)), before[b]) for a, b in zip(after, before)]
    assert any(changed) and not all(changed)   # images with a man or a boy in them, and only those


@pytest.mark.parametrize("probe", PROBES)
def test_train_and_eval_disjoint(tmp_path, probe):
    ev = load_dataset(probe, data_dir=tmp_path, limit=30, split="eval")
    tr = load_dataset(probe, data_dir=tmp_path, limit=30, split="train")
    assert not set(_files(ev, probe)) & set(_files(tr, probe))


def test_bad_split(tmp_path):
    with pytest.raises(ValueError, match="split"):
        load_dataset("verbs", data_dir=tmp_path, limit=2, split="test")


def test_verbs_negatives_differ_in_one_slot(tmp_path):
    df = load_dataset("verbs", data_dir=tmp_path, limit=40)
    assert (df[["subj_neg", "verb_neg", "obj_neg"]].sum(axis=1) == 1).all()
    for _, r in df.iterrows():
        pos, neg = r.pos_triplet.split(","), r.neg_triplet.split(",")
        diff = [i for i in range(3) if pos[i] != neg[i]]
        assert diff == [[r.subj_neg, r.verb_neg, r.obj_neg].index(True)]
        assert r.verb == pos[1]
        assert r.neg_scene == r.pos_scene     # the background names no object: it is the positive image's
    assert df["pos_scene"].nunique() > 2


def test_a_verb_negative_is_a_close_verb_one_of_each_cue_per_sentence(tmp_path):
    from probekit.toyworld.svo import PLACE, POSE, close_verb_weights, make_items, verb_cue, verb_draws
    from probekit.toyworld.vocab import VERBS
    # "hold" (standing, object beside the limbs): "watch", "show" and "lift" share its pose, "push" and "clean" its
    # place; "chase", "eat", "kick" and "ride" differ in both
    options = [("man", v, "ball") for v in ("watch", "push", "chase", "show", "eat", "clean", "kick", "ride", "lift")]
    third = 0.5 / 3
    assert close_verb_weights("hold", options) == [third, 0.25, 0.0, third, 0.0, 0.25, 0.0, 0.0, third]
    assert close_verb_weights("hold", [("man", "ride", "ball")]) is None           # none close: uniform
    # the book's draw: one verb negative of each cue, uniform within it; none for a cue without options
    assert [(kind, [o[1] for o in kept], w) for kind, kept, w in verb_draws("hold", options, True)] == [
        ("verb-place", ["watch", "show", "lift"], None), ("verb-pose", ["push", "clean"], None)]
    assert [kind for kind, _, _ in verb_draws("hold", options[:1], True)] == ["verb-place"]
    assert verb_draws("hold", options, False) == [("verb", options, close_verb_weights("hold", options))]
    df = load_dataset("verbs", data_dir=tmp_path, limit=300)
    verb = df[df["verb_neg"]]
    pairs = [(VERBS[p.split(",")[1]], VERBS[n.split(",")[1]]) for p, n in zip(verb.pos_triplet, verb.neg_triplet)]
    same_pose = np.array([a.pose == b.pose for a, b in pairs])
    same_place = np.array([a.offset == b.offset for a, b in pairs])
    assert (same_pose ^ same_place).all()                                          # close, and in exactly one way
    # what the verbs chapter splits verb negatives by: the same rows, named by the cue that tells them apart
    cues = verb_cue(df)
    assert cues[~df["verb_neg"]].isna().all()
    assert list(cues[df["verb_neg"]]) == [PLACE if p else POSE for p in same_pose]
    # per sentence (6 rows: subject, two verb negatives each with its mirror, object) one of each cue, where allowed
    drawn = verb[~verb["item_id"].str.endswith("-mirror")]
    per_sentence = cues[drawn.index].groupby(drawn["item_id"].str.rsplit("-", n=2).str[0])
    assert (per_sentence.nunique() == per_sentence.size()).all() and per_sentence.ngroups == 50
    assert list(cues[drawn.index]) == [{"place": PLACE, "pose": POSE}[i.rsplit("-", 1)[1]] for i in drawn["item_id"]]
    assert 0.45 <= same_pose.mean() <= 0.55 and len(pairs) >= 190
    # the toy zoo's held-out set: one verb negative per sentence, either cue with probability one half
    held = make_items(tmp_path, 300, 0, "eval", by_cue=False)
    held_same_pose = verb_cue(held)[held["verb_neg"]] == PLACE
    assert 0.35 < held_same_pose.mean() < 0.65 and len(held_same_pose) == 150   # 75 verb rows, mirrors
    hand = pd.DataFrame({"pos_triplet": ["man,hold,ball"] * 4, "neg_triplet": ["man,watch,ball", "man,push,ball",
                                                                               "man,chase,ball", "boy,hold,ball"],
                         "verb_neg": [True, True, True, False]})
    assert list(verb_cue(hand)) == ["the object's place", "the pose", "both", None]


def test_every_verb_negative_has_its_mirror_so_an_image_only_score_is_at_chance(tmp_path):
    from probekit.metrics.itm import pairwise_accuracy
    df = load_dataset("verbs", data_dir=tmp_path, limit=44)   # 7 sentences x 6 rows, then the 8th sentence's subject
    # and object rows: its verb rows and mirrors would not fit, so none is kept
    assert len(df) == 44 and df["item_id"].is_unique and df["obj_neg"].iloc[-1]
    verb = df[df["verb_neg"]].set_index("item_id")
    turned = verb.loc[[i for i in verb.index if i.endswith("-mirror")]]
    assert len(turned) * 2 == len(verb) == 28
    for mid, m in turned.iterrows():
        r = verb.loc[mid.removesuffix("-mirror")]
        assert (m.pos_image, m.neg_image, m.pos_triplet, m.neg_triplet) == (r.neg_image, r.pos_image,
                                                                            r.neg_triplet, r.pos_triplet)
        assert m.verb == r.neg_triplet.split(",")[1] and m.pos_subject_box == r.neg_subject_box
        assert m.sentence != r.sentence and m.sentence.split()[-1] == r.sentence.split()[-1]  # same object named
    # a "model" that scores the image alone (here: its file name's hash), whatever the sentence
    score = {p: int(p.rsplit("/", 1)[-1][:8], 16) for p in [*df.pos_image, *df.neg_image]}
    rows = pairwise_accuracy(df, df.pos_image.map(score), df.neg_image.map(score)).set_index("subset")
    assert rows.loc["verb", "value"] == 0.5 and rows.loc["verb", "n"] == 28
    assert rows.loc["subject", "value"] != 0.5 or rows.loc["object", "value"] != 0.5   # those are not mirrored


def test_verbs_subject_boxes_cover_a_drawn_subject(tmp_path):
    import numpy as np
    from PIL import Image
    df = load_dataset("verbs", data_dir=tmp_path, limit=12)
    for _, r in df.iterrows():
        for side in ("pos", "neg"):
            img = np.asarray(Image.open(r[f"{side}_image"]).convert("RGB"))
            x, y, w, h = r[f"{side}_subject_box"]
            H, W = img.shape[:2]
            cell = img[round(y * H):round((y + h) * H), round(x * W):round((x + w) * W)]
            assert cell.size and len(np.unique(cell.reshape(-1, 3), axis=0)) > 1  # not a flat background


def test_prednoun_counterbalanced(tmp_path):
    df = load_dataset("prednoun", data_dir=tmp_path, limit=20)
    for k in range(0, len(df), 2):
        a, b = df.iloc[k], df.iloc[k + 1]
        assert a.pair_id == b.pair_id and a.image != b.image
        assert (a.sentence_target, a.sentence_distractor) == (b.sentence_distractor, b.sentence_target)
        assert a.word_target in a.sentence_target and a.word_distractor in a.sentence_distractor
        assert a.target_box != a.distractor_box
        assert a.scene == b.scene      # one background per pair: it cannot tell the two images' targets apart


def test_masking_span_and_box(tmp_path):
    df = load_dataset("masking", data_dir=tmp_path, limit=30)
    from probekit.toymodels.evaluate import LEMMA
    for _, r in df.iterrows():
        assert LEMMA[r.sentence[r.verb_start:r.verb_end]] == r.verb
        x, y, w, h = r.subject_box
        assert 0 <= x < 1 and 0 <= y < 1 and w > 0 and h > 0


def test_probe_c_swaps(tmp_path):
    df = load_dataset("probe-c", data_dir=tmp_path, limit=20)
    for _, r in df.iterrows():
        w0, w1 = r.caption_0.split(), r.caption_1.split()
        changed = [(a, b) for a, b in zip(w0, w1) if a != b]
        assert len(changed) == 1
        if r.split == "composition":
            assert ANTONYMS[changed[0][0]] == changed[0][1]
        else:
            assert set(changed[0]) <= set(OBJECTS)


def test_probe_b_masks_cover_objects_only(tmp_path):
    df = load_dataset("probe-b", data_dir=tmp_path, limit=10)
    assert df.attrs["classes"] == OBJECTS
    scenes = list((tmp_path / "toy" / "probe-b" / "scenes").glob("*.png"))
    assert len(scenes) >= 4 and str(scenes[0].parent.resolve()) == df.attrs["scene_dir"]
    for _, r in df.iterrows():
        m = np.asarray(Image.open(r["mask"])) > 0
        every = np.asarray(Image.open(r["objects_mask"])) > 0
        kept = 1 if r.single_object else len(r.labels)
        assert 0 < m.sum() < m.size * kept / 16 + 1   # each kept object lies within its 16x16 cell
        assert not (m & ~every).any()                 # the keep-mask is part of the objects' mask
        assert (r.target in r.labels) if r.single_object else r.target is None


def test_the_general_tasks_default_table_shows_each_of_its_classes_once():
    """``classify-pairs`` takes its classes in turn, so its default size must be the class count (``items`` cannot
    derive it: ``classify`` imports ``items``)."""
    from probekit.toyworld.classify import SCENE_PAIRS
    from probekit.toyworld.items import DEFAULT_SIZE

    assert DEFAULT_SIZE["classify-pairs"] == len(SCENE_PAIRS)
