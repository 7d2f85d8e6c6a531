"""The zoo's training record, ``<out>/training.json``: the run's header (seed, budget, device, threads) and one
entry per trained member.  Runs with disjoint ``--models`` may share one ``--out`` (one per core, say): each entry
is merged into the file under a lock when its member is saved, so no run overwrites another's.  A run whose header
differs from that of members it does not retrain is refused, since the model card states one recipe for the zoo.
The models' size (``train-toy --size``) is written only when it is not the default, so a record without one (every
zoo trained before the option) is of the default size."""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path

import torch

from . import budget, loop
from .budget import LATER
from .zoo import order

HEADER = ("seed", "budget", "quick", "device", "threads", "size")
#: what a record without the setting was trained with (settings added after zoos were written with the default)
DEFAULTS = {"size": "full"}   # build.DEFAULT_SIZE
FLAGS = {"seed": "--seed", "device": "--device", "threads": "--threads", "size": "--size",
         **{f"budget.{k}": flag for k, flag in budget.FLAGS.items()}}   # the train-toy options that set them


class ZooError(ValueError):
    """A zoo directory that cannot be trained into or re-scored as asked."""


@contextmanager
def _locked(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".training.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield out / "training.json"


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _write(path: Path, record: dict) -> None:
    models = record.get("models", {})
    record["models"] = {m: models[m] for m in sorted(models, key=order)}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, path)


def _differences(old: dict, new: dict, prefix: str = "") -> dict:
    out = {}
    for key in [*new, *(k for k in old if k not in new)]:   # a setting either side states (a budget's later ones)
        value, there = new.get(key), old.get(key)
        if isinstance(value, dict) and isinstance(there, dict):
            out.update(_differences(there, value, f"{prefix}{key}."))
        elif there != value:
            out[prefix + key] = (there, value)
    return out


def settings(record: dict) -> dict:
    """The run settings a record (or a run's header) states, with :data:`DEFAULTS` where it has none."""
    out = {k: record.get(k, DEFAULTS.get(k)) for k in HEADER}
    if isinstance(out["budget"], dict):   # a budget setting added later: the value zoos before it were trained with
        out["budget"] = {**LATER, **out["budget"]}
    return out


def header_of(record: dict) -> dict:
    """The header a record was written with (a setting of :data:`DEFAULTS` only where the record has it)."""
    return {k: record.get(k) for k in HEADER if k in record or k not in DEFAULTS}


def _update(record: dict, header: dict) -> None:
    record.update(header)
    for k in DEFAULTS:
        if k not in header:
            record.pop(k, None)   # the default: not written (a stale value of members all retrained goes)


def _check(out: Path, record: dict, header: dict, mine) -> None:
    kept = [m for m in record.get("models", {}) if m not in mine]
    differ = _differences(settings(record), settings(header))
    if kept and differ:
        said = "; ".join(f"{k}: {old} there, {new} here" for k, (old, new) in differ.items())
        fix = " ".join(f"{FLAGS[k]} {old}" for k, (old, _) in differ.items() if k in FLAGS)
        if not fix or set(differ) - set(FLAGS):
            fix = (fix + " and " if fix else "") + "the rest of its record's settings"
        raise ZooError(f"{out} holds {kept} trained with other settings ({said}): train into another --out, or pass "
                       f"{fix}")


def held(out: Path) -> list[str]:
    """The members ``out`` holds finished: an entry in its record and saved weights' config (a member stopped
    mid-training has no entry, only its resume file)."""
    return [m for m in _read(out / "training.json").get("models", {}) if (out / m / "config.json").exists()]


def start(out: Path, header: dict, models) -> dict:
    """Check this run's ``header`` against the members already in ``out`` that it does not retrain, then write it;
    return the record.  Raises ZooError naming the differing settings and those members."""
    with _locked(out) as path:
        record = _read(path)
        _check(out, record, header, models)
        _update(record, header)
        record.setdefault("models", {})
        _write(path, record)
        return record


def save_entry(out: Path, header: dict, name: str, entry: dict) -> dict:
    """Merge one member's entry into the record as it is on disk now (another run into the same ``out`` may have
    added members since this one started, under the same header: checked again); return the record."""
    with _locked(out) as path:
        record = _read(path)
        _check(out, record, header, [name])
        _update(record, header)
        record.setdefault("models", {})[name] = entry
        _write(path, record)
        return record


def header(seed: int, budget_: budget.Budget, quick: bool, device: str, size: str) -> dict:
    """The settings a run states for its members (:data:`HEADER`; the size only when not the default)."""
    return dict(seed=seed, budget=budget.recorded(budget_), quick=quick, device=device, threads=torch.get_num_threads(),
                **({} if size == DEFAULTS["size"] else {"size": size}))


def entry(name: str, member, hist: dict, out: Path, log, heldout=None) -> dict:
    """The record entry of the zoo ``member`` ``name``, saved in ``out/name`` with its curve ``hist``: its resume
    file goes, and ``heldout`` (an ``evaluate.HeldOut``, when given) scores it."""
    loop.resume_path(out / name).unlink(missing_ok=True)      # the member is saved: nothing left to resume
    found = {"history": hist, "wall_s": hist["wall_s"], "recipe": member.recipe.describe(),
             "parent": member.parent, "factor": member.factor, "hard_negatives": member.hard_negatives}
    if heldout:
        found["heldout"] = heldout.evaluate_dir(name, out / name)
        log(f"[{name}] held-out: {found['heldout']}")
    return found
