"""Scenes of the toy world: a background and entities drawn on a grid with PIL, with an exact mask per entity. An object
fills one cell; an agent stands in two, one above the other: its bust (head and torso, in its kind's colour and size) in
the upper cell and its limbs (the pose, in a colour its kind shares with one other kind) in its own, lower cell, so that
the limbs tell the kind only up to a pair and the bust tells the rest. Boxes are the squares around the masks
(``boxes``) or their tight rectangles (``tight_box``), so they vary with the kind, pose and size of what is drawn.
The train/eval split and the background texture follow from the scene's content, so the same scene is always the
same image; its file name adds the drawing's fingerprint (``drawing``), so a PNG cached by older drawing code is
never reused."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import product
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from ..files import save_png
from .glyphs import draw_agent, draw_object
from .vocab import AGENTS, COLOURS, GRID, IMAGE_SIZE, OBJECTS, PATTERNS, POSES, SCENES, SIZES

EVAL_SHARE = 5  # one scene in EVAL_SHARE (by content hash) belongs to the evaluation split
WORLD = "2"     # the world's version, part of every scene's key and so of its split (the zoo was trained on it)


@dataclass(frozen=True)
class Entity:
    name: str                      # agent kind or object name
    cell: tuple[int, int]          # (row, col); an agent's limbs (its bust is in the cell above)
    pose: str | None = None        # agents only
    colour: str | None = None      # objects only
    size: str = "big"
    pattern: str = "plain"

    @property
    def is_agent(self) -> bool:
        return self.name in AGENTS

    @property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """The cells the entity covers: an agent's bust cell and limbs cell, an object's one cell."""
        return footprint(self.cell, self.is_agent)

    def cell_box(self) -> list[float]:
        """[x, y, w, h] of the entity's cells as fractions of the image size (its drawn box is ``boxes``)."""
        rows = [r for r, _ in self.cells]
        c = self.cell[1]
        return [c / GRID, min(rows) / GRID, 1 / GRID, len(rows) / GRID]


def footprint(cell: tuple[int, int], agent: bool) -> tuple[tuple[int, int], ...]:
    r, c = cell
    return ((r - 1, c), (r, c)) if agent else ((r, c),)


@dataclass(frozen=True)
class Scene:
    background: str
    entities: tuple[Entity, ...] = field(default_factory=tuple)

    def key(self) -> str:
        parts = [f"world{WORLD}", self.background] + [
            f"{e.name}@{e.cell[0]}{e.cell[1]}:{e.pose or ''}:{e.colour or ''}:{e.size}:{e.pattern}"
            for e in self.entities]
        return "|".join(parts)

    def digest(self) -> str:
        return hashlib.sha1(self.key().encode()).hexdigest()[:16]

    def split(self) -> str:
        return "eval" if int(self.digest(), 16) % EVAL_SHARE == 0 else "train"

    def with_background(self, background: str) -> "Scene":
        return replace(self, background=background)

    def occupied(self) -> set[tuple[int, int]]:
        return {c for e in self.entities for c in e.cells}


