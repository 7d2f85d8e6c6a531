"""The toy world's vocabulary: who (agents), what they do (poses and verbs), with what (objects), how things
look (attributes with antonyms) and where (scenes), plus the statistics the training data follows on purpose."""

from __future__ import annotations

from dataclasses import dataclass

GRID = 4            # the image is a GRID x GRID board of cells; one entity fills one cell
CELL = 16           # pixels per cell at the native size (= the toy models' patch size)
IMAGE_SIZE = GRID * CELL


@dataclass(frozen=True)
class Verb:
    lemma: str
    third: str       # "holds"
    ing: str         # "holding"
    pose: str        # how the agent's body looks
    offset: tuple[int, int] | None = None   # (rows, cols) from the agent's cell to the object's (transitive verbs)


# Agent kinds and their body colours (RGB).
AGENTS = {"man": (25, 25, 110), "woman": (170, 30, 150), "child": (235, 120, 20), "dog": (115, 65, 25)}

# Intransitive predicates (the predicate-noun study): a pose of the agent itself.
POSES = {
    "standing": Verb("stand", "stands", "standing", "stand"),
    "sitting": Verb("sit", "sits", "sitting", "sit"),
    "jumping": Verb("jump", "jumps", "jumping", "jump"),
    "lying": Verb("lie", "lies", "lying", "lie"),
    "running": Verb("run", "runs", "running", "run"),
}

# Transitive verbs: a pose of the agent and where the object is relative to it.
VERBS = {
    "hold": Verb("hold", "holds", "holding", "arm_out", (0, 1)),
    "kick": Verb("kick", "kicks", "kicking", "leg_out", (0, 1)),
    "carry": Verb("carry", "carries", "carrying", "arms_up", (-1, 0)),
    "ride": Verb("ride", "rides", "riding", "ride", (1, 0)),
    "throw": Verb("throw", "throws", "throwing", "arm_up", (-1, 1)),
    "watch": Verb("watch", "watches", "watching", "watch", (0, 2)),
    "chase": Verb("chase", "chases", "chasing", "run", (0, 1)),
}

OBJECTS = ["ball", "cup", "box", "book", "kite", "bike"]

COLOURS = {"red": (220, 30, 30), "green": (30, 150, 40), "blue": (40, 80, 230), "yellow": (240, 210, 20),
           "white": (250, 250, 250), "black": (15, 15, 15)}
SIZES = ["big", "small"]
PATTERNS = ["plain", "striped"]
ATTRIBUTES = {"colour": list(COLOURS), "size": SIZES, "pattern": PATTERNS}
ANTONYMS = {"red": "green", "green": "red", "blue": "yellow", "yellow": "blue", "white": "black",
            "black": "white", "big": "small", "small": "big", "plain": "striped", "striped": "plain"}

SCENES = ["park", "beach", "street", "kitchen"]

# --- statistics set on purpose -------------------------------------------------------------------------------
# Which (subject, verb, object) can happen at all.  Probe-R's "unlikely" swaps are exactly the ones outside it.
PLAUSIBLE_SUBJECTS = {
    "hold": ["man", "woman", "child"], "kick": ["man", "woman", "child"], "carry": ["man", "woman", "child"],
    "ride": ["man", "woman", "child"], "throw": ["man", "woman", "child"],
    "watch": ["man", "woman", "child", "dog"], "chase": ["child", "dog"],
}
# Verb -> objects with weights: the language prior a text-only model can exploit (kick mostly balls ...).
PLAUSIBLE_OBJECTS = {
    "hold": {"cup": 3, "book": 3, "ball": 2, "box": 1, "kite": 1},
    "kick": {"ball": 4, "box": 1},
    "carry": {"box": 4, "book": 2, "cup": 1, "ball": 1},
    "ride": {"bike": 1},
    "throw": {"ball": 4, "box": 1},
    "watch": {o: 1 for o in OBJECTS},
    "chase": {"ball": 3, "kite": 2, "bike": 1},
}
# Object -> its typical scene; training scenes use it with probability TYPICAL_SCENE_P, otherwise any scene.
TYPICAL_SCENE = {"ball": "park", "kite": "beach", "bike": "street", "box": "street", "cup": "kitchen",
                 "book": "kitchen"}
TYPICAL_SCENE_P = 0.8
# Agent -> its typical scene (for scenes without objects).
AGENT_SCENE = {"man": "street", "woman": "park", "child": "beach", "dog": "park"}

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FUNCTION_WORDS = ["a", "an", "the", "is", "and", "in", "of", "photo", "."]


def plausible(subject: str, verb: str, obj: str) -> bool:
    return subject in PLAUSIBLE_SUBJECTS[verb] and obj in PLAUSIBLE_OBJECTS[verb]


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
