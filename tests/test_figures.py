"""Every figure of the book is legible at page width: rendered (Agg) from the rows the committed chapters exported
(book/chapters/*.results.parquet) and from small study data shaped as the studies make it, each text is at least
MIN_PX on screen, no two texts overlap and no text touches an image.  On screen, a figure wider than the text column
is scaled down to it: a text's size is its points × dpi / 72 × min(1, COLUMN_PX / the saved image's width)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from probekit import report  # noqa: E402  (sets the theme)
from probekit.metrics import itm  # noqa: E402
from probekit.report import figures, findings, summary  # noqa: E402
from probekit.studies.conceptual import page as conceptual  # noqa: E402
from probekit.studies.masking import page as masking  # noqa: E402
from probekit.studies.prednoun import page as prednoun  # noqa: E402
from probekit.studies.verbs import page as verbs  # noqa: E402
from probekit.results import StudyResult, concat, load, select  # noqa: E402
from probekit.studies import STUDIES  # noqa: E402
from probekit.studies.verbs import lab as verbs_lab
from probekit.studies.conceptual.study import with_alpha  # noqa: E402
from probekit.theme import COLUMN_PX  # noqa: E402
from pictures import random_pngs  # noqa: E402

CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "chapters"
MIN_PX = 11   # the page's small print (table text) is 13.6 px
GAP_PX = 4    # between a caption and the image above or below it
TEXT_GAP_PX = 1   # between two texts


def _rows(study: str) -> pd.DataFrame:
    return load(CHAPTERS / f"{study}.results.parquet")


def _texts(fig, renderer) -> list[Text]:
    """The texts drawn: titles, labels, the tick labels of shown axes within their view, annotations, legends."""
    ticks, shown = set(), set()
    for ax in fig.axes:
        for axis, (low, high) in ((ax.xaxis, ax.bbox.intervalx), (ax.yaxis, ax.bbox.intervaly)):
            ticks |= {id(t) for tick in axis.majorTicks + axis.minorTicks for t in (tick.label1, tick.label2)}
            if ax.axison:
                along = 0 if axis is ax.xaxis else 1
                shown |= {id(t) for t in axis.get_ticklabels(which="both")
                          if low - 1 <= t.get_window_extent(renderer).get_points()[:, along].mean() <= high + 1}
        if not ax.axison:
            ticks |= {id(ax.xaxis.label), id(ax.yaxis.label)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (id(t) not in ticks or id(t) in shown)]


def measure(fig) -> dict:
    """The figure as the page shows it: its texts' on-screen sizes (px) and overlapping pairs of texts, and of a
    text and an image (within GAP_PX)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    width = Image.open(buf).size[0]
    scale = min(1.0, COLUMN_PX / width)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _texts(fig, renderer)
    boxes = [t.get_window_extent(renderer) for t in texts]
    images = [im.get_window_extent(renderer) for ax in fig.axes for im in ax.images]
    sizes = {t.get_text(): t.get_fontsize() * fig.dpi / 72 * scale for t in texts}
    overlaps = [(texts[i].get_text(), texts[j].get_text()) for i in range(len(texts)) for j in range(i + 1, len(texts))
                if boxes[i].padded(TEXT_GAP_PX).overlaps(boxes[j])]
    on_images = [t.get_text() for t, b in zip(texts, boxes) if any(b.overlaps(im.padded(GAP_PX)) for im in images)]
    plt.close(fig)
    return dict(width=width, sizes=sizes, overlaps=overlaps, on_images=on_images,
                image_px=[im.width * scale for im in images])


def assert_legible(fig) -> dict:
    """The figure's :func:`measure`, asserted legible."""
    seen = measure(fig)
    small = {t: round(px, 1) for t, px in seen["sizes"].items() if px < MIN_PX}
    assert not small, f"texts under {MIN_PX} px on screen (figure {seen['width']} px wide): {small}"
    assert not seen["overlaps"], f"overlapping texts: {seen['overlaps']}"
    assert not seen["on_images"], f"texts on or touching an image: {seen['on_images']}"
    return seen


def _verbs_itm() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = _rows("verbs")
    ours = select(rows, source="ours", probe=itm.PROBE, condition=itm.condition(0.5), metric=["pos", "neg", "avg"])
    return ours, rows[rows["source"] != "ours"]


