"""The shipped toy models, loaded through the registry, rank a matching caption above a wrong one on toy items."""

from __future__ import annotations

import pytest
import torch

from probekit.datasets import load_dataset
from probekit.scorers import MASK, load_scorer
from probekit.scorers.registry import TOY_CHECKPOINTS

torch.set_num_threads(1)

pytestmark = pytest.mark.skipif(not (TOY_CHECKPOINTS / "toy-vilt").is_dir() or not (TOY_CHECKPOINTS / "toy-clip").is_dir(),
                                reason="toy checkpoints not built yet (probekit train-toy)")


@pytest.fixture(scope="module")
def noun_negatives(tmp_path_factory):
    items = load_dataset("verbs", data_dir=tmp_path_factory.mktemp("data"), limit=90)
    rows = items[items.subj_neg | items.obj_neg].reset_index(drop=True)
    wrong = []
    for r in rows.itertuples():
        (s, _, o), (ns, _, no) = r.pos_triplet.split(","), r.neg_triplet.split(",")
        old, new = (s, ns) if r.subj_neg else (o, no)
        words = r.sentence.split()
        at = len(words) - 1 - words[::-1].index(old) if r.obj_neg else words.index(old)
        wrong.append(" ".join(words[:at] + [new] + words[at + 1:]))
    rows["wrong_sentence"] = wrong
    assert (rows.wrong_sentence != rows.sentence).all()
    return rows


@pytest.mark.parametrize("name", ["toy-clip", "toy-vilt"])
def test_toy_model_prefers_the_matching_caption_and_image(name, noun_negatives, tmp_path):
    s = load_scorer(name, device="cpu", cache_dir=tmp_path)
    rows = noun_negatives
    texts = s.choose_text(list(rows.pos_image), [[a, b] for a, b in zip(rows.sentence, rows.wrong_sentence)])
    imgs = s.choose_image([[a, b] for a, b in zip(rows.pos_image, rows.neg_image)], list(rows.sentence))
    # the image choice reads subject negatives: on object negatives drawn on the same background toy-vilt is near
    # chance (the verbs chapter's lab shows it), while toy-clip is not
    subject = rows.subj_neg.to_numpy()
    text_acc, image_acc = (texts[:, 0] > texts[:, 1]).mean(), (imgs[subject, 0] > imgs[subject, 1]).mean()
    assert text_acc >= 0.85 and image_acc >= 0.85, (name, len(rows), text_acc, image_acc)


def test_toy_vilt_and_toy_bert_fill_masks_with_toy_words(noun_negatives, tmp_path):
    r = noun_negatives.iloc[0]
    subject = r.pos_triplet.split(",")[0]
    masked = r.sentence.replace(subject, MASK, 1)
    vilt = load_scorer("toy-vilt", device="cpu", cache_dir=tmp_path)
    bert = load_scorer("toy-bert", device="cpu", cache_dir=tmp_path)
    with_image = vilt.fill_mask([masked], [r.pos_image], k=5)[0][0]
    blind = bert.fill_mask([masked], k=5)[0][0]
    for top in (with_image, blind):
        assert len(top) == 5 and all(w and not w.startswith("[") for w, _ in top[:1])
    assert vilt.word_pieces(subject) == [subject]


def test_uncalibrated_match_head_ranks_but_is_never_thresholded(tmp_path):
    """vilt-coco's retrieval head is a rank logit: the registry marks it uncalibrated, so it answers the choice
    question but not the threshold one; a calibrated ITM model answers both."""
    from probekit.scorers import REGISTRY, CapabilityError, can_answer, head_for, load_scorer
    from probekit.scorers.testing import save_tiny

    assert REGISTRY["vilt-coco"].calibrated is False and REGISTRY["vilt-itm"].calibrated is True
    tiny = load_scorer(save_tiny("vilt", tmp_path / "vilt"), family="vilt", cache_dir=False)
    assert head_for(tiny, "threshold") == "match"
    tiny.match_calibrated = REGISTRY["vilt-coco"].calibrated   # what load_scorer sets for vilt-coco
    assert head_for(tiny, "choice") == "match"
    assert not can_answer(tiny, "threshold")
    with pytest.raises(CapabilityError, match="not calibrated"):
        head_for(tiny, "threshold")


def test_vilt_scores_repeat_exactly_and_leave_the_global_rng_alone():
    """ViLT draws its patch order at random; scores must still be identical from call to call (no cache)."""
    items = load_dataset("verbs", "toy", limit=12, seed=0)
    images, texts = items["pos_image"].tolist(), items["sentence"].tolist()
    first = load_scorer("toy-vilt", device="cpu", cache_dir=False).match(images, texts)
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    second = load_scorer("toy-vilt", device="cpu", cache_dir=False).match(images, texts)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert (first == second).all()


def test_scores_do_not_depend_on_where_the_images_are(tmp_path):
    """Batches follow the order of first use, not the cache keys (which hold paths): the same images under two
    directories give identical ViLT scores, whose values depend on the batch they are padded and sampled in."""
    import shutil

    items = load_dataset("verbs", "toy", limit=40, seed=0)
    images, texts = items["pos_image"].tolist() + items["neg_image"].tolist(), items["sentence"].tolist() * 2
    scores = []
    for folder, name in (("a", lambda i: f"{i:03d}.png"), ("b", lambda i: f"{999 - i:03d}.png")):
        moved = []                                  # the two folders' files sort in opposite orders
        for i, src in enumerate(images):
            dest = tmp_path / folder / name(i)
            dest.parent.mkdir(exist_ok=True)
            if not dest.exists():
                shutil.copy(src, dest)
            moved.append(str(dest))
        scores.append(load_scorer("toy-vilt", device="cpu", cache_dir=tmp_path / f"cache-{folder}",
                                  batch_size=8).match(moved, texts))
    assert (scores[0] == scores[1]).all()
