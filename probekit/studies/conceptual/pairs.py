"""The pairs of rows the conceptual chapter compares for each model on Probe-R and Probe-C, with the sentence of
each verdict (read by :mod:`probekit.studies.conceptual.claims`)."""

from __future__ import annotations

from probekit.claims import HIGHER, LOWER, UNRESOLVED, Templates
from probekit.studies.lab import BY_CONSTRUCTION

#: per probe, the pairs of its rows (subset, metric) compared for each model: (topic, a, b, the sentence of each
#: verdict); a pair with a :data:`~probekit.studies.lab.BY_CONSTRUCTION` sentence compares two concepts' difficulty,
#: decided by construction on drawn items (the toy world)
PAIRS: dict[str, list[tuple[str, tuple[str, str], tuple[str, str], Templates]]] = {
    "probe-r": [("subject vs predicate swap", ("subject_swap", "acc"), ("predicate_swap", "acc"), {
        HIGHER: "`{model}` is more accurate on subject swaps ({a}) than on predicate swaps ({b}), as the paper's "
                "models are.",
        LOWER: "`{model}` is less accurate on subject swaps ({a}) than on predicate swaps ({b}), unlike the paper's "
               "models.",
        UNRESOLVED: "`{model}`: subject swaps ({a}) and predicate swaps ({b}) are not resolved apart at this n.",
        BY_CONSTRUCTION: "`{model}`: subject swaps {a}, predicate swaps {b}; which is harder is decided by "
                         "construction, by how unlike the toy world draws two agents and two poses."})],
    "probe-c": [("object vs composition", ("object", "group"), ("composition", "group"), {
        HIGHER: "`{model}`: the group score is higher on object swaps ({a}) than on composition swaps ({b}), as in "
                "the paper.",
        LOWER: "`{model}`: the group score is lower on object swaps ({a}) than on composition swaps ({b}), unlike "
               "the paper.",
        UNRESOLVED: "`{model}`: object swaps ({a}) and composition swaps ({b}) are not resolved apart at this n.",
        BY_CONSTRUCTION: "`{model}`: group score on object swaps {a}, on composition swaps {b}; which is harder is "
                         "decided by construction, by how unlike the toy world draws two objects and two "
                         "attributes."}),
                ("text vs image", ("composition", "text"), ("composition", "image"), {
        HIGHER: "On composition swaps it matches captions to an image ({a}) better than images to a caption ({b}).",
        LOWER: "On composition swaps it matches captions to an image ({a}) worse than images to a caption ({b}).",
        UNRESOLVED: "On composition swaps its text score ({a}) and image score ({b}) are not resolved apart."})],
}
