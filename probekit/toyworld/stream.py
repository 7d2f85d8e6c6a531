"""The toy models' training data: captioned images of the training split, each with hard negative captions.

Every example is an image (64x64 RGB, uint8), its caption and negatives labelled by what they change:
``subject``/``verb``/``object``/``attribute``/``scene`` swaps, and ``binding`` swaps, where the wrong caption names
a noun and a predicate that are both in the image but belong to different agents.  The mix of scene kinds is
``KINDS``; crops of one entity resized to the full image (what a chapter's "cropped" condition shows the model)
are part of it.  Scenes come from the training split only (``Scene.split``), so every probe item of the
evaluation split is unseen.

A ``Recipe`` removes one kind of information (the knock-outs), adds caption noise or makes the hard cases more
frequent (``emphasis``); the examples are otherwise the same, in the same order (the recipe draws from its own
generator)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PIL import Image

from . import knockouts
from .knockouts import others as _others
from .emphasis import emphasise
from .sample import (agent_cells, agents_scene, choice, in_split, np_, object_caption, objects_scene, pose_caption,
                     random_object, sample_svo, scene_for, svo_caption, svo_scene)
from .scene import Scene, box, render
from .vocab import AGENTS, ANTONYMS, HYPERNYM_WORDS, IMAGE_SIZE, OBJECTS, POSES, SCENES, VERBS

KINDS = {"svo": 0.34, "pose_pair": 0.22, "object": 0.12, "agent": 0.08, "objects": 0.1, "crop": 0.14}


@dataclass(frozen=True)
class Recipe:
    """What a model's training stream holds; the default is the whole world."""
    noisy: float = 0.0        # share of captions replaced by the caption of another scene, drawn at random (wrong,
                              # at times sharing a word, as in web alt-text)
    noisy_swaps: bool = False # half of those replaced by one of their own one-slot swaps instead (loosely related;
                              # the kind of sentence a swap probe offers as the wrong answer, taught as a match)
    hide_verbs: bool = False  # every transitive scene drawn as a verb picked at random, independently of the
                              # caption's: the images show every pose and place, but never which verb is named
    unbound: bool = False     # two-agent captions name a noun and a predicate drawn independently among the two
                              # shown (so half the time bound wrongly), with no binding negatives
    # knock-outs that remove information and never caption an image with a probe's negative for it (``knockouts``)
    no_verb_words: bool = False   # transitive captions name the agent and the object, not the verb
    neutral_verbs: bool = False   # transitive scenes drawn in one neutral pose with the object at one neutral place
    unpaired: bool = False        # two-agent captions name both agents and both predicates, never paired
    no_attributes: bool = False   # captions never name a colour, size or pattern
    scenes: str = ""              # "always": objects in their typical scene (knock-in); "never": never (knock-out)
    cc_noise: float = 0.0         # share of captions noised as in Conceptual Captions, never an own one-slot swap
    emphasis: float = 0.0         # share of two-agent scenes and verb negatives redrawn as hard cases (``emphasis``)

    def removes(self) -> bool:
        """Whether a knock-out of ``knockouts`` (or its caption noise) is on."""
        return bool(self.no_verb_words or self.neutral_verbs or self.unpaired or self.no_attributes or self.scenes
                    or self.cc_noise)

    def extra_words(self) -> tuple[str, ...]:
        """Words its captions use beyond ``vocab.words()`` (the hypernyms of caption noise)."""
        return HYPERNYM_WORDS if self.cc_noise else ()

    def describe(self) -> str:
        parts = []
        if self.noisy:
            parts.append(f"{self.noisy:.0%} of captions replaced " + (
                "(half by a one-slot swap of their own, half by another scene's caption)" if self.noisy_swaps else
                "by another scene's caption"))
        parts += [text for on, text in [
            (self.hide_verbs, "transitive scenes drawn as a random verb (its pose and object place), independent of "
                              "the caption's verb"),
            (self.unbound, "two-agent captions pair a noun and a predicate at random among the two shown; no binding "
                           "negatives"),
            (self.no_verb_words, "transitive captions name the agent and the object, never the verb ('a man and a "
                                 "ball'); no verb negatives"),
            (self.neutral_verbs, "transitive scenes drawn in one neutral pose with the object at one neutral place "
                                 "(below left of the agent's limbs) whatever the verb; captions as usual, no verb "
                                 "negatives"),
            (self.unpaired, "two-agent captions name both agents and both predicates, each in an order of its own, "
                            "never paired ('a man and a cat . kneeling and running'); no binding negatives"),
            (self.no_attributes, "captions never name a colour, size or pattern; no attribute negatives"),
            (self.scenes == "always", "every scene with an object drawn in its first object's typical scene"),
            (self.scenes == "never", "no scene drawn in the typical scene of any object it holds"),
            (self.cc_noise, f"{self.cc_noise:.0%} of captions noised as in Conceptual Captions (a named object left "
                            "out, an object not shown added, a noun replaced by its hypernym, or another scene's "
                            "caption naming nothing shown), never a one-slot swap of their own"),
            (self.emphasis, f"{self.emphasis:.0%} of two-agent scenes redrawn with look-alike agents and of verb "
                            "negatives with a verb of the same pose")] if on]
        return "; ".join(parts) or "the whole world"


