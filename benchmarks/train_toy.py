"""How long the toy zoo takes to train here: seconds per optimiser step of each zoo member, and the wall time of
the whole zoo at the training budget (``probekit.toymodels.train.Budget``), one member after another.

    PYTHONPATH=. python benchmarks/train_toy.py [--device cuda] [--threads 1] [--steps 40] [--budget-steps N] [--jobs 2]
        [--members ...]

Each member trains ``--steps`` steps on a small pool (the first few steps are a warm-up and are not timed) with no
held-out probes; the projection adds the held-out curve's probes at the budget's ``eval_every``, and gives the wall
time of ``train-toy --jobs N`` too, as its members would be scheduled (slowest first, each at the pace measured
alone: on a CPU, N no larger than the cores).  Members that share
a trainer and a negative scheme cost the same per step, so one of each kind is timed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import torch

from probekit.toymodels import build
from probekit.toymodels import evaluate as ev
from probekit.toymodels import train as T
from probekit.toymodels.jobs import slowest_first
from probekit.toymodels.zoo import ZOO

TIMED = ("toy-clip", "toy-clip-hardneg", "toy-vilt", "toy-vilt-hardneg", "toy-bert")
WARMUP = 5


def per_step(name: str, steps: int, device: str) -> float:
    """Seconds per step of ``name`` after the warm-up steps (a training run's own wall time, measured twice)."""
    walls = []
    for n in (WARMUP, WARMUP + steps):
        with tempfile.TemporaryDirectory() as out:
            rec = T.train(out, steps=n, models=[name], evaluate=False, device=device, log=lambda *_: None,
                          pool=512, eval_every=0)
            walls.append(rec["models"][name]["wall_s"])
    return (walls[1] - walls[0]) / steps


def probe_s(name: str, heldout: ev.HeldOut, device: str) -> float:
    """Seconds for one held-out probe of the training curve (``HeldOut.quick`` of an in-memory model)."""
    probe = heldout.probe_for(name)
    if probe is None:
        return 0.0
    model = T.untrained(ZOO[name].trainer, build.tokenizer()).to(device).eval()   # ViLT with both of its heads
    t0 = time.time()
    probe(model)
    return time.time() - t0


def parallel_min(minutes: dict, jobs: int) -> float:
    """Wall time of the whole zoo when ``jobs`` processes take the members in ``train-toy --jobs``'s order, each
    starting as soon as one is free."""
    free = [0.0] * jobs
    for name in slowest_first(ZOO):
        free[free.index(min(free))] += minutes[name]
    return max(free)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--steps", type=int, default=40, help="timed steps per member")
    p.add_argument("--budget-steps", type=int, default=T.Budget.steps, help="the budget to project to")
    p.add_argument("--jobs", type=int, default=2, help="members at once for the parallel projection")
    p.add_argument("--members", nargs="+", default=list(TIMED), choices=TIMED,
                   help="time only these (the whole zoo is projected only when every kind is timed)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    budget = T.Budget(steps=a.budget_steps)
    probes = budget.steps // budget.eval_every if budget.eval_every else 0
    print(f"device {a.device}, {torch.get_num_threads()} torch threads, budget {budget.steps} steps, "
          f"{probes} held-out probes per member")
    print("| member | s/step | s/probe | projected member (min) |\n|---|---|---|---|")
    cost, heldout = {}, ev.HeldOut(seed=0)
    for name in a.members:
        s, pr = per_step(name, a.steps, a.device), probe_s(name, heldout, a.device)
        cost[(ZOO[name].trainer, ZOO[name].hard_negatives)] = minutes = (s * budget.steps + pr * probes) / 60
        print(f"| {name} | {s:.4f} | {pr:.1f} | {minutes:.1f} |")
    if len(cost) < len(TIMED):
        return
    minutes = {name: cost[(m.trainer, m.hard_negatives)] for name, m in ZOO.items()}
    total, parallel = sum(minutes.values()), parallel_min(minutes, a.jobs)
    print(f"whole zoo ({len(ZOO)} members, one after another): {total:.0f} min; with --jobs {a.jobs}: "
          f"{parallel:.0f} min")
    print(json.dumps({"device": a.device, "threads": torch.get_num_threads(), "budget_steps": budget.steps,
                      "zoo_min": round(total, 1), "jobs": a.jobs, "zoo_parallel_min": round(parallel, 1)}))


if __name__ == "__main__":
    main()
