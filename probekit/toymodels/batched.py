"""``probekit train-toy --batched``: the toy members of a run trained at once, one batched computation per stack.

Every member keeps what it has when trained alone (``trainers.train_<its trainer>`` under ``loop.run``): its initial
weights (``torch.manual_seed(seed)`` then ``trainers.untrained``), its recipe's pool and its own draws from it
(``Batches.fork``, ``stack_steps``), its AdamW state, learning-rate schedule, gradient clipping (per member, to
norm 1), loss curve, held-out probes, torch generator (BERT's dropout: ``stack_ops.Dropout``) and resume file
(``loop.save``'s format, so a member stopped under one trainer resumes under the other).  What changes is that the
members' weights are stacked and one step of all of them is one computation (``vilt_stack``, ``clip_stack``,
``bert_stack``): each member's texts are padded to the longest of the step (padding is masked out of attention and
of the losses), ViLT's image tokens keep their grid order (``vilt_stack`` explains why that is HF's function) and
CLIP members without hard negatives get placeholder texts outside every softmax (``clip_stack``).
``tests/test_batched.py`` checks the curves and weights against ``train``.

Members are stacked when they share a trainer and their weights have the same shapes (one vocabulary: the
caption-noise members, whose captions add words, form their own stack).  ``train_jobs`` trains members of several
seeds (each into its own zoo directory) in one stack.  A member's ``wall_s`` is the wall time of its stack (shared
by its members).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..scorers.hf import transformers_bars_off
from ..toyworld import stream
from . import build, loop, optim
from . import record as zoo_record
from .batches import Batches
from .budget import Budget
from .stack_steps import STEPS
from .trainers import untrained
from .zoo import member as zoo_member


PROCESSORS = {"clip": build.clip_processor, "vilt": build.vilt_processor, "bert": lambda: None}


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
    sched: torch.optim.lr_scheduler.LRScheduler
    key: dict
    probe: object = None
    #: the member's torch generator (BERT's dropout masks), set when the member starts
    gen: torch.Generator = None  # type: ignore[assignment]
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
    """Train the ``jobs`` (of any seeds and zoo directories) at once, one stack per trainer and vocabulary; write each
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
    pools: dict[Any, Any] = {}
    heldouts: dict[Any, Any] = {}
    groups: dict[Any, list[Any]] = {}
    for job in jobs:
        recipe = zoo_member(job.name).recipe
        tok = build.tokenizer(recipe.extra_words())
        if (recipe, job.seed) not in pools:
            log(f"rendering {budget.pool} training images (seed {job.seed}; {recipe.describe()})")
            pools[recipe, job.seed] = Batches(stream.pool(budget.pool, job.seed, recipe=recipe), job.seed, tok, device)
        if evaluate and job.seed not in heldouts:
            heldouts[job.seed] = ev.HeldOut(seed=job.seed)
        key = (zoo_member(job.name).trainer, len(tok))
        groups.setdefault(key, []).append((job, pools[recipe, job.seed].fork(), tok))
    t0 = time.time()
    for group in groups.values():
        states = [_start(job, data, tok, budget, size, log, heldouts.get(job.seed)) for job, data, tok in group]
        _fit(states, budget, save_every, log, heldouts, headers)
    log(f"{len(jobs)} members trained in {len(groups)} stacks in {time.time() - t0:.0f}s")


def _start(job: Job, data: Batches, tok, budget: Budget, size: str, log, heldout) -> _State:
    torch.manual_seed(job.seed)   # the member's initial weights, as train.train draws them
    trainer = zoo_member(job.name).trainer
    model = untrained(trainer, tok, size).to(data.device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=getattr(budget, f"lr_{trainer}"), weight_decay=0.01)
    sched = loop.schedule(opt, budget.steps, budget.warmup, budget.schedule, budget.decay)
    key = loop.resume_key(budget, data, size)
    state = _State(job, data, tok, model, opt, sched, key, heldout and heldout.probe_for(job.name))
    (job.out / job.name).mkdir(parents=True, exist_ok=True)
    state.history, state.running, state.first, state.spent = loop.restore(
        job.name, state.path, key, model, opt, sched, data, budget, log)
    state.gen = torch.Generator(data.device)   # where the global generator stands when train.train's loop starts
    state.gen.set_state(_global_rng(data.device).get_state())
    return state


def _global_rng(device: torch.device):
    """The global generator of ``device`` (what ``loop``'s resume files keep)."""
    return torch.cuda.default_generators[device.index or 0] if device.type == "cuda" else torch.default_generator


def _fit(states: list[_State], budget: Budget, save_every: int, log, heldouts: dict, headers: dict) -> None:
    """Train the stacked ``states`` to ``budget.steps`` each, saving and recording each member as it finishes."""
    config, losses_of = states[0].model.config, STEPS[states[0].member.trainer]
    autocast = loop.precision(budget, states[0].data.device)
    params, adam = optim.start(states)
    t0 = time.time()
    step = [s.first - 1 for s in states]
    while states:
        with autocast():
            losses = losses_of(states, params, config, budget)
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
                _global_rng(s.data.device).set_state(s.gen.get_state())   # the resume file keeps the member's
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


def _finish(s: _State, model, wall: float, log, heldout, headers: dict, together: int) -> None:
    s.history["wall_s"] = wall + s.spent
    out = s.job.out
    model.eval().cpu()
    with transformers_bars_off():
        model.save_pretrained(out / s.job.name)
        build.save_side_files(out / s.job.name, s.tok, PROCESSORS[s.member.trainer]())
    entry = zoo_record.entry(s.job.name, s.member, s.history, out, log, heldout)
    entry["batched"] = together   # members in its stack when it finished
    zoo_record.save_entry(out, headers[out], s.job.name, entry)
    log(f"[{s.job.name}] seed {s.job.seed} saved in {out / s.job.name}")