# ----------------------------------------------------------------------------------------------- backgrounds
def _background(name: str, px: int, rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((px, px, 3), np.float32)
    rows = np.arange(px)[:, None]
    def band(lo, hi, rgb):
        img[(rows >= lo * px).ravel() & (rows < hi * px).ravel()] = rgb
    if name == "park":
        band(0, .25, (170, 210, 240)); band(.25, 1, (125, 190, 105))
    elif name == "beach":
        band(0, .2, (160, 205, 240)); band(.2, .4, (70, 145, 205)); band(.4, 1, (232, 212, 155))
    elif name == "street":
        band(0, .35, (175, 170, 165)); band(.35, 1, (105, 105, 110))
        img[int(.66 * px):int(.66 * px) + max(1, px // 64), ::max(2, px // 8)] = (240, 240, 240)
    elif name == "kitchen":
        band(0, .6, (236, 226, 200)); band(.6, 1, (185, 145, 105))
        img[int(.6 * px):, ::max(2, px // 8)] = (150, 115, 80)
    elif name == "forest":
        band(0, .3, (120, 160, 120)); band(.3, 1, (55, 95, 50))
        img[int(.15 * px):, ::max(2, px // 6)] = (85, 60, 35)
    elif name == "snow":
        band(0, .3, (195, 210, 232)); band(.3, 1, (238, 240, 246))
    elif name == "black":
        pass
    else:
        raise ValueError(f"unknown scene background {name!r}")
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def render(scene: Scene, px: int = IMAGE_SIZE) -> tuple[Image.Image, list[np.ndarray]]:
    """Draw ``scene`` at ``px`` x ``px`` pixels; return the RGB image and one boolean mask per entity."""
    s = px / GRID
    rng = np.random.default_rng(int(scene.digest(), 16) % 2**32)
    img = Image.fromarray(_background(scene.background, px, rng))
    masks: list[np.ndarray] = []
    for e in scene.entities:
        m = Image.new("L", (px, px), 0)
        draws = [(ImageDraw.Draw(img), lambda c: c), (ImageDraw.Draw(m), lambda c: 255)]
        x0, y0 = e.cell[1] * s, e.cell[0] * s
        if e.is_agent:
            draw_agent(draws, e, x0, y0, s, np.random.default_rng([int(scene.digest(), 16) % 2**32, len(masks)]))
        else:
            draw_object(draws, e, x0, y0, s)
        mask = np.asarray(m) > 0
        if not e.is_agent and e.pattern == "striped":
            arr = np.asarray(img).copy()
            stripe = (np.arange(px) // max(1, round(s / 8))) % 2 == 0
            dark = sum(COLOURS[e.colour or "red"]) < 300
            arr[mask & stripe[:, None]] = (250, 250, 250) if dark else (20, 20, 20)
            img = Image.fromarray(arr)
        masks.append(mask)
    # a later entity may cover part of an earlier one: keep each mask to the pixels it still shows
    for i in range(len(masks)):
        for later in masks[i + 1:]:
            masks[i] = masks[i] & ~later
    return img, masks


@lru_cache(maxsize=4096)
def boxes(scene: Scene) -> tuple[tuple[float, float, float, float], ...]:
    """Each entity's box [x, y, w, h] (fractions of the image): the square around the tight box of the pixels it
    shows (centred on it, shifted inside the image), so that a crop keeps the entity's proportions through any
    image processor (the toy models are trained on crops of these boxes)."""
    _, masks = render(scene)
    out = []
    for e, m in zip(scene.entities, masks):
        ys, xs = np.nonzero(m)
        if not len(xs):
            x, y, w, h = e.cell_box()
            out.append((x, y, w, h))
            continue
        side = max(xs.max() + 1 - xs.min(), ys.max() + 1 - ys.min())
        x0 = int(np.clip((xs.min() + xs.max() + 1 - side) // 2, 0, IMAGE_SIZE - side))
        y0 = int(np.clip((ys.min() + ys.max() + 1 - side) // 2, 0, IMAGE_SIZE - side))
        out.append((x0 / IMAGE_SIZE, y0 / IMAGE_SIZE, side / IMAGE_SIZE, side / IMAGE_SIZE))
    return tuple(out)


def box(scene: Scene, i: int) -> list[float]:
    """The square box of ``scene.entities[i]`` (``boxes``) as a list [x, y, w, h]: what a crop takes."""
    return [float(v) for v in boxes(scene)[i]]


def tight_box(scene: Scene, i: int) -> list[float]:
    """The tight rectangle [x, y, w, h] around the pixels ``scene.entities[i]`` shows: what a detector would box,
    and what an ablation blanks (a square around a two-cell agent would reach into its neighbours' cells)."""
    _, masks = render(scene)
    ys, xs = np.nonzero(masks[i])
    if not len(xs):
        return [float(v) for v in scene.entities[i].cell_box()]
    return [float(v) / IMAGE_SIZE for v in (xs.min(), ys.min(), xs.max() + 1 - xs.min(), ys.max() + 1 - ys.min())]


@lru_cache(maxsize=1)
def drawing() -> str:
    """Fingerprint of how scenes are drawn: a hash of the pixels of a gallery that draws every agent kind in every
    pose and every object in every colour, size and pattern, over every background.  It is part of every image's
    file name and not of the scene's key, so changing the drawing code redraws cached images and keeps the split."""
    looks = list(product(OBJECTS, COLOURS, SIZES, PATTERNS))
    h = hashlib.blake2b(digest_size=4)
    for i, (kind, pose) in enumerate(product(AGENTS, sorted(POSES))):
        shown = looks[8 * i % len(looks):][:8]
        objects = tuple(Entity(o, (k // GRID, k % GRID), colour=c, size=z, pattern=p)
                        for k, (o, c, z, p) in enumerate(shown))
        agent = Entity(kind, (GRID - 1, i % GRID), pose=POSES[pose].pose)
        image, _ = render(Scene(SCENES[i % len(SCENES)], objects + (agent,)))
        h.update(image.tobytes())
    return h.hexdigest()


def image_path(scene: Scene, folder: Path) -> Path:
    """Write the scene's PNG into ``folder`` (reusing an existing file drawn the same way) and return its absolute
    path, ``<scene digest>-<drawing>.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / f"{scene.digest()}-{drawing()}.png").resolve()
    if not path.exists():
        save_png(render(scene)[0], path)
    return path


def mask_path(scene: Scene, folder: Path, which: list[int] | None = None) -> Path:
    """Write a binary PNG (white = pixels of the entities ``which``, default all) and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    which = list(range(len(scene.entities))) if which is None else which
    tag = "".join(map(str, which))
    path = (folder / f"{scene.digest()}-{drawing()}_mask{tag}.png").resolve()
    if not path.exists():
        _, masks = render(scene)
        m = np.zeros((IMAGE_SIZE, IMAGE_SIZE), bool)
        for i in which:
            m |= masks[i]
        save_png(Image.fromarray((m * 255).astype(np.uint8)), path)
    return path
