"""``probekit train-toy --rescore``: score a trained zoo on the held-out split of its seed again and rewrite its
held-out entries and model card, training nothing."""

from __future__ import annotations

import json
from pathlib import Path

from . import record as zoo_record
from .record import ZooError
from .zoo import CHECKPOINTS, MODELS


def rescore(out: str | Path | None = None, models=MODELS, log=print) -> dict:
    """Score the checkpoints already in ``out`` (default: the shipped ones) on the held-out split of their seed
    again, e.g. after a held-out check was added; rewrite their held-out entries in ``out/training.json`` and the
    model card.  Trains nothing."""
    from . import evaluate as ev
    from .card import write as write_card
    out = Path(out) if out else CHECKPOINTS
    record_path = out / "training.json"
    if not record_path.exists():
        raise ZooError(f"{record_path} not found: --rescore needs a zoo trained by `probekit train-toy`")
    record = json.loads(record_path.read_text())
    missing = [m for m in models if m not in zoo_record.held(out)]
    if missing:
        raise ZooError(f"{out} has no trained {missing}; pass --models with the members it holds")
    heldout = ev.HeldOut(seed=record["seed"])
    header = zoo_record.header_of(record)
    for name in models:
        entry = {**record["models"][name], "heldout": heldout.evaluate_dir(name, out / name)}
        record = zoo_record.save_entry(out, header, name, entry)
        log(f"[{name}] held-out: {entry['heldout']}")
    log(f"model card: {write_card(out)}")
    return record
