"""The optimisation loop every toy trainer shares: AdamW, a linear warm-up then a cosine decay, the loss curve and
the held-out curve, and a resume file.

Every ``save_every`` steps the loop writes everything the rest of the run depends on (weights, optimiser and
schedule state, both random generators, the curves so far) to ``<out>.resume.pt`` beside the member's directory.
A run interrupted mid-member therefore continues from its last save when it is started again, and ends with the
weights and curves an uninterrupted run would have had (same device and thread count).  A resume file written
under another budget, seed, device or model size is set aside, not used.  It is deleted when the member finishes.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .budget import recorded

SAVE_EVERY = 500     # steps between resume files


SCHEDULES = ("cosine", "wsd")
PRECISIONS = ("fp32", "bf16")


def schedule(opt, steps: int, warmup: float, shape: str = "cosine", decay: float = 0.2):
    """A linear warm-up over ``warmup`` of the steps, then to 0.1 of the peak: a cosine over the rest (``cosine``),
    or the peak held and a cosine over the last ``decay`` of the steps (``wsd``: warm-up, stable, decay)."""
    if shape not in SCHEDULES:
        raise ValueError(f"unknown learning-rate schedule {shape!r}; choose from {SCHEDULES}")
    w = max(1, int(steps * warmup))
    start = w if shape == "cosine" else max(w, steps - int(steps * decay))
    cos = lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - start) / max(1, steps - start)))
    f = lambda s: (s + 1) / w if s < w else (1.0 if s < start else cos(s))
    return torch.optim.lr_scheduler.LambdaLR(opt, f)


def resume_path(out: Path) -> Path:
    """Where the resume file of the member trained into ``out`` lives (beside it, so that ``out`` holds a model
    or nothing)."""
    return out.parent / f"{out.name}.resume.pt"


def _rng_state(data) -> dict:
    state = {"torch": torch.get_rng_state(), "numpy": data.rng.bit_generator.state}
    if data.device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(data.device)
    return state


def _set_rng_state(data, state: dict) -> None:
    torch.set_rng_state(state["torch"])
    data.rng.bit_generator.state = state["numpy"]
    if "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], data.device)


def precision(budget, device: torch.device):
    """A step's context for ``budget.precision``: bfloat16 autocast on ``device`` ("bf16") or nothing ("fp32")."""
    if budget.precision not in PRECISIONS:
        raise ValueError(f"unknown training precision {budget.precision!r}; choose from {PRECISIONS}")
    return (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if budget.precision == "bf16" \
        else contextlib.nullcontext


def resume_key(budget, data, size: str = "full") -> dict:
    """What a resume file must have been written under to be used: the budget, seed, device and (unless the
    default) model size."""
    return {"budget": recorded(budget), "seed": data.seed, "device": str(data.device),
            **({} if size == "full" else {"size": size})}


def restore(name: str, path: Path, key: dict, model, opt, sched, data, budget, log) -> tuple[dict, list, int, float]:
    """Load the resume file ``path`` into ``model``, ``opt``, ``sched`` and ``data``'s generators if it was written
    under ``key`` (else set it aside); return (history, running losses, first step, seconds spent)."""
    history: dict[str, list[Any]] = {"step": [], "loss": [], "probe_step": [], "probe": []}
    if not path.exists():
        return history, [], 1, 0.0
    # on the CPU: the random generators' states must be CPU tensors (load_state_dict moves the rest)
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state["key"] != key:
        path.replace(path.with_suffix(".stale"))
        log(f"[{name}] {path} was written under another budget, seed, device or size: set aside as "
            f"{path.with_suffix('.stale').name}; training from step 1")
        return history, [], 1, 0.0
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    sched.load_state_dict(state["sched"])
    _set_rng_state(data, state["rng"])
    log(f"[{name}] resuming at step {state['step'] + 1} of {budget.steps} from {path}")
    return state["history"], state["running"], state["step"] + 1, state["wall_s"]


def run(name: str, model: torch.nn.Module, step_fn, lr: float, probe=None, *, data, budget, out: Path, log,
        save_every: int = SAVE_EVERY, size: str = "full") -> dict:
    """Train ``model`` for ``budget.steps`` steps of ``step_fn`` (which returns the loss); return its history
    (loss every 25 steps, held-out ``probe`` every ``budget.eval_every`` steps, wall time).  ``size`` (the zoo's,
    ``build.SIZES``) is in the resume file's key unless it is the default, so that resume files written before
    the option still match."""
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    sched = schedule(opt, budget.steps, budget.warmup, budget.schedule, budget.decay)
    autocast = precision(budget, data.device)
    key = resume_key(budget, data, size)
    path = resume_path(out)
    history, running, first, spent = restore(name, path, key, model, opt, sched, data, budget, log)
    t0 = time.time() - spent
    for step in range(first, budget.steps + 1):
        with autocast():   # bf16: matrix products in bfloat16, weights and optimiser state in fp32
            loss = step_fn()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        running = note(name, history, running, loss.item(), step, budget, probe, (t0, spent, first), log)
        if step % save_every == 0 and step < budget.steps:
            save(path, key, step, model, opt, sched, data, history, running, time.time() - t0)
    history["wall_s"] = time.time() - t0
    return history


def note(name: str, history: dict, running: list, loss: float, step: int, budget, probe, clock: tuple, log) -> list:
    """Add ``step``'s ``loss`` to the curve (the mean of every 25 steps), run the held-out ``probe`` and log as due;
    return the losses not yet in the curve.  ``clock``: (start time, seconds spent before it, first step)."""
    t0, spent, first = clock
    running = running + [loss]
    if step % 25 == 0 or step == budget.steps:
        history["step"].append(step)
        history["loss"].append(float(np.mean(running)))
        running = []
    if probe and budget.eval_every and (step % budget.eval_every == 0 or step == budget.steps):
        scores = probe()
        history["probe_step"].append(step)
        history["probe"].append(scores)
        log(f"[{name}] step {step}/{budget.steps} loss {history['loss'][-1]:.4f} held-out {scores} "
            f"({_elapsed(time.time() - t0, spent, step - first + 1, budget.steps - step)})")
    elif step % 100 == 0:
        log(f"[{name}] step {step}/{budget.steps} loss {history['loss'][-1]:.4f} "
            f"({_elapsed(time.time() - t0, spent, step - first + 1, budget.steps - step)})")
    return running


def _elapsed(wall: float, spent: float, done: int, todo: int) -> str:
    """Time so far, and the time left at the pace of the ``done`` steps since this run started or resumed (the
    first ``spent`` seconds were an earlier run's)."""
    return f"{wall:.0f}s, {(wall - spent) / done * todo / 60:.0f} min left"


def save(path: Path, key: dict, step: int, model, opt, sched, data, history: dict, running: list,
          wall_s: float) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save({"key": key, "step": step, "model": model.state_dict(), "opt": opt.state_dict(),
                "sched": sched.state_dict(), "rng": _rng_state(data), "history": history, "running": running,
                "wall_s": wall_s}, tmp)
    os.replace(tmp, path)   # a run killed mid-write leaves the previous resume file whole
