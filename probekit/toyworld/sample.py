"""Random scenes and their captions, drawn with the world's statistics; shared by the probe generators and the
toy models' training stream."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import AbstractSet, Sequence

import numpy as np

from .scene import Entity, Scene, footprint
from .vocab import (AGENT_SCENE, AGENTS, COLOURS, GRID, OBJECTS, PATTERNS, PLAUSIBLE_TRIPLES, POSES, SCENES, SIZES,
                    TYPICAL_SCENE, TYPICAL_SCENE_P, VERBS, article)

SPLITS = ("train", "eval")
DISTRACTOR_P = 0.35   # chance of a distractor object, and separately of a distractor agent, in a scene that allows them
CELLS = [(r, c) for r in range(GRID) for c in range(GRID)]
AGENT_CELLS = [(r, c) for (r, c) in CELLS if r >= 1]   # an agent's limbs cell; its bust is in the cell above
# cells a distractor must avoid around an agent, so that it never looks like the object of some verb
_RELATION_OFFSETS = {v.offset for v in VERBS.values() if v.offset is not None} | {(0, -1), (1, 1), (0, 0)}


def rng_for(probe: str, seed: int, split: str) -> np.random.Generator:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    tag = int(hashlib.sha1(f"{probe}/{split}".encode()).hexdigest()[:8], 16)
    return np.random.default_rng([int(seed), tag])


def toy_dir(data_dir: Path, probe: str) -> Path:
    return Path(data_dir) / "toy" / probe


def choice(rng: np.random.Generator, seq, weights=None):
    seq = list(seq)
    p = None if weights is None else np.asarray(weights, float) / np.sum(weights)
    return seq[int(rng.choice(len(seq), p=p))]


def in_split(make, rng: np.random.Generator, split: str, tries: int = 500) -> Scene:
    """Call ``make(rng)`` until the scene it returns belongs to ``split`` (content-hashed, so splits never meet)."""
    for _ in range(tries):
        scene = make(rng)
        if scene.split() == split:
            return scene
    raise RuntimeError(f"could not draw a {split} scene in {tries} tries")


def scene_for(rng: np.random.Generator, anchor: str) -> str:
    """The background: the anchor's typical scene with probability TYPICAL_SCENE_P, otherwise any scene."""
    typical = TYPICAL_SCENE.get(anchor) or AGENT_SCENE.get(anchor)
    assert typical is not None  # every object and agent has a typical scene
    return typical if rng.random() < TYPICAL_SCENE_P else choice(rng, SCENES)


def random_object(rng, name: str | None = None, cell=None, colour=None, size=None, pattern=None) -> Entity:
    return Entity(name or choice(rng, OBJECTS), cell or choice(rng, CELLS), colour=colour or choice(rng, COLOURS),
                  size=size or choice(rng, SIZES, [3, 1]), pattern=pattern or choice(rng, PATTERNS, [3, 1]))


def free_cell(rng, taken: AbstractSet[tuple[int, int]], avoid_around: Sequence[tuple[int, int]] = (),
              agent: bool = False):
    """A cell for a new entity (an agent's limbs cell with ``agent``) whose cells are all free of ``taken`` and not
    where an entity at ``avoid_around`` would act on it or it on them; None when there is none."""
    bad = set()
    for (r, c) in avoid_around:
        bad |= {(r + dr, c + dc) for dr, dc in _RELATION_OFFSETS} | {(r - dr, c - dc) for dr, dc in _RELATION_OFFSETS}
    options = [x for x in (AGENT_CELLS if agent else CELLS)
               if x not in bad and not set(footprint(x, agent)) & set(taken)]
    return choice(rng, options) if options else None


def agent_cells(offset: tuple[int, int],
                taken: AbstractSet[tuple[int, int]] = frozenset()) -> list[tuple[int, int]]:
    """Cells where an agent can stand with its object at ``offset`` inside the grid, off the agent's own two cells,
    none of the three in ``taken``."""
    dr, dc = offset
    out = []
    for (r, c) in AGENT_CELLS:
        body, thing = footprint((r, c), True), (r + dr, c + dc)
        if 0 <= thing[0] < GRID and 0 <= thing[1] < GRID and thing not in body and not ({thing, *body} & set(taken)):
            out.append((r, c))
    return out


