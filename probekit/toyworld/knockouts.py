"""The training stream's knock-outs that remove information (``stream.Recipe``'s newer options) and its caption noise
of Conceptual Captions' kind.  Each works on one drawn example (its kind, scene, caption, negatives and what was
drawn for it, ``meta``) with the recipe's own generator ``aux``, so the stream's examples stay the same in the same
order.  None of them pairs an image with a caption that a probe offers as the wrong answer for it: a verb-free
caption, a drawing that shows no verb, captions that do not pair agents with predicates, captions without
attributes, backgrounds set by the objects' typical scenes, and noise that never swaps one slot of the caption."""

from __future__ import annotations

from dataclasses import replace

from .sample import agent_cells, choice, np_
from .scene import Scene
from .vocab import (AGENTS, ANTONYMS, COLOURS, GRID, HYPERNYMS, OBJECTS, PATTERNS, POSES, SCENES, SIZES,
                    TYPICAL_SCENE, VERBS, article)

NEUTRAL_POSE = "neutral"       # glyphs._HUMAN: arms down, feet together; no transitive verb's pose
NEUTRAL_OFFSET = (1, -1)       # the object one row below and one column left of the agent's limbs: no verb's place
ATTRIBUTE_WORDS = set(COLOURS) | set(SIZES) | set(PATTERNS)
#: the words of each slot a one-slot swap changes (one vocabulary per slot)
SLOTS = [set(AGENTS), set(OBJECTS), set(COLOURS), set(SIZES), set(PATTERNS), set(SCENES),
         {w for v in VERBS.values() for w in (v.lemma, v.third, v.ing)},
         {w for v in POSES.values() for w in (v.lemma, v.third, v.ing)}]


def others(seq, x):
    return [y for y in seq if y != x]


# ----------------------------------------------------------------------------------------------- the drawing
def keep_train(scene: Scene, aux) -> Scene:
    """``scene``, or the same layout moved by a whole number of cells (so every relation between entities is kept)
    into the training split, when a change of the drawing moved it to the evaluation one (``scene`` if none does)."""
    if scene.split() == "train":
        return scene
    shifts = [(dr, dc) for dr in range(-GRID + 1, GRID) for dc in range(-GRID + 1, GRID) if (dr, dc) != (0, 0)]
    for k in aux.permutation(len(shifts)):
        dr, dc = shifts[int(k)]
        moved = tuple(replace(e, cell=(e.cell[0] + dr, e.cell[1] + dc)) for e in scene.entities)
        if all(0 <= r < GRID and 0 <= c < GRID for e in moved for r, c in e.cells):
            candidate = replace(scene, entities=moved)
            if candidate.split() == "train":
                return candidate
    return scene


def neutral_verb(scene: Scene, aux) -> Scene:
    """A transitive scene drawn without its verb: the agent in the neutral pose, the object at the neutral place,
    both at a cell drawn by ``aux`` among those free of the other entities (so nothing of the drawing depends on
    the verb or on where the verb had put them)."""
    agent, thing, *rest = scene.entities
    taken = {c for e in rest for c in e.cells}
    cells = agent_cells(NEUTRAL_OFFSET, taken) or agent_cells(NEUTRAL_OFFSET)
    dr, dc = NEUTRAL_OFFSET
    drawn = [replace(scene, entities=(replace(agent, cell=(r, c), pose=NEUTRAL_POSE),
                                      replace(thing, cell=(r + dr, c + dc)), *rest))
             for r, c in (cells[int(k)] for k in aux.permutation(len(cells)))]
    return next((x for x in drawn if x.split() == "train"), None) or keep_train(drawn[0], aux)


def set_scene(scene: Scene, how: str, aux) -> Scene:
    """Knock-in (``how`` = "always"): a scene holding an object drawn in its first object's typical scene;
    knock-out ("never"): in none of its objects' typical scenes (the background kept when already so, else drawn
    by ``aux`` among the others).  Scenes without objects are kept."""
    objects = [e.name for e in scene.entities if not e.is_agent]
    if not objects:
        return scene
    if how == "always":
        background = TYPICAL_SCENE[objects[0]]
    else:
        allowed = [s for s in SCENES if s not in {TYPICAL_SCENE[o] for o in objects}]
        if scene.background in allowed:
            return scene
        options = [scene.with_background(allowed[int(k)]) for k in aux.permutation(len(allowed))]
        return next((x for x in options if x.split() == "train"), None) or keep_train(options[0], aux)
    return scene if background == scene.background else keep_train(scene.with_background(background), aux)


