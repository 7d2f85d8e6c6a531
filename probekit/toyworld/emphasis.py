"""More of the examples the two hard sub-probes need (``stream.Recipe.emphasis``), the rest of the stream as it was.

The hard sub-probes are (a) predicate-noun pairs whose two agents wear the same limbs, so that only the busts in the
patch above tell whose pose is whose, and (b) verb negatives told apart only by where the object is (the same pose).
In the whole world's stream 20% of two-agent scenes have look-alike agents (3 of the 15 pairs of kinds) and 7 of
a transitive verb's 23 others share its pose.  With ``emphasis`` = h, a two-agent scene's second agent becomes, with
probability h, a kind that wears the first one's limbs (same cell and pose: only its bust changes; the binding
negatives follow), and a transitive example's verb negative becomes, with probability h, a verb of the same pose
(a caption only: the image is unchanged).  The draws use the recipe's own generator, so the other examples and
every draw of the stream's generator stay as they were.
"""

from __future__ import annotations

from dataclasses import replace

from .glyphs import same_limbs
from .sample import choice, pose_caption, svo_caption
from .vocab import AGENTS, VERBS


def emphasise(kind: str, scene, cap: str, negs: list, meta: dict, aux, share: float) -> tuple:
    """The example (scene, caption, negatives) with the hard cases made more frequent (see the module)."""
    if kind == "pose_pair" and aux.random() < share:
        (n1, p1), (n2, p2) = meta["agents"]
        alike = [k for k in AGENTS if k != n1 and same_limbs(k, n1)]
        if n2 not in alike:
            n2 = choice(aux, alike)
            first, second, *rest = scene.entities
            scene = replace(scene, entities=(first, replace(second, name=n2), *rest))
            binding = [pose_caption(n2, p1, meta["alt"]), pose_caption(n1, p2, meta["alt"])]
            others = [(c, k) for c, k in negs if k != "binding" and c not in binding]
            negs = [(c, "binding") for c in binding] + others
            meta["agents"] = [(n1, p1), (n2, p2)]
    if kind == "svo" and aux.random() < share:
        s, v, o = meta["s"], meta["v"], meta["o"]
        same_pose = [w for w in VERBS if w != v and VERBS[w].pose == VERBS[v].pose]
        wrong = svo_caption(s, choice(aux, same_pose), o, meta["prog"], meta["colour"])
        negs = [(wrong, k) if k == "verb" else (c, k) for c, k in negs]
    return scene, cap, negs
