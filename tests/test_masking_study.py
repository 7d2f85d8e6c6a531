"""The guided-masking study on the toy world (``studies.masking.run``), its claims on hand-made rows, the box
filling step with a stand-in detector and the example panels.  The toy checkpoints may be placeholders, so the real
run is checked for its plumbing (rows, counts, paired drops, facts), never for a model's numbers or verdicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import check_headlines_from_items
from probekit.claims import ABOVE, HIGHER, LOWER, UNRESOLVED, by_topic
from probekit.results import frame, items_frame, one, row, select
from probekit.studies.masking import study as masking
from probekit.studies.masking.claims import BROKEN, ORDER, claims, order_verdict
from probekit.toyworld import vocab

LIMIT = 60


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    root = tmp_path_factory.mktemp("masking-study")
    return masking.run(masking.Params(
        dataset="toy", data_dir=root / "data", cache_dir=root / "scores", limit=LIMIT, device="cpu", n_examples=3,
        lab_models=[]))


def test_rows_per_model_and_condition(result):
    top = select(result.ours(), probe="top-k", metric="accuracy")
    assert set(zip(top["model"], top["condition"])) == {("toy-vilt", "full image"), ("toy-vilt", "subject ablated"),
                                                        ("toy-vilt", "image ablated"), ("toy-bert", "text only")}
    assert (top["n"] == LIMIT).all()
    # the toy tokenizers give every verb one piece, where the paper's rule and whole words agree
    words = select(result.ours(), probe="top-k", metric="word_accuracy")
    assert np.allclose(words.sort_values(["model", "condition"])["value"],
                       top.sort_values(["model", "condition"])["value"])
    verbs = result.data["items"]["verb"].nunique()
    assert np.allclose(top["chance"], 5 / verbs) and result.facts.chance == pytest.approx(5 / verbs)
    # every drop is paired on the same captions: the difference of the two accuracies, with chance 0
    full = one(top, model="toy-vilt", condition="full image")
    drops = select(result.ours(), metric="accuracy_diff")
    for condition in ("full image − subject ablated", "full image − image ablated", "full image − text only"):
        drop = one(drops, model="toy-vilt", condition=condition)
        assert drop["chance"] == 0 and drop["n"] == LIMIT and drop["ci_low"] <= drop["value"] <= drop["ci_high"]
        other = one(top, condition=condition.split(" − ")[1])
        assert drop["value"] == pytest.approx(full["value"] - other["value"])


def test_itm_rows_and_paper_rows(result):
    itm = select(result.ours(), probe="itm", subset="all")
    assert set(itm["condition"]) == {"full image", "subject ablated", "image ablated"}
    assert set(itm["metric"]) == {"avg", "avg_pooled", "pos", "neg"} and (itm["chance"] == .5).all()
    verb = select(result.ours(), probe="itm", subset="verb", metric="avg_pooled")
    assert len(verb) == 3 and len(set(verb["n"])) == 1          # the same verb pairs in every condition
    assert set(result.reported()["source"]) == {f"Beňová et al. 2024, Table {t}" for t in (1, 2, 3)}


def test_facts_data_and_claims(result):
    f = result.facts
    assert (f.captions, f.with_image, f.with_box, f.detected, f.unlocated) == (LIMIT,) * 3 + (0, 0)
    assert (f.in_every_condition, f.left_out, f.pairs_in_every_condition) == (LIMIT, 0, f.pairs)
    assert len(result.data["left_out"]) == 0 and f.paper_subset == "SVO-Probes"
    assert f.fill_mask_heads == {"toy-vilt": "fill_mask"} and f.itm_heads == {"toy-vilt": "match"}
    assert f.pair_images_boxed == f.pair_images == 2 * f.pairs and f.detector is None
    per_item = result.data["per_item"]
    assert len(per_item) == 4 * LIMIT and set(per_item["scored_by"]) == {"toy-vilt", "toy-bert"}
    examples = result.data["examples"]
    assert len(examples) == 3 and all(Path(p).exists() for p in [*examples["full"], *examples["ablated"]])
    topics = {c.topic for c in result.claims}
    assert {"toy-vilt: full image vs chance", "toy-vilt: full image − subject ablated", "toy-vilt: paper's order",
            "toy-vilt: whole words, full image − subject ablated", "toy-vilt: ITM avg, image ablated",
            "toy-vilt: ITM neg, image ablated", "paper: order", "toy-vilt: MLM head − ITM head, verb pairs"} <= topics
    # both heads of toy-vilt chose on every verb pair of the verbs table
    assert f.choice_unlocated == 0 and f.choice_pairs == one(result.ours(), probe="verb choice", condition="MLM head",
                                                             subset="verb", metric="accuracy")["n"] > 0
    # the toy world's text prior is stated from the vocabulary; no lab without lab models
    assert f.text_prior == pytest.approx(vocab.prior_topk(5))
    assert f.pose_prior == pytest.approx(vocab.pose_only_topk(5))
    assert f.verbs == result.data["items"]["verb"].nunique()
    assert f.lab and len(result.data["lab"]) == len(result.data["lab_checks"]) == len(result.data["lab_claims"]) == 0
    # the verb grid the data paragraph states: 3 poses, each with 8 places of the object (not the 8 intransitive
    # poses), every pairing one verb
    assert vocab.verb_grid() == (3, 8) and 3 * 8 == len(vocab.VERBS) and len(vocab.POSES) == 8


def test_example_panels(result):
    from probekit.studies.masking.page import examples

    fig = examples(result)
    assert len(fig.axes) == 3 * 3
    text = fig.axes[2].texts[0].get_text()
    assert result.data["examples"]["verb"].iloc[0] in text and "text only (toy-bert)" in text


def test_fill_boxes_asks_the_detector_only_for_missing_boxes():
    asked = []

    class Detector:
        def detect(self, images, queries):
            asked.append((images, queries))
            return [(0.1, 0.2, 0.3, 0.4), None]

    boxes, n = masking.fill_boxes([[0, 0, 1, 1], None, float("nan"), None], ["a.png", "b.png", "c.png", None],
                                  ["man", "dog", "cat", "cow"], Detector)
    assert boxes == [[0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4], None, None] and n == 2
    assert asked == [(["b.png", "c.png"], ["dog", "cat"])]
    boxes, n = masking.fill_boxes([[0, 0, 1, 1]], ["a.png"], ["man"], lambda: pytest.fail("detector loaded"))
    assert n == 0


# --------------------------------------------------------------------------------- claims on hand-made rows
def _acc(model, condition, value, low, high, n=100, chance=.25):
    return row(study="masking", probe="top-k", model=model, condition=condition, metric="accuracy", value=value,
               ci=(low, high), n=n, chance=chance)


def _diff(model, condition, value, low, high, n=100):
    return row(study="masking", probe="top-k", model=model, condition=condition, metric="accuracy_diff",
               value=value, ci=(low, high), n=n, chance=0.0)


def _itm(condition, metric, value, low, high):
    return row(study="masking", probe="itm", model="m", condition=condition, metric=metric, value=value,
               ci=(low, high), n=200, chance=.5)


def test_claims_state_only_what_the_intervals_resolve():
    rows = frame([
        _acc("m", "full image", .70, .61, .79), _acc("m", "subject ablated", .66, .57, .75),
        _acc("m", "image ablated", .50, .40, .60), _acc("bert", "text only", .30, .21, .39),
        _diff("m", "full image − subject ablated", .04, -.02, .10),      # includes 0: not resolved
        _diff("m", "full image − image ablated", .20, .12, .28),
        _diff("m", "full image − text only", .40, .30, .50),
        _diff("m", "subject ablated − image ablated", .16, .08, .24),
        # the old page's case: the average falls while accuracy on negatives rises
        _itm("full image", "avg", .868, .841, .892), _itm("image ablated", "avg", .50, .50, .50),
        _itm("full image", "neg", .778, .739, .816), _itm("image ablated", "neg", 1.0, 1.0, 1.0),
        _itm("subject ablated", "avg", .85, .80, .90), _itm("subject ablated", "neg", .80, .75, .85),
    ])
    out = claims(rows, k=5)
    verdict = {c.topic: c.verdict for c in out}
    assert verdict["m: full image vs chance"] == ABOVE
    assert verdict["m: full image − subject ablated"] == UNRESOLVED
    assert verdict["m: full image − image ablated"] == HIGHER
    assert verdict["m: full image − text only"] == HIGHER
    assert verdict["m: paper's order"] == UNRESOLVED       # one step of the order is not resolved
    assert verdict["m: ITM avg, image ablated"] == LOWER
    assert verdict["m: ITM neg, image ablated"] == HIGHER
    assert verdict["m: ITM avg, subject ablated"] == UNRESOLVED
    assert verdict["m: ITM neg, subject ablated"] == UNRESOLVED
    assert "bert: full image vs chance" not in verdict      # the text model has no image conditions
    text = by_topic(out, "m: full image − text only")
    assert text.words["text"] == "bert" and text.rows["t"]["value"] == .30


def test_order_verdicts_and_the_papers_order():
    up, down, flat = (_diff("m", "x", v, lo, hi) for v, lo, hi in ((.1, .05, .15), (-.1, -.15, -.05), (0, -.1, .1)))
    assert order_verdict(up, up) == ORDER
    assert order_verdict(up, down) == BROKEN and order_verdict(flat, down) == BROKEN
    assert order_verdict(up, flat) == UNRESOLVED
    from probekit import papers
    from probekit.papers import guided_masking

    paper = claims(papers.reported(guided_masking), k=5)
    assert [c.topic for c in paper] == ["paper: order"] and paper[0].verdict == ORDER


def test_claims_on_whole_words_and_the_pooled_average():
    rows = frame([
        _acc("m", "full image", .70, .61, .79), _acc("m", "subject ablated", .60, .51, .69),
        row(study="masking", probe="top-k", model="m", condition="full image", metric="word_accuracy", value=.30,
            ci=(.20, .40), n=100, chance=.25),                              # whole words: not resolved from chance
        _diff("m", "full image − subject ablated", .10, .04, .16),
        row(study="masking", probe="top-k", model="m", condition="full image − subject ablated",
            metric="word_accuracy_diff", value=-.08, ci=(-.14, -.02), n=100, chance=0.0),
        # balanced average falls while the pooled one rises (negatives outnumber positives)
        _itm("full image", "avg", .70, .65, .75), _itm("image ablated", "avg", .50, .50, .50),
        _itm("full image", "avg_pooled", .55, .50, .60), _itm("image ablated", "avg_pooled", .67, .62, .72),
    ])
    verdict = {c.topic: c.verdict for c in claims(rows, k=5)}
    assert verdict["m: full image vs chance"] == ABOVE
    assert verdict["m: whole words, full image vs chance"] == UNRESOLVED
    assert verdict["m: full image − subject ablated"] == HIGHER
    assert verdict["m: whole words, full image − subject ablated"] == LOWER
    assert verdict["m: ITM avg, image ablated"] == LOWER
    assert verdict["m: ITM avg_pooled, image ablated"] == HIGHER


def test_item_rows_recompute_the_accuracies(result):
    """Per model that answered and condition, the mean of ``correct`` (``word_correct``) over the item rows is the
    ``accuracy`` (``word_accuracy``) row, on ``all`` and on the captions left out; each side of a drop too; and each
    head's verb-choice accuracy is the mean of its item rows."""
    everything = items_frame(result.items)
    assert not everything.duplicated(["probe", "model", "condition", "subset", "item_id"]).any()
    heads = everything[everything["probe"] == "verb choice"]
    for (model, condition), part in heads.groupby(["model", "condition"]):
        assert one(result.ours(), probe="verb choice", model=model, condition=condition, subset="verb",
                   metric="accuracy")["value"] == pytest.approx(part["correct"].mean())
    assert set(heads["condition"]) == {"MLM head", "ITM head"}
    items = everything[everything["probe"] == "top-k"]
    ours = select(result.ours(), probe="top-k")
    checked = 0
    for (model, condition, subset), part in items.groupby(["model", "condition", "subset"]):
        for metric, column in (("accuracy", "correct"), ("word_accuracy", "word_correct")):
            assert one(ours, model=model, condition=condition, subset=subset, metric=metric)["value"] == \
                part[column].dropna().to_numpy().mean()
            checked += 1
    accuracies = select(ours, metric=["accuracy", "word_accuracy"])
    assert checked == len(accuracies) > 0
    headline = masking.HEADLINES[0]
    assert set(select(result.ours(), **headline)["model"]) <= set(items["model"])
    drop = one(ours, model="toy-vilt", **masking.HEADLINES[1])
    table = items[items["subset"] == "all"].pivot(index="item_id", columns=["model", "condition"], values="correct")
    a, b = (table[("toy-vilt", c)] for c in ("full image", "subject ablated"))
    assert drop["value"] == (a - b).dropna().to_numpy().mean()
    assert drop["value"] == pytest.approx(a.mean() - b.mean())
    assert set(items["sentence"].dropna()) <= set(result.data["items"]["sentence"]) and items["sentence"].notna().all()


def test_facts_are_typed(result):
    assert type(result.facts) is masking.MaskingFacts
    with pytest.raises(AttributeError):
        result.facts.caption   # noqa: B018  (a misspelt field fails at once)


def test_the_headlines_are_rebuilt_from_the_exported_items(result, tmp_path):
    assert check_headlines_from_items(result, tmp_path) == 2         # top-k accuracy and its drop: toy-vilt
