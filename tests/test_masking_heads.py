"""Both heads of one model on the same verb pairs (``probekit.metrics.head_choice``): the metric on hand-made
scores, its tie rule, the pairs' negative sentences, the masked-LM head's log-probabilities of given pieces, and the
shipped toy ViLT on real toy items."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from probekit.claims import ABOVE, HIGHER, LOWER, UNRESOLVED, by_topic, versus_chance
from probekit.data.masking import swap_verb, verb_choice_items
from probekit.datasets import load_dataset
from probekit.metrics.head_choice import DIFF, ITM, MLM, ONLY, head_credit, head_items, head_rows, head_rows_by
from probekit.results import frame, one, row
from probekit.scorers import MASK, load_scorer, mlm
from probekit.scorers.registry import TOY_CHECKPOINTS
from probekit.studies import lab
from probekit.studies.masking import lab as masking_lab
from probekit.studies.masking.claims import blank_damages, claims
from probekit.studies.masking.scores import head_choice

torch.set_num_threads(1)


def _scores(itm_pos, itm_neg, mlm_pos, mlm_neg) -> pd.DataFrame:
    return pd.DataFrame({"item_id": [f"i{k}" for k in range(len(itm_pos))], "itm_pos": itm_pos, "itm_neg": itm_neg,
                         "mlm_pos": mlm_pos, "mlm_neg": mlm_neg})


def test_each_heads_accuracy_their_paired_difference_and_the_discordant_pairs():
    # pair:        0    1    2    3    4     5 (no ITM score: left out)
    itm_pos = [.9, .2, .8, .3, .6, np.nan]
    itm_neg = [.1, .7, .4, .4, .5, .5]
    mlm_pos = [-1., -1., -3., -1., -2., -1.]
    mlm_neg = [-2., -3., -1., -4., -2.5, -2.]
    # ITM right on 0, 2, 4; MLM right on 0, 1, 3, 4: MLM alone on 1 and 3, ITM alone on 2
    credit = head_credit(_scores(itm_pos, itm_neg, mlm_pos, mlm_neg))
    assert list(credit["item_id"]) == ["i0", "i1", "i2", "i3", "i4"]
    rows = head_rows(credit, "m")
    acc = {c: one(rows, condition=c) for c in (MLM, ITM, DIFF, ONLY[MLM], ONLY[ITM])}
    assert acc[MLM]["value"] == pytest.approx(4 / 5) and acc[ITM]["value"] == pytest.approx(3 / 5)
    assert (acc[MLM]["chance"], acc[ITM]["chance"], acc[DIFF]["chance"]) == (.5, .5, 0)
    assert acc[DIFF]["value"] == pytest.approx(1 / 5) and acc[DIFF]["metric"] == "accuracy_diff"
    assert acc[ONLY[MLM]]["value"] == pytest.approx(2 / 5) and acc[ONLY[ITM]]["value"] == pytest.approx(1 / 5)
    # McNemar's view: the difference of accuracies is the difference of the discordant shares
    assert acc[DIFF]["value"] == pytest.approx(acc[ONLY[MLM]]["value"] - acc[ONLY[ITM]]["value"])
    assert set(rows["n"]) == {5} and all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in acc.values())


def test_a_tie_counts_one_half_for_either_head():
    credit = head_credit(_scores([.5, .9], [.5, .1], [-1., -2.], [-3., -2.]))
    assert list(credit["itm_correct"]) == [.5, 1.0] and list(credit["mlm_correct"]) == [1.0, .5]
    rows = head_rows(credit, "m")
    assert one(rows, condition=ITM)["value"] == .75 and one(rows, condition=MLM)["value"] == .75
    assert one(rows, condition=DIFF)["value"] == 0
    # a half credit against a full one is discordant: the head with the full credit alone was right
    assert one(rows, condition=ONLY[MLM])["value"] == .5 and one(rows, condition=ONLY[ITM])["value"] == .5
    items = head_items(credit, pd.DataFrame({"item_id": ["i0", "i1"], "sentence_pos": ["a", "b"],
                                             "sentence_neg": ["c", "d"], "verb_pos": ["x", "y"],
                                             "verb_neg": ["z", "w"]}), "m")
    assert items.groupby("condition")["correct"].mean().to_dict() == {ITM: .75, MLM: .75}


def test_the_negative_sentence_swaps_the_verb_in_the_same_inflection():
    assert swap_verb("a man kicks a ball", (6, 11), "throw") == "a man throws a ball"
    assert swap_verb("A woman is riding a horse", (11, 17), "feed") == "A woman is feeding a horse"
    assert swap_verb("Dancing girls", (0, 7), "sing") == "Singing girls"
    assert swap_verb("a man hit a ball", (6, 9), "throw") == "a man threw a ball"   # read as past: any subject


def test_toy_verb_pairs_are_the_verb_rows_with_their_mirrors_sentence(tmp_path):
    pairs = load_dataset("verbs", "toy", data_dir=tmp_path, limit=40, seed=0)
    items = verb_choice_items(pairs)
    verb_rows = pairs[pairs["verb_neg"]]
    assert len(items) == len(verb_rows) > 0 and items.attrs["unlocated"] == 0
    # every verb row has its mirror (the negative image's caption): the swapped sentence is that caption
    sentence = pairs.set_index("item_id")["sentence"]
    mirror = {i: sentence[i + "-mirror"] if i + "-mirror" in sentence else sentence[i.removesuffix("-mirror")]
              for i in items["item_id"]}
    assert list(items["sentence_neg"]) == [mirror[i] for i in items["item_id"]]
    assert (items["sentence_pos"] != items["sentence_neg"]).all()
    assert [s[a:b] for s, a, b in zip(items["sentence_pos"], items["verb_start"], items["verb_end"])] == \
        list(items["word_pos"])


def test_mask_logprobs_reads_each_rows_own_pieces_at_its_masks():
    mask = 9
    logits = torch.log_softmax(torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(0)), -1)
    inputs = {"input_ids": torch.tensor([[1, mask, mask, 2, 0], [1, 3, mask, 2, 0]]),
              mlm.TARGETS: torch.tensor([[4, 7], [5, -1]])}
    got = mlm.mask_logprobs(lambda x: logits, inputs, mask)
    assert np.allclose(got[0], [logits[0, 1, 4], logits[0, 2, 7]]) and np.allclose(got[1], [logits[1, 2, 5]])
    with pytest.raises(ValueError, match="one mask per piece"):
        mlm.mask_logprobs(lambda x: logits, {**inputs, mlm.TARGETS: torch.tensor([[4, -1], [5, -1]])}, mask)


def _choice_rows(value_mlm, value_itm, diff, subset="verb") -> pd.DataFrame:
    def r(condition, metric, v, chance):
        return row(study="masking", probe="verb choice", model="m", condition=condition, subset=subset,
                   metric=metric, value=v[0], ci=v[1:], n=200, chance=chance)
    return frame([r(MLM, "accuracy", value_mlm, .5), r(ITM, "accuracy", value_itm, .5),
                  r(DIFF, "accuracy_diff", diff, 0), r(ONLY[MLM], "discordant", (.2, .15, .25), np.nan),
                  r(ONLY[ITM], "discordant", (.05, .02, .08), np.nan)])


def test_the_within_model_claim_is_decided_by_the_paired_difference():
    for diff, verdict in (((.15, .09, .2), HIGHER), ((-.1, -.15, -.05), LOWER), ((.02, -.03, .07), UNRESOLVED)):
        found = by_topic(claims(_choice_rows((.88, .83, .92), (.73, .67, .79), diff)),
                         "m: MLM head − ITM head, verb pairs")
        assert found.verdict == verdict and found.words == {"model": "m", "mo": "40", "io": "10"}
    # the lab's claim 3 reads the same rows of toy-vilt and is judged by their paired difference
    rows = _choice_rows((.88, .83, .92), (.73, .67, .79), (.15, .09, .2)).assign(model="toy-vilt")
    found = lab.claims(rows, masking_lab.CLAIMS[2:])
    assert list(found["verdict"]) == [lab.HOLDS] and found["diff"][0]["value"] == .15


def test_the_heads_rows_per_cue_are_the_same_metric_on_each_cues_pairs():
    # pairs 0-2 told apart by the object's place (MLM right on all, ITM on 0 only), 3-4 by the pose (both right)
    credit = head_credit(_scores([.9, .2, .3, .8, .7], [.1, .7, .4, .2, .3], [-1.] * 5, [-2.] * 5))
    cues = pd.Series(["the object's place"] * 3 + ["the pose"] * 2, index=[f"i{k}" for k in range(5)])
    rows = head_rows_by(credit, "m", cues)
    assert list(dict.fromkeys(rows["subset"])) == ["verb", "the object's place", "the pose"]
    assert one(rows, subset="verb", condition=DIFF)["value"] == pytest.approx(2 / 5)
    assert one(rows, subset="the object's place", condition=DIFF)["value"] == pytest.approx(2 / 3)
    assert one(rows, subset="the pose", condition=DIFF)["value"] == 0
    assert one(rows, subset="the pose", condition=ITM)["n"] == 2
    assert set(head_rows_by(credit, "m")["subset"]) == {"verb"}        # no cues (real data): every pair only


def test_the_heads_difference_is_stated_per_cue_where_the_rows_are_split():
    """The page said the masked-LM head was ahead by 14.7 points without saying that all of it was on the pairs told
    apart by the object's place (MLM 80.5 vs ITM 52.2; by the pose 95.6 vs 94.9)."""
    rows = pd.concat([_choice_rows((.88, .86, .90), (.733, .70, .76), (.147, .115, .18)),
                      _choice_rows((.805, .77, .84), (.522, .47, .57), (.283, .23, .33), "the object's place"),
                      _choice_rows((.956, .93, .98), (.949, .92, .97), (.007, -.015, .03), "the pose")])
    found = {c.topic: c for c in claims(rows)}
    assert found["m: MLM head − ITM head, verb pairs"].verdict == HIGHER
    place = found["m: MLM head − ITM head, verb pairs told apart by the object's place"]
    pose = found["m: MLM head − ITM head, verb pairs told apart by the pose"]
    assert (place.verdict, pose.verdict) == (HIGHER, UNRESOLVED)
    assert place.rows["m"]["value"] == .805 and place.rows["i"]["value"] == .522 and pose.words["cue"] == "the pose"


