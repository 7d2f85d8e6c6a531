"""The conceptual-understanding study (Schiappa et al. 2023): Probe-R, Probe-C, Probe-B and CLIP patching.

``run(params)`` takes the chapter's parameters (:class:`~probekit.studies.conceptual.params.Params`) and returns a
:class:`~probekit.results.StudyResult`: rows of every probe for every model (ours) beside the paper's Tables 2-4, 6,
8-10; ``data`` for the figures (the Probe-B views of one item, the patching sweep with its encoders and α, the
training losses); ``facts`` the page states (a :class:`~probekit.studies.conceptual.facts.ConceptualFacts`, built
from the data here and from the patching sweep in :mod:`probekit.studies.conceptual.sweep`);
``claims`` from :mod:`probekit.studies.conceptual.claims`; ``items`` the per-item rows of Probe-R, Probe-C and Probe-B
(:mod:`probekit.metrics.conceptual_items`: Probe-R's and Probe-C's accuracies are means of ``correct``, Probe-B's mAP
is recomputed from its score columns), not the α sweep's.

On the toy world, ``lab_models`` (the toy zoo, :mod:`probekit.studies.conceptual.lab`) are scored on the same Probe-R
and Probe-C items (models of ``models`` reused, not scored twice): their rows, with the α sweep's and Probe-B's that
the lab's claims read, are ``data["lab"]`` (not in ``rows``), judged in ``data["lab_checks"]`` and
``data["lab_claims"]`` (:mod:`probekit.studies.lab`); ``facts.lab`` says what ran, or why nothing did.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from probekit import papers
from probekit.papers import conceptual as the_paper
from probekit.data.background import with_toy_scenes
from probekit.fillers import derive_probe_b
from probekit.metrics import authors_code
from probekit.metrics import background as mb
from probekit.metrics import conceptual as mc
from probekit.metrics import conceptual_items as mi
from probekit.papers.conceptual import undo_readings
from probekit.scorers.base import Scorer
from probekit.results import FromItems, StudyResult, Where, concat, concat_items, empty, select
from probekit.studies.conceptual import claims as conceptual_claims, finetune_seeds
from probekit.studies.conceptual import lab as conceptual_lab, scores as cs
from probekit.studies.conceptual.facts import ConceptualFacts
from probekit.studies.conceptual.params import Params
from probekit.studies.conceptual.sweep import sweep, sweep_plan, with_alpha
from probekit.studies.lab_items import LabRows, lab_data, split
from probekit.studies.lab_pooling import pooled_over_seeds

STUDY = "conceptual"
#: one headline row per model each: Probe-R predicate-swap accuracy, Probe-C composition group score, Probe-B
#: mAP with the background replaced by black
HEADLINES = [dict(probe="probe-r", condition="", subset="predicate_swap", metric="acc"),
             dict(probe="probe-c", condition="", subset="composition", metric="group"),
             dict(probe="probe-b", condition="black", subset="x̃1", metric="map")]
#: the headlines rebuilt from the item rows: means of ``correct`` by ``kind`` and ``split``, and of ``ap`` by ``view``
FROM_ITEMS = [(HEADLINES[0], FromItems(dict(probe="probe-r", kind="predicate_swap"))),
              (HEADLINES[1], FromItems(dict(probe="probe-c", split="composition"))),
              (HEADLINES[2], FromItems(dict(probe="probe-b", condition="black", view="x̃1"), column="ap"))]
CONTROLS: list[Where] = []
#: the chapter's ``dataset`` parameter -> the dataset source of each probe
SUITES = {"toy": {"probe-r": "toy", "probe-c": "toy", "probe-b": "toy"},
          "paper": {"probe-r": "probe-r", "probe-c": "probe-c", "probe-b": "probe-b"}}
#: the probes of our rows recomputed as the authors' released code reads them (FLAVA's Probe-C scores transposed:
#: text and image exchanged, μ(c) over the two images; ViLT's and BridgeTower's Probe-B x̃0 and x̃1 exchanged), for
#: the models concerned
AUTHORS_READING = {"probe-c": "probe-c (authors' code)", "probe-b": "probe-b (authors' code)"}


def suite_sources(dataset: str) -> dict[str, str]:
    """The source of each probe for the chapter's ``dataset`` parameter: ``"toy"`` (toy world) or
    ``"paper"`` (the authors' release)."""
    if dataset not in SUITES:
        raise ValueError(f"dataset={dataset!r} is not a suite of the conceptual chapter; valid: "
                         f"{', '.join(SUITES)} ('paper' reads the sources probe-r, probe-c, probe-b)")
    return dict(SUITES[dataset])


def _probes(scorers: Mapping[str, Scorer], items_r: pd.DataFrame, items_c: pd.DataFrame, seed: int
            ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    scored_r = pd.concat([cs.score_probe_r(s, items_r) for s in scorers.values()], ignore_index=True)
    scored_c = pd.concat([cs.score_probe_c(s, items_c) for s in scorers.values()], ignore_index=True)
    comp = scored_c[scored_c["split"] == "composition"]
    swapped = [m for m, s in scorers.items() if s.family in authors_code.PROBE_C_SWAPPED]
    rows = concat([mc.probe_r_rows(scored_r, seed), mc.probe_c_rows(scored_c, seed),
                   mc.probe_c_rows(comp, seed, by={"model": "model", "subset": "category"},
                                   probe="probe-c-category"),
                   mc.probe_c_rows(authors_code.swap_text_image(scored_c[scored_c["model"].isin(swapped)]), seed,
                                   probe=AUTHORS_READING["probe-c"])])
    return rows, {"probe-r": scored_r, "probe-c": scored_c}


def _background(scorers: Mapping[str, Scorer], items_b: pd.DataFrame, fillers: Sequence[str], root: Path, seed: int,
                toy: bool) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str], pd.DataFrame]:
    used = [f for f in fillers if f != "scene" or items_b.attrs.get("scene_dir")]
    if toy and "scene" in used:  # the toy world knows each item's background and its objects' typical scenes
        items_b = with_toy_scenes(items_b)
    derived = derive_probe_b(items_b, used, root, seed=seed, progress=False)
    classes = items_b.attrs["classes"]
    prompts = items_b.attrs.get("prompts") or mc.class_prompts(classes)
    scored = pd.concat([cs.score_probe_b(s, derived, classes, prompts) for s in scorers.values()], ignore_index=True)
    swapped = authors_code.swap_views(scored[scored["model"].isin(
        [m for m, s in scorers.items() if s.family in authors_code.PROBE_B_SWAPPED])])
    rows = concat([mb.probe_b_all_rows(scored, seed), mb.object_context_rows(scored, seed),
                   mb.probe_b_rows(swapped[~swapped["single_object"]], {"model": "model"}, seed,
                                   condition=mb.ALL_FILLERS, probe=AUTHORS_READING["probe-b"])])
    example = derived[derived["item_id"] == derived["item_id"].iloc[0]][["filler", "original", *mb.VIEWS]]
    return rows, example.reset_index(drop=True), used, derived.attrs["no_unrelated_scene"], scored


