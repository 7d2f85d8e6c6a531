"""Train the toy model zoo on the toy world: ``probekit train-toy`` (``main``) or ``train(...)`` from Python.

Every model sees the same training stream (``probekit.toyworld.stream``) for the same number of steps and batch
size, one factor changed at a time (``ZOO``; ``--zoo next``: ``NEXT_ZOO``): the objective (``toy-clip``: symmetric InfoNCE over in-batch
negatives; ``toy-clip-hardneg``: the same with each caption's one-slot swap added to the texts), the architecture
(``toy-vilt``: one ViLT encoder trained with an ITM head on positives and random negatives plus an MLM head,
saved as one directory that loads as ViltForImageAndTextRetrieval and as ViltForMaskedLM; ``toy-bert``: text only)
and the data (``stream.Recipe``: noisy captions, verbs hidden from the images, captions that do not bind nouns
to predicates).  The optimisation loop is ``loop.run``.  Each model is written when it finishes, so an interrupted
run keeps the models it completed, and the member it was training resumes from its last resume file
(``loop``); ``--models`` trains a subset, and runs with disjoint ``--models`` may share one ``--out`` (``record``);
``--jobs N`` trains N members at once, one process each (``jobs``); ``--rescore`` (``rescore``) scores a trained
zoo on the held-out split again and rewrites its card, training nothing.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from ..device import resolve_device
from ..scorers.hf import transformers_bars_off
from ..toyworld import stream
from . import build, loop, options
from . import record as zoo_record
from .batches import Batches, mask_tokens
from .budget import Budget, make as make_budget, recorded
from .record import ZooError
from .zoo import CHECKPOINTS, MODELS, Member, chosen, known, member as zoo_member


def train_clip(member: Member, data: Batches, tok, budget: Budget, out: Path, fit, probe=None,
               size: str = build.DEFAULT_SIZE) -> dict:
    model = untrained("clip", tok, size).to(data.device)
    model.train()

    def step():
        idx = data.sample(budget.batch)
        texts = [data.captions[i] for i in idx]
        if member.hard_negatives:
            texts += [data.negative(i, 1.0) for i in idx]
        enc = data.tokens(texts)
        out_ = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], pixel_values=data.images(idx))
        logits = out_.logits_per_image                      # (B, B) or (B, 2B): positives, then hard negatives
        target = torch.arange(len(idx), device=data.device)
        return (F.cross_entropy(logits, target) + F.cross_entropy(logits[:, :len(idx)].t(), target)) / 2

    hist = fit(model, step, budget.lr_clip, probe and (lambda: probe(model)))
    model.eval().cpu()
    model.save_pretrained(out)
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
    model.save_pretrained(out)
    build.save_side_files(out, tok, build.vilt_processor())
    return hist


def train_bert(member: Member, data: Batches, tok, budget: Budget, out: Path, fit, probe=None,
               size: str = build.DEFAULT_SIZE) -> dict:
    model = untrained("bert", tok, size).to(data.device)
    model.train()

    def step():
        idx = data.sample(budget.batch)
        enc = data.tokens([data.captions[i] for i in idx])
        masked, labels = mask_tokens(enc["input_ids"], tok, budget.mlm_prob, data.rng)
        return model(input_ids=masked, attention_mask=enc["attention_mask"], labels=labels).loss

    hist = fit(model, step, budget.lr_bert, probe and (lambda: probe(model)))
    model.eval().cpu()
    model.save_pretrained(out)
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


# ----------------------------------------------------------------------------------------------- entry points
def train(out: str | Path | None = None, steps: int | None = None, seed: int = 0, models=MODELS,
          quick: bool = False, threads: int | None = None, evaluate: bool = True, device: str = "cpu", log=print,
          save_every: int = loop.SAVE_EVERY, size: str = build.DEFAULT_SIZE, **overrides) -> dict:
    """Train ``models`` of ``size`` (``build.SIZES``; default the shipped zoo's) into ``out/<name>/`` (default: the
    shipped checkpoints dir); return the run record (budget, histories, held-out scores, wall times), also written
    to ``out/training.json`` (its ``size`` only when not the default: a record without one is of the default)."""
    from . import evaluate as ev
    known(models)
    build.size_of(size)   # an unknown size is refused before anything is written
    out = Path(out) if out else CHECKPOINTS
    budget = make_budget(quick, steps, **overrides)
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    t0 = time.time()
    pools: dict = {}
    heldout = ev.HeldOut(seed=seed) if evaluate else None
    header = run_header(seed, budget, quick, device, size)
    record = zoo_record.start(out, header, models)   # refused if a member it keeps has other settings
    if not models:   # --missing, and every member asked for is held
        log(f"nothing to train: {out} holds every member asked for, trained with these settings")
        return record
    for i, name in enumerate(models):
        member = zoo_member(name)
        try:
            if member.recipe not in pools:
                pools.clear()   # one pool in memory at a time
                log(f"rendering {budget.pool} training images (seed {seed}; {member.recipe.describe()})")
                pools[member.recipe] = stream.pool(budget.pool, seed, recipe=member.recipe)
            tok = build.tokenizer(member.recipe.extra_words())   # the toy vocabulary, unless its captions add words
            entry = _train_member(name, member, Batches(pools[member.recipe], seed, tok, device), tok, budget, out, log,
                                  heldout, save_every, size)
        except KeyboardInterrupt as err:
            raise Interrupted(out, list(models[i:]), save_every) from err
        record = zoo_record.save_entry(out, header, name, entry)
    if evaluate:
        from .card import write as write_card
        log(f"model card: {write_card(out)}")
    log(f"done in {time.time() - t0:.0f}s -> {out}")
    return record


def run_header(seed: int, budget: Budget, quick: bool, device: str, size: str) -> dict:
    """The settings a zoo's record states for its members (``record.HEADER``)."""
    return dict(seed=seed, budget=recorded(budget), quick=quick, device=device, threads=torch.get_num_threads(),
                **({} if size == build.DEFAULT_SIZE else {"size": size}))


