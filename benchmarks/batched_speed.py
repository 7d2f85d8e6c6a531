"""Member-steps per second of the toy ViLT, CLIP and BERT: M members trained at once (``train-toy --batched``)
against the same M members trained one after another (``train-toy``), same machine, one run, steps timed after a
warm-up.

Both sides run the real trainers (``probekit.toymodels.batched._fit``, and ``loop.run`` on the step of
``trainers.TRAINERS``) on the same pool; the pool's rendering, saving and scoring are outside the timings (each
step is timed from its start, batch drawing included, to the next step's start).  Prints one line per
architecture and side, and the load average before and after (other work on the machine slows both).

    PYTHONPATH=. python benchmarks/batched_speed.py --arch vilt clip bert --members 4 --steps 20 --size full
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from probekit.scorers.hf import transformers_bars_off
from probekit.toymodels import batched, build, loop, trainers
from probekit.toymodels.batches import Batches
from probekit.toymodels.budget import make
from probekit.toymodels.stack_steps import STEPS
from probekit.toymodels.zoo import member
from probekit.toyworld import stream

NAMES = {"vilt": ["toy-vilt", "toy-vilt-hardneg", "toy-vilt-noverbword", "toy-vilt-noverbpose", "toy-vilt-unpaired",
                  "toy-vilt-noisy", "toy-vilt-mismatch", "toy-vilt-noverb"],
         "clip": ["toy-clip", "toy-clip-hardneg", "toy-clip-noattr", "toy-clip-unbound"],   # B and 2B texts
         "bert": ["toy-bert"]}


def one_after_another(names, pool, budget, size, warm: int) -> float:
    """Seconds per member-step of ``loop.run`` on each member in turn (its first ``warm`` steps not timed)."""
    tok, spent = build.tokenizer(), 0.0
    for name in names:
        data, marks = pool.fork(), []

        def fit(model, step_fn, lr, probe):
            def timed():
                marks.append(time.perf_counter())
                return step_fn()
            return loop.run(name, model, timed, lr, data=data, budget=budget, out=Path(tmp) / name,
                            log=lambda *a: None, save_every=10 ** 9, size=size)

        torch.manual_seed(0)
        with tempfile.TemporaryDirectory() as tmp, transformers_bars_off():
            trainers.TRAINERS[member(name).trainer](member(name), data, tok, budget, Path(tmp) / name, fit, size=size)
        spent += marks[-1] - marks[warm]   # steps warm .. last-1
    return spent / (len(names) * (budget.steps - 1 - warm))


def at_once(names, pool, budget, size, warm: int) -> float:
    """Seconds per member-step of ``batched._fit`` on all members at once (its first ``warm`` steps not timed)."""
    trainer, marks = member(names[0]).trainer, []
    real = STEPS[trainer]

    def timed(*args):
        marks.append(time.perf_counter())
        return real(*args)

    STEPS[trainer] = timed
    try:
        with tempfile.TemporaryDirectory() as tmp:
            states = [batched._start(batched.Job(n, 0, Path(tmp) / str(i)), pool.fork(), build.tokenizer(), budget,
                                     size, lambda *a: None, None) for i, n in enumerate(names)]
            batched._fit(states, budget, 10 ** 9, lambda *a: None, {}, {Path(tmp) / str(i): {} for i in
                                                                         range(len(names))})
    finally:
        STEPS[trainer] = real
    return (marks[-1] - marks[warm]) / (len(names) * (budget.steps - 1 - warm))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", nargs="+", default=list(NAMES), choices=list(NAMES))
    p.add_argument("--members", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warm", type=int, default=3)
    p.add_argument("--size", default="full", choices=list(build.SIZES))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    budget = make(steps=a.steps, batch=a.batch, pool=512, eval_every=0)
    pool = Batches(stream.pool(budget.pool, 0), 0, build.tokenizer())
    print(f"load average before: {os.getloadavg()}; {a.members} members, {a.steps} steps ({a.warm} warm-up), size "
          f"{a.size}, batch {a.batch}, {a.threads} torch threads, torch {torch.__version__}")
    for arch in a.arch:
        names = (NAMES[arch] * a.members)[:a.members]
        alone = one_after_another(names, pool, budget, a.size, a.warm)
        together = at_once(names, pool, budget, a.size, a.warm)
        print(f"{arch}: one after another {1 / alone:.2f} member-steps/s ({alone * 1000:.0f} ms per member-step); "
              f"at once (batched) {1 / together:.2f} member-steps/s ({together * 1000:.0f} ms); "
              f"speed-up {alone / together:.2f}x", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
