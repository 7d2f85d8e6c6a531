"""A text-only masked LM asked image–text questions: the blind baseline of every image-choice and text-choice probe.

``match(image, text)`` ignores the image and returns the text's geometric-mean token probability under the masked
LM (exp of the mean of its exact pseudo-log-likelihood terms, ``Scorer.token_logprobs``).  So between two images for
one text it ties (a pairwise choice scores 0.5), and between two texts for one image it prefers the likelier text,
whatever the image shows: what a probe's counterbalancing has to defeat.  Its zero point means nothing, so the
registry marks it uncalibrated (never thresholded).
"""

from __future__ import annotations

import numpy as np

from probekit.scorers.bert import BertScorer


class BlindScorer(BertScorer):
    family = "blind"
    choice_head = "match"

    def match(self, images, texts) -> np.ndarray:
        self._require("match", "score a text as if it matched an image")
        images, texts = list(images), [str(t) for t in texts]
        if len(images) != len(texts):
            raise ValueError(f"match() needs one text per image: got {len(images)} images and {len(texts)} texts")
        unique = list(dict.fromkeys(texts))
        score = {t: float(np.exp(np.mean(lp))) if lp is not None and len(lp) else np.nan
                 for t, lp in zip(unique, self.token_logprobs(unique))}
        return np.array([score[t] for t in texts], dtype=np.float64)
