"""FLAVA (FlavaForPreTraining): ITM, contrastive similarity and masked LM from one checkpoint.

* match: softmax of ``itm_head`` on the multimodal encoder's output, index 1 (as in pre-training's ITM loss).
* similarity: ``logit_scale`` x cosine of the projected CLS states of the unimodal image and text encoders.
* fill_mask: with an image, ``mmm_text_head`` on the text positions of the multimodal encoder; without one,
  ``mlm_head`` on the text encoder alone (FLAVA is also a text-only masked LM).
Preprocessing: the checkpoint's FlavaImageProcessor (resize, centre crop 224, its mean/std); texts truncated to
the text encoder's position limit.  choose_text/choose_image default to the ITM head (pass head="similarity").
"""

from __future__ import annotations

import torch.nn.functional as F

from probekit.scorers import hf
from probekit.scorers.base import Scorer


class FlavaScorer(Scorer):
    family = "flava"
    mlm_needs_image = None  # both work
    pixels_on_device = True

    def _load(self, source, **options):
        self.model = hf.from_pretrained("FlavaForPreTraining", source, self.revision, self.device)
        self.tokenizer, self.image_processor = hf.load_processors(source, self.revision)
        cfg = self.model.config
        self.max_length = hf.max_text_length(self.tokenizer, cfg.text_config.max_position_embeddings)
        self.patch_size = cfg.image_config.patch_size
        self.image_size = hf.image_size_of(self.image_processor) or cfg.image_config.image_size
        self.preprocessing = f"{type(self.image_processor).__name__} from {source}"

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils, keep=("pixel_values",))

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length,
                           keep=("input_ids", "attention_mask", "token_type_ids"))

    def _match_probs(self, inputs):
        out = self.model.flava(**inputs, return_dict=True)
        return self.model.itm_head(out.multimodal_embeddings).float().softmax(-1)[:, 1]

    def _embed_images(self, inputs):
        hidden = self.model.flava.image_model(pixel_values=inputs["pixel_values"]).last_hidden_state
        return F.normalize(self.model.flava.image_projection(hidden[:, 0]).float(), dim=-1)

    def _embed_texts(self, inputs):
        hidden = self.model.flava.text_model(**inputs).last_hidden_state
        return F.normalize(self.model.flava.text_projection(hidden[:, 0]).float(), dim=-1)

    def _logit_scale_bias(self):
        return float(self.model.flava.logit_scale.detach().exp()), 0.0

    def _mlm_logits(self, inputs):
        if "pixel_values" in inputs:
            text_len = inputs["input_ids"].shape[1]
            mm = self.model.flava(**inputs, return_dict=True).multimodal_embeddings
            return self.model.mmm_text_head(mm[:, -text_len:])
        return self.model.mlm_head(self.model.flava.text_model(**inputs).last_hidden_state)
