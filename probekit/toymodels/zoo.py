"""The toy model zoo: every model's trainer, training stream and the one factor it changes from its parent."""

from __future__ import annotations

from dataclasses import dataclass

from ..scorers.registry import TOY_CHECKPOINTS as CHECKPOINTS, WEIGHTS  # the shipped zoo's folder, a saved member
from ..toyworld import stream


@dataclass(frozen=True)
class Member:
    """One model of the zoo: its trainer, its training stream and what it differs in from its parent."""
    trainer: str                     # "clip", "vilt" or "bert"
    recipe: stream.Recipe = stream.Recipe()
    hard_negatives: bool = False     # clip: add each caption's swap to the texts; vilt: ITM negatives are swaps
    parent: str | None = None        # the model it differs from in one factor
    factor: str = ""                 # that factor, in words


ZOO = {
    "toy-clip": Member("clip", factor="dual encoder, symmetric InfoNCE over in-batch negatives only (how CLIP "
                                      "is trained)"),
    "toy-clip-hardneg": Member("clip", hard_negatives=True, parent="toy-clip",
                               factor="each caption's one-slot swap added to the texts as a hard negative"),
    "toy-clip-unbound": Member("clip", stream.Recipe(unbound=True), True, "toy-clip-hardneg",
                               factor="knock-out: two-agent captions do not say which noun goes with which predicate"),
    "toy-clip-noverb": Member("clip", stream.Recipe(hide_verbs=True), True, "toy-clip-hardneg",
                              factor="knock-out: transitive scenes drawn as a random verb, not the captioned one"),
    "toy-vilt": Member("vilt", factor="single-stream cross-encoder, ITM with random negatives + MLM (how ViLT is "
                                      "pretrained)"),
    "toy-vilt-hardneg": Member("vilt", hard_negatives=True, parent="toy-vilt",
                               factor="ITM negatives are mostly one-slot swaps of the caption (p = 0.85)"),
    "toy-vilt-noisy": Member("vilt", stream.Recipe(noisy=0.3, noisy_swaps=True), parent="toy-vilt",
                             factor="30% of captions loosely related (a one-slot swap of their own, taught as a "
                                    "match) or wrong (another scene's)"),
    "toy-vilt-mismatch": Member("vilt", stream.Recipe(noisy=0.3), parent="toy-vilt",
                                factor="30% of captions wrong (another scene's), never a swap of their own"),
    "toy-vilt-noverb": Member("vilt", stream.Recipe(hide_verbs=True), True, "toy-vilt-hardneg",
                              factor="knock-out: transitive scenes drawn as a random verb, not the captioned one"),
    "toy-bert": Member("bert", factor="text only (blind baseline, perplexity)"),
}
MODELS = tuple(ZOO)

_SAME = {m: ZOO[m] for m in ("toy-clip", "toy-clip-hardneg", "toy-vilt", "toy-vilt-hardneg")}
#: the next zoo (``train-toy --zoo next``): knock-outs that remove information and never caption an image with a
#: probe's negative for it (issue 54), the architecture x objective 2 x 2, and caption noise as a dose-response
NEXT_ZOO = {
    **_SAME,
    "toy-vilt-noverbword": Member("vilt", stream.Recipe(no_verb_words=True), True, "toy-vilt-hardneg",
                                  factor="knock-out: transitive captions never name the verb"),
    "toy-vilt-noverbpose": Member("vilt", stream.Recipe(neutral_verbs=True), True, "toy-vilt-hardneg",
                                  factor="knock-out: transitive scenes drawn in one neutral pose and object place"),
    "toy-vilt-unpaired": Member("vilt", stream.Recipe(unpaired=True), True, "toy-vilt-hardneg",
                                factor="knock-out: two-agent captions name agents and predicates without pairing "
                                       "them"),
    "toy-clip-noattr": Member("clip", stream.Recipe(no_attributes=True), parent="toy-clip",
                              factor="knock-out: captions never name a colour, size or pattern"),
    "toy-clip-scenealways": Member("clip", stream.Recipe(scenes="always"), parent="toy-clip",
                                   factor="knock-in: objects always drawn in their typical scene"),
    "toy-clip-scenenever": Member("clip", stream.Recipe(scenes="never"), parent="toy-clip",
                                  factor="knock-out: objects never drawn in their typical scene"),
    **{f"toy-vilt-cc{round(100 * r)}": Member("vilt", stream.Recipe(cc_noise=r), parent="toy-vilt",
                                              factor=f"{r:.0%} of captions noised as in Conceptual Captions, never "
                                                     f"an own one-slot swap")
       for r in (0.15, 0.3, 0.5)},
    "toy-bert": ZOO["toy-bert"],
}
NEXT_MODELS = tuple(NEXT_ZOO)
#: ``train-toy --zoo``: the tables by name
TABLES = {"shipped": ZOO, "next": NEXT_ZOO}
ALL = {**ZOO, **NEXT_ZOO}   # a name means the same member in every table


def member(name: str) -> Member:
    """The member ``name`` of any table."""
    return ALL[name]


SCRAMBLES, REMOVES = "scrambles", "removes"
#: a knock-out's recipe option -> (the information it takes away, how): still shown and named but paired at random
#: (SCRAMBLES), or never shown or never named (REMOVES, :mod:`probekit.toyworld.knockouts`)
_KNOCKOUTS = {"hide_verbs": ("the verb", SCRAMBLES), "unbound": ("the binding", SCRAMBLES),
              "no_verb_words": ("the verb", REMOVES), "neutral_verbs": ("the verb", REMOVES),
              "unpaired": ("the binding", REMOVES), "no_attributes": ("the attributes", REMOVES)}


def knockout(name: str) -> tuple[str, str] | None:
    """(what the member ``name`` is trained without, SCRAMBLES or REMOVES), from its recipe; None for a member that is
    no knock-out (a knock-in, caption noise or the whole world) and for a name no table holds."""
    if name not in ALL:
        return None
    recipe = member(name).recipe
    found = [v for option, v in _KNOCKOUTS.items() if getattr(recipe, option)]
    found += [("the objects' typical scenes", REMOVES)] if recipe.scenes == "never" else []
    return found[0] if found else None


def shipped(name: str) -> bool:
    """Whether the shipped zoo holds the member ``name``'s trained weights."""
    return (CHECKPOINTS / name / WEIGHTS).is_file()


def untrained_removals(what: str) -> list[str]:
    """The members of any table that remove ``what`` (:func:`knockout`) and that the shipped zoo does not hold."""
    return [name for name in ALL if knockout(name) == (what, REMOVES) and not shipped(name)]


def order(name: str) -> int:
    """Where ``name`` comes in a record: the shipped zoo's order, then the next zoo's members."""
    names = list(ALL)
    return names.index(name) if name in names else len(names)


def chosen(zoo: str, models: list[str] | None) -> list[str]:
    """``train-toy --zoo zoo --models models``: the members to train (all of the table without ``models``)."""
    table = TABLES[zoo]
    if models is None:
        return list(table)
    if set(models) - set(table):
        raise ValueError(f"--models {' '.join(sorted(set(models) - set(table)))}: not in the {zoo} zoo "
                         f"({' '.join(table)})")
    return list(models)


def known(models) -> None:
    """Raise ValueError naming the ``models`` that no table holds."""
    unknown = [m for m in models if m not in ALL]
    if unknown:
        raise ValueError(f"unknown toy model(s) {unknown}; choose from {list(ALL)}")