def _figures_from_rows():
    """Each shared figure function as a chapter calls it (book/src/*.md), on the committed chapters' rows."""
    verbs_rows, paper = _verbs_itm()
    pairwise = select(_rows("verbs"), source="ours", metric="pairwise")
    yield "verbs Table 4", lambda: report.paper_vs_ours(
        select(verbs_rows, model="toy-vilt"), select(paper, model="MMT"), x="subset", hue="metric",
        hue_order=["pos", "neg", "avg"], ours_title="toy-vilt (threshold 0.5), 95% CI",
        paper_title="the paper's MMT (threshold 0.5)", ylabel="ITM accuracy")
    yield "verbs pairwise", lambda: report.bar_ci(pairwise, x="subset", hue="model", ylabel="pairwise accuracy",
                                                  title="positive image preferred over the negative; dashed: chance")
    order = list(dict.fromkeys(pairwise["subset"]))
    yield "verbs per-verb (horizontal)", lambda: report.bar_ci(
        select(pairwise, model="toy-vilt"), x="subset", order=order, horizontal=True, ylabel="per-verb accuracy",
        title="toy-vilt: hardest (top) to easiest, 95% CI")
    lab = concat([verbs_rows.assign(model=m) for m in [verbs_lab.CLEAN, *verbs_lab.NOISY]])
    yield "verbs Table 5", lambda: verbs.table5_figure(lab, paper)
    rows = _rows("conceptual")
    ours, theirs = rows[rows["source"] == "ours"], rows[rows["source"] != "ours"]
    yield "conceptual Probe-R", lambda: report.bar_ci(select(ours, probe="probe-r", metric="acc"), x="subset",
                                                      hue="model")
    gamma = dict(probe="probe-b-pooled", model="all models", metric="gamma", subset="(x0, x̃1)")
    yield "conceptual γ", lambda: report.paper_vs_ours(select(ours, **gamma), select(theirs, **gamma), x="condition",
                                                       ylabel="γ")
    yield "conceptual α sweep", lambda: conceptual.alpha_sweep(with_alpha(select(ours, probe="patching")))
    rows = _rows("masking")
    top, k = select(rows, source="ours", probe="top-k", metric="accuracy", subset="all"), 5
    yield "masking top-k", lambda: report.paper_vs_ours(
        top, select(rows, probe="top-k", metric="accuracy", subset="SVO-Probes", source=list(set(rows["source"]) -
                                                                                              {"ours"})),
        x="condition", hue="model", ours_title=f"ours (toy), top-{k}", paper_title="the paper's models (SVO-Probes), "
        "top-5", ylabel="verb accuracy")
    results = summary.load_results(CHAPTERS)
    heads = summary.headline_rows(results, summary.headlines(list(results)))
    shares = heads[heads["metric"].map(summary.is_share)]
    yield "summary heatmap", lambda: report.heatmap(shares, index=summary.LABEL, columns="model", title=(
        "Headline probes in percent (paired differences and plain metrics: table only; blank: model not in that "
        "chapter)"))
    pn = _prednoun()
    yield "prednoun Table 1", lambda: prednoun.accuracy_figure(pn)
    yield "prednoun concepts", lambda: prednoun.concepts(pn)
    yield "prednoun tuples", lambda: prednoun.tuples(pn)
    for study in STUDIES:
        yield f"{study} headlines", lambda study=study: findings.headline_figure(_rows(study), study)