@dataclass
class Example:
    image: np.ndarray                    # (64, 64, 3) uint8
    caption: str
    negatives: list[tuple[str, str]]     # (caption, what it swaps)


def _svo(rng, meta: dict | None = None) -> tuple:
    s, v, o = sample_svo(rng)
    scene = in_split(lambda r: svo_scene(r, s, v, o, distractor=True), rng, "train")
    prog = bool(rng.random() < 0.5)
    colour = scene.entities[1].colour if rng.random() < 0.3 else None
    cap = lambda s_, v_, o_, c_=colour: svo_caption(s_, v_, o_, prog, c_)
    negs = [(cap(choice(rng, _others(AGENTS, s)), v, o), "subject"),
            (cap(s, choice(rng, _others(VERBS, v)), o), "verb"),
            (cap(s, v, choice(rng, _others(OBJECTS, o))), "object")]
    if colour:
        negs.append((cap(s, v, o, ANTONYMS[colour]), "attribute"))
    _note(meta, s=s, v=v, o=o, prog=prog, colour=colour)
    return scene, cap(s, v, o), negs


def _pose_pair(rng, meta: dict | None = None) -> tuple:
    n1, n2 = rng.choice(list(AGENTS), 2, replace=False)
    p1, p2 = rng.choice(list(POSES), 2, replace=False)
    # the background is either agent's typical scene: the captioned agent's would tell which of the two it names
    background = scene_for(rng, choice(rng, [n1, n2]))
    scene = in_split(lambda r: agents_scene(r, [(n1, p1), (n2, p2)], background, distractor=bool(r.random() < 0.4)),
                     rng, "train")
    alt = bool(rng.random() < 0.3)
    negs = [(pose_caption(n2, p1, alt), "binding"), (pose_caption(n1, p2, alt), "binding"),
            (pose_caption(choice(rng, _others(AGENTS, n1)), p1, alt), "subject"),
            (pose_caption(n1, choice(rng, _others(POSES, p1)), alt), "verb")]
    _note(meta, agents=[(n1, p1), (n2, p2)], alt=alt)
    return scene, pose_caption(n1, p1, alt), negs


def _object(rng, meta: dict | None = None) -> tuple:
    e = random_object(rng)
    scene = in_split(lambda r: objects_scene(r, [e]), rng, "train")
    which = tuple(w for w in ("colour", "size", "pattern") if rng.random() < (0.7 if w == "colour" else 0.35))
    wrong_name = e.__class__(**{**e.__dict__, "name": choice(rng, _others(OBJECTS, e.name))})
    negs = [(object_caption(wrong_name, which), "object")]
    for w in which:
        flipped = e.__class__(**{**e.__dict__, w: ANTONYMS[getattr(e, w)]})
        negs.append((object_caption(flipped, which), "attribute"))
    _note(meta, e=e, which=which)
    return scene, object_caption(e, which), negs