@pooled_over_seeds
def run(params: Params) -> StudyResult:
    """Every number of the chapter."""
    from probekit.datasets import default_data_dir, load_dataset
    from probekit.scorers import head_for, load_scorer

    dataset, data_dir, limit, seed, finetune_model = (params.dataset, params.data_dir, params.limit, params.seed,
                                                      params.finetune_model)
    device, batch_size, cache_dir = params.device, params.batch_size, params.cache_dir
    models, fillers, lab_models = params.models, params.fillers, params.lab_models
    root = Path(data_dir) if data_dir else default_data_dir()
    sources = suite_sources(dataset)

    def load(probe: str, split: str = "eval", source: str | None = None, n: int | None = None) -> pd.DataFrame:
        return load_dataset(probe, source or sources[probe], data_dir=root, limit=n or limit, seed=seed, split=split)

    items_r, items_c, items_b = load("probe-r"), load("probe-c"), load("probe-b")
    scorers = {m: load_scorer(m, device=device, batch_size=batch_size, cache_dir=cache_dir) for m in models}
    rc_rows, scored = _probes(scorers, items_r, items_c, seed)
    scored_c = scored["probe-c"]
    b_rows, example, used, no_scene, scored_b = _background(scorers, items_b, fillers, root, seed,
                                                            sources["probe-b"] == "toy")
    categories = list(dict.fromkeys(scored_c.loc[scored_c["split"] == "composition", "category"]))
    plan = sweep_plan(dataset, params.train_data, params.general_task, params.imagenet_dir)
    finetuned = bool(finetune_model) and not plan["skip"]
    swept = sweep(load, root, items_r, items_c, params, plan["general_task"]) if finetuned else None
    parts, data = [rc_rows, b_rows], {"probe_b_example": example}
    if swept is not None:
        parts.append(swept.rows)
        data.update(history=swept.history, sweep=with_alpha(swept.rows))
    rows = concat(parts + [papers.reported(the_paper)])
    data["readings"] = readings_table(rows)
    data["claims"] = conceptual_claims.sections(rows, models, finetune_model, list(params.finetune_encoders),
                                                 list(params.alphas), drawn=dataset == "toy")
    c_items = mi.probe_c_items(scored_c, items_c)
    data["probe_c_anatomy"] = mi.group_anatomy(c_items)
    data["claims"]["probe-c"] += conceptual_claims.anatomy_claims(rows, data["probe_c_anatomy"])
    lab_fact, found = _lab(
        lab_models, dataset, scorers=scorers, items={"probe-r": items_r, "probe-c": items_c}, scored=scored,
        b_rows=b_rows, background=lambda todo: _background(todo, items_b, fillers, root, seed, True)[0],
        sweep=select(rows, source="ours", probe="patching"), seed=seed,
        load=lambda m: load_scorer(m, device=device, batch_size=batch_size, cache_dir=cache_dir))
    ran = bool(lab_models) and dataset == "toy"
    on = ran and len(found.rows) > 0
    data.update(lab_data(found if ran else None, conceptual_lab.CHECKS if on else [],
                         conceptual_lab.CLAIMS if on else []))
    data["claims"]["probe-r"] += conceptual_lab.floor_claims(data["lab"], models) if on else []
    claims = [c for section in data["claims"].values() for c in section]
    if on and swept is not None and len(swept.facts.finetune_seeds) > 1:
        data["lab_claims"] = finetune_seeds.judged(data["lab_claims"], conceptual_lab.CLAIMS,
                                                   conceptual_lab.swept_keys(swept.each))
    facts = ConceptualFacts(
        dataset="toy world" if dataset == "toy" else "the authors' release",
        probe_r_items=len(items_r), probe_r_groups=items_r["group_id"].nunique(), probe_c_groups=len(items_c),
        probe_b_images=len(items_b), probe_b_single=int(items_b["single_object"].sum()),
        unreadable={"Probe-R": int(items_r["image"].isna().sum()),
                    "Probe-C": int(items_c["image_0"].isna().sum() + items_c["image_1"].isna().sum()),
                    "Probe-B": int(items_b["image"].isna().sum())},
        heads={m: head_for(s, "compatibility") for m, s in scorers.items()},
        fillers=used, fillers_left_out=[f for f in fillers if f not in used], no_unrelated_scene=list(no_scene),
        empty_masks=list(items_b.attrs.get("empty_masks", [])), probe_r_kinds=list(dict.fromkeys(items_r["kind"])),
        categories=categories, finetune_requested=bool(finetune_model),
        finetune_skipped=plan["skip"] if finetune_model else "", general_fallback=plan["fallback"],
        finetuned=finetuned, paper_categories=shared_categories(rows, categories), lab=lab_fact,
        sweep=swept.facts if swept else None)
    per_item = [mi.probe_r_items(scored["probe-r"], items_r), c_items, mi.probe_b_items(scored_b)]
    return StudyResult(STUDY, asdict(params), rows, data, facts, claims, concat_items(per_item))


