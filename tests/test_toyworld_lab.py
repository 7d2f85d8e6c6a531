"""The toy world's laboratory properties: size of the vocabulary, no language prior beyond the stated one, boxes that
vary, knock-out recipes that remove exactly one kind of information."""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.toyworld import conceptual, masking, prednoun, stream
from probekit.toyworld.sample import svo_scene
from probekit.toyworld.vocab import (AGENTS, OBJECTS, POSES, SCENES, VERBS, ANTONYMS, PLAUSIBLE_TRIPLES, plausible,
                                     prior_topk)


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


def test_masking_items_follow_the_uniform_prior(tmp_path):
    items = masking.make_items(tmp_path, 300, 0, "eval")
    counts = items["verb"].value_counts()
    assert len(counts) == len(VERBS) and counts.max() / len(items) < 0.1   # no verb dominates
    assert all(plausible(s, v, o) for s, v, o in zip(items["subject"], items["verb"],
                                                      items["sentence"].str.split().str[-1]))


def test_prednoun_boxes_vary(tmp_path):
    items = prednoun.make_items(tmp_path, 60, 0, "eval")
    areas = {round(b[2] * b[3], 4) for b in items["target_box"]}
    assert len(areas) > 5                                            # not one cell each
    for b in items["target_box"]:
        assert 0 < b[2] <= 0.3 and 0 < b[3] <= 0.3   # about one cell (strokes may spill a pixel or two)


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


def test_noisy_recipe_replaces_the_stated_share():
    full, noisy = _pair(stream.Recipe(noisy=0.3), 1000)
    share = np.mean([a.caption != b.caption for a, b in zip(full, noisy)])
    assert 0.22 < share < 0.34          # 30%, less the few draws that give the same caption back


def test_uniform_triples():
    triples = pd.DataFrame(PLAUSIBLE_TRIPLES, columns=["s", "v", "o"])
    assert triples.groupby("v").size().nunique() <= 3                 # every verb about equally often
