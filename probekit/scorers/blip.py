"""BLIP: ITM = softmax of BlipForImageTextRetrieval's ITM head (``use_itm_head=True``), index 1.

This is the ITM head only; the ITC (cosine) score BLIP also has is not mixed in.  Preprocessing: the checkpoint's
BlipImageProcessor (resize to a square, its mean/std); texts truncated to the text model's position limit.
"""

from __future__ import annotations

from probekit.scorers import hf
from probekit.scorers.base import Scorer


class BlipScorer(Scorer):
    family = "blip"
    pixels_on_device = True

    def _load(self, source, **options):
        self.model = hf.from_pretrained("BlipForImageTextRetrieval", source, self.revision, self.device)
        self.tokenizer, self.image_processor = hf.load_processors(source, self.revision)
        cfg = self.model.config
        self.max_length = hf.max_text_length(self.tokenizer, cfg.text_config.max_position_embeddings)
        self.patch_size = cfg.vision_config.patch_size
        self.image_size = hf.image_size_of(self.image_processor) or cfg.vision_config.image_size
        self.preprocessing = f"{type(self.image_processor).__name__} from {source}"

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils, keep=("pixel_values",))

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length, keep=("input_ids", "attention_mask"))

    def _match_probs(self, inputs):
        return self.model(**inputs, use_itm_head=True).itm_score.float().softmax(-1)[:, 1]
