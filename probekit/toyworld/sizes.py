"""The toy world's default size of each probe: what a chapter's ``limit`` of None means on the toy world (its
bound: :class:`probekit.parameters.CommonParams`).  Imports nothing, so a study's parameters can quote it."""

#: items per probe when ``limit`` is None: the toy chapters' sizes (sized for the book's CPU budget; the verbs'
#: and the predicate-noun items hold at least 400 of each part of their hard probe, verb negatives told apart by the
#: object's place and by the pose, look-alike pairs and the others)
DEFAULT_SIZE = {"verbs": 1240, "prednoun": 1600, "masking": 600, "probe-r": 480, "probe-c": 160, "probe-b": 360,
                "classify": 120, "classify-pairs": 396}