def _train_member(name, member, data, tok, budget, out, log, heldout, save_every, size=build.DEFAULT_SIZE) -> dict:
    torch.manual_seed(data.seed)
    fit = functools.partial(loop.run, name, data=data, budget=budget, out=out / name, log=log, save_every=save_every,
                            size=size)
    (out / name).mkdir(parents=True, exist_ok=True)
    with transformers_bars_off():   # save_pretrained draws none: the log is lines only (the probes draw none either)
        hist = TRAINERS[member.trainer](member, data, tok, budget, out / name, fit, heldout and heldout.probe_for(name),
                                        size=size)
    return finished(name, member, hist, out, log, heldout)


def finished(name: str, member: Member, hist: dict, out: Path, log, heldout=None) -> dict:
    """The record entry of the member ``name``, saved in ``out/name`` with its curve ``hist``: its resume file goes,
    and ``heldout`` (when given) scores it."""
    loop.resume_path(out / name).unlink(missing_ok=True)      # the member is saved: nothing left to resume
    entry = {"history": hist, "wall_s": hist["wall_s"], "recipe": member.recipe.describe(),
             "parent": member.parent, "factor": member.factor, "hard_negatives": member.hard_negatives}
    if heldout:
        entry["heldout"] = heldout.evaluate_dir(name, out / name)
        log(f"[{name}] held-out: {entry['heldout']}")
    return entry


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``train``: the members left, the first of which resumes from its last resume file."""

    def __init__(self, out: Path, left: list[str], save_every: int):
        self.left = left
        super().__init__(f"interrupted in {left[0]}; the members finished before it are saved in {out}; to go on, "
                         f"run the same command with --models {' '.join(left)} ({left[0]} resumes from its last "
                         f"resume file, written every {save_every} steps)")


def main(argv=None) -> int:
    p = options.parser(__doc__.split("\n\n")[0], Budget.steps)
    argv = sys.argv[1:] if argv is None else list(argv)
    a = p.parse_args(argv)
    try:
        a.models = chosen(a.zoo, a.models)
    except ValueError as err:
        p.error(str(err))
    if a.jobs < 1:
        p.error(f"--jobs {a.jobs}: give at least 1 (members trained at once)")
    if a.jobs > 1 and a.batched:
        p.error("--batched trains its members in one process: give --jobs 1")
    try:
        a.device = str(resolve_device(a.device))
    except (ValueError, RuntimeError) as err:
        p.error(f"--device {a.device}: {err}")
    try:
        out = Path(a.out) if a.out else CHECKPOINTS
        if a.missing and not a.rescore:   # with --jobs, no process is started for a held member
            a.models = [m for m in a.models if m not in zoo_record.held(out)]
        if a.jobs > 1 and a.models and not a.rescore:   # none left: one run checks the settings and says so
            from . import jobs
            return jobs.run(a, argv, out, a.jobs)
        if a.rescore:
            if a.threads:
                torch.set_num_threads(a.threads)
            from .rescore import rescore
            rescore(a.out, a.models)
        else:
            from .batched import train as batched_train
            run = batched_train if a.batched else train
            run(a.out, a.steps, a.seed, a.models, a.quick, a.threads, not a.no_eval, a.device, save_every=a.save_every,
                size=a.size, **({"pool": a.pool} if a.pool else {}),
                **{k: v for k, v in (("schedule", a.schedule), ("precision", a.precision), ("warmup", a.warmup))
                   if v is not None})
    except Interrupted as err:
        print(f"probekit train-toy: {err}", file=sys.stderr)
        return 130
    except ZooError as err:
        print(f"probekit train-toy: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