def _prednoun(images: list | None = None) -> StudyResult:
    """The prednoun chapter's result: its committed rows, the concept and tuple tables they were made from, and two
    pairs scored wrong (on four ``images``)."""
    rows = _rows("prednoun")
    ours = rows[rows["source"] == "ours"]
    concepts = select(ours, probe=["nouns", "predicates"]).assign(
        kind=lambda r: r["probe"].str[:-1], label=lambda r: r["subset"], accuracy=lambda r: r["value"],
        std=lambda r: (r["ci_high"] - r["ci_low"]) / 4)
    tuples = select(ours, probe=["noun tuples", "predicate tuples"])
    tuples = tuples.assign(swap=tuples["probe"].str.split().str[0], accuracy=tuples["value"],
                           target=tuples["subset"].str.split(" → ").str[0],
                           distractor=tuples["subset"].str.split(" → ").str[1])
    sentences = [("a man is kneeling", "a man is running"), ("a man is running", "a man is kneeling"),
                 ("a woman is standing", "a girl is standing"), ("a girl is standing", "a woman is standing")]
    pairs = pd.DataFrame({"pair_id": [0, 0, 1, 1], "image": images or [None] * 4, "sentence_target": [s for s, _ in sentences],
                          "sentence_distractor": [d for _, d in sentences], "target_box": [[0.05, 0.5, 0.4, 0.45]] * 4,
                          "distractor_box": [[0.55, 0.5, 0.4, 0.45]] * 4})
    scores = pairs.assign(model="toy-vilt", condition="full", template="default", s_target=[0.94, 0.96, 0.94, 0.98],
                          s_distractor=[0.0, 0.97, 0.96, 0.98])
    return StudyResult(study="prednoun", params={"n_resamples": 100}, rows=rows,
                       data=dict(items=pairs, scores=scores, concepts=concepts, tuples=tuples),
                       facts=SimpleNamespace(main_models=["toy-vilt", "toy-clip"]))


@pytest.mark.parametrize("name, draw", list(_figures_from_rows()), ids=lambda v: v if isinstance(v, str) else "")
def test_figure_from_rows_is_legible_at_page_width(name, draw):
    assert_legible(draw())


def test_probe_b_views_are_legible_thumbnails(tmp_path):
    fillers = ["black", "gray", "noise", "scene"]
    paths = random_pngs(tmp_path, 1 + 3 * len(fillers), size=64)
    example = pd.DataFrame({"filler": fillers, "original": paths[0], "x0": paths[1:5], "x0_patch": paths[5:9],
                            "x1_fill": paths[9:13]})
    thumbs = assert_legible(conceptual.views_panel(example))["image_px"]
    assert len(thumbs) == 13 and min(thumbs) >= 120, thumbs   # px on screen


def test_training_loss_is_legible(tmp_path):
    history = pd.DataFrame({"step": np.tile(np.arange(40), 3), "loss": np.linspace(2, 0.5, 120),
                            "encoders": np.repeat(["text", "vision", "both"], 40)})
    assert_legible(conceptual.training_loss(history))


def test_prediction_pairs_keep_captions_off_the_images(tmp_path):
    result = _prednoun(random_pngs(tmp_path, 4, size=64))
    assert_legible(prednoun.example_pair(result))
    assert_legible(prednoun.wrong_pairs(result, "toy-vilt"))


def masking_examples(tmp_path) -> StudyResult:
    """Two example items of the masking study, as it picks them, with their predictions in every condition."""
    full, ablated = random_pngs(tmp_path / "full", 2, size=64), random_pngs(tmp_path / "ablated", 2, size=64)
    shown = pd.DataFrame({"item_id": ["a", "b"], "sentence": ["a boy is following a box", "a cat touches a bag"],
                          "verb": ["follow", "touch"], "verb_start": [9, 6], "verb_end": [18, 13],
                          "subject_box": [[0.35, 0.55, 0.15, 0.45], [0.55, 0.1, 0.15, 0.4]], "model": "toy-vilt",
                          "full": full, "ablated": ablated, "image_size": 64, "patches": [2, 2]})
    words = ["pulling", "following", "pushing", "throwing", "dragging"]
    per_item = pd.DataFrame([{"model": "toy-vilt", "item_id": i, "condition": c, "predictions": words,
                              "probs": [0.35, 0.2, 0.18, 0.11, 0.1], "correct": c == "full image", "hits": 1,
                              "pieces": ["follow"], "scored_by": "toy-bert" if c == "text only" else "toy-vilt"}
                             for i in ("a", "b") for c in masking.CONDITIONS])
    return StudyResult(study="masking", params={}, rows=concat([]), data=dict(examples=shown, per_item=per_item))


def test_masking_examples_are_legible(tmp_path):
    assert_legible(masking.examples(masking_examples(tmp_path)))