def _agent(rng, meta: dict | None = None) -> tuple:
    n, p = choice(rng, AGENTS), choice(rng, POSES)
    _note(meta, agents=[(n, p)])
    scene = in_split(lambda r: agents_scene(r, [(n, p)], distractor=bool(r.random() < 0.3)), rng, "train")
    if rng.random() < 0.5:
        return scene, np_(n), [(np_(choice(rng, _others(AGENTS, n))), "subject")]
    return scene, pose_caption(n, p), [(pose_caption(choice(rng, _others(AGENTS, n)), p), "subject"),
                                       (pose_caption(n, choice(rng, _others(POSES, p))), "verb")]


def _objects(rng, meta: dict | None = None) -> tuple:
    names = list(rng.choice(OBJECTS, int(rng.integers(2, 4)), replace=False))
    scene = in_split(lambda r: objects_scene(r, names), rng, "train")
    _note(meta, names=names)
    absent = choice(rng, [o for o in OBJECTS if o not in names])
    shown = list(rng.permutation(names))[:2]
    cap = " and ".join(np_(o) for o in shown)
    negs = [(" and ".join(np_(o) for o in [shown[0], absent]), "object")]
    if rng.random() < 0.4:
        wrong = choice(rng, _others(SCENES, scene.background))
        negs.append((f"{cap} in the {wrong}", "scene"))
        cap = f"{cap} in the {scene.background}"
    return scene, cap, negs


def _crop(rng, meta: dict | None = None) -> tuple:
    """One entity cropped out of a scene and resized to the full image, as the chapters' cropped condition does."""
    if rng.random() < 0.6:
        scene, cap, negs = _pose_pair(rng, meta)
        _note(meta, agents=meta["agents"][:1] if meta else None)
        entity = scene.entities[0]
        # the other agent is cropped away: its noun / predicate are plain subject / verb swaps here
        negs = [(c, {0: "subject", 1: "verb"}.get(i, k)) for i, (c, k) in enumerate(negs)]
    else:
        e = random_object(rng)
        scene = in_split(lambda r: objects_scene(r, [e, random_object(r)]), rng, "train")
        _, cap, negs = _object_caption_only(rng, e)
        _note(meta, e=e)
        entity = scene.entities[0]
    return scene, cap, negs, entity


def _object_caption_only(rng, e):
    which = ("colour",) if rng.random() < 0.7 else ()
    wrong = e.__class__(**{**e.__dict__, "name": choice(rng, _others(OBJECTS, e.name))})
    negs = [(object_caption(wrong, which), "object")]
    if which:
        negs.append((object_caption(e.__class__(**{**e.__dict__, "colour": ANTONYMS[e.colour]}), which), "attribute"))
    return None, object_caption(e, which), negs


def _note(meta: dict | None, **what) -> None:
    """Record what a maker drew (its ``meta``, when asked for one): what the knock-outs rebuild captions from."""
    if meta is not None:
        meta.update(what)


_MAKERS = {"svo": _svo, "pose_pair": _pose_pair, "object": _object, "agent": _agent, "objects": _objects}


def _hide_verb(scene: Scene, aux: np.random.Generator) -> Scene:
    """The same scene drawn as a verb picked uniformly at random (``aux``), whatever the caption says: the agent
    takes that verb's pose and the object its place, both moved to cells free of the other entities."""
    agent, thing, *rest = scene.entities
    taken = {c for e in rest for c in e.cells}
    while True:
        shown = VERBS[choice(aux, VERBS)]
        assert shown.offset is not None  # every verb has one (only poses lack one)
        dr, dc = shown.offset
        cells = agent_cells(shown.offset, taken)
        if cells:
            r, c = choice(aux, cells)
            return replace(scene, entities=(replace(agent, cell=(r, c), pose=shown.pose),
                                            replace(thing, cell=(r + dr, c + dc)), *rest))


def _unbind(scene: Scene, aux: np.random.Generator) -> tuple:
    """A two-agent caption naming one shown noun and one shown predicate drawn independently."""
    kinds = [e.name for e in scene.entities if e.pose]
    poses = {v.pose: ing for ing, v in POSES.items()}
    shown = [poses[e.pose] for e in scene.entities if e.pose]
    n, p = kinds[int(aux.integers(2))], shown[int(aux.integers(2))]
    negs = [(pose_caption(choice(aux, [a for a in AGENTS if a not in kinds]), p), "subject"),
            (pose_caption(n, choice(aux, [q for q in POSES if q not in shown])), "verb")]
    return pose_caption(n, p), negs


