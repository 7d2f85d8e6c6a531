"""HF dual encoders: CLIPModel (softmax over candidates) and SiglipModel (also a sigmoid per-pair match).

Preprocessing: the checkpoint's own image processor (resize, centre crop, its mean/std); texts padded to the
longest in the batch (SigLIP: to max_length=64, as it was trained) and truncated to the position limit.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from probekit.scorers import hf
from probekit.scorers.base import Scorer


def _pooled(out) -> torch.Tensor:
    # transformers >= 5 returns a model output whose pooler_output holds the projected features
    return out if isinstance(out, torch.Tensor) else out.pooler_output


pooled_features = _pooled  # public: probekit.studies.conceptual.finetune trains the CLIPModel a ClipScorer holds


class ClipScorer(Scorer):
    family = "clip"
    choice_head = "similarity"
    model_class = "CLIPModel"
    pixels_on_device = True

    def _load(self, source: str, **options) -> None:
        self.model = hf.from_pretrained(self.model_class, source, self.revision, self.device)
        self.tokenizer, self.image_processor = hf.load_processors(source, self.revision)
        self.max_length = hf.max_text_length(self.tokenizer, self.model.config.text_config.max_position_embeddings)
        self.patch_size = self.model.config.vision_config.patch_size
        self.image_size = hf.image_size_of(self.image_processor) or self.model.config.vision_config.image_size
        self.preprocessing = f"{type(self.image_processor).__name__} from {source}"

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils, keep=("pixel_values",))

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length, "longest", keep=("input_ids", "attention_mask"))

    def _embed_images(self, inputs):
        return F.normalize(_pooled(self.model.get_image_features(pixel_values=inputs["pixel_values"])).float(), dim=-1)

    def _embed_texts(self, inputs):
        return F.normalize(_pooled(self.model.get_text_features(**inputs)).float(), dim=-1)

    def _logit_scale_bias(self):
        return float(self.model.logit_scale.detach().exp()), 0.0


class SiglipScorer(ClipScorer):
    family = "siglip"
    model_class = "SiglipModel"

    def _tokenize(self, texts):
        # SigLIP was trained on texts padded to max_length with no attention mask
        return hf.tokenize(self.tokenizer, texts, self.max_length, "max_length", keep=("input_ids",))

    def _logit_scale_bias(self):
        return float(self.model.logit_scale.detach().exp()), float(self.model.logit_bias.detach())
