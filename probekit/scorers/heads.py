"""Which head of a model answers which question: decided here, once, for every study.

* ``"threshold"``: a calibrated match probability compared with a threshold (SVO-Probes' ITM at 0.5): the
  ``match`` head, when the registry marks it calibrated (``ModelSpec.calibrated``; e.g. ``vilt-coco``'s retrieval
  head is a rank logit fine-tuned with a softmax over candidates, whose zero point means nothing).
* ``"choice"``: a choice among candidate images or texts (pairwise accuracy, predicate–noun pairs): the
  adapter's ``choice_head`` (``similarity`` for dual encoders, ``match`` for ITM models).
* ``"compatibility"``: one score per (image, text) on a logit scale (Probe-R/C/B): ``similarity`` when the model
  has it (the conceptual paper's authors scored FLAVA with its contrastive head), else ``match``.
* ``"fill_mask"``: a masked-LM head.
"""

from __future__ import annotations

from probekit.scorers.base import CapabilityError

QUESTIONS = {
    "threshold": ("match",),
    "choice": None,  # the adapter's choice_head, then any image-text head
    "compatibility": ("similarity", "match"),
    "fill_mask": ("fill_mask",),
}


def head_for(scorer, question: str) -> str:
    """The head (``match``, ``similarity`` or ``fill_mask``) that answers ``question`` for ``scorer``; a
    :class:`CapabilityError` naming the model and its heads when none can."""
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}; questions: {', '.join(QUESTIONS)}")
    caps = set(scorer.capabilities or ())
    if question == "threshold" and not getattr(scorer, "match_calibrated", True):
        raise CapabilityError(f"{scorer.name}'s match head is not calibrated (a retrieval rank logit), so it is "
                              "never thresholded; it still ranks and chooses (pairwise)")
    order = QUESTIONS[question] or (scorer.choice_head, "similarity", "match")
    for head in order:
        if head in caps:
            return head
    raise CapabilityError(f"{scorer.name} has no head for the {question!r} question (needs one of "
                          f"{', '.join(dict.fromkeys(order))}; it has {', '.join(sorted(caps)) or 'none'})")


def can_answer(scorer, question: str) -> bool:
    try:
        head_for(scorer, question)
    except CapabilityError:
        return False
    return True