# ----------------------------------------------------------------------------------------------- scene makers
def svo_scene(rng, subject: str, verb: str, obj: str, colour=None, distractor: bool = False,
              pose: str | None = None, offset: tuple[int, int] | None = None, background: str | None = None) -> Scene:
    """The agent in the verb's pose (or ``pose``) with the object at the verb's place (or ``offset``); with
    ``distractor``, maybe (p = DISTRACTOR_P each) another object and another agent, in some pose, away from both;
    the background is ``background``, else drawn for the object (``scene_for``)."""
    dr, dc = offset or VERBS[verb].offset  # type: ignore[misc]  # every verb has an offset (only poses lack one)
    r, c = choice(rng, agent_cells((dr, dc)))
    agent = Entity(subject, (r, c), pose=pose or VERBS[verb].pose)
    thing = random_object(rng, obj, (r + dr, c + dc), colour=colour)
    ents = [agent, thing]
    if distractor and rng.random() < DISTRACTOR_P:
        cell = free_cell(rng, {*agent.cells, thing.cell}, [agent.cell])
        if cell:
            ents.append(random_object(rng, choice(rng, [o for o in OBJECTS if o != obj]), cell))
    if distractor and rng.random() < DISTRACTOR_P:
        cell = free_cell(rng, {c for e in ents for c in e.cells}, [agent.cell, thing.cell], agent=True)
        if cell:
            kind = choice(rng, [a for a in AGENTS if a != subject])
            ents.append(Entity(kind, cell, pose=POSES[choice(rng, POSES)].pose))
    return Scene(background or scene_for(rng, obj), tuple(ents))


def agents_scene(rng, agents: list[tuple[str, str]], background=None, distractor: bool = False) -> Scene:
    """Agents (kind, pose name from POSES) in distinct cells, apart where the grid allows; with ``distractor``, an
    object too, away from every agent (so that no agent seems to act on it)."""
    ents: list[Entity] = []
    taken: set[tuple[int, int]] = set()
    for kind, pose in agents:
        cell = free_cell(rng, taken, [e.cell for e in ents], agent=True) or free_cell(rng, taken, agent=True)
        ents.append(Entity(kind, cell, pose=POSES[pose].pose))
        taken |= set(ents[-1].cells)
    if distractor:
        cell = free_cell(rng, taken, [e.cell for e in ents])
        if cell:
            ents.append(random_object(rng, None, cell))
    return Scene(background or scene_for(rng, agents[0][0]), tuple(ents))


def objects_scene(rng, objects: list[Entity | str], background=None) -> Scene:
    ents: list[Entity] = []
    taken: set[tuple[int, int]] = set()
    for o in objects:
        cell = free_cell(rng, taken)
        taken.add(cell)
        ents.append(Entity(o.name, cell, colour=o.colour, size=o.size, pattern=o.pattern) if isinstance(o, Entity)
                    else random_object(rng, o, cell))
    first = ents[0].name
    return Scene(background or scene_for(rng, first), tuple(ents))


# ----------------------------------------------------------------------------------------------- sampling
def sample_svo(rng) -> tuple[str, str, str]:
    """A plausible (subject, verb, object), uniformly: given subject and object the verb is any plausible one."""
    return PLAUSIBLE_TRIPLES[int(rng.integers(len(PLAUSIBLE_TRIPLES)))]


# ----------------------------------------------------------------------------------------------- captions
def np_(word: str, *adjectives: str | None) -> str:
    words = [a for a in adjectives if a] + [word]
    return f"{article(words[0])} {' '.join(words)}"


def svo_caption(subject: str, verb: str, obj: str, progressive: bool = False, adjective: str | None = None) -> str:
    v = VERBS[verb]
    middle = f"is {v.ing}" if progressive else v.third
    return f"{np_(subject)} {middle} {np_(obj, adjective)}"


def pose_caption(subject: str, pose: str, alt: bool = False) -> str:
    v = POSES[pose]
    return f"the {subject} {v.third}" if alt else f"{np_(subject)} is {v.ing}"


def object_caption(e: Entity, which: tuple[str, ...] = ("colour",)) -> str:
    adj = {"colour": e.colour, "size": e.size, "pattern": e.pattern}
    return np_(e.name, *[adj[w] for w in ("size", "colour", "pattern") if w in which])
