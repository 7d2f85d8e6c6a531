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

from ..device import resolve_device
from ..scorers.hf import transformers_bars_off
from ..toyworld import stream
from . import batched as batched_trainer, build, loop, options
from . import record as zoo_record
from .batches import Batches
from .budget import Budget, make as make_budget
from .record import ZooError
from .trainers import TRAINERS, untrained  # noqa: F401 (train.untrained: benchmarks and tests use it)
from .zoo import CHECKPOINTS, MODELS, chosen, known, member as zoo_member


# ----------------------------------------------------------------------------------------------- entry points
def train(out: str | Path | None = None, steps: int | None = None, seed: int = 0, models=MODELS,
          quick: bool = False, threads: int | None = None, evaluate: bool = True, device: str = "cpu", log=print,
          save_every: int = loop.SAVE_EVERY, size: str = build.DEFAULT_SIZE, batched: bool = False,
          **overrides) -> dict:
    """Train ``models`` of ``size`` (``build.SIZES``; default the shipped zoo's) into ``out/<name>/`` (default: the
    shipped checkpoints dir); return the run record (budget, histories, held-out scores, wall times), also written
    to ``out/training.json`` (its ``size`` only when not the default: a record without one is of the default).
    ``batched``: the members are trained at once, one stack per trainer and vocabulary (``batched``)."""
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
    header = zoo_record.header(seed, budget, quick, device, size)
    record = zoo_record.start(out, header, models)   # refused if a member it keeps has other settings
    if not models:   # --missing, and every member asked for is held
        log(f"nothing to train: {out} holds every member asked for, trained with these settings")
        return record
    stacked = models if batched else []
    alone = [m for m in models if m not in stacked]
    for i, name in enumerate(alone):
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
            raise Interrupted(out, alone[i:] + stacked, save_every) from err
        record = zoo_record.save_entry(out, header, name, entry)
    if stacked:
        pools.clear()
        try:
            batched_trainer.train_jobs([batched_trainer.Job(m, seed, out) for m in stacked], budget, quick=quick,
                                       evaluate=evaluate, device=device, log=log, save_every=save_every, size=size)
        except KeyboardInterrupt as err:
            raise Interrupted(out, [m for m in stacked if m not in zoo_record.held(out)], save_every) from err
        record = zoo_record.start(out, header, [])
    if evaluate:
        from .card import write as write_card
        log(f"model card: {write_card(out)}")
    log(f"done in {time.time() - t0:.0f}s -> {out}")
    return record


def _train_member(name, member, data, tok, budget, out, log, heldout, save_every, size=build.DEFAULT_SIZE) -> dict:
    torch.manual_seed(data.seed)
    fit = functools.partial(loop.run, name, data=data, budget=budget, out=out / name, log=log, save_every=save_every,
                            size=size)
    (out / name).mkdir(parents=True, exist_ok=True)
    with transformers_bars_off():   # save_pretrained draws none: the log is lines only (the probes draw none either)
        hist = TRAINERS[member.trainer](member, data, tok, budget, out / name, fit, heldout and heldout.probe_for(name),
                                        size=size)
    return zoo_record.entry(name, member, hist, out, log, heldout)


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
            train(a.out, a.steps, a.seed, a.models, a.quick, a.threads, not a.no_eval, a.device,
                  save_every=a.save_every, size=a.size, batched=a.batched, **({"pool": a.pool} if a.pool else {}),
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
