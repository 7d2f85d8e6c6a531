"""Shared loading for HF cross-encoders with separate ITM and MLM model classes over one backbone (ViLT,
BridgeTower): each head's class is loaded only if the entry needs it, and when both come from one checkpoint the
second reuses the first's backbone (the weights are the same), halving memory."""

from __future__ import annotations

from probekit.scorers import hf
from probekit.scorers.base import Scorer
from probekit.scorers.resolve import HEAD_CLASSES, capabilities_from_architectures


class TwoHeadScorer(Scorer):
    backbone = ""  # attribute name of the shared backbone in both classes

    @property
    def itm_class(self) -> str:
        return HEAD_CLASSES[self.family]["match"]

    @property
    def mlm_class(self) -> str:
        return HEAD_CLASSES[self.family]["fill_mask"]

    def _load(self, source: str, **options) -> None:
        if self.capabilities is None:  # an unregistered checkpoint: use the heads its config declares
            self.capabilities = frozenset(capabilities_from_architectures(
                self.family, hf.architectures(source, self.revision)))
        self.itm_model = self.mlm_model = None
        if "match" in self.capabilities:
            self.itm_model = hf.from_pretrained(self.itm_class, source, self.revision, self.device)
        if "fill_mask" in self.capabilities:
            self.mlm_model = hf.from_pretrained(self.mlm_class, source, self.revision, self.device)
            if self.itm_model is not None:
                setattr(self.mlm_model, self.backbone, getattr(self.itm_model, self.backbone))
        self.model = self.itm_model if self.itm_model is not None else self.mlm_model
        self.tokenizer, self.image_processor = hf.load_processors(source, self.revision)
        self.preprocessing = f"{type(self.image_processor).__name__} from {source}"
        self.image_size = hf.image_size_of(self.image_processor)