# ----------------------------------------------------------------------------------------------- captions
def verb_free(s: str, o: str, colour=None) -> str:
    """A transitive scene's caption that names the agent and the object, not the verb."""
    return f"{np_(s)} and {np_(o, colour)}"


def no_verb_words(meta: dict, aux) -> tuple[str, list]:
    s, o, colour = meta["s"], meta["o"], meta["colour"]
    negs = [(verb_free(choice(aux, others(AGENTS, s)), o, colour), "subject"),
            (verb_free(s, choice(aux, others(OBJECTS, o)), colour), "object")]
    if colour:
        negs.append((verb_free(s, o, ANTONYMS[colour]), "attribute"))
    return verb_free(s, o, colour), negs


def unpaired_caption(nouns, predicates) -> str:
    return f"{' and '.join(np_(n) for n in nouns)} . {' and '.join(POSES[p].ing for p in predicates)}"


def unpaired(meta: dict, aux) -> tuple[str, list]:
    """Two agents and two predicates named without pairing them: each list in an order of its own (``aux``); the
    negatives swap one noun or one predicate for one not shown, never the pairing."""
    (n1, p1), (n2, p2) = meta["agents"]
    nouns = [[n1, n2], [n2, n1]][int(aux.integers(2))]
    preds = [[p1, p2], [p2, p1]][int(aux.integers(2))]
    absent_n = choice(aux, [a for a in AGENTS if a not in (n1, n2)])
    absent_p = choice(aux, [p for p in POSES if p not in (p1, p2)])
    i, j = int(aux.integers(2)), int(aux.integers(2))
    negs = [(unpaired_caption([absent_n if k == i else n for k, n in enumerate(nouns)], preds), "subject"),
            (unpaired_caption(nouns, [absent_p if k == j else p for k, p in enumerate(preds)]), "verb")]
    return unpaired_caption(nouns, preds), negs


def strip_attributes(caption: str) -> str:
    """``caption`` without its colour, size and pattern words (articles fitted to the word after them)."""
    words = [w for w in caption.split() if w not in ATTRIBUTE_WORDS]
    return " ".join(article(words[k + 1]) if w in ("a", "an") and k + 1 < len(words) else w
                    for k, w in enumerate(words))


def no_attributes(cap: str, negs: list) -> tuple[str, list]:
    cap = strip_attributes(cap)
    out: list[tuple[str, str]] = []
    for c, k in negs:
        c = strip_attributes(c)
        if k != "attribute" and c != cap and c not in [x for x, _ in out]:
            out.append((c, k))
    return cap, out


# ----------------------------------------------------------------------------------------------- noise
def one_slot_swap(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one word swapped for another of the same slot (articles aside): the kind of
    sentence a swap probe offers as the wrong answer."""
    x, y = [[w for w in s.split() if w not in ("a", "an")] for s in (a, b)]
    if len(x) != len(y):
        return False
    diff = [(u, v) for u, v in zip(x, y) if u != v]
    return len(diff) == 1 and any(diff[0][0] in s and diff[0][1] in s for s in SLOTS)


def _nouns(scene: Scene) -> set[str]:
    return {e.name for e in scene.entities}


def _mentioned(caption: str) -> list[str]:
    return [w for w in caption.split() if w in AGENTS or w in OBJECTS]


def cc_noise(scene: Scene, cap: str, aux, other) -> str:
    """One noisy caption of Conceptual Captions' kind for ``scene`` (whose own caption is ``cap``), drawn by ``aux``:
    a named object left out, an object not shown added, one noun replaced by its hypernym, or an unrelated caption
    (``other(aux)``, another scene's caption naming two agents or objects or more, none of this scene's); never a
    one-slot swap of ``cap`` or of any other caption true of the image."""
    named = _mentioned(cap)
    kinds = ["added", "hypernym", "unrelated"] + (["missing"] if len(named) >= 2 else [])
    kind = choice(aux, sorted(kinds))
    if kind == "missing":
        return np_(choice(aux, named))
    if kind == "added":
        return f"{cap} and {np_(choice(aux, [o for o in OBJECTS if o not in _nouns(scene)]))}"
    if kind == "hypernym" and named:
        noun = choice(aux, named)
        words = cap.split()
        k = words.index(noun)
        words[k] = HYPERNYMS[noun]
        if k and words[k - 1] in ("a", "an"):
            words[k - 1] = article(words[k])
        return " ".join(words)
    for _ in range(100):
        # two nouns or more, none shown: then no caption true of the image is one slot away from it
        c = other(aux)
        if len(set(_mentioned(c))) >= 2 and not set(_mentioned(c)) & _nouns(scene):
            return c
    return f"{cap} and {np_(choice(aux, [o for o in OBJECTS if o not in _nouns(scene)]))}"
