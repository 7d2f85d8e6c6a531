"""Train a toy zoo's members for several seeds on one machine (a GPU's, or the CPU for a smoke run), score every
seed on the lab's items, and pack what the lab needs into at most 8 files of at most 16 MiB; ``ingest`` puts those
files into a zoo directory.

    PYTHONPATH=. python benchmarks/zoo_gpu.py run --out /tmp/zoo --pack $OUT --zoo next --seeds 0 1 2 --device cuda
    PYTHONPATH=. python benchmarks/zoo_gpu.py ingest $OUT/* --into zoo-runs/next

``run`` trains, per seed, into ``<out>/seed<S>/``: the members of all seeds at once (``batched.train_jobs``, one
stack per trainer and vocabulary: ViLT, CLIP and BERT each batched).  It is resumable: run it again and members
finished are kept, members stopped resume from their resume files.  It then runs
``probekit.studies.lab_seeds`` over the seeds' zoos (on the CPU, as it stands; ``--no-score`` skips it) and packs:
``records.json`` (every seed's training record), ``seed_verdicts.csv`` and ``seed_items.parquet`` (lab_seeds'
outputs), and the weights of ``--ship-seed``'s members as ``weights-<k>.tar`` (each at most 16 MiB).  No torch or
transformers version is assumed beyond what probekit itself imports.
"""

from __future__ import annotations

import argparse
import json
import tarfile
import time
from pathlib import Path

import torch

from probekit.toymodels import batched, card, record, zoo
from probekit.toymodels.budget import make
from probekit.toymodels.seed_items import ITEMS_FILE
from probekit.toymodels.seed_table import SEEDS_FILE

LIMIT, MAX_FILES = 16 * 2 ** 20, 8


def run(a) -> None:
    t0 = time.time()
    models = zoo.chosen(a.zoo, a.models)
    budget = make(steps=a.steps, **({"pool": a.pool} if a.pool else {}), **({"eval_every": 0} if a.no_eval else {}))
    dirs = {s: Path(a.out) / f"seed{s}" for s in a.seeds}
    jobs = [batched.Job(m, s, d) for s, d in dirs.items() for m in models if m not in record.held(d)]
    if jobs:
        batched.train_jobs(jobs, budget, evaluate=not a.no_eval, device=a.device, size=a.size)
    if not a.no_eval:
        for d in dirs.values():
            card.write(d)
    print(f"all members trained in {time.time() - t0:.0f}s", flush=True)
    pack = Path(a.pack)
    pack.mkdir(parents=True, exist_ok=True)
    if not a.no_score:
        from probekit.studies import lab_seeds
        lab_seeds.main([*map(str, dirs.values()), "--out", str(pack / SEEDS_FILE), "--items", str(pack / ITEMS_FILE)])
    records = {str(s): json.loads((d / "training.json").read_text()) for s, d in dirs.items()}
    (pack / "records.json").write_text(json.dumps({"ship_seed": a.ship_seed, "records": records}))
    _pack_weights(dirs[a.ship_seed], pack)
    files = sorted(pack.iterdir())
    assert len(files) <= MAX_FILES and all(f.stat().st_size <= LIMIT for f in files), files
    print(f"{len(files)} files in {pack} ({sum(f.stat().st_size for f in files) / 2 ** 20:.1f} MiB) after "
          f"{time.time() - t0:.0f}s")


def _pack_weights(folder: Path, pack: Path) -> None:
    """The members saved in ``folder`` as tar files of at most 16 MiB each (a member whole in one file)."""
    members = [p for p in sorted(folder.iterdir()) if (p / "config.json").is_file()]
    parts, size = [[]], 0
    for m in members:
        grown = sum(f.stat().st_size + 1024 for f in m.iterdir())
        if parts[-1] and size + grown > LIMIT - 2 ** 20:
            parts.append([])
            size = 0
        parts[-1].append(m)
        size += grown
    for k, part in enumerate(p for p in parts if p):
        with tarfile.open(pack / f"weights-{k}.tar", "w") as tar:
            for m in part:
                tar.add(m, arcname=m.name)


def ingest(a) -> None:
    """Unpack ``run``'s files into ``--into``: the shipped seed's members and record (``training.json``), the
    other seeds' records (``seed<S>/training.json``), the seed items and verdicts; then the model card."""
    into = Path(a.into)
    into.mkdir(parents=True, exist_ok=True)
    files = sorted(map(Path, a.files), key=lambda f: f.name == "records.json")   # the weights first
    for f in files:
        if f.name.startswith("weights-") and f.suffix == ".tar":
            with tarfile.open(f) as tar:
                tar.extractall(into, filter="data")
        elif f.name in (ITEMS_FILE, SEEDS_FILE):
            (into / f.name).write_bytes(f.read_bytes())
        elif f.name == "records.json":
            found = json.loads(f.read_text())
            for s, rec in found["records"].items():
                target = into if int(s) == found["ship_seed"] else into / f"seed{s}"
                target.mkdir(parents=True, exist_ok=True)
                (target / "training.json").write_text(json.dumps(rec, indent=1))
    shipped = json.loads((into / "training.json").read_text())
    if all("heldout" in e for e in shipped["models"].values()):   # a run with --no-eval has no scores to show
        print(f"model card: {card.write(into)}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True, help="where the seeds' zoos are trained (seed<S>/)")
    r.add_argument("--pack", required=True, help="the folder the files to carry home are written to")
    r.add_argument("--zoo", default="next", choices=list(zoo.TABLES))
    r.add_argument("--models", nargs="+", default=None)
    r.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    r.add_argument("--ship-seed", type=int, default=0, help="the seed whose weights are packed")
    r.add_argument("--steps", type=int, default=None)
    r.add_argument("--pool", type=int, default=None)
    r.add_argument("--size", default="full")
    r.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    r.add_argument("--no-eval", action="store_true", help="no held-out curve or scores (a smoke run)")
    r.add_argument("--no-score", action="store_true", help="skip the lab's items")
    i = sub.add_parser("ingest")
    i.add_argument("files", nargs="+")
    i.add_argument("--into", required=True, help="the zoo directory the shipped seed's members go to")
    a = p.parse_args(argv)
    (run if a.cmd == "run" else ingest)(a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
