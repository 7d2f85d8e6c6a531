"""Scenes of the toy world: a background and entities that are each drawn inside one grid cell, with PIL, with an
exact mask per entity; boxes are the squares around those masks (``boxes``), so they vary with the kind, pose
and size of what is drawn.  The file name, the train/eval split and the background texture follow from the
scene's content, so the same scene is always the same image."""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from .vocab import AGENTS, COLOURS, DRESSED, GRID, IMAGE_SIZE, SCALE, SILHOUETTE

EVAL_SHARE = 5  # one scene in EVAL_SHARE (by content hash) belongs to the evaluation split


@dataclass(frozen=True)
class Entity:
    name: str                      # agent kind or object name
    cell: tuple[int, int]          # (row, col)
    pose: str | None = None        # agents only
    colour: str | None = None      # objects only
    size: str = "big"
    pattern: str = "plain"

    @property
    def is_agent(self) -> bool:
        return self.name in AGENTS

    def cell_box(self) -> list[float]:
        """[x, y, w, h] of the entity's cell as fractions of the image size (its drawn box is ``boxes``)."""
        r, c = self.cell
        return [c / GRID, r / GRID, 1 / GRID, 1 / GRID]


@dataclass(frozen=True)
class Scene:
    background: str
    entities: tuple[Entity, ...] = field(default_factory=tuple)

    def key(self) -> str:
        parts = [self.background] + [
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
        return {e.cell for e in self.entities}


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


# ----------------------------------------------------------------------------------------------- glyphs
# Stick figures in unit cell coordinates: head (x, y, r) and line segments; the woman's body is a dress.
_HUMAN = {
    "stand": ((.5, .17, .13), [((.5, .3), (.5, .62)), ((.5, .38), (.28, .58)), ((.5, .38), (.72, .58)),
                               ((.5, .62), (.35, .97)), ((.5, .62), (.65, .97))]),
    "sit": ((.4, .3, .13), [((.4, .43), (.4, .72)), ((.4, .5), (.65, .6)), ((.4, .72), (.78, .72)),
                            ((.78, .72), (.78, .97))]),
    "jump": ((.5, .1, .12), [((.5, .22), (.5, .5)), ((.5, .28), (.18, .04)), ((.5, .28), (.82, .04)),
                             ((.5, .5), (.18, .74)), ((.5, .5), (.82, .74))]),
    "lie": ((.12, .78, .1), [((.22, .8), (.62, .8)), ((.35, .8), (.45, .95)), ((.62, .8), (.97, .72)),
                             ((.62, .8), (.97, .9))]),
    "run": ((.6, .17, .13), [((.55, .3), (.45, .6)), ((.53, .38), (.82, .46)), ((.53, .38), (.22, .5)),
                             ((.45, .6), (.12, .85)), ((.45, .6), (.75, .97))]),
    "wave": ((.5, .17, .13), [((.5, .3), (.5, .62)), ((.5, .38), (.28, .58)), ((.5, .38), (.8, .04)),
                              ((.5, .62), (.35, .97)), ((.5, .62), (.65, .97))]),
    "kneel": ((.45, .36, .12), [((.45, .48), (.45, .74)), ((.45, .54), (.25, .72)), ((.45, .54), (.68, .7)),
                                ((.45, .74), (.75, .76)), ((.75, .76), (.75, .97)), ((.45, .74), (.3, .97))]),
    "walk": ((.55, .17, .13), [((.52, .3), (.5, .62)), ((.52, .38), (.7, .56)), ((.52, .38), (.36, .56)),
                               ((.5, .62), (.72, .97)), ((.5, .62), (.4, .97))]),
    "arm_out": ((.45, .17, .13), [((.45, .3), (.45, .62)), ((.45, .4), (1., .4)), ((.45, .38), (.25, .58)),
                                  ((.45, .62), (.3, .97)), ((.45, .62), (.6, .97))]),
    "leg_out": ((.4, .17, .13), [((.4, .3), (.4, .62)), ((.4, .38), (.2, .55)), ((.4, .38), (.6, .55)),
                                 ((.4, .62), (1., .8)), ((.4, .62), (.35, .97))]),
    "arms_up": ((.5, .3, .12), [((.5, .42), (.5, .7)), ((.5, .45), (.28, .0)), ((.5, .45), (.72, .0)),
                                ((.5, .7), (.35, .97)), ((.5, .7), (.65, .97))]),
    "arm_up": ((.4, .25, .12), [((.4, .37), (.4, .66)), ((.4, .42), (.98, .02)), ((.4, .42), (.2, .62)),
                                ((.4, .66), (.25, .97)), ((.4, .66), (.55, .97))]),
    "ride": ((.5, .2, .12), [((.5, .33), (.5, .7)), ((.5, .42), (.85, .62)), ((.5, .7), (.22, 1.)),
                             ((.5, .7), (.78, 1.))]),
    "watch": ((.45, .17, .13), [((.45, .3), (.45, .62)), ((.45, .38), (.78, .32)), ((.78, .32), (.6, .1)),
                                ((.45, .38), (.25, .58)), ((.45, .62), (.3, .97)), ((.45, .62), (.6, .97))]),
}
_DOG = {
    "stand": ((.84, .33, .12), [((.18, .52), (.74, .52)), ((.24, .52), (.22, .88)), ((.34, .52), (.36, .88)),
                                ((.62, .52), (.6, .88)), ((.72, .52), (.74, .88)), ((.18, .52), (.06, .36))]),
    "sit": ((.7, .25, .12), [((.32, .78), (.6, .42)), ((.6, .45), (.62, .92)), ((.36, .78), (.55, .92)),
                             ((.3, .8), (.1, .92))]),
    "jump": ((.86, .14, .12), [((.2, .34), (.76, .3)), ((.26, .34), (.08, .62)), ((.36, .34), (.2, .64)),
                               ((.66, .31), (.84, .6)), ((.74, .3), (.95, .55)), ((.2, .34), (.06, .18))]),
    "lie": ((.86, .72, .11), [((.14, .82), (.76, .82)), ((.3, .86), (.5, .94)), ((.6, .86), (.8, .94)),
                              ((.14, .82), (.04, .7))]),
    "run": ((.86, .3, .12), [((.18, .5), (.74, .44)), ((.24, .5), (.04, .78)), ((.3, .5), (.14, .85)),
                             ((.66, .46), (.9, .74)), ((.7, .45), (.97, .66)), ((.18, .5), (.05, .42))]),
    "wave": ((.84, .33, .12), [((.18, .52), (.74, .52)), ((.24, .52), (.22, .88)), ((.34, .52), (.36, .88)),
                               ((.62, .52), (.6, .88)), ((.72, .52), (.95, .3)), ((.18, .52), (.06, .36))]),
    "kneel": ((.84, .56, .12), [((.18, .72), (.74, .7)), ((.24, .72), (.18, .92)), ((.34, .72), (.38, .92)),
                                ((.62, .7), (.58, .92)), ((.72, .7), (.82, .92)), ((.18, .72), (.06, .58))]),
    "walk": ((.84, .3, .12), [((.18, .5), (.74, .5)), ((.24, .5), (.14, .88)), ((.34, .5), (.42, .88)),
                              ((.62, .5), (.54, .88)), ((.72, .5), (.82, .88)), ((.18, .5), (.06, .3))]),
}


def _draw_agent(draws, e: Entity, x0: float, y0: float, s: float) -> None:
    animal = SILHOUETTE[e.name] == "animal"
    table = _DOG if animal else _HUMAN
    (hx, hy, hr), segs = table[e.pose or "stand"]
    k = SCALE[e.name]
    oy = 1.0 - k   # a smaller kind stands on the same ground
    P = lambda u, v: (x0 + (0.5 + (u - 0.5) * k) * s, y0 + (oy + v * k) * s)
    w = max(1, round(s / 8 * k * (1.5 if animal else 1)))
    for d, col in draws:
        c = col(AGENTS[e.name])
        for (a, b) in segs:
            d.line([P(*a), P(*b)], fill=c, width=w if (not animal or a != segs[0][0]) else w + 1)
        if e.name in DRESSED and e.pose not in ("lie",):
            (ax, ay), (bx, by) = segs[0]
            dx, dy = bx - ax, by - ay
            n = math.hypot(dx, dy) or 1
            px_, py_ = -dy / n * .2, dx / n * .2
            d.polygon([P(ax, ay), P(bx + px_, by + py_), P(bx - px_, by - py_)], fill=c)
        cx, cy = P(hx, hy)
        r = hr * s * k
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=c)


