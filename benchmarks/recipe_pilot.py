"""A cheaper toy zoo (project issue 51, item 1): train a member at a smaller ``train-toy --size`` for a given number of
steps on one thread, and measure what it costs and whether the two hard sub-probes stay learnable.

    PYTHONPATH=. nice -n 10 python benchmarks/recipe_pilot.py --size small --steps 4000 [--models toy-vilt ...]
        [--root /work/pilot] [--time-others]
    PYTHONPATH=. python benchmarks/recipe_pilot.py --table [--root /work/pilot]

Each run trains into ``<root>/<size>-<steps>[-lr<lr>]/`` (a zoo directory of ``probekit train-toy``: its ``training.json``
and held-out curves) and writes its measurements to ``pilot.json`` there.  The same command again
goes on where it stopped: a member already trained is not retrained (one stopped mid-training resumes from its
resume file, written every ``--save-every`` steps), one already measured is not measured again.

Measured, with the chapters' own study code on evaluation-split items rendered into ``<root>/data``:

* cost: wall time and the process's CPU time of training (held-out curve probes included, as in the card's wall
  time), s/step, one curve probe's seconds, the training pool's rendering;
* (a) predicate-noun pairs whose two agents' limbs look alike (``prednoun.limbs_rows``, probe ``pairs-limbs``,
  full images, default template; pair accuracy, chance 25 %, and triplet accuracy, chance 50 %) on
  ``--prednoun-items`` triplets; the easy parts: pairs whose limbs differ, cropped pairs;
* (b) verb negatives told apart only by the object's place (``verbs.score_model``'s ``svo-verb-cue`` rows,
  pairwise, chance 50 %) on ``--verbs-items`` SVO rows; the easy part: those told apart by the pose;
* the card's flatness rule (``probekit.toymodels.convergence``) on the held-out curves at the end of the schedule,
  and the first probe step from which every curve of the run so far is flat (a prefix of the schedule: the
  learning rate has not decayed there yet, so it is a lower bound's hint, not a converged run).

``--shipped`` measures the shipped zoo's ``--models`` the same way (on the same items), into
``<root>/full-30000-shipped/``, its cost and curves read from the shipped ``training.json``: the baseline.

``--time-others`` also times a training step of every kind of member at this size (ViLT, ViLT with swaps, CLIP,
CLIP with swaps, BERT) on a small pool, for the projection of the whole zoo:
``--table`` projects the zoo (its members at the run's steps, pool rendering and curve probes included) x 3 seeds
in core-hours.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path("/work/pilot")
HARD_B = "verbs, verb negatives told by the object's place: pairwise"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _row(r) -> dict:
    return {"value": float(r["value"]), "ci": [float(r["ci_low"]), float(r["ci_high"])], "n": int(r["n"]),
            "chance": float(r["chance"])}


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def train_member(zoo: Path, name: str, a, log) -> dict:
    """Train ``name`` into ``zoo`` unless it is held there; its cost (wall and CPU seconds of this process)."""
    from probekit.toymodels import record as zoo_record
    from probekit.toymodels import train as T
    if name in zoo_record.held(zoo):
        return {}
    resumed = (zoo / f"{name}.resume.pt").exists()
    c0, t0 = cpu_s(), time.time()
    T.train(zoo, steps=a.steps, seed=a.seed, models=[name], threads=1, size=a.size, log=log,
            save_every=a.save_every, pool=a.pool, eval_every=a.eval_every,
            **({"lr_vilt": a.lr_vilt} if a.lr_vilt else {}), schedule=a.schedule, precision=a.precision,
            **({"warmup": a.warmup} if a.warmup else {}))
    return {"cpu_s_process": cpu_s() - c0, "wall_s_process": time.time() - t0, "resumed": resumed}


def pool_s(a) -> float:
    from probekit.toyworld import stream
    n = min(a.pool, 5000)
    t0 = cpu_s()
    stream.pool(n, a.seed)
    return (cpu_s() - t0) * a.pool / n


def probe_s(name: str, size: str, heldout) -> float:
    """CPU seconds of one held-out curve probe of ``name`` (an untrained model of ``size``: the same work)."""
    import torch
    from probekit.toymodels import build
    from probekit.toymodels import train as T
    from probekit.toymodels.zoo import ZOO
    probe = heldout.probe_for(name)
    if probe is None:
        return 0.0
    torch.manual_seed(0)
    model = T.untrained(ZOO[name].trainer, build.tokenizer(), size).eval()
    t0 = cpu_s()
    probe(model)
    return cpu_s() - t0


def step_s(name: str, size: str, steps: int = 60, warmup: int = 5) -> float:
    """CPU seconds per training step of ``name`` at ``size`` (small pool, no probes), as benchmarks/train_toy.py:
    the difference of a ``warmup + steps`` and a ``warmup``-step run, after a throwaway run (the first run of a
    process pays one-time costs, which made the difference of the next two come out negative)."""
    from probekit.toymodels import train as T
    cpu = []
    for n in (2, warmup, warmup + steps):
        with tempfile.TemporaryDirectory() as out:
            c0 = cpu_s()
            T.train(out, steps=n, models=[name], evaluate=False, log=lambda *_: None, pool=512, eval_every=0,
                    size=size, threads=1)
            cpu.append(cpu_s() - c0)
    return (cpu[2] - cpu[1]) / steps


def flatness(history: dict) -> dict:
    """The card's verdicts at the end, and the first probe step from which the run's curves so far are all flat."""
    from probekit.toymodels.card import CURVE_KEYS
    from probekit.toymodels.convergence import trends, unsettled, verdict
    end = trends(history, CURVE_KEYS)
    first_flat = None
    for k in range(4, len(history.get("probe") or []) + 1):
        part = {"probe": history["probe"][:k], "probe_step": history["probe_step"][:k]}
        found = trends(part, CURVE_KEYS)
        if found and not unsettled(found):
            first_flat = history["probe_step"][k - 1]
            break
    return {"end": {k: [verdict(t), *map(float, t)] for k, t in end.items()},
            "all_flat_at_end": bool(end) and not unsettled(end), "first_all_flat_step": first_flat}


def measure(zoo: Path, name: str, a, log) -> dict:
    """The hard sub-probes and their easy parts, with the chapters' study code, on ``name`` saved in ``zoo``."""
    from probekit.data.prednoun import crop_to_targets
    from probekit.datasets import load_dataset
    from probekit.metrics import pairs
    from probekit.results import select
    from probekit.scorers import load_scorer
    from probekit.studies.prednoun import study as prednoun
    from probekit.studies.verbs import study as verbs
    from probekit.toyworld import svo
    data = a.root / "data"
    os.environ["PROBEKIT_TOY_CHECKPOINTS"] = str(zoo)
    scorer = load_scorer(name, device="cpu", batch_size=64, cache_dir=False)
    res: dict = {}
    t0 = cpu_s()
    items = load_dataset("prednoun", "toy", data_dir=data, limit=a.prednoun_items, seed=a.seed)
    full = prednoun.score_run(name, scorer, items, {}, "full", "default")
    crops = crop_to_targets(items, data)
    cropped = prednoun.score_run(name, scorer, items, {"cropped": crops}, "cropped", "default")
    limbs = prednoun.limbs_rows({(name, "full", "default"): full}, a.seed)
    for subset in ("limbs alike", "limbs differ"):
        for metric in ("pair_accuracy", "triplet_accuracy"):
            res[f"prednoun full, {subset}: {metric}"] = _row(select(limbs, subset=subset, metric=metric).iloc[0])
    for cond, scored in (("full", full), ("cropped", cropped)):
        rows = pairs.accuracy(scored, model=name, probe="pairs", condition=cond, seed=a.seed)
        for metric in ("pair_accuracy", "triplet_accuracy"):
            res[f"prednoun {cond}, all: {metric}"] = _row(select(rows, subset="all", metric=metric).iloc[0])
    log(f"[{name}] prednoun on {len(items)} triplets: {cpu_s() - t0:.0f} CPU s")
    t0 = cpu_s()
    vitems = load_dataset("verbs", "toy", data_dir=data, limit=a.verbs_items, seed=a.seed)
    rows, _, _, _ = verbs.score_model(scorer, vitems, 0.5, 30, 1000, a.seed, svo.verb_cue(vitems))
    for r in select(rows, probe=verbs.CUE_PROBE).to_dict("records"):
        res[f"verbs, verb negatives told by {r['subset']}: pairwise"] = _row(r)
    for r in select(rows, probe="svo", metric="pairwise").to_dict("records"):
        res[f"verbs, {r['subset']} negatives: pairwise"] = _row(r)
    log(f"[{name}] verbs on {len(vitems)} rows: {cpu_s() - t0:.0f} CPU s")
    return res


