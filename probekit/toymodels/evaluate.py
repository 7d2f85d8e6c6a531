"""Held-out checks of the toy models on evaluation-split items of the toy world (never seen in training):
easy controls (a single object and its caption vs a wrong object; the cropped predicate-noun task) and the
hard probes (predicate-noun pairs on the full image, verbs, guided masking).  Models are loaded from their
directories with ``from_pretrained`` + AutoTokenizer + AutoImageProcessor, the path a hub id takes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from ..toyworld import classify, masking, prednoun, svo
from ..toyworld.vocab import OBJECTS, POSES, VERBS
from . import build

LEMMA = {form: v.lemma for v in list(VERBS.values()) + list(POSES.values()) for form in (v.lemma, v.third, v.ing)}


def _chunks(n: int, size: int = 64):
    for i in range(0, n, size):
        yield slice(i, min(n, i + size))


def _inputs(model, tok, proc, texts, images):
    dev = next(model.parameters()).device
    enc = {k: v.to(dev) for k, v in tok(texts, padding=True, return_tensors="pt").items()}
    px = None if images is None else {k: v.to(dev) for k, v in proc(images, return_tensors="pt").items()}
    return enc, px


@torch.no_grad()
def itm_scores(model, tok, proc, images: list, texts: list[str]) -> np.ndarray:
    out = []
    for sl in _chunks(len(texts)):
        enc, px = _inputs(model, tok, proc, texts[sl], images[sl])
        logit = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                      pixel_values=px["pixel_values"], pixel_mask=px.get("pixel_mask")).logits[:, 0]
        out.append(torch.sigmoid(logit).cpu().numpy())
    return np.concatenate(out)


@torch.no_grad()
def clip_scores(model, tok, proc, images: list, texts: list[str]) -> np.ndarray:
    """Scaled cosine similarity of each (image, text) pair."""
    out = []
    for sl in _chunks(len(texts)):
        enc, px = _inputs(model, tok, proc, texts[sl], images[sl])
        logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                       pixel_values=px["pixel_values"]).logits_per_image
        out.append(torch.diagonal(logits).cpu().numpy())
    return np.concatenate(out)


@torch.no_grad()
def verb_topk(model, tok, texts: list[str], proc=None, images=None, k: int = 5) -> list[list[str]]:
    """Top-k lemmas of the masked verb ([MASK] once in each text), with the image when given."""
    out = []
    for sl in _chunks(len(texts)):
        enc, px = _inputs(model, tok, proc, texts[sl], None if images is None else images[sl])
        kw = {}
        if images is not None:
            kw = dict(pixel_values=px["pixel_values"], pixel_mask=px.get("pixel_mask"))
        logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], **kw).logits
        pos = (enc["input_ids"] == tok.mask_token_id).float().argmax(1)
        top = logits[torch.arange(len(pos), device=pos.device), pos].topk(k, dim=-1).indices
        out += [[LEMMA.get(w, w) for w in tok.convert_ids_to_tokens(row)] for row in top.tolist()]
    return out


def crop(path: str, box) -> Image.Image:
    img = Image.open(path).convert("RGB")
    W, H = img.size
    x, y, w, h = box
    return img.crop((round(x * W), round(y * H), round((x + w) * W), round((y + h) * H)))


class HeldOut:
    """Evaluation-split items, rendered once into a temporary directory."""

    def __init__(self, seed: int = 0, n: int = 200, data_dir: str | Path | None = None):
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="probekit-heldout-")
        root = Path(data_dir or self._tmp.name)
        cls = classify.make_items(root, n, seed, "eval")
        self.obj_images = [Image.open(p).convert("RGB") for p in cls["image"]]
        self.obj_true = [f"a {lab}" for lab in cls["label"]]
        self.obj_wrong = [f"a {OBJECTS[(OBJECTS.index(lab) + 1 + i % 5) % len(OBJECTS)]}"
                          for i, lab in enumerate(cls["label"])]
        self.pn = prednoun.make_items(root, n, seed, "eval")
        self.pn_full = [Image.open(p).convert("RGB") for p in self.pn["image"]]
        self.pn_crop = [crop(p, b) for p, b in zip(self.pn["image"], self.pn["target_box"])]
        self.verbs = svo.make_items(root, n, seed, "eval")
        self.mask = masking.make_items(root, n, seed, "eval")

    # --- tasks ------------------------------------------------------------------------------------------
    def _two_way(self, score, images, right, wrong) -> np.ndarray:
        return score(images, right) > score(images, wrong)

    def _prednoun(self, score, images) -> dict:
        ok = self._two_way(score, images, list(self.pn["sentence_target"]), list(self.pn["sentence_distractor"]))
        pairs = ok.reshape(-1, 2).all(1)
        return {"triplet_acc": float(ok.mean()), "pair_acc": float(pairs.mean())}

    def quick(self, score) -> dict:
        """The curve's two numbers: the single-object control and predicate-noun pair accuracy (full image)."""
        return {"object": round(float(self._two_way(score, self.obj_images, self.obj_true, self.obj_wrong).mean()), 3),
                "prednoun_pair": round(self._prednoun(score, self.pn_full)["pair_acc"], 3)}

    def probe_for(self, name: str):
        if name == "toy-bert":
            return None
        tok = build.tokenizer()
        proc = build.clip_processor() if name == "toy-clip" else build.vilt_processor()
        fn = clip_scores if name == "toy-clip" else itm_scores

        def probe(model):
            model.eval()
            try:
                return self.quick(lambda im, tx: fn(model, tok, proc, im, tx))
            finally:
                model.train()
        return probe

    def masked(self) -> tuple[list[str], list, list[str]]:
        texts = [s[:a] + "[MASK]" + s[b:] for s, a, b in zip(self.mask["sentence"], self.mask["verb_start"],
                                                             self.mask["verb_end"])]
        images = [Image.open(p).convert("RGB") for p in self.mask["image"]]
        return texts, images, list(self.mask["verb"])

    def evaluate_dir(self, name: str, path: str | Path) -> dict:
        """Held-out scores of the model saved in ``path``, loaded as a hub id would be."""
        from transformers import AutoImageProcessor, AutoTokenizer
        tok = AutoTokenizer.from_pretrained(path)
        res: dict = {}
        texts, images, gold = self.masked()
        if name == "toy-bert":
            from transformers import BertForMaskedLM
            model = BertForMaskedLM.from_pretrained(path).eval()
            top = verb_topk(model, tok, texts)
            res["masking_top5_text_only"] = float(np.mean([g in t for g, t in zip(gold, top)]))
            res["masking_top1_text_only"] = float(np.mean([g == t[0] for g, t in zip(gold, top)]))
            return res
        proc = AutoImageProcessor.from_pretrained(path)
        if name == "toy-clip":
            from transformers import CLIPModel
            model = CLIPModel.from_pretrained(path).eval()
            score = lambda im, tx: clip_scores(model, tok, proc, im, tx)
        else:
            from transformers import ViltForImageAndTextRetrieval, ViltForMaskedLM
            model = ViltForImageAndTextRetrieval.from_pretrained(path).eval()
            score = lambda im, tx: itm_scores(model, tok, proc, im, tx)
            mlm = ViltForMaskedLM.from_pretrained(path).eval()
            top = verb_topk(mlm, tok, texts, proc, images)
            res["masking_top5_with_image"] = float(np.mean([g in t for g, t in zip(gold, top)]))
            res["masking_top1_with_image"] = float(np.mean([g == t[0] for g, t in zip(gold, top)]))
        res["object_control_acc"] = float(self._two_way(score, self.obj_images, self.obj_true, self.obj_wrong).mean())
        res["prednoun_cropped"] = self._prednoun(score, self.pn_crop)
        res["prednoun_full"] = self._prednoun(score, self.pn_full)
        v = self.verbs
        pos_img = [Image.open(p).convert("RGB") for p in v["pos_image"]]
        neg_img = [Image.open(p).convert("RGB") for p in v["neg_image"]]
        s_pos, s_neg = score(pos_img, list(v["sentence"])), score(neg_img, list(v["sentence"]))
        choice = {k: float((s_pos > s_neg)[v[f"{k}_neg"].to_numpy()].mean()) for k in ("subj", "verb", "obj")}
        res["verbs_image_choice"] = {"all": float((s_pos > s_neg).mean()), **choice}
        if name == "toy-vilt":
            acc_pos, acc_neg = float((s_pos >= 0.5).mean()), float((s_neg < 0.5).mean())
            res["verbs_itm"] = {"pos": acc_pos, "neg": acc_neg, "avg": (acc_pos + acc_neg) / 2,
                                **{f"neg_{k}": float((s_neg < 0.5)[v[f"{k}_neg"].to_numpy()].mean())
                                   for k in ("subj", "verb", "obj")}}
        return res
