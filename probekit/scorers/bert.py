"""Text-only masked LM (BertForMaskedLM or any AutoModelForMaskedLM checkpoint): the blind baseline.

It sees no image: ``fill_mask(texts)`` only; asking it to match or to look at an image is a CapabilityError.
"""

from __future__ import annotations

from probekit.scorers import hf
from probekit.scorers.base import Scorer


class BertScorer(Scorer):
    family = "bert"
    mlm_needs_image = False
    text_only = True

    def _load(self, source, **options):
        self.model = hf.from_pretrained("AutoModelForMaskedLM", source, self.revision, self.device)
        self.tokenizer, _ = hf.load_processors(source, self.revision, image=False)
        self.image_processor = None
        self.max_length = hf.max_text_length(self.tokenizer, self.model.config.max_position_embeddings)
        self.preprocessing = "text only"

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length,
                           keep=("input_ids", "attention_mask", "token_type_ids"))

    def _mlm_logits(self, inputs):
        return self.model(**inputs).logits
