"""ViLT (single-stream), two adapters over the same inputs.

* ``ViltScorer`` (family "vilt"): match = sigmoid of ViltForImageAndTextRetrieval's single rank logit (a
  retrieval fine-tune: its zero point is arbitrary, so use it to rank or compare, not to threshold);
  fill_mask = ViltForMaskedLM.
* ``ViltItmScorer`` (family "vilt-itm"): match = softmax over the 2-way ``itm_score`` head of ViLT's pretrained
  checkpoint (index 1, "match"), a calibrated probability the papers threshold at 0.5; the checkpoint is the
  authors' file, converted once by :mod:`probekit.scorers.vilt_original`.

Preprocessing: the checkpoint's ViltImageProcessor (shorter side resized, padded with a pixel mask per batch);
texts truncated to the model's text positions (40 for the dandelin checkpoints).
"""

from __future__ import annotations

import torch

from probekit.scorers import hf, vilt_original
from probekit.scorers.base import Scorer
from probekit.scorers.cross import TwoHeadScorer


class _ViltInputs:
    """ViLT's image and text inputs, shared by both adapters (needs ``image_processor``, ``tokenizer``,
    ``max_length``)."""
    pixels_on_device = True

    def _prepare_images(self, pils):
        return hf.pixel_inputs(self.image_processor, pils)

    def _tokenize(self, texts):
        return hf.tokenize(self.tokenizer, texts, self.max_length,
                           keep=("input_ids", "attention_mask", "token_type_ids"))

    @staticmethod
    def _seeded(module, inputs):
        """``module(**inputs)`` with the global RNG fixed for the call: ViLT draws its patch order with
        ``torch.multinomial``, so without it a score moves by ~1e-7 from run to run (summation order); the
        caller's RNG state is left as it was."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            return module(**inputs)


class ViltScorer(_ViltInputs, TwoHeadScorer):
    family = "vilt"
    backbone = "vilt"

    def _load(self, source, **options):
        super()._load(source, **options)
        self.max_length = hf.max_text_length(self.tokenizer, self.model.config.max_position_embeddings)
        self.patch_size = self.model.config.patch_size

    def _match_probs(self, inputs):
        return torch.sigmoid(self._seeded(self.itm_model, inputs).logits[:, 0])

    def _mlm_logits(self, inputs):
        return self._seeded(self.mlm_model, inputs).logits


class ViltItmScorer(_ViltInputs, Scorer):
    family = "vilt-itm"

    def _load(self, source, models_dir=None, processor_source=vilt_original.PROCESSOR_SOURCE, **options):
        """``source``: the authors' checkpoint (URL or file) or its converted directory; ``models_dir``: where the
        conversion is cached; ``processor_source``: tokenizer and image processor to convert with."""
        directory = str(vilt_original.converted(source, models_dir, processor_source))
        self.loaded_from = (directory,)
        self.model = hf.from_pretrained("ViltModel", directory, None, self.device)
        self.itm_head = vilt_original.load_itm_head(directory, self.device)
        self.tokenizer, self.image_processor = hf.load_processors(directory)
        self.preprocessing = f"{type(self.image_processor).__name__} of {processor_source}"
        self.image_size = hf.image_size_of(self.image_processor)
        self.max_length = hf.max_text_length(self.tokenizer, self.model.config.max_position_embeddings)
        self.patch_size = self.model.config.patch_size

    def _match_probs(self, inputs):
        return torch.softmax(self.itm_head(self._seeded(self.model, inputs).pooler_output), dim=-1)[:, 1]
