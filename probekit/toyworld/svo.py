"""Toy verb understanding (SVO-Probes' schema): a sentence, its positive image, and subject-, verb- and
object-negative images, each an image of a plausible triplet that differs from the sentence in one slot, drawn on
the positive image's background (a background drawn for the negative's own object would tell the two apart).
A verb negative is one of the verbs visually closest to the sentence's: the same pose with the object in another
place, or the object in the same place with another pose.  The draw is stratified by that cue (:func:`verb_draws`):
each sentence gets one verb negative of each (where its subject and object allow one), so half the verb negatives
are told apart by the object's place alone; the toy zoo's held-out set draws one verb negative per sentence,
either cue with probability one half (``close_verb_weights``).  Unlike SVO-Probes, every
verb-negative row comes with its :func:`mirror` (the negative image's sentence, the images swapped), so that verb
negatives are counterbalanced; ``unit`` names the draw a row belongs to (one positive image: its negatives and
their mirrors), the unit the chapter's intervals resample (:func:`probekit.metrics.itm.units`), since a verb
negative and its mirror score the same two images.
Beyond the schema, ``pos_subject_box``/``neg_subject_box`` give each image's exact subject box (the guided
masking chapter ablates it; real data gets these boxes from a detector) and ``pos_scene``/``neg_scene`` its
background."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .items import frame, target_size
from .sample import choice, in_split, rng_for, sample_svo, svo_caption, svo_scene, toy_dir
from .scene import image_path, tight_box
from .vocab import AGENTS, OBJECTS, VERBS, plausible


def negatives(subject: str, verb: str, obj: str) -> dict[str, list[tuple[str, str, str]]]:
    """Plausible triplets that differ from (subject, verb, obj) in exactly one slot, by slot."""
    return {
        "subj": [(s, verb, obj) for s in AGENTS if s != subject and plausible(s, verb, obj)],
        "verb": [(subject, v, obj) for v in VERBS if v != verb and plausible(subject, v, obj)],
        "obj": [(subject, verb, o) for o in OBJECTS if o != obj and plausible(subject, verb, o)],
    }


def close_verb_weights(verb: str, options: list[tuple[str, str, str]]) -> list[float] | None:
    """Draw weights over verb-negative ``options``: half on those with the verb's pose and the object elsewhere,
    half on those with the object in the verb's place and another pose, none on the rest (which differ in both, and
    a model that reads the pose alone tells them apart); None (uniform) when no option is that close."""
    v = VERBS[verb]
    pose = [VERBS[o[1]].pose == v.pose for o in options]
    place = [VERBS[o[1]].offset == v.offset for o in options]
    weights = [0.5 / sum(pose) if a else 0.5 / sum(place) if b else 0.0 for a, b in zip(pose, place)]
    return weights if any(weights) else None


#: what tells a verb negative's verb from the sentence's (:func:`verb_cue`): the object's place alone (the same
#: pose), the pose alone (the object in the same place), or both
PLACE, POSE, BOTH = "the object's place", "the pose", "both"
#: the stratified draw's verb negatives per sentence (:func:`verb_draws`): item-id suffix -> what tells it apart
CUE_DRAWS = {"verb-place": PLACE, "verb-pose": POSE}


def verb_draws(verb: str, options: list[tuple[str, str, str]], by_cue: bool) -> list[tuple[str, list, list | None]]:
    """The verb negatives to draw for a sentence with ``verb`` among ``options`` (:func:`negatives`' verb triplets),
    as (item-id suffix, options, draw weights or None for uniform): ``by_cue``, one per cue of :data:`CUE_DRAWS`
    (the same pose with the object elsewhere; the object in the same place with another pose), uniform among the
    options of that cue, none for a cue without options; otherwise one, weighted by :func:`close_verb_weights`."""
    if not by_cue:
        return [("verb", options, close_verb_weights(verb, options))]
    return [(kind, kept, None) for kind, wanted in CUE_DRAWS.items()
            if (kept := [o for o in options if cue_of(verb, o[1]) == wanted])]


def cue_of(verb: str, other: str) -> str:
    """What tells transitive verb ``other`` from ``verb`` in an image: :data:`PLACE`, :data:`POSE` or :data:`BOTH`."""
    a, b = VERBS[verb], VERBS[other]
    return PLACE if a.pose == b.pose else POSE if a.offset == b.offset else BOTH


def verb_cue(items: pd.DataFrame) -> pd.Series:
    """Per row of ``items``: what tells its verb negative's verb from the sentence's in the images, "the object's
    place" (:data:`PLACE`, the same pose), "the pose" (:data:`POSE`, the object in the same place) or "both";
    None for rows that are not verb negatives."""
    return pd.Series([cue_of(p.split(",")[1], n.split(",")[1]) if v else None
                      for p, n, v in zip(items["pos_triplet"], items["neg_triplet"], items["verb_neg"])],
                     index=items.index, dtype=object, name="verb_cue")


def mirror(row: dict, sentence: str) -> dict:
    """The verb-negative ``row`` turned around: ``sentence`` (its negative's caption) with the two images swapped, so
    that every image is the positive of one row and the negative of another (a model that scores the images alone,
    whatever the sentence, gets exactly chance on verb negatives)."""
    swap = {"pos_triplet": "neg_triplet", "pos_image_id": "neg_image_id", "pos_image": "neg_image",
            "pos_subject_box": "neg_subject_box", "pos_scene": "neg_scene"}
    turned = {**row, **{a: row[b] for a, b in swap.items()}, **{b: row[a] for a, b in swap.items()}}
    return {**turned, "item_id": f"{row['item_id']}-mirror", "sentence": sentence,
            "verb": row["neg_triplet"].split(",")[1]}


def make_items(data_dir: Path, limit: int | None, seed: int, split: str, by_cue: bool = True) -> pd.DataFrame:
    """``limit`` rows: per sentence a subject-negative row, the verb-negative rows of :func:`verb_draws` (two with
    ``by_cue``, one without) each with its :func:`mirror` right after it, and an object-negative row; a verb row and
    its mirror are kept or left out together."""
    n = target_size("verbs", limit)
    rng = rng_for("verbs", seed, split)
    folder = toy_dir(data_dir, "verbs")
    rows: list[dict[str, Any]] = []
    k = 0
    while len(rows) < n:
        s, v, o = sample_svo(rng)
        progressive = bool(rng.random() < 0.5)
        pos = in_split(lambda r: svo_scene(r, s, v, o, distractor=True), rng, split)
        pos_path = image_path(pos, folder)
        slots = negatives(s, v, o)
        for kind, options, weights in [("subj", slots["subj"], None), *verb_draws(v, slots["verb"], by_cue),
                                       ("obj", slots["obj"], None)]:
            if not options:
                continue
            ns, nv, no = choice(rng, options, weights)
            neg = in_split(lambda r: svo_scene(r, ns, nv, no, distractor=True, background=pos.background), rng, split)
            row = dict(
                item_id=f"verbs-{split}-{seed}-{k:05d}-{kind}", unit=f"verbs-{split}-{seed}-{k:05d}",
                sentence=svo_caption(s, v, o, progressive),
                pos_triplet=f"{s},{v},{o}", neg_triplet=f"{ns},{nv},{no}", pos_image_id=pos.digest(),
                neg_image_id=neg.digest(), pos_image=str(pos_path), neg_image=str(image_path(neg, folder)),
                subj_neg=kind == "subj", verb_neg=kind.startswith("verb"), obj_neg=kind == "obj", verb=v,
                pos_subject_box=tight_box(pos, 0), neg_subject_box=tight_box(neg, 0), pos_scene=pos.background,
                neg_scene=neg.background)
            unit = [row, mirror(row, svo_caption(ns, nv, no, progressive))] if row["verb_neg"] else [row]
            if len(rows) + len(unit) <= n:
                rows += unit
        k += 1
    return frame(rows, n)
