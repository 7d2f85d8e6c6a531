"""``probekit train-toy --batched``: the toy ViLT members of a run trained at once, as one batched computation.

Every member keeps what it has when trained alone (``trainers.train_vilt`` under ``loop.run``): its initial weights
(``torch.manual_seed(seed)`` then ``trainers.untrained``), its recipe's pool and its own draws from it
(``Batches.fork``, ``trainers.vilt_batch``), its AdamW state, learning-rate schedule, gradient clipping (per member,
to norm 1), loss curve, held-out probes and resume file (``loop.save``'s format, so a member stopped under one
trainer resumes under the other).  What changes is that the members' weights are stacked and one step of all of
them is one computation (``vilt_stack``): each member's batch is padded to the longest text of the step (padding
is masked out of attention and of the MLM loss), and the image tokens keep their grid order (``vilt_stack``
explains why that is HF's function).  ``tests/test_batched.py`` checks the curves and weights against ``train``.

Members are stacked when their weights have the same shapes (one vocabulary: the caption-noise members, whose
captions add words, form their own stack); the other trainers' members (CLIP, BERT) are trained one after another
by ``train.train`` first.  ``train_jobs`` trains members of several seeds (each into its own zoo directory) in
one stack.  A member's ``wall_s`` is the wall time of its stack (shared by its members).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from ..scorers.hf import transformers_bars_off
from ..toyworld import stream
from . import build, loop, optim, vilt_stack
from . import record as zoo_record
from .batches import Batches
from .budget import Budget
from .trainers import untrained, vilt_batch
from .zoo import member as zoo_member


@dataclass
class Job:
    """One member of one seed, trained into ``out / name``."""
    name: str
    seed: int
    out: Path


@dataclass
class _State:
    """A job while it trains: its model (the weights' home between saves), optimiser and schedule objects (the
    resume file's format), data stream, curve and step."""
    job: Job
    data: Batches
    tok: object
    model: torch.nn.Module
    opt: torch.optim.Optimizer
    sched: object
    key: dict
    probe: object = None
    history: dict = field(default_factory=dict)
    running: list = field(default_factory=list)
    first: int = 1
    spent: float = 0.0

    @property
    def member(self):
        return zoo_member(self.job.name)

    @property
    def path(self) -> Path:
        return loop.resume_path(self.job.out / self.job.name)


def train_jobs(jobs: list[Job], budget: Budget, *, quick: bool = False, threads: int | None = None,
               evaluate: bool = True, device: str = "cpu", log=print, save_every: int = loop.SAVE_EVERY,
               size: str = build.DEFAULT_SIZE) -> None:
    """Train the ViLT ``jobs`` (of any seeds and zoo directories) at once, one stack per vocabulary; write each
    member, its record entry and (``evaluate``) its held-out scores as ``train.train`` does (not the model cards:
    ``card.write`` once the zoo is whole)."""
    from . import evaluate as ev
    build.size_of(size)
    if threads:
        torch.set_num_threads(threads)
    headers = {}
    for job in jobs:
        headers[job.out] = zoo_record.header(job.seed, budget, quick, device, size)
    for out, header in headers.items():   # refused if a zoo keeps members trained with other settings
        zoo_record.start(out, header, [j.name for j in jobs if j.out == out])
    pools, heldouts, groups = {}, {}, {}
    for job in jobs:
        recipe = zoo_member(job.name).recipe
        tok = build.tokenizer(recipe.extra_words())
        if (recipe, job.seed) not in pools:
            log(f"rendering {budget.pool} training images (seed {job.seed}; {recipe.describe()})")
            pools[recipe, job.seed] = Batches(stream.pool(budget.pool, job.seed, recipe=recipe), job.seed, tok, device)
        if evaluate and job.seed not in heldouts:
            heldouts[job.seed] = ev.HeldOut(seed=job.seed)
        groups.setdefault(len(tok), []).append((job, pools[recipe, job.seed].fork(), tok))
    t0 = time.time()
    for group in groups.values():
        states = [_start(job, data, tok, budget, size, log, heldouts.get(job.seed)) for job, data, tok in group]
        _fit(states, budget, save_every, log, heldouts, headers)
    log(f"{len(jobs)} ViLT members trained at once in {time.time() - t0:.0f}s")


def _start(job: Job, data: Batches, tok, budget: Budget, size: str, log, heldout) -> _State:
    torch.manual_seed(job.seed)   # the member's initial weights, as train.train draws them
    model = untrained("vilt", tok, size).to(data.device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=budget.lr_vilt, weight_decay=0.01)
    sched = loop.schedule(opt, budget.steps, budget.warmup, budget.schedule, budget.decay)
    key = loop.resume_key(budget, data, size)
    state = _State(job, data, tok, model, opt, sched, key, heldout and heldout.probe_for(job.name))
    (job.out / job.name).mkdir(parents=True, exist_ok=True)
    state.history, state.running, state.first, state.spent = loop.restore(
        job.name, state.path, key, model, opt, sched, data, budget, log)
    return state


def _fit(states: list[_State], budget: Budget, save_every: int, log, heldouts: dict, headers: dict) -> None:
    """Train the stacked ``states`` to ``budget.steps`` each, saving and recording each member as it finishes."""
    config = states[0].model.config
    autocast = loop.precision(budget, states[0].data.device)
    params, adam = optim.start(states)
    pad = states[0].tok.pad_token_id
    t0 = time.time()
    step = [s.first - 1 for s in states]
    while states:
        drawn = [vilt_batch(s.member, s.data, s.tok, budget) for s in states]
        itm, mlm = (_stacked([d[k] for d in drawn], pad) for k in (0, 1))
        with autocast():
            losses = vilt_stack.losses(params, config, itm, mlm)
        for p in params.values():
            p.grad = None
        losses.sum().backward()
        optim.clip(params, 1.0)
        optim.step(params, adam, [s.opt.param_groups[0]["lr"] for s in states], [k + 1 for k in step])
        with warnings.catch_warnings():   # the schedules advance without their optimiser's own step()
            warnings.simplefilter("ignore", UserWarning)
            for s in states:
                s.sched.step()
        step = [k + 1 for k in step]
        for i, (s, loss) in enumerate(zip(states, losses.tolist())):
            probe = s.probe and (lambda i=i, s=s: s.probe(optim.member(params, adam, i, s, step[i])))
            s.running = loop.note(s.job.name, s.history, s.running, loss, step[i], budget, probe,
                                  (t0 - s.spent, s.spent, s.first), log)
            if step[i] % save_every == 0 and step[i] < budget.steps:
                loop.save(s.path, s.key, step[i], optim.member(params, adam, i, s, step[i]), s.opt, s.sched,
                          s.data, s.history, s.running, time.time() - t0 + s.spent)
        done = [i for i, k in enumerate(step) if k >= budget.steps]
        for i in done:
            _finish(states[i], optim.member(params, adam, i, states[i], step[i]), time.time() - t0, log,
                    heldouts.get(states[i].job.seed), headers, len(states))
        if done:
            keep = [i for i in range(len(states)) if i not in done]
            params, adam = optim.keep(params, adam, keep)
            states, step = [states[i] for i in keep], [step[i] for i in keep]


def _stacked(batches: list[dict], pad: int) -> dict:
    """The members' batches as one: each tensor stacked on a new leading axis, texts padded on the right to the
    longest (pad tokens, attention 0, MLM label -100)."""
    length = max(b["input_ids"].shape[1] for b in batches)
    fill = {"input_ids": pad, "attention_mask": 0, "labels": -100}
    out = {}
    for k in batches[0]:
        xs = [b[k] for b in batches]
        if k in fill and xs[0].dim() == 2:
            xs = [F.pad(x, (0, length - x.shape[1]), value=fill[k]) for x in xs]
        out[k] = torch.stack(xs)
    return out


def _finish(s: _State, model, wall: float, log, heldout, headers: dict, together: int) -> None:
    s.history["wall_s"] = wall + s.spent
    out = s.job.out
    model.eval().cpu()
    with transformers_bars_off():
        model.save_pretrained(out / s.job.name)
        build.save_side_files(out / s.job.name, s.tok, build.vilt_processor())
    entry = zoo_record.entry(s.job.name, s.member, s.history, out, log, heldout)
    entry["batched"] = together   # members in its stack when it finished
    zoo_record.save_entry(out, headers[out], s.job.name, entry)
    log(f"[{s.job.name}] seed {s.job.seed} saved in {out / s.job.name}")
