"""BridgeTower: ITM = softmax of BridgeTowerForImageAndTextRetrieval's 2-way logits, index 1 ("match");
MLM = BridgeTowerForMaskedLM (RoBERTa vocabulary: MASK is replaced by ``<mask>``).

Preprocessing: the checkpoint's BridgeTowerImageProcessor (resize, centre crop, pixel mask); texts truncated to
the text model's position limit.
"""

from __future__ import annotations

from probekit.scorers import hf
from probekit.scorers.cross import TwoHeadScorer


class BridgeTowerScorer(TwoHeadScorer):
    family = "bridgetower"
    backbone = "bridgetower"
    pixels_on_device = True

    def _load(self, source, **options):
        super()._load(source, **options)
        cfg = self.model.config
        self.max_length = hf.max_text_length(self.tokenizer, cfg.text_config.max_position_embeddings - 2)
        self.patch_size = cfg.vision_config.patch_size

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils)

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length, keep=("input_ids", "attention_mask"))

    def _match_probs(self, inputs):
        return self.itm_model(**inputs).logits.float().softmax(-1)[:, 1]

    def _mlm_logits(self, inputs):
        return self.mlm_model(**inputs).logits