def run(a, log=print) -> dict:
    import torch
    torch.set_num_threads(1)
    from probekit.toymodels import evaluate as ev
    from probekit.toymodels import train as T
    if a.shipped:
        zoo, here = T.CHECKPOINTS, a.root / "full-30000-shipped"
        a.size, a.steps, a.pool, a.eval_every = "full", T.Budget.steps, T.Budget.pool, T.Budget.eval_every
    else:
        zoo = here = a.root / (f"{a.size}-{a.steps}" + (f"-lr{a.lr_vilt:g}" if a.lr_vilt else "")
                               + ("" if a.schedule == "cosine" else f"-{a.schedule}")
                               + ("" if a.precision == "fp32" else f"-{a.precision}")
                               + (f"-warmup{a.warmup:g}" if a.warmup else "")
                               + (f"-emphasis{a.emphasis:g}" if a.emphasis else ""))
        if a.emphasis:   # the members trained here draw the hard cases more often (toyworld/emphasis.py)
            from dataclasses import replace
            from probekit.toymodels.zoo import ALL, TABLES
            for table in (*TABLES.values(), ALL):
                for name in a.models:
                    if name in table:
                        table[name] = replace(table[name], recipe=replace(table[name].recipe, emphasis=a.emphasis))
    here.mkdir(parents=True, exist_ok=True)
    path = here / "pilot.json"
    state = _read(path)
    state.update(size=a.size, steps=a.steps, seed=a.seed, pool=a.pool, eval_every=a.eval_every,
                 lr_vilt=a.lr_vilt or T.Budget.lr_vilt, schedule=a.schedule, precision=a.precision,
                 warmup=a.warmup or T.Budget.warmup, emphasis=a.emphasis)
    members = state.setdefault("members", {})
    for name in a.models:
        cost = {} if a.shipped else train_member(zoo, name, a, log)
        m = members.setdefault(name, {})
        if cost:
            m["cost"] = cost
        rec = json.loads((zoo / "training.json").read_text())["models"][name]
        m.update(wall_s=rec["wall_s"], n_probes=len(rec["history"]["probe_step"]), heldout=rec.get("heldout"),
                 flatness=flatness(rec["history"]))
        _write(path, state)
        if "probes" not in m or a.remeasure:
            m["probes"] = measure(zoo, name, a, log)
            m["uptime"] = os.getloadavg()
            _write(path, state)
    heldout = None
    timing = state.setdefault("timing", {})
    if "pool_cpu_s" not in timing:
        timing["pool_cpu_s"] = pool_s(a)
    for name in ("toy-vilt", "toy-vilt-hardneg", "toy-clip", "toy-clip-hardneg", "toy-bert"):
        if name not in timing.get("probe_cpu_s", {}):
            heldout = heldout or ev.HeldOut(seed=a.seed)
            timing.setdefault("probe_cpu_s", {})[name] = probe_s(name, a.size, heldout)
            _write(path, state)
    if a.retime:
        timing.pop("step_cpu_s", None)
    if a.time_others or a.retime:
        for name in ("toy-vilt", "toy-vilt-hardneg", "toy-clip", "toy-clip-hardneg", "toy-bert"):
            if name not in timing.setdefault("step_cpu_s", {}):
                timing["step_cpu_s"][name] = step_s(name, a.size)
                log(f"[{name}] {timing['step_cpu_s'][name]:.3f} CPU s/step at size {a.size}")
                _write(path, state)
    state["date"] = time.strftime("%Y-%m-%d %H:%M")
    _write(path, state)
    return state


