"""Each architecture's trainer of the toy zoo (``TRAINERS``: CLIP, ViLT, BERT): the model it starts from
(``untrained``), one training step's loss and what it saves; ``train.train`` runs them under ``loop.run``."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from . import build
from .batches import Batches, mask_tokens
from .budget import Budget
from .zoo import Member


def clip_batch(member: Member, data: Batches, budget: Budget) -> dict:
    """One step's inputs of the toy CLIP (``data``'s next draws): the batch's images and texts (its captions, then
    for ``hard_negatives`` each one's swap)."""
    idx = data.sample(budget.batch)
    texts = [data.captions[i] for i in idx]
    if member.hard_negatives:
        texts += [data.negative(i, 1.0) for i in idx]
    return {**data.tokens(texts), "pixel_values": data.images(idx)}


def train_clip(member: Member, data: Batches, tok, budget: Budget, out: Path, fit, probe=None,
               size: str = build.DEFAULT_SIZE) -> dict:
    model = untrained("clip", tok, size).to(data.device)
    model.train()

    def step():
        batch = clip_batch(member, data, budget)
        logits = model(**batch).logits_per_image            # (B, B) or (B, 2B): positives, then hard negatives
        n = len(logits)
        target = torch.arange(n, device=data.device)
        return (F.cross_entropy(logits, target) + F.cross_entropy(logits[:, :n].t(), target)) / 2

    hist = fit(model, step, budget.lr_clip, probe and (lambda: probe(model)))
    model.eval().cpu()
    model.save_pretrained(out)  # type: ignore[operator]  # a transformers model, typed nn.Module here
    build.save_side_files(out, tok, build.clip_processor())
    return hist


class ViltMultiTask(torch.nn.Module):
    """One ViLT encoder with the ITM (rank_output) and MLM heads of the two HF classes."""

    def __init__(self, config):
        super().__init__()
        from transformers import ViltForImageAndTextRetrieval, ViltForMaskedLM
        self.itm = ViltForImageAndTextRetrieval(config)
        self.mlm = ViltForMaskedLM(config)
        self.mlm.vilt = self.itm.vilt
        self.mlm.mlm_score.decoder.weight = self.itm.vilt.embeddings.text_embeddings.word_embeddings.weight
        self.config = config

    def save_pretrained(self, out) -> None:   # what the trainer and the training curve's probe call
        from safetensors.torch import save_file
        out = Path(out)
        self.itm.save_pretrained(out)
        state = {k: v.detach().clone().contiguous() for k, v in self.itm.state_dict().items()}
        for k, v in self.mlm.mlm_score.state_dict().items():
            if k != "decoder.weight":    # tied to the word embeddings
                state[f"mlm_score.{k}"] = v.detach().clone().contiguous()
        save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
        self.config.architectures = ["ViltForImageAndTextRetrieval", "ViltForMaskedLM"]
        self.config.save_pretrained(out)


def vilt_batch(member: Member, data: Batches, tok, budget: Budget) -> tuple[dict, dict]:
    """One step's inputs of the toy ViLT (``data``'s next draws): the ITM batch (positives, then negatives: random
    captions, or mostly swaps for ``hard_negatives``) and the MLM batch (captions with masked tokens)."""
    half = budget.batch // 2
    idx = data.sample(budget.batch)
    pos = [data.captions[i] for i in idx[:half]]
    neg = [data.negative(i, budget.hard_negative_p if member.hard_negatives else 0.0) for i in idx[half:]]
    enc = data.tokens(pos + neg)
    labels = torch.cat([torch.ones(half), torch.zeros(len(idx) - half)]).to(data.device)
    itm = {**enc, "pixel_values": data.images(idx), "labels": labels}
    mids = data.sample(budget.batch)
    penc = data.tokens([data.captions[i] for i in mids])
    masked, mlabels = mask_tokens(penc["input_ids"], tok, budget.mlm_prob, data.rng)
    return itm, {"input_ids": masked, "attention_mask": penc["attention_mask"], "pixel_values": data.images(mids),
                 "labels": mlabels}


def train_vilt(member: Member, data: Batches, tok, budget: Budget, out: Path, fit, probe=None,
               size: str = build.DEFAULT_SIZE) -> dict:
    model = untrained("vilt", tok, size).to(data.device)
    model.train()

    def step():
        itm, mlm = vilt_batch(member, data, tok, budget)
        pixels = itm["pixel_values"]
        pmask = torch.ones(len(pixels), pixels.shape[2], pixels.shape[3], dtype=torch.long, device=data.device)
        logit = model.itm(input_ids=itm["input_ids"], attention_mask=itm["attention_mask"], pixel_values=pixels,
                          pixel_mask=pmask).logits[:, 0]
        itm_loss = F.binary_cross_entropy_with_logits(logit, itm["labels"])
        return itm_loss + model.mlm(**mlm, pixel_mask=pmask).loss

    hist = fit(model, step, budget.lr_vilt, probe and (lambda: probe(model)))
    model.eval().cpu()
    model.save_pretrained(out)  # type: ignore[operator]  # a transformers model, typed nn.Module here
    build.save_side_files(out, tok, build.vilt_processor())
    return hist


def bert_batch(data: Batches, tok, budget: Budget) -> dict:
    """One step's inputs of the toy BERT (``data``'s next draws): captions with masked tokens."""
    enc = data.tokens([data.captions[i] for i in data.sample(budget.batch)])
    masked, labels = mask_tokens(enc["input_ids"], tok, budget.mlm_prob, data.rng)
    return {"input_ids": masked, "attention_mask": enc["attention_mask"], "labels": labels}


def train_bert(member: Member, data: Batches, tok, budget: Budget, out: Path, fit, probe=None,
               size: str = build.DEFAULT_SIZE) -> dict:
    model = untrained("bert", tok, size).to(data.device)
    model.train()

    def step():
        return model(**bert_batch(data, tok, budget)).loss

    hist = fit(model, step, budget.lr_bert, probe and (lambda: probe(model)))
    model.eval().cpu()
    model.save_pretrained(out)  # type: ignore[operator]  # a transformers model, typed nn.Module here
    build.save_side_files(out, tok)
    return hist


TRAINERS = {"clip": train_clip, "vilt": train_vilt, "bert": train_bert}


def untrained(trainer: str, tok, size: str = build.DEFAULT_SIZE) -> torch.nn.Module:
    """The freshly initialised model a ``trainer`` of ``TRAINERS`` starts from (and its held-out probe scores), of
    the ``size`` of ``build.SIZES``."""
    from transformers import BertForMaskedLM, CLIPModel
    make = {"clip": lambda: CLIPModel(build.clip_config(len(tok), tok, size)),
            "vilt": lambda: ViltMultiTask(build.vilt_config(len(tok), size)),
            "bert": lambda: BertForMaskedLM(build.bert_config(len(tok), tok, size))}
    return make[trainer]()
