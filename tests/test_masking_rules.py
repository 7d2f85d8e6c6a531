"""Guided masking, issue 13: the paper's per-piece rule on hand cases, the verb located by its place after the
subject, byte-level BPE pieces (a tiny tokenizer trained here), the pooled ITM average of the paper's Table 1,
and one item set across conditions."""

import numpy as np
import pandas as pd
import pytest
import torch

from probekit import papers
from probekit.data.masking import locate_verb, masking_items
from probekit.metrics.masking import common_items, pooled_rows, score_predictions
from probekit.studies.masking.scores import guided_masking
from probekit.metrics.verb_pieces import join_pieces, piece_ranks, pieces_correct, verb_lemmas
from probekit.results import one
from probekit.scorers import mlm
from probekit.scorers.base import Scorer
from probekit.papers import guided_masking as the_paper

FILLER = [("walk", .3), ("run", .2), ("sit", .1), ("stand", .05), ("hold", .04)]
CONT = [("##ning", .3), ("##ed", .2), ("##s", .1), ("##er", .05), ("##y", .04)]


def _score(positions, pieces, k=5):
    items = pd.DataFrame({"item_id": ["i"], "verb": ["jog"]})
    return score_predictions(items, [positions], [pieces], k=k).iloc[0]


# ------------------------------------------------------------------------------------- the paper's piece rule
def test_two_pieces_only_the_first_in_the_top_5():
    """Authors: 1 of 2 pieces hit, at least half -> correct.  Whole words: no combination spells "jogging"."""
    out = _score([[("jog", .4), *FILLER[:4]], CONT], ["jog", "##ging"])
    assert out["piece_ranks"][0] == 1 and np.isnan(out["piece_ranks"][1]) and out["hits"] == 1
    assert out["correct"] and not out["word_correct"]


def test_two_pieces_at_ranks_4_and_3():
    """Authors: both pieces hit -> correct.  Whole words: "jogging" (.04 x .1) is not among the 5 most probable
    combinations (.3 x .3, .3 x .2, .2 x .3, ...), so the old rule missed it."""
    first = [("walk", .3), ("run", .2), ("sit", .1), ("jog", .04), ("hold", .03)]
    second = [("##ning", .3), ("##ed", .2), ("##ging", .1), ("##er", .05), ("##y", .04)]
    out = _score([first, second], ["jog", "##ging"])
    assert out["piece_ranks"] == [4, 3] and out["hits"] == 2 and out["correct"]
    assert not out["word_correct"] and np.isnan(out["rank"])
    assert _score([first, second], ["jog", "##ging"], k=3)["hits"] == 1      # rank 4 is outside the top 3


def test_three_pieces_all_at_rank_1():
    positions = [[("skate", .9), *FILLER[:4]], [("##board", .8), *CONT[:4]], [("##ing", .7), *CONT[:4]]]
    out = _score(positions, ["skate", "##board", "##ing"])
    assert out["piece_ranks"] == [1, 1, 1] and out["hits"] == 3 and out["correct"]
    assert out["predictions"][0] == "skateboarding"


def test_half_is_enough_less_is_not():
    assert pieces_correct(1, 2) and pieces_correct(2, 3) and pieces_correct(2, 4)
    assert not pieces_correct(1, 3) and not pieces_correct(0, 1) and not pieces_correct(0, 0)


def test_a_continuation_piece_hits_when_predicted():
    """probekit strips "##" from the gold piece as from the predictions (the authors' code strips it from the
    predictions only, so there "##ging" could never hit)."""
    assert piece_ranks(["jog", "##ging"], [[("run", .5)], [("##ning", .6), ("##ging", .3)]])[1] == 2
    assert piece_ranks(["Ġskate", "boarding"], [[("Ġskate", .5)], [("Ġboarding", .4)]]) == [1, 1]


def test_a_piece_hits_by_lemma():
    assert piece_ranks(["ran"], [[("walked", .5), ("running", .3)]]) == [2]


