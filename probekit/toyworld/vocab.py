"""The toy world's vocabulary: who (agents), what they do (poses and verbs), with what (objects), how things
look (attributes with antonyms) and where (scenes), plus the statistics the training data follows on purpose."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

GRID = 4            # the image is a GRID x GRID board of cells; an object fills one, an agent two (bust over limbs)
CELL = 16           # pixels per cell at the native size (= the toy models' patch size)
IMAGE_SIZE = GRID * CELL


@dataclass(frozen=True)
class Verb:
    lemma: str
    third: str       # "holds"
    ing: str         # "holding"
    pose: str        # how the agent's body looks
    offset: tuple[int, int] | None = None   # (rows, cols) from the agent's (limbs) cell to the object's (transitive)


# Agent kinds: body colour (RGB), silhouette ("human" or "animal") and scale (the child-sized kinds are smaller).
AGENTS = {"man": (25, 25, 110), "woman": (170, 30, 150), "boy": (235, 120, 20), "girl": (20, 150, 150),
          "dog": (115, 65, 25), "cat": (120, 120, 120)}
SILHOUETTE = {"man": "human", "woman": "human", "boy": "human", "girl": "human", "dog": "animal", "cat": "animal"}
SCALE = {"man": 1.0, "woman": 1.0, "boy": 0.72, "girl": 0.72, "dog": 1.0, "cat": 0.72}
DRESSED = {"woman", "girl"}

# Intransitive predicates (the predicate-noun study): a pose of the agent itself.  Close pairs on purpose:
# standing/walking/waving differ in one or two limbs, running/walking in the stride.
_POSE_FORMS = [("stand", "stands", "standing"), ("sit", "sits", "sitting"), ("jump", "jumps", "jumping"),
               ("lie", "lies", "lying"), ("run", "runs", "running"), ("wave", "waves", "waving"),
               ("kneel", "kneels", "kneeling"), ("walk", "walks", "walking")]
POSES = {ing: Verb(lemma, third, ing, lemma) for lemma, third, ing in _POSE_FORMS}

# Transitive verbs: one of three poses plus where the object is relative to the agent's limbs (two rows up is above
# its head, one row up beside it).  Each pose carries eight verbs that differ only in the object's place, and each
# place three verbs that differ only in the pose (standing and walking differ in the stride): a model that reads
# the pose but not the place narrows a masked verb to eight, more than top-5 holds (``pose_only_topk``).
_PLACES = [(0, 1), (0, 2), (-2, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, 0)]
_VERB_FORMS = {
    "stand": [("hold", "holds", "holding"), ("watch", "watches", "watching"), ("carry", "carries", "carrying"),
              ("touch", "touches", "touching"), ("drop", "drops", "dropping"), ("show", "shows", "showing"),
              ("lift", "lifts", "lifting"), ("read", "reads", "reading")],
    "walk": [("push", "pushes", "pushing"), ("follow", "follows", "following"), ("catch", "catches", "catching"),
             ("pull", "pulls", "pulling"), ("fetch", "fetches", "fetching"), ("throw", "throws", "throwing"),
             ("drag", "drags", "dragging"), ("kick", "kicks", "kicking")],
    "kneel": [("clean", "cleans", "cleaning"), ("chase", "chases", "chasing"), ("hit", "hits", "hitting"),
              ("fix", "fixes", "fixing"), ("wash", "washes", "washing"), ("grab", "grabs", "grabbing"),
              ("eat", "eats", "eating"), ("ride", "rides", "riding")],
}
VERBS = {lemma: Verb(lemma, third, ing, pose, place)
         for pose, forms in _VERB_FORMS.items() for (lemma, third, ing), place in zip(forms, _PLACES)}


def verb_grid() -> tuple[int, int]:
    """(poses, places of the object) the transitive verbs cross: each verb is one pose with one place."""
    return len({v.pose for v in VERBS.values()}), len({v.offset for v in VERBS.values()})


OBJECTS = ["ball", "cup", "box", "book", "kite", "bike", "hat", "bag", "chair", "lamp", "bottle", "shoe"]

COLOURS = {"red": (220, 30, 30), "green": (30, 150, 40), "blue": (40, 80, 230), "yellow": (240, 210, 20),
           "white": (250, 250, 250), "black": (15, 15, 15)}
SIZES = ["big", "small"]
PATTERNS = ["plain", "striped"]
ATTRIBUTES = {"colour": list(COLOURS), "size": SIZES, "pattern": PATTERNS}
ANTONYMS = {"red": "green", "green": "red", "blue": "yellow", "yellow": "blue", "white": "black",
            "black": "white", "big": "small", "small": "big", "plain": "striped", "striped": "plain"}

SCENES = ["park", "beach", "street", "kitchen", "forest", "snow"]

# --- statistics set on purpose -------------------------------------------------------------------------------
# Which (subject, verb, object) can happen at all: every verb has exactly one object it never takes and every agent
# two verbs it never does.  Probe-R's "unlikely" swaps are exactly the triples outside; inside, triples are drawn
# uniformly, so given its subject and object a masked verb is one of 20-21 equally likely verbs (the stated prior,
# ``prior_topk``) and no caption gives it away.
IMPLAUSIBLE_OBJECT = {v: OBJECTS[i % len(OBJECTS)] for i, v in enumerate(sorted(VERBS))}
IMPLAUSIBLE_VERBS = {"man": {"drop", "drag"}, "woman": {"kick", "hit"}, "boy": {"wash", "clean"},
                     "girl": {"fix", "lift"}, "dog": {"read", "throw"}, "cat": {"ride", "show"}}
# Object -> its typical scene; training scenes use it with probability TYPICAL_SCENE_P, otherwise any scene.
TYPICAL_SCENE = {"ball": "park", "chair": "park", "kite": "beach", "hat": "beach", "bike": "street", "bag": "street",
                 "cup": "kitchen", "bottle": "kitchen", "book": "forest", "shoe": "forest", "box": "snow",
                 "lamp": "snow"}
TYPICAL_SCENE_P = 0.8
# Agent -> its typical scene (for scenes without objects).
AGENT_SCENE = {"man": "street", "woman": "park", "boy": "beach", "girl": "forest", "dog": "park", "cat": "kitchen"}

# Hypernyms for caption noise of Conceptual Captions' kind (``stream.Recipe(cc_noise=...)``): not in ``words()``, so
# the shipped zoo's tokenizer is unchanged; a member trained on that noise appends them (``HYPERNYM_WORDS``).
HYPERNYMS = {"man": "person", "woman": "person", "boy": "person", "girl": "person", "dog": "animal", "cat": "animal",
             "ball": "toy", "kite": "toy", "cup": "container", "bottle": "container", "box": "container",
             "bag": "container", "chair": "furniture", "lamp": "furniture", "bike": "vehicle", "hat": "clothing",
             "shoe": "clothing", "book": "thing"}
HYPERNYM_WORDS = tuple(dict.fromkeys(HYPERNYMS.values()))

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FUNCTION_WORDS = ["a", "an", "the", "is", "and", "in", "of", "photo", "."]


def plausible(subject: str, verb: str, obj: str) -> bool:
    return verb not in IMPLAUSIBLE_VERBS[subject] and IMPLAUSIBLE_OBJECT[verb] != obj


PLAUSIBLE_TRIPLES = [t for t in product(AGENTS, sorted(VERBS), OBJECTS) if plausible(*t)]


def prior_topk(k: int) -> float:
    """The best top-k a text-only model can reach on a masked transitive verb of a uniformly drawn plausible triple:
    given subject and object, the verb is uniform over the plausible ones, so it is k / their number, averaged."""
    return _best_topk([sum(plausible(s, v, o) for v in VERBS) for s, _, o in PLAUSIBLE_TRIPLES], k)


def pose_only_topk(k: int) -> float:
    """The best top-k of a model that reads the agent's pose exactly but not where the object is: given subject,
    object and pose, the verb is uniform over the plausible verbs of that pose (at best k / their number)."""
    return _best_topk([sum(plausible(s, w, o) and VERBS[w].pose == VERBS[v].pose for w in VERBS)
                       for s, v, o in PLAUSIBLE_TRIPLES], k)


def _best_topk(counts: list[int], k: int) -> float:
    """The mean top-k of a guess uniform over each item's ``counts[i]`` candidates: k / count, at most 1."""
    return sum(min(1.0, k / c) for c in counts) / len(counts)


def words() -> list[str]:
    """Every word a toy caption can contain (the toy tokenizers' vocabulary, special tokens excluded)."""
    out = list(FUNCTION_WORDS) + list(AGENTS) + OBJECTS + list(COLOURS) + SIZES + PATTERNS + SCENES
    for v in list(POSES.values()) + list(VERBS.values()):
        out += [v.lemma, v.third, v.ing]
    seen, uniq = set(), []
    for w in out:
        if w not in seen:
            seen.add(w)
            uniq.append(w)
    return uniq


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
