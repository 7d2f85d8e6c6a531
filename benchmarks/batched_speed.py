"""Member-steps per second of the toy ViLT: M members trained at once (``train-toy --batched``) against the same M
members trained one after another (``train-toy``), same machine, one run, steps timed after a warm-up.

Both sides run the real trainers (``probekit.toymodels.batched._fit`` and ``loop.run`` on ``trainers.train_vilt``'s
step) on the same pool; the pool's rendering, saving and scoring are outside the timings.  Prints one line per
side and the load average before and after (other work on the machine slows both).

    PYTHONPATH=. python benchmarks/batched_speed.py --members 4 --steps 20 --size full --threads 1
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from probekit.toymodels import batched, build, loop, trainers
from probekit.toymodels.batches import Batches
from probekit.toymodels.budget import make
from probekit.toymodels.zoo import member
from probekit.toyworld import stream

NAMES = ["toy-vilt", "toy-vilt-hardneg", "toy-vilt-noverbword", "toy-vilt-noverbpose", "toy-vilt-unpaired",
         "toy-vilt-noisy", "toy-vilt-mismatch", "toy-vilt-noverb"]


def _states(names, pool, budget, size, out):
    tok = build.tokenizer()
    return [batched._start(batched.Job(n, 0, out), pool.fork(), tok, budget, size, lambda *a: None, None)
            for n in names]


def one_after_another(names, pool, budget, size, warm: int) -> float:
    """Seconds per member-step of ``loop.run`` on each member in turn (its first ``warm`` steps not timed)."""
    tok, spent = build.tokenizer(), 0.0
    for name in names:
        data = pool.fork()
        torch.manual_seed(0)
        model = trainers.untrained("vilt", tok, size).train()
        marks = []

        def step():
            itm, mlm = trainers.vilt_batch(member(name), data, tok, budget)
            marks.append(time.perf_counter())
            pixels = itm["pixel_values"]
            pmask = torch.ones(len(pixels), pixels.shape[2], pixels.shape[3], dtype=torch.long)
            logit = model.itm(input_ids=itm["input_ids"], attention_mask=itm["attention_mask"], pixel_values=pixels,
                              pixel_mask=pmask).logits[:, 0]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, itm["labels"])
            return loss + model.mlm(**mlm, pixel_mask=pmask).loss

        with tempfile.TemporaryDirectory() as tmp:
            loop.run(name, model, step, budget.lr_vilt, data=data, budget=budget, out=Path(tmp) / name,
                     log=lambda *a: None, save_every=10 ** 9, size=size)
        spent += marks[-1] - marks[warm]   # steps warm .. last-1 (each mark is taken once a step's batch is drawn)
    return spent / (len(names) * (budget.steps - 1 - warm))


def at_once(names, pool, budget, size, warm: int) -> float:
    """Seconds per member-step of ``batched._fit`` on all members at once (its first ``warm`` steps not timed)."""
    marks = []
    real = batched.vilt_batch

    def timed(*args):
        if args[0] is member(names[0]):
            marks.append(time.perf_counter())
        return real(*args)

    batched.vilt_batch = timed
    with tempfile.TemporaryDirectory() as tmp:
        states = _states(names, pool, budget, size, Path(tmp))
        batched._fit(states, budget, 10 ** 9, lambda *a: None, {}, {Path(tmp): {}})
    batched.vilt_batch = real
    return (marks[-1] - marks[warm]) / (len(names) * (budget.steps - 1 - warm))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--members", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warm", type=int, default=3)
    p.add_argument("--size", default="full", choices=list(build.SIZES))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    names = (NAMES * a.members)[:a.members]
    budget = make(steps=a.steps, batch=a.batch, pool=512, eval_every=0)
    pool = Batches(stream.pool(budget.pool, 0), 0, build.tokenizer())
    print(f"load average before: {os.getloadavg()}; {a.members} members, {a.steps} steps ({a.warm} warm-up), size "
          f"{a.size}, batch {a.batch}, {a.threads} torch threads, torch {torch.__version__}")
    alone = one_after_another(names, pool, budget, a.size, a.warm)
    together = at_once(names, pool, budget, a.size, a.warm)
    print(f"one after another: {1 / alone:.2f} member-steps/s ({alone * 1000:.0f} ms per member-step)")
    print(f"at once (batched): {1 / together:.2f} member-steps/s ({together * 1000:.0f} ms per member-step); "
          f"speed-up {alone / together:.2f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