# ------------------------------------------------------------------------------------------ locating the verb
def test_the_verb_is_the_form_after_the_subject_not_the_noun_before_it():
    sentence = "A dance troupe dances on stage."
    start, end = locate_verb(sentence, "dance", "troupe")
    assert sentence[start:end] == "dances" and start == sentence.index("dances")
    # the subject found and the verb bare: the first form after it, not the participle further on
    sentence = "Kids dance by a dancing fountain."
    start, end = locate_verb(sentence, "dance", "kid")
    assert (start, end) == (5, 10)
    # the subject named differently: the inflected form
    start, end = locate_verb("A dance group dances.", "dance", "troupe")
    assert "A dance group dances."[start:end] == "dances" and start == 14


def test_masking_items_use_the_triplet_subject():
    pairs = pd.DataFrame({"sentence": ["A dance troupe dances."], "pos_triplet": ["troupe,dance,stage"],
                          "pos_image_id": ["1"], "pos_image": ["/a.png"], "verb": ["dance"]})
    item = masking_items(pairs).iloc[0]
    assert item["sentence"][item["verb_start"]:item["verb_end"]] == "dances" and item["verb_start"] == 15


# ------------------------------------------------------------------------------------------ byte-level BPE
@pytest.fixture(scope="module")
def bpe_tokenizer():
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    corpus = ["a man is skateboarding on a ramp", "a board", "the skate park", "boys skate", "on board",
              "a man is riding a horse", "a woman is walking"] * 20
    raw = ByteLevelBPETokenizer()
    raw.train_from_iterator(corpus, vocab_size=290, min_frequency=2, special_tokens=["<s>", "</s>", "<pad>",
                                                                                      "<mask>", "<unk>"])
    assert "Ġskateboarding" not in raw.get_vocab()           # the verb must take several pieces
    return PreTrainedTokenizerFast(tokenizer_object=raw._tokenizer, mask_token="<mask>", pad_token="<pad>",
                                   unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def test_byte_level_bpe_verb_keeps_its_word_start_marker(bpe_tokenizer):
    tok = bpe_tokenizer
    holder = type("Holder", (), {"tokenizer": tok, "_require": lambda self, *a: None})()
    pieces = Scorer.word_pieces(holder, "skateboarding")
    assert len(pieces) > 1 and pieces[0].startswith("Ġ") and not any(p.startswith("Ġ") for p in pieces[1:])
    # a masked-LM head whose top prediction at each masked position is the gold piece
    ids = tok(" ".join(["<mask>"] * len(pieces)), return_tensors="pt")["input_ids"]
    gold = tok.convert_tokens_to_ids(pieces)

    def logits(inputs):
        out = torch.zeros(*inputs["input_ids"].shape, len(tok))
        masked = (inputs["input_ids"][0] == tok.mask_token_id).nonzero().flatten()
        for pos, g in zip(masked.tolist(), gold):
            out[0, pos, g] = 10.0
            out[0, pos, tok.convert_tokens_to_ids("Ġboard")] = 5.0      # a word-start piece as the runner-up
        return out

    [positions] = mlm.top_k_words(logits, {"input_ids": ids}, tok, k=2)
    assert [p[0][0] for p in positions] == pieces                   # the marker survives the scorer
    assert join_pieces([p[0][0] for p in positions]) == "skateboarding"
    assert join_pieces(["Ġskate", "Ġboarding"]) == "skate boarding"  # two word starts are two words ...
    assert verb_lemmas("skate boarding") == frozenset()              # ... which never match one verb
    items = pd.DataFrame({"item_id": ["i"], "verb": ["skateboard"]})
    out = score_predictions(items, [positions], [pieces], k=2).iloc[0]
    assert out["correct"] and out["word_correct"] and out["rank"] == 1


# ------------------------------------------------------------------------------- pooled ITM average, Table 1
def test_pooled_average_weighs_every_pair_once():
    pairs = pd.DataFrame({"sentence": ["s1", "s1", "s1", "s2"], "pos_image_id": ["p1", "p1", "p1", "p2"],
                          "neg_image_id": ["n1", "n2", "n3", "n4"], "subj_neg": [0, 0, 0, 1],
                          "verb_neg": [1, 1, 1, 0], "obj_neg": [0, 0, 0, 0]})
    pos, neg = [.9, .9, .9, .2], [.1, .6, .7, .3]
    rows = pooled_rows(pairs, pos, neg, model="m")
    # verb: positive p1 right; negatives n1 right, n2 and n3 wrong -> 2 of 4 (balanced would be (1 + 1/3) / 2)
    verb = one(rows, subset="verb")
    assert verb["value"] == .5 and verb["n"] == 4 and verb["metric"] == "avg_pooled" and verb["chance"] == .5
    assert one(rows, subset="all")["value"] == pytest.approx(3 / 6)   # + p2 wrong, n4 right


def test_the_papers_table_1_is_verb_negatives_with_a_pooled_average():
    rows = papers.reported(the_paper, "Table 1")
    assert set(rows["subset"]) == {"verb"} and set(rows["metric"]) == {"avg_pooled", "pos", "neg"}
    vilbert = {m: one(rows, model="ViLBERT", condition="full image", metric=m) for m in ("avg_pooled", "pos", "neg")}
    n_pos, n_neg = vilbert["pos"]["n"], vilbert["neg"]["n"]
    pooled = (vilbert["pos"]["value"] * n_pos + vilbert["neg"]["value"] * n_neg) / (n_pos + n_neg)
    assert round(pooled, 3) == vilbert["avg_pooled"]["value"] == .463 and vilbert["avg_pooled"]["n"] == 33893


# --------------------------------------------------------------------------------- one item set everywhere
class _Fill:
    """A masked LM that always says "jog" (one piece per word)."""

    def __init__(self, name):
        self.name = name

    def word_pieces(self, word):
        return [word]

    def fill_mask(self, texts, images=None, k=5):
        return [[[("jog", 1.0)]] for _ in texts]


def test_items_missing_in_one_condition_are_set_apart():
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "verb": ["jog"] * 3, "sentence": ["A man jogs."] * 3,
                          "verb_start": [6] * 3, "verb_end": [10] * 3})
    images = {("m", "full image"): ["a.png", None, "c.png"], ("m", "subject ablated"): ["a.png", None, None],
              ("m", "image ablated"): ["blank.png"] * 3}
    per_item = guided_masking(items, [_Fill("m")], _Fill("t"), images)
    assert len(per_item) == 4 * 3 and per_item["correct"].isna().sum() == 3
    kept, left = common_items(per_item)
    assert set(kept["item_id"]) == {"a"} and len(kept) == 4
    assert set(left["item_id"]) == {"b", "c"} and left["correct"].notna().sum() == 5


def test_the_whole_word_table_is_shown_only_where_it_differs_from_the_papers_rule():
    """On the toy world every verb is one piece and both rules give the same rows: the page says so in one line
    instead of repeating the table; one differing number (a two-piece verb hit by one piece) brings the table back."""
    from probekit.studies.masking.page import rules_agree
    from probekit.results import frame, row

    def r(metric, value, model="m", condition="full image"):
        return row(study="masking", probe="top-k", model=model, condition=condition, metric=metric, value=value,
                   ci=(value - 0.1, value + 0.1), n=100)
    same = frame([r("accuracy", 0.6), r("word_accuracy", 0.6), r("accuracy", 0.3, condition="text only"),
                  r("word_accuracy", 0.3, condition="text only")])
    assert rules_agree(same)
    assert not rules_agree(frame([r("accuracy", 0.6), r("word_accuracy", 0.55)]))
    assert not rules_agree(frame([r("accuracy", 0.6), r("word_accuracy", 0.6), r("accuracy", 0.3, model="x")]))
    assert not rules_agree(frame([r("word_accuracy", 0.6)]))          # nothing to compare with
    assert rules_agree(frame([r("accuracy_diff", 0.1), r("word_accuracy_diff", 0.1)]), "accuracy_diff")