def _lab(lab_models: Sequence[str], dataset: str, *, scorers: Mapping[str, Scorer], items: dict[str, pd.DataFrame],
         scored: dict[str, pd.DataFrame], b_rows: pd.DataFrame, background: Callable[[dict[str, Scorer]], pd.DataFrame],
         sweep: pd.DataFrame, seed: int, load: Callable[[str], Scorer]) -> tuple[str, LabRows]:
    """(what the lab ran, or why it did not; the lab's rows and their items, :func:`split`): the lab models scored on the chapter's toy items, every
    model the main run scored reused (its per-item tables and Probe-B rows), the others loaded once."""
    if not lab_models:
        return "no lab models (`lab_models` is empty)", split(empty())
    if dataset != "toy":
        return "the lab runs on the toy world only", split(empty())
    loaded = dict(scorers)

    def load_once(m: str) -> Scorer:
        if m not in loaded:
            loaded[m] = load(m)
        return loaded[m]

    def probe_b(wanted: list[str]) -> pd.DataFrame:
        # the main run's Probe-B rows, scoring only the models it did not score
        todo = {m: load_once(m) for m in wanted if m not in scorers}
        return concat([select(b_rows, model=[m for m in wanted if m in scorers]), background(todo) if todo else None])

    rows = conceptual_lab.lab_rows(items, lab_models, load=load_once, seed=seed, scored=scored, sweep=sweep,
                                   probe_b=probe_b)
    b_models = [m for m in conceptual_lab.PROBE_B_MODELS if m in lab_models]
    return (f"{', '.join(dict.fromkeys(lab_models))} on the same {len(items['probe-r'])} Probe-R comparisons and "
            f"{len(items['probe-c'])} Probe-C groups" + (f", Probe-B of {', '.join(b_models)}" if b_models else "")
            + ("; the α sweep above" if len(sweep) else "; no α sweep (fine-tuning not run)")), split(rows)