def _draw_object(draws, e: Entity, x0: float, y0: float, s: float) -> None:
    lo, hi = (0.04, 0.96) if e.size == "big" else (0.3, 0.7)
    P = lambda u, v: (x0 + (lo + u * (hi - lo)) * s, y0 + (lo + v * (hi - lo)) * s)
    w = max(1, round(s * (hi - lo) / 7))
    for d, col in draws:
        c = col(COLOURS[e.colour or "red"])
        if e.name == "ball":
            d.ellipse([*P(0, 0), *P(1, 1)], fill=c)
        elif e.name == "cup":
            d.polygon([P(0, .1), P(.72, .1), P(.62, 1), P(.1, 1)], fill=c)
            d.line([P(.66, .3), P(1, .3), P(1, .7), P(.6, .7)], fill=c, width=w)
        elif e.name == "box":
            d.rectangle([*P(0, .15), *P(1, 1)], fill=c)
            d.polygon([P(0, .15), P(.25, 0), P(1, 0), P(1, .15)], fill=c)
        elif e.name == "book":
            d.rectangle([*P(.2, 0), *P(.8, 1)], fill=c)
            d.line([P(.3, 0), P(.3, 1)], fill=col((128, 128, 128)), width=w)
        elif e.name == "kite":
            d.polygon([P(.5, 0), P(.9, .35), P(.5, .75), P(.1, .35)], fill=c)
            d.line([P(.5, .75), P(.35, .88), P(.6, 1)], fill=c, width=w)
        elif e.name == "bike":
            for cx in (.2, .8):
                d.ellipse([*P(cx - .2, .55), *P(cx + .2, .95)], outline=c, width=w)
            d.line([P(.2, .75), P(.45, .4), P(.8, .75), P(.45, .75), P(.2, .75)], fill=c, width=w)
            d.line([P(.45, .4), P(.4, .25), P(.7, .25), P(.8, .75)], fill=c, width=w)
        elif e.name == "hat":
            d.rectangle([*P(0, .72), *P(1, .88)], fill=c)
            d.rectangle([*P(.22, .2), *P(.78, .74)], fill=c)
        elif e.name == "bag":
            d.rectangle([*P(.05, .4), *P(.95, 1)], fill=c)
            d.arc([*P(.25, .05), *P(.75, .7)], 180, 360, fill=c, width=w)
        elif e.name == "chair":
            d.rectangle([*P(.1, 0), *P(.25, 1)], fill=c)
            d.rectangle([*P(.1, .5), *P(.9, .62)], fill=c)
            d.line([P(.82, .6), P(.82, 1)], fill=c, width=w)
        elif e.name == "lamp":
            d.polygon([P(.25, 0), P(.75, 0), P(.95, .4), P(.05, .4)], fill=c)
            d.line([P(.5, .4), P(.5, .92)], fill=c, width=w)
            d.rectangle([*P(.2, .9), *P(.8, 1)], fill=c)
        elif e.name == "bottle":
            d.rectangle([*P(.25, .35), *P(.75, 1)], fill=c)
            d.rectangle([*P(.4, 0), *P(.6, .38)], fill=c)
        elif e.name == "shoe":
            d.polygon([P(0, .35), P(.4, .35), P(.5, .65), P(1, .75), P(1, 1), P(0, 1)], fill=c)
        else:
            raise ValueError(f"unknown object {e.name!r}")