# ------------------------------------------------------------------------------------------------------ the table
def _pct(r: dict | None) -> str:
    if not r:
        return "—"
    return f"{100 * r['value']:.1f} [{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}] ({r['n']})"


def member_cpu_s(state: dict, name: str, steps_of_size: dict | None = None) -> float | None:
    """CPU seconds of one member at the run's steps: measured when it was trained here, else its kind's step time
    from ``--time-others`` (this run's, else ``steps_of_size``: another run's of the same size) plus its curve
    probes and the pool's rendering."""
    from probekit.toymodels.zoo import ZOO
    member, timing = ZOO[name], state.get("timing", {})
    kind = {("vilt", False): "toy-vilt", ("vilt", True): "toy-vilt-hardneg", ("clip", False): "toy-clip",
            ("clip", True): "toy-clip-hardneg", ("bert", False): "toy-bert"}[(member.trainer, member.hard_negatives)]
    pool = timing.get("pool_cpu_s", 0.0)
    own = state["members"].get(name) or state["members"].get(kind)
    if own and own.get("cost") and not own["cost"]["resumed"]:
        return own["cost"]["cpu_s_process"]   # pool, probes and the held-out evaluation are in it
    step = (steps_of_size or {}).get(kind) or timing.get("step_cpu_s", {}).get(kind)
    if step is None:
        return None
    probes = state["steps"] // state["eval_every"] if state["eval_every"] else 0
    return pool + state["steps"] * step + probes * timing.get("probe_cpu_s", {}).get(kind, 0.0)