def readings_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The paper's rows that its code's two readings touch (Tables 4, 8, 9; Table 6's FLAVA rows are left to
    :func:`~probekit.papers.conceptual.undo_readings`), as printed and with the reading undone, and our rows as the
    authors' code would read them (for the models concerned)."""
    paper = rows[(rows["source"] != "ours") & (rows["probe"] != "probe-c-category")]
    undone = undo_readings(paper)
    touched = paper.merge(undone[["probe", "model", "condition"]].drop_duplicates(), on=["probe", "model", "condition"])
    touched = touched[touched["metric"].isin(set(undone["metric"]))]
    out = concat([touched, undone, select(rows, source="ours", probe=list(AUTHORS_READING.values()))])
    order = ("map", "acc", "text", "image", "group", "gamma", "gamma_median", "delta_c_pts")
    rank = {m: k for k, m in enumerate(order)}
    return out.sort_values("metric", key=lambda m: m.map(rank), kind="stable").reset_index(drop=True)


def shared_categories(rows: pd.DataFrame, ours: Sequence[str]) -> list[str]:
    """The paper's Table 6 categories that ours share (the toy world spells ``colour``); all when none."""
    paper = list(dict.fromkeys(select(rows, probe="probe-c-category", source=f"{the_paper.PAPER}, "
                                                                              "Table 6")["subset"]))
    shared = [c for c in paper if c in ours or c.replace("color", "colour") in ours]
    return shared or paper