def render(scene: Scene, px: int = IMAGE_SIZE) -> tuple[Image.Image, list[np.ndarray]]:
    """Draw ``scene`` at ``px`` x ``px`` pixels; return the RGB image and one boolean mask per entity."""
    s = px / GRID
    rng = np.random.default_rng(int(scene.digest(), 16) % 2**32)
    img = Image.fromarray(_background(scene.background, px, rng))
    masks = []
    for e in scene.entities:
        m = Image.new("L", (px, px), 0)
        draws = [(ImageDraw.Draw(img), lambda c: c), (ImageDraw.Draw(m), lambda c: 255)]
        x0, y0 = e.cell[1] * s, e.cell[0] * s
        (_draw_agent if e.is_agent else _draw_object)(draws, e, x0, y0, s)
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
            out.append(tuple(e.cell_box()))
            continue
        side = max(xs.max() + 1 - xs.min(), ys.max() + 1 - ys.min())
        x0 = int(np.clip((xs.min() + xs.max() + 1 - side) // 2, 0, IMAGE_SIZE - side))
        y0 = int(np.clip((ys.min() + ys.max() + 1 - side) // 2, 0, IMAGE_SIZE - side))
        out.append((x0 / IMAGE_SIZE, y0 / IMAGE_SIZE, side / IMAGE_SIZE, side / IMAGE_SIZE))
    return tuple(out)


def box(scene: Scene, i: int) -> list[float]:
    """The tight box of ``scene.entities[i]`` as a list [x, y, w, h]."""
    return [float(v) for v in boxes(scene)[i]]


def image_path(scene: Scene, folder: Path) -> Path:
    """Write the scene's PNG into ``folder`` (reusing an existing file) and return its absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / f"{scene.digest()}.png").resolve()
    if not path.exists():
        img, _ = render(scene)
        tmp = path.with_suffix(".tmp.png")
        img.save(tmp)
        tmp.replace(path)
    return path


def mask_path(scene: Scene, folder: Path, which: list[int] | None = None) -> Path:
    """Write a binary PNG (white = pixels of the entities ``which``, default all) and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    which = list(range(len(scene.entities))) if which is None else which
    tag = "".join(map(str, which))
    path = (folder / f"{scene.digest()}_mask{tag}.png").resolve()
    if not path.exists():
        _, masks = render(scene)
        m = np.zeros((IMAGE_SIZE, IMAGE_SIZE), bool)
        for i in which:
            m |= masks[i]
        tmp = path.with_suffix(".tmp.png")
        Image.fromarray((m * 255).astype(np.uint8)).save(tmp)
        tmp.replace(path)
    return path
