"""ViLT (single-stream): ITM = sigmoid of ViltForImageAndTextRetrieval's single rank logit; MLM = ViltForMaskedLM.

Preprocessing: the checkpoint's ViltImageProcessor (shorter side resized, padded with a pixel mask per batch);
texts truncated to the model's text positions (40 for the dandelin checkpoints).
"""

from __future__ import annotations

import torch

from probekit.scorers import hf
from probekit.scorers.cross import TwoHeadScorer


class ViltScorer(TwoHeadScorer):
    family = "vilt"
    itm_class = "ViltForImageAndTextRetrieval"
    mlm_class = "ViltForMaskedLM"
    backbone = "vilt"

    def _load(self, source, **options):
        super()._load(source, **options)
        self.max_length = hf.max_text_length(self.tokenizer, self.model.config.max_position_embeddings)
        self.patch_size = self.model.config.patch_size

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils)

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length,
                           keep=("input_ids", "attention_mask", "token_type_ids"))

    def _match_probs(self, inputs):
        return torch.sigmoid(self.itm_model(**inputs).logits[:, 0])

    def _mlm_logits(self, inputs):
        return self.mlm_model(**inputs).logits