def _sweep(alphas=(0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0)) -> pd.DataFrame:
    """Patching rows as the study makes them (the paper profile's α grid), through the chapter's ``with_alpha``."""
    from probekit.papers.conceptual import patch_condition
    from probekit.results import frame, row
    metrics = [("probe-r predicate_swap", "mu_c", 0.81), ("probe-c composition", "group", 0.88), ("general", "top1", 0.74)]
    return with_alpha(frame([row(study="conceptual", probe="patching", model="toy-clip", subset=s, metric=m,
                                 condition=patch_condition(enc, a), value=v + 0.03 * a * (k + 1),
                                 ci=(v + 0.03 * a * (k + 1) - 0.04, v + 0.03 * a * (k + 1) + 0.04), n=140)
                             for k, enc in enumerate(("text", "vision", "both")) for a in alphas for s, m, v in metrics]))


def test_the_alpha_sweep_shows_alpha_zero_and_every_interval_with_labels_apart():
    fig = conceptual.alpha_sweep(_sweep())
    axes = [ax for ax in fig.axes if ax.has_data()]
    assert len(axes) == 3
    for ax in axes:
        low, high = ax.get_ylim()
        assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()][0] == "0"   # the original model
        assert ax.get_xticklabels()[-1].get_text() == "1"
        bars = [seg for c in ax.collections for seg in c.get_segments()]
        assert bars and all(low <= y <= high for seg in bars for _, y in seg)           # every interval in view
    assert_legible(fig)   # among the rest: no two α labels overlap


def test_thinned_ticks_leave_out_only_a_label_that_would_touch_its_neighbour():
    fig, ax = plt.subplots(figsize=(1.2, 1.0))
    figures.thin_ticks(ax, [0.0, 0.01, 0.5, 1.0], ["0", "0.01", "0.5", "1"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "", "0.5", "1"]
    assert_legible(fig)


def test_heatmap_colour_is_centred_on_each_cells_chance():
    against = figures.against_chance(np.array([38.0, 16.7, 0.0, 100.0, 40.0, np.nan]),
                                     np.array([16.7, 16.7, 16.7, 50.0, np.nan, 50.0]))
    assert against[:5] == pytest.approx([(38 - 16.7) / (100 - 16.7), 0.0, -1.0, 1.0, 0.0]) and np.isnan(against[5])
    rows = pd.DataFrame({"probe": ["Probe-C group", "Probe-R acc"], "model": "toy-vilt", "metric": "acc",
                         "value": [0.38, 0.38], "chance": [1 / 6, 0.5]})
    fig = report.heatmap(rows, "probe", "model")
    colour = fig.axes[0].collections[0].get_array()
    assert colour[0] > 0 > colour[1]   # 38% is above Probe-C's chance (16.7%) and below Probe-R's (50%)
    assert [t.get_text() for t in fig.axes[0].texts] == ["38", "38"]
    assert_legible(fig)


def test_both_panels_of_ours_beside_the_paper_order_their_groups_alike():
    rows = lambda source, conds: pd.DataFrame({"condition": conds, "metric": "gamma", "value": 1.0, "ci_low": 0.9,
                                               "ci_high": 1.1, "chance": np.nan, "source": source})
    fig = report.paper_vs_ours(rows("ours", ["black", "gray", "noise"]), rows("paper", ["noise", "black", "gray"]),
                               x="condition")
    assert [[t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes[:2]] == [["black", "gray", "noise"]] * 2
    plt.close(fig)


def test_a_page_figure_is_a_png_of_twice_its_display_size(monkeypatch):
    from probekit.report import show
    shown = []
    monkeypatch.setattr(show, "display", lambda data, raw, metadata: shown.append((data, metadata)))
    fig, _ = plt.subplots(figsize=(4.0, 2.0))
    show.show_figure(fig)
    (data, metadata), = shown
    png = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    shown_size = metadata["image/png"]["width"], metadata["image/png"]["height"]
    assert png.size[0] / shown_size[0] == pytest.approx(2, abs=0.01) and png.size[1] / shown_size[1] == 2
    assert 340 <= shown_size[0] <= 420   # 4 inches at 100 dpi, bar the tight margins
    show.show_figure(None)   # a figure function with nothing to draw (no concept shown often enough): nothing shown
    assert len(shown) == 1
