"""OWL-ViT (OwlViTForObjectDetection): an open-vocabulary detector behind ``detect(images, queries)``.

Each (image, query) pair is one detection: the text query ``"a photo of a {query}"``, the processor's
``post_process_grounded_object_detection`` at ``threshold`` (default 0.1, an option of ``load_scorer``), and of
the boxes above it the one with the highest score, clipped to the image, as normalised ``(x, y, w, h)`` fractions
of the original image (OWL-ViT resizes without padding, so its normalised boxes are fractions of the original);
None when no box clears the threshold or the winner is degenerate.  Queries are padded to the text model's
position limit, so a query's embedding does not depend on the other queries of its batch.
"""

from __future__ import annotations

from probekit.scorers import hf
from probekit.scorers.base import Scorer

QUERY = "a photo of a {}"
THRESHOLD = 0.1


class OwlVitScorer(Scorer):
    family = "owlvit"

    def _load(self, source, threshold: float = THRESHOLD, query: str = QUERY, **options):
        from transformers import OwlViTProcessor

        if options:
            raise TypeError(f"unknown owlvit option(s): {', '.join(options)}")
        self.model = hf.from_pretrained("OwlViTForObjectDetection", source, self.revision, self.device)
        self.processor = OwlViTProcessor.from_pretrained(  # revision None: the hub's default, as for the model
            source, revision=self.revision)  # type: ignore[arg-type]  # transformers annotates it str only
        self.tokenizer = self.processor.tokenizer
        cfg = self.model.config
        self.max_length = hf.max_text_length(self.tokenizer, cfg.text_config.max_position_embeddings)
        self.threshold, self.query = float(threshold), query
        self.detect_setting = f"{query}|{self.threshold!r}"
        self.patch_size = cfg.vision_config.patch_size
        self.image_size = hf.image_size_of(self.processor.image_processor) or cfg.vision_config.image_size
        self.preprocessing = f"{type(self.processor.image_processor).__name__} from {source}; query {query!r}"

    def _prepare_detection(self, pils: list, queries: list) -> dict:
        inputs = self.processor(text=[[self.query.format(q)] for q in queries], images=pils, return_tensors="pt",
                                padding="max_length", max_length=self.max_length, truncation=True)
        return dict(inputs)

    def _detect_boxes(self, inputs: dict) -> list:
        outputs = self.model(**inputs)
        results = self.processor.post_process_grounded_object_detection(outputs, threshold=self.threshold)
        return [best_box(res["scores"], res["boxes"]) or [] for res in results]  # [] = nothing detected


def best_box(scores, boxes) -> list[float] | None:
    """The highest-scoring (x0, y0, x1, y1) box, clipped to [0, 1], as [x, y, w, h]; None if none or degenerate."""
    if len(scores) == 0:
        return None
    x0, y0, x1, y1 = boxes[int(scores.argmax())].float().clamp(0, 1).tolist()
    return [x0, y0, x1 - x0, y1 - y0] if x1 > x0 and y1 > y0 else None
