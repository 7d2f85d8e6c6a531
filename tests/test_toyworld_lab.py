"""The toy world's laboratory properties: size of the vocabulary, no language prior beyond the stated one, boxes that
vary, an agent's kind and pose in different patches (its limbs narrowing the kind to two), knock-out recipes that
remove exactly one kind of information."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from probekit.toyworld import conceptual, glyphs, masking, prednoun, stream
from probekit.toyworld.items import DEFAULT_SIZE
from probekit.toyworld.glyphs import LIMBS, same_limbs
from probekit.toyworld.sample import svo_scene
from probekit.toyworld.scene import Entity, Scene, render
from probekit.toyworld.vocab import (AGENT_SCENE, ANTONYMS, AGENTS, CELL, OBJECTS, PLAUSIBLE_TRIPLES, POSES, SCENES,
                                     VERBS, plausible, pose_only_topk, prior_topk)


def test_world_is_large_enough():
    assert len(VERBS) >= 24 and len(POSES) >= 8 and len(OBJECTS) >= 12 and len(AGENTS) >= 6 and len(SCENES) >= 6
    assert {ANTONYMS[ANTONYMS[a]] == a for a in ANTONYMS} == {True}


def test_close_verb_pairs_exist():
    by_pose, by_place = {}, {}
    for v in VERBS.values():
        by_pose.setdefault(v.pose, []).append(v.lemma)
        by_place.setdefault(v.offset, []).append(v.lemma)
    assert all(len(vs) >= 2 for vs in by_pose.values())           # same pose, object elsewhere
    assert sum(len(vs) >= 2 for vs in by_place.values()) >= 4      # same place, another pose
    assert len({(v.pose, v.offset) for v in VERBS.values()}) == len(VERBS)   # every verb is drawn differently


def test_masked_verb_prior_is_at_most_a_quarter():
    assert 5 / len(VERBS) <= 0.25
    assert prior_topk(5) <= 0.25
    # given subject and object, every caption leaves at least 20 equally likely verbs
    for s in AGENTS:
        for o in OBJECTS:
            assert sum(plausible(s, v, o) for v in VERBS) >= 20


def test_the_pose_alone_does_not_fill_a_top_5():
    # a man standing with a cup: seven standing verbs are plausible ("drop" is not, for a man), so a model that reads
    # the pose but not the object's place holds the verb in its top-5 at best 5 times in 7
    standing = [v for v in VERBS if VERBS[v].pose == "stand" and plausible("man", v, "cup")]
    assert len(standing) == 7 and "drop" not in standing
    assert 0.70 < pose_only_topk(5) < 0.80 and pose_only_topk(8) == 1.0   # eight verbs per pose


def test_masking_items_follow_the_uniform_prior(tmp_path):
    items = masking.make_items(tmp_path, 300, 0, "eval")
    counts = items["verb"].value_counts()
    assert len(counts) == len(VERBS) and counts.max() / len(items) < 0.1   # no verb dominates
    assert all(plausible(s, v, o) for s, v, o in zip(items["subject"], items["verb"],
                                                      items["sentence"].str.split().str[-1]))


def test_the_limbs_alone_bind_four_pairs_in_five(tmp_path):
    """Three limbs' colours, two kinds each: of the 30 ordered pairs of distinct kinds, 6 look alike below the bust.
    Binding by the limbs alone wins every other pair and at best a quarter of those; every other triplet and half of
    those.  Drawn uniformly (the zoo's held-out set), about a fifth of the items' pairs are such pairs; the book's
    items draw every other pair from them (:func:`test_pairs_are_drawn_in_two_strata`); the bound is the items'
    own."""
    assert same_limbs("man", "girl") and same_limbs("dog", "woman") and not same_limbs("man", "boy")
    hand = pd.DataFrame({"pair_id": ["p", "p", "q", "q", "r", "r", "s", "s"],
                         "subject": ["man", "girl", "man", "boy", "dog", "woman", "boy", "man"],
                         "other_agent": ["girl", "man", "boy", "man", "woman", "dog", "man", "boy"]})
    assert [same_limbs(a, b) for a, b in zip(hand["subject"], hand["other_agent"])][::2] == [True, False, True, False]
    # two look-alike pairs of four: every other pair and a quarter of those; every other triplet and half of those
    assert prednoun.limbs_only_accuracy(hand) == pytest.approx({"pair_accuracy": 2 / 4 + 2 / 4 / 4,
                                                                "triplet_accuracy": 4 / 8 + 4 / 8 / 2})
    items = prednoun.make_items(tmp_path, 400, 0, "eval", alike_share=None)
    # the image's other agent: the distractor's noun in a noun pair, one kind for both images of a predicate pair
    nouns = (items["pos"] == "subject").to_numpy()
    assert (items["other_agent"][nouns] == items["word_distractor"][nouns]).all()
    assert (items[~nouns].groupby("pair_id")["other_agent"].nunique() == 1).all()
    assert (items["other_agent"] != items["subject"]).all()
    alike = prednoun.limbs_alike(items)
    assert list(alike) == [prednoun.LIMBS_ALIKE if same_limbs(a, b) else prednoun.LIMBS_DIFFER
                           for a, b in zip(items["subject"], items["other_agent"])]
    assert (alike.groupby(items["pair_id"]).nunique() == 1).all()                  # one label per pair
    assert 0.12 < (alike == prednoun.LIMBS_ALIKE).mean() < 0.28


def test_pairs_are_drawn_in_two_strata(tmp_path):
    """Every other pair of two kinds whose limbs look alike (``ALIKE_SHARE`` one half), the others of kinds whose
    limbs differ, each kind uniform within its stratum; the book's default items hold 400 pairs of each."""
    items = prednoun.make_items(tmp_path, 120, 0, "eval")
    alike = (prednoun.limbs_alike(items) == prednoun.LIMBS_ALIKE).groupby(items["pair_id"], sort=False).first()
    assert prednoun.ALIKE_SHARE == 0.5 and list(alike) == [False, True] * 30
    pairs = items.groupby("pair_id", sort=False).first()
    assert set(pairs["subject"]) == set(AGENTS)                                     # every kind in either stratum
    assert {frozenset(k) for k in zip(pairs["subject"][alike], pairs["other_agent"][alike])} == {
        frozenset(k) for k in [("man", "girl"), ("woman", "dog"), ("boy", "cat")]}
    limbs = prednoun.limbs_only_accuracy(items)                                   # the bound reads the items' share
    assert limbs["pair_accuracy"] == pytest.approx(0.5 + 0.5 / 4)
    assert DEFAULT_SIZE["prednoun"] // 2 * prednoun.ALIKE_SHARE == 400


def test_prednoun_boxes_vary(tmp_path):
    items = prednoun.make_items(tmp_path, 60, 0, "eval")
    areas = {round(b[2] * b[3], 4) for b in items["target_box"]}
    assert len(areas) > 5                                            # not one cell each
    for b in items["target_box"]:
        assert 0 < b[2] <= 0.55 and 0 < b[3] <= 0.55   # about two cells, an agent's height (strokes may spill)


def _cell_mask(drawn: Scene, row: int) -> np.ndarray:
    """The agent's mask in grid row ``row`` of its column (16 x 16 booleans)."""
    _, masks = render(drawn)
    c = drawn.entities[0].cell[1]
    return masks[0][row * CELL:(row + 1) * CELL, c * CELL:(c + 1) * CELL]


def test_who_an_agent_is_and_what_it_does_lie_in_different_cells(monkeypatch):
    """The bust (upper cell) depends on the kind only; the limbs (lower cell) have the pose's shape for every kind
    (up to each drawing's jitter) and the colour of the kind's pair: two kinds whose limbs look alike are told apart
    only by their busts."""
    at = lambda kind, pose: Scene("park", (Entity(kind, (2, 1), pose=POSES[pose].pose),))
    for kind in AGENTS:
        for p in POSES:
            mask = render(at(kind, p))[1][0]
            assert mask[CELL:3 * CELL, CELL:2 * CELL].sum() == mask.sum()   # inside its two cells: a box on it
                                                                            # never blanks a neighbour's patch
    jittered = {_cell_mask(Scene(b, (Entity("man", (2, 1), pose="sit"),)), 2).tobytes() for b in SCENES}
    assert len(jittered) > 1                                     # no two drawings of a pose alike
    monkeypatch.setattr(glyphs, "JITTER", 0.0)
    for kind in AGENTS:
        busts = {_cell_mask(at(kind, p), 1).tobytes() for p in POSES}
        assert len(busts) == 1                                   # the pose does not reach the bust's cell
    for p in POSES:
        assert len({_cell_mask(at(k, p), 2).tobytes() for k in AGENTS}) == 1   # the shape: the pose's alone
        for k in AGENTS:
            img = np.asarray(render(at(k, p))[0])[2 * CELL:3 * CELL, CELL:2 * CELL]
            assert {tuple(x) for x in img[_cell_mask(at(k, p), 2)]} == {LIMBS[k]}

    assert len({_cell_mask(at("man", p), 2).tobytes() for p in POSES}) == len(POSES)
    # the colour: three, each worn by a pair of kinds, so the limbs tell a kind only up to its pair
    assert sorted(Counter(LIMBS[k] for k in AGENTS).values()) == [2, 2, 2]
    assert sum(same_limbs(a, b) for a in AGENTS for b in AGENTS if a != b) == 6
    assert len({_cell_mask(at(k, "standing"), 1).tobytes() for k in AGENTS}) >= 4   # busts differ in shape too


def test_probe_b_single_object_items_have_other_objects(tmp_path):
    items = conceptual.make_probe_b(tmp_path, 12, 0, "eval")
    single = items[items["single_object"]]
    assert len(single) and (single["mask"] != single["objects_mask"]).all()
    assert all(len(labels) >= 2 and t == labels[0] for labels, t in zip(single["labels"], single["target"]))


def _pair(recipe, n=300):
    return stream.pool(n, 3), stream.pool(n, 3, recipe=recipe)


def test_hidden_verbs_change_only_transitive_images():
    full, hidden = _pair(stream.Recipe(hide_verbs=True))
    assert [e.caption for e in full] == [e.caption for e in hidden]
    changed = [a for a, b in zip(full, hidden) if (a.image != b.image).any()]
    assert changed and all(any(v.third in a.caption.split() or v.ing in a.caption.split() for v in VERBS.values())
                           for a in changed)


def test_hidden_verbs_are_drawn_independently_of_the_caption():
    rng, aux = np.random.default_rng(0), np.random.default_rng(1)
    everything = {(v.pose, v.offset) for v in VERBS.values()}
    for verb in ("kick", "carry"):
        shown = set()
        for s, v, o in [t for t in PLAUSIBLE_TRIPLES if t[1] == verb][:1] * 300:
            agent, thing, *_ = stream._hide_verb(svo_scene(rng, s, v, o, distractor=True), aux).entities
            shown.add((agent.pose, (thing.cell[0] - agent.cell[0], thing.cell[1] - agent.cell[1])))
        assert shown == everything          # whatever the caption's verb, any verb may be drawn


def test_unbound_captions_name_shown_nouns_and_predicates_only():
    full, unbound = _pair(stream.Recipe(unbound=True))
    assert all((a.image == b.image).all() for a, b in zip(full, unbound))
    differ = [(a, b) for a, b in zip(full, unbound) if a.caption != b.caption]
    assert differ and all(k != "binding" for _, b in differ for _, k in b.negatives)
    assert all(not any(k == "binding" for _, k in b.negatives) for a, b in zip(full, unbound)
               if any(k == "binding" for _, k in a.negatives))


def test_two_agent_backgrounds_do_not_say_which_agent_the_caption_names():
    # the background is an agent's typical scene 80% of the time; if it were the captioned agent's, the scene alone
    # would beat half of the binding negatives ("a dog sitting" for "a girl sitting") without any binding
    rng = np.random.default_rng(0)
    named = other = 0
    for _ in range(600):
        scene, caption, _ = stream._pose_pair(rng)
        first, second = (e.name for e in scene.entities[:2])
        assert first in caption.split()
        named += scene.background == AGENT_SCENE[first]
        other += scene.background == AGENT_SCENE[second]
    assert 0.3 < named / 600 < 0.6 and abs(named - other) / 600 < 0.08


def test_noisy_recipe_replaces_the_stated_share():
    full, noisy = _pair(stream.Recipe(noisy=0.3), 1000)
    share = np.mean([a.caption != b.caption for a, b in zip(full, noisy)])
    assert 0.22 < share < 0.34          # 30%, less the few draws that give the same caption back


@pytest.mark.parametrize("own_swaps, low, high", [(False, 0.0, 0.02), (True, 0.4, 0.6)])
def test_noisy_captions_are_own_swaps_only_when_the_recipe_says_so(own_swaps, low, high):
    # toy-vilt-mismatch: another scene's caption, which equals one of the image's own swaps by chance now and then
    # ("a boy is walking" for "a boy is standing"); toy-vilt-noisy: half of them one of its own swaps, taught as a
    # match, the very kind of sentence the swap probes offer as the wrong answer
    full, noisy = _pair(stream.Recipe(noisy=0.3, noisy_swaps=own_swaps), 1000)
    replaced = [(a, b) for a, b in zip(full, noisy) if a.caption != b.caption]
    swaps = sum(b.caption in {c for c, _ in a.negatives} for a, b in replaced)
    assert len(replaced) > 200 and low <= swaps / len(replaced) < high


def test_uniform_triples():
    triples = pd.DataFrame(PLAUSIBLE_TRIPLES, columns=["s", "v", "o"])
    assert triples.groupby("v").size().nunique() <= 3                 # every verb about equally often