def table(root: Path) -> str:
    from probekit.toymodels.zoo import ZOO
    lines = ["| size | member | steps | s/step: wall, CPU (all in), CPU (step alone) | core-min per member | "
             "zoo x 3 seeds (core-h) | "
             "(a) limbs alike: pair acc, chance 25 | (a) limbs alike: triplet acc, chance 50 | "
             "(b) verb negs by the object's place, chance 50 | easy: limbs differ pair acc | easy: cropped pair acc | "
             "easy: verb negs by the pose | held-out curves at the end | all flat from step | load (1, 5, 15 min) |",
             "|---" * 15 + "|"]
    runs = [{**_read(path), "shipped": path.parent.name.endswith("-shipped")}
            for path in sorted(root.glob("*/pilot.json"), key=lambda q: (q.parent.name.startswith("full"), q.parent.name))]
    found: dict = {}   # per size and kind, every run's step timing: the table uses their mean
    for s in runs:
        for kind, v in s.get("timing", {}).get("step_cpu_s", {}).items():
            found.setdefault(s["size"], {}).setdefault(kind, []).append(v)
    steps_of_size = {size: {k: float(np.mean(v)) for k, v in kinds.items()} for size, kinds in found.items()}
    for s in runs:
        per = {m: member_cpu_s(s, m, steps_of_size.get(s["size"], {})) for m in ZOO}
        zoo_h = 3 * sum(per.values()) / 3600 if all(v is not None for v in per.values()) else None
        for name, m in s.get("members", {}).items():
            if "probes" not in m:
                continue
            p, cost = m["probes"], m.get("cost") or {}
            cpu = cost.get("cpu_s_process")
            flat = m["flatness"]
            not_flat = [f"{k} {v[0]} {v[1]:+.1f}" for k, v in flat["end"].items() if v[0] != "flat"]
            alone = steps_of_size.get(s["size"], {}).get(name)
            step = " / ".join([f"{m['wall_s'] / s['steps']:.3f}", f"{cpu / s['steps']:.3f}" if cpu else "—",
                               f"{alone:.3f}" if alone else "—"])
            zoo_cell = f"{zoo_h:.1f}" if zoo_h else "—"
            lr = (f", lr {s['lr_vilt']:g}" if s.get("lr_vilt", 5e-4) != 5e-4 else "") + "".join(
                f", {k} {s[k]}" for k, plain in (("schedule", "cosine"), ("precision", "fp32"), ("warmup", 0.08),
                                                  ("emphasis", 0))
                if s.get(k, plain) != plain
            ) + (" (shipped zoo)" if s["shipped"] else "")
            lines.append(
                f"| {s['size']}{lr} | {name} | {s['steps']} | {step} | {(cpu or m['wall_s']) / 60:.1f} | {zoo_cell} | "
                f"{_pct(p.get('prednoun full, limbs alike: pair_accuracy'))} | "
                f"{_pct(p.get('prednoun full, limbs alike: triplet_accuracy'))} | "
                f"{_pct(p.get(HARD_B))} | "
                f"{_pct(p.get('prednoun full, limbs differ: pair_accuracy'))} | "
                f"{_pct(p.get('prednoun cropped, all: pair_accuracy'))} | "
                f"{_pct(p.get('verbs, verb negatives told by the pose: pairwise'))} | "
                f"{'flat' if flat['all_flat_at_end'] else '; '.join(not_flat) or 'n/a'} | "
                f"{flat['first_all_flat_step'] or '—'} | {', '.join(f'{x:.2f}' for x in m.get('uptime', []))} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from probekit.toymodels.build import SIZES
    from probekit.toymodels.zoo import ZOO
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=list(SIZES), default="small")
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--models", nargs="+", default=["toy-vilt"], choices=list(ZOO))
    p.add_argument("--root", type=Path, default=ROOT, help=f"scratch directory, outside the repository ({ROOT})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr-vilt", type=float, default=None, help="the ViLT members' peak learning rate (default: the "
                                                                  "Budget's); the run's directory says it")
    p.add_argument("--pool", type=int, default=60000)
    p.add_argument("--schedule", default="cosine", choices=["cosine", "wsd"], help="learning-rate schedule (train-toy's)")
    p.add_argument("--emphasis", type=float, default=0.0, help="share of hard cases redrawn (stream.Recipe.emphasis)")
    p.add_argument("--warmup", type=float, default=None, help="share of steps of the warm-up (train-toy's 0.08)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="training precision (train-toy's)")
    p.add_argument("--eval-every", type=int, default=250, help="steps between held-out curve probes")
    p.add_argument("--save-every", type=int, default=250, help="steps between resume files")
    p.add_argument("--prednoun-items", type=int, default=4800, help="triplets (half the pairs: limbs alike)")
    p.add_argument("--verbs-items", type=int, default=2000, help="SVO rows (about a third: object's place)")
    p.add_argument("--remeasure", action="store_true")
    p.add_argument("--shipped", action="store_true", help="measure the shipped zoo's --models (the baseline)")
    p.add_argument("--time-others", action="store_true")
    p.add_argument("--retime", action="store_true", help="time the steps again (--time-others, dropping the old)")
    p.add_argument("--table", action="store_true", help="print the table of every run under --root")
    a = p.parse_args(argv)
    if a.table:
        print(table(a.root))
        return 0
    log = lambda *x: print(time.strftime("%H:%M:%S"), *x, flush=True)
    log(f"pilot: size {a.size}, {a.steps} steps, {a.models}, load {os.getloadavg()}")
    state = run(a, log)
    log(json.dumps({k: v for k, v in state.items() if k != "members"}))
    print(table(a.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