def _knock(recipe: Recipe, kind: str, scene: Scene, cap: str, negs: list, meta: dict, aux) -> tuple:
    """The example with the recipe's knock-outs of ``knockouts`` applied (before it is drawn)."""
    if kind == "svo" and recipe.neutral_verbs:
        scene = knockouts.neutral_verb(scene, aux)
        negs = [(c, k) for c, k in negs if k != "verb"]   # the drawing shows no verb: another is no more wrong
    if kind == "svo" and recipe.no_verb_words:
        cap, negs = knockouts.no_verb_words(meta, aux)
    if kind == "pose_pair" and recipe.unpaired:
        cap, negs = knockouts.unpaired(meta, aux)
    if recipe.no_attributes:
        cap, negs = knockouts.no_attributes(cap, negs)
    if recipe.scenes:
        was, scene = scene.background, knockouts.set_scene(scene, recipe.scenes, aux)
        if kind == "objects" and cap.endswith(f" in the {was}"):   # the caption names the background
            cap = f"{cap[:-len(was)]}{scene.background}"
            negs = [(c, k) for c, k in negs if k != "scene"]
            negs.append((f"{cap[:-len(scene.background)]}{choice(aux, _others(SCENES, scene.background))}", "scene"))
    return scene, cap, negs


def example(rng: np.random.Generator, recipe: Recipe = Recipe(), aux: np.random.Generator | None = None,
            meta: dict | None = None) -> Example:
    """One training example; ``aux`` draws what the recipe changes (so ``rng`` draws the same examples); ``meta``
    (a dict), when given, receives the example's kind and what was drawn for it."""
    aux = aux if aux is not None else np.random.default_rng(0)
    if meta is None and (recipe.removes() or recipe.emphasis):
        meta = {}
    kind = choice(rng, KINDS, list(KINDS.values()))
    if kind == "crop":
        scene, cap, negs, entity = _crop(rng, meta)
    else:
        scene, cap, negs = _MAKERS[kind](rng, meta)
        if kind == "svo" and recipe.hide_verbs:
            scene = _hide_verb(scene, aux)
        if kind == "pose_pair" and recipe.unbound:
            cap, negs = _unbind(scene, aux)
    if recipe.emphasis and kind != "crop" and meta is not None:  # meta: made above for such a recipe
        scene, cap, negs = emphasise(kind, scene, cap, negs, meta, aux, recipe.emphasis)
    if recipe.removes() and meta is not None:
        scene, cap, negs = _knock(recipe, kind, scene, cap, negs, meta, aux)
    img, _ = render(scene)
    if kind == "crop":
        x, y, w, h = (v * IMAGE_SIZE for v in box(scene, 0))
        img = img.crop((x, y, x + w, y + h)).resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BICUBIC)
    if recipe.noisy and aux.random() < recipe.noisy:
        if recipe.noisy_swaps and negs and aux.random() < 0.5:
            cap = negs[int(aux.integers(len(negs)))][0]
        else:
            cap = _MAKERS[choice(aux, _MAKERS)](aux)[1]
    if recipe.cc_noise and aux.random() < recipe.cc_noise:
        cap = knockouts.cc_noise(scene, cap, aux, lambda a: _MAKERS[choice(a, _MAKERS)](a)[1])
    negs = [(c, k) for c, k in negs if c != cap]
    if meta is not None:
        meta.update(kind=kind, scene=scene, caption=cap)
    return Example(np.asarray(img.convert("RGB"), dtype=np.uint8), cap, negs)


def pool(n: int, seed: int = 0, progress: bool = False, recipe: Recipe = Recipe(), metas: list | None = None
         ) -> list[Example]:
    """``n`` training examples, deterministic under ``seed``; ``recipe`` changes what they hold; ``metas`` (a list),
    when given, receives each example's ``meta`` (``example``)."""
    rng, aux = np.random.default_rng([int(seed), 7919]), np.random.default_rng([int(seed), 7920])
    it = range(n)
    if progress:
        from ..progress import bar as tqdm
        it = tqdm(it, desc="toy training images", unit="img")
    out = []
    for _ in it:
        meta: dict | None = {} if metas is not None else None
        out.append(example(rng, recipe, aux, meta))
        if metas is not None:
            metas.append(meta)
    return out