def _top(condition, value, model="m"):
    return row(study="masking", probe="top-k", model=model, condition=condition, metric="accuracy", value=value[0],
               ci=value[1:], n=600, chance=.2)


def _drop(condition, value):
    return row(study="masking", probe="top-k", model="m", condition=condition, metric="accuracy_diff",
               value=value[0], ci=value[1:], n=600, chance=0)


def test_claims_on_the_blank_image_are_not_judged_where_it_reads_worse_than_the_text_model():
    base = [_top("full image", (.9, .88, .93)), _top("subject ablated", (.26, .23, .3)),
            _top("image ablated", (.145, .12, .17)), _top("text only", (.223, .19, .26), "bert"),
            _drop("full image − subject ablated", (.64, .6, .68)),
            _drop("full image − image ablated", (.76, .73, .8)),
            _drop("subject ablated − image ablated", (.115, .08, .15))]
    below, level = _drop("image ablated − text only", (-.078, -.12, -.04)), _drop("image ablated − text only",
                                                                                 (-.02, -.06, .02))
    assert blank_damages(below) and not blank_damages(level) and not blank_damages(None)
    damaged = {c.topic: c for c in claims(frame([*base, below]))}
    assert damaged["m: full image − image ablated"].verdict == lab.NOT_COMPARABLE
    assert damaged["m: paper's order"].verdict == lab.NOT_COMPARABLE
    assert damaged["m: paper's order"].rows["o"]["value"] == -.078 and damaged["m: paper's order"].words["text"] == \
        "bert"
    assert damaged["m: full image − subject ablated"].verdict == HIGHER   # the blank image is not in it
    judged = {c.topic: c.verdict for c in claims(frame([*base, level]))}
    assert judged["m: full image − image ablated"] == HIGHER and judged["m: paper's order"] == "paper's order"


