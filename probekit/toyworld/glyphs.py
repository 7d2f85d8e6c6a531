"""How the toy world's entities look, drawn with PIL into one or two cells of the grid: an agent's bust (head and
torso in its kind's colour, shape and size) over its limbs (the pose's stick figure in the colour its kind shares
with one other kind, its joints jittered per drawing), and the twelve objects."""

from __future__ import annotations

import numpy as np

from .vocab import AGENTS, COLOURS, DRESSED, SCALE, SILHOUETTE

#: the limbs' colour of each kind: three colours, each worn by two kinds, so that the limbs alone narrow the kind to
#: two, and telling those two apart needs the bust (binding across two patches; ``same_limbs``)
LIMBS = {"man": (45, 45, 45), "girl": (45, 45, 45), "woman": (150, 25, 25), "dog": (150, 25, 25),
         "boy": (90, 30, 140), "cat": (90, 30, 140)}
JITTER = 0.1           # each joint of a pose moves by up to this share of a cell, drawn per scene and agent


# Stick figures of the poses in unit cell coordinates: where the neck joins (x, y, r) and the limbs' segments.
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
    # the transitive knock-out's pose (stream.Recipe(neutral_verbs=True)): arms down, feet together
    "neutral": ((.5, .17, .13), [((.5, .3), (.5, .62)), ((.5, .38), (.4, .64)), ((.5, .38), (.6, .64)),
                                 ((.5, .62), (.45, .97)), ((.5, .62), (.55, .97))]),
    "watch": ((.45, .17, .13), [((.45, .3), (.45, .62)), ((.45, .38), (.78, .32)), ((.78, .32), (.6, .1)),
                                ((.45, .38), (.25, .58)), ((.45, .62), (.3, .97)), ((.45, .62), (.6, .97))]),
}
# Busts in unit cell coordinates (before the kind's scale, standing on the cell's floor): a head and a torso (a dress
# for the dressed kinds) for people; a head with ears and a chest for animals.
def _draw_bust(d, c, kind: str, P) -> None:
    if SILHOUETTE[kind] == "animal":
        d.polygon([P(.22, .42), P(.3, .08), P(.46, .32)], fill=c)
        d.polygon([P(.54, .32), P(.7, .08), P(.78, .42)], fill=c)
        d.ellipse([*P(.24, .2), *P(.76, .66)], fill=c)
        d.ellipse([*P(.3, .6), *P(.7, 1.)], fill=c)
        return
    d.ellipse([*P(.32, .06), *P(.68, .44)], fill=c)
    if kind in DRESSED:
        d.polygon([P(.5, .42), P(.16, 1.), P(.84, 1.)], fill=c)
    else:
        d.rectangle([*P(.28, .5), *P(.72, 1.)], fill=c)


def draw_agent(draws, e, x0: float, y0: float, s: float, rng: np.random.Generator) -> None:
    """The bust in the cell above (x0, y0 - s), in the kind's colour and scale; the pose's limbs in the agent's own
    cell: the same stick figure for every kind, in the colour LIMBS gives the kind and one other, so that the limbs
    tell the kind only up to that pair (the pose table's head is where the neck joins).  Every joint moves by up to
    JITTER (``rng``), so that no two drawings of a pose are the same."""
    (hx, hy, _), segs = _HUMAN[e.pose or "stand"]
    joints = sorted({(hx, hy), *(p for seg in segs for p in seg)})
    moved = dict(zip(joints, (tuple(p + rng.uniform(-JITTER, JITTER, 2)) for p in joints)))
    (hx, hy), segs = moved[(hx, hy)], [(moved[a], moved[b]) for a, b in segs]
    k = SCALE[e.name]
    bust = lambda u, v: (x0 + (0.5 + (u - 0.5) * k) * s, y0 - s + (1.0 - k + v * k) * (s - 1))   # inside its cell
    w = max(1, round(s / 8))
    m = (w / 2 + 0.5) / s   # a stroke's width stays inside the limbs' cell, so a box never reaches a neighbour's
    limb = lambda u, v: (x0 + min(max(u, m), 1 - m) * s, y0 + min(max(v, m), 1 - m) * s)
    for d, col in draws:
        _draw_bust(d, col(AGENTS[e.name]), e.name, bust)
        c = col(LIMBS[e.name])
        d.line([limb(.5, 0.), limb(hx, hy)], fill=c, width=w)
        for (a, b) in segs:
            d.line([limb(*a), limb(*b)], fill=c, width=w)


def draw_object(draws, e, x0: float, y0: float, s: float) -> None:
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


def same_limbs(a: str, b: str) -> bool:
    """Whether kinds ``a`` and ``b`` wear the same limbs' colour: then only their busts tell which pose is whose."""
    return LIMBS[a] == LIMBS[b]