@pytest.mark.skipif(not (TOY_CHECKPOINTS / "toy-vilt").is_dir(), reason="toy checkpoints not built yet")
def test_toy_vilts_masked_lm_head_prefers_the_true_verb(tmp_path):
    scorer = load_scorer("toy-vilt", device="cpu", cache_dir=tmp_path / "scores")
    pairs = load_dataset("verbs", "toy", data_dir=tmp_path / "data", limit=60, seed=0)
    rows, items, chosen = head_choice([scorer], pairs, tmp_path / "data")
    mlm_row = one(rows, condition=MLM)
    assert mlm_row["n"] == len(chosen) == pairs["verb_neg"].sum() >= 30
    assert versus_chance(mlm_row) == ABOVE                       # real items: the true verb wins, beyond chance
    assert len(items) == 2 * mlm_row["n"] and set(items["condition"]) == {MLM, ITM}
    # a one-piece verb's log-probability is the log of what fill_mask reports for it at the same mask
    first = chosen.iloc[0]
    text = first["sentence_pos"][:first["verb_start"]] + MASK + first["sentence_pos"][first["verb_end"]:]
    (word, prob), = scorer.fill_mask([text], [first["image"]], k=1)[0][0]
    assert scorer.mask_logprobs([text], [word], [first["image"]])[0] == pytest.approx([np.log(prob)], abs=1e-5)


def test_the_toy_training_stream_never_shows_a_blank_image():
    """What the chapter says of its no-image condition: every training image is drawn with an agent or an object, so
    a blank image (one colour, as the image-ablated condition is) is an input no toy model was trained on."""
    from probekit.toyworld.stream import pool

    metas: list = []
    examples = pool(300, seed=0, metas=metas)
    assert {m["kind"] for m in metas} == {"svo", "pose_pair", "object", "agent", "objects", "crop"}
    assert all(len(m["scene"].entities) >= 1 for m in metas)
    assert all(len(np.unique(e.image.reshape(-1, 3), axis=0)) > 1 for e in examples)


def test_the_discordant_counts_are_read_off_their_rows():
    from probekit.studies.masking.page import discordant_counts

    rows = _choice_rows((.88, .83, .92), (.73, .67, .79), (.15, .09, .2))
    assert discordant_counts(rows) == "m: the masked-LM head alone right on 40 of 200 pairs, the ITM head alone on 10"
