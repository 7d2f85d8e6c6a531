"""The dress rehearsal of paper mode, offline: ``probekit book --profile paper`` from the first download to the
rendered book, on tiny random-weight models and made-up datasets, in a few minutes on a CPU.

:func:`prepare` writes, under a work folder, a copy of the book project, the datasets of every chapter in their
real formats (:mod:`probekit.rehearsal.data`, :mod:`probekit.rehearsal.coco`: the files paper mode downloads go
under ``served/``, laid out by host), a tiny stand-in for every model the paper profile names (a hub cache under
the same hub ids, open_clip architectures, the authors' ViLT checkpoint: :mod:`probekit.rehearsal.models`), and a
profile derived from ``book/profiles/paper.yaml`` (:func:`rehearsal_profile`): the same models and datasets, a
small item ``limit``, a few fine-tuning steps, the CPU, and an ``env`` that points every download at the
rehearsal's server on 127.0.0.1 (``PROBEKIT_MIRROR``) and the hub at the local cache (``HF_HUB_OFFLINE=1``).
:func:`rehearse` serves the files and runs ``probekit book`` with that profile.  The numbers mean nothing; what
is rehearsed is that every code path of paper mode runs between the pieces.  ``prepare(..., full=True)`` writes
full-size random stand-ins instead and keeps the profile's batch sizes and fine-tuning batch, on ``device``
(benchmarks/paper_time.py times the chapters on them).

    python -m probekit.rehearsal WORKDIR [--profile paper|FILE] [--limit N]
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from probekit import book as bk
from probekit.chapters import CHAPTERS, find_root
from probekit.chapters.profiles import profile_path, read_profile
from probekit.rehearsal import coco, data, models
from probekit.rehearsal.serve import Server

#: what the rehearsal changes in every chapter of the profile, and in the conceptual chapter's fine-tuning
SMALL: dict[str, Any] = {"device": "cpu", "batch_size": 16, "limit": 8}
SMALL_FINETUNE = {"finetune_steps": 2, "finetune_batch": 8, "finetune_eval_limit": 8, "alphas": [0.0, 0.5, 1.0]}
#: what a full-size rehearsal changes in the conceptual chapter (the profile's batch, α grid and the rest are kept)
FULL_FINETUNE = {"finetune_steps": 5}


@dataclass
class Rehearsal:
    project: Path        # the copy of the book project the book is built in
    profile: Path        # the rehearsal's profile (YAML)
    served: Path         # the files the server answers with, laid out by host
    redirects: dict      # request path -> redirect target (placeholders)


def rehearsal_profile(root: Path, profile: str, work: Path, limit: int, full: bool = False,
                      device: str = "cpu") -> dict:
    """``profile``'s chapters and values with the rehearsal's changes (:data:`SMALL`, :data:`SMALL_FINETUNE`; with
    ``full``, ``device`` and :data:`FULL_FINETUNE` only; the data, score, model and hub folders under ``work``);
    ``env`` is completed by :func:`served`."""
    raw = yaml.safe_load(profile_path(root, profile).read_text()) or {}
    folders = {"data_dir": str(work / "data"), "cache_dir": str(work / "scores")}
    chapters = {c: dict((raw.get("chapters") or {}).get(c) or {}) for c in CHAPTERS}
    small, finetune = ({"device": device}, FULL_FINETUNE) if full else (SMALL, SMALL_FINETUNE)
    chapters["conceptual"].update(finetune, train_data=str(work / "data" / "relcomp.csv"),
                                  imagenet_dir=str(work / "data" / "imagenet"))
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(work / "hf"), "HF_HUB_CACHE": str(work / "hf" / "hub"),
           "PROBEKIT_OPEN_CLIP_CONFIGS": str(work / "open_clip"), "PROBEKIT_MODELS": str(work / "models"),
           "PROBEKIT_SKIP_SHA256": "1", "no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1"}
    return {"description": f"offline rehearsal of {profile}", "env": {**(raw.get("env") or {}), **env},
            "all": {**(raw.get("all") or {}), **small, "limit": limit, **folders}, "chapters": chapters}


def prepare(work: Path, profile: str = "paper", limit: int = SMALL["limit"], root: Path | None = None,
            full: bool = False, device: str = "cpu") -> Rehearsal:
    """Everything :func:`rehearse` needs, written under ``work`` (see the module docstring)."""
    root, work = find_root(root), Path(work).resolve()
    project = bk.copy_project(root, work / "project")
    values = rehearsal_profile(root, profile, work, limit, full, device)
    site = data.Site(work / "served")
    texts = data.write_svo(site)
    params = read_profile(root, profile).params
    texts += data.write_prednoun(site, params["prednoun"].get("released_outputs") or [])
    texts += coco.write_probe_rcb(site, work / "data" / "probe-rcb" / "annotations")
    texts += coco.write_vcoco(site, work / "data")
    texts += coco.write_imagenet(site, work / "data" / "imagenet")
    tune = values["chapters"]["conceptual"]   # a new batch of triplets for every fine-tuning step
    texts += coco.write_relcomp(site, work / "data" / "relcomp.csv",
                                max(48, tune["finetune_batch"] * tune["finetune_steps"]))
    words = models.vocabulary(texts)

    def served_checkpoint(url: str) -> Path:
        return site.root / data.served_path(url)

    models.write_models(Path(values["env"]["HF_HUB_CACHE"]), Path(values["env"]["PROBEKIT_OPEN_CLIP_CONFIGS"]),
                        models.model_names(params), words, served_checkpoint, full)
    path = work / "rehearsal.yaml"
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return Rehearsal(project, path, site.root, site.redirects)


@contextmanager
def served(rehearsal: Rehearsal):
    """The rehearsal's files served on 127.0.0.1 while inside, the server's address in its profile's ``env``."""
    with Server(rehearsal.served, rehearsal.redirects) as server:
        values = yaml.safe_load(rehearsal.profile.read_text())
        values["env"]["PROBEKIT_MIRROR"] = server.url
        rehearsal.profile.write_text(yaml.safe_dump(values, sort_keys=False))
        yield server


def rehearse(rehearsal: Rehearsal, quiet: bool = True) -> int:
    """Serve the rehearsal's files and run ``probekit book`` with its profile; the command's exit status."""
    from probekit.cli import main

    with served(rehearsal):
        return main(["--root", str(rehearsal.project), "book", "--profile", str(rehearsal.profile),
                     *(["--quiet"] if quiet else [])])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m probekit.rehearsal", description=__doc__.split("\n\n")[0])
    parser.add_argument("work", help="an empty folder to write the rehearsal into")
    parser.add_argument("--profile", default="paper", help="the profile to rehearse (paper, or a YAML file)")
    parser.add_argument("--limit", type=int, default=SMALL["limit"], help="items per chapter")
    args = parser.parse_args(argv)
    code = rehearse(prepare(Path(args.work), args.profile, args.limit), quiet=False)
    print(f"probekit: rehearsal book in {Path(args.work).resolve() / 'project' / '_build' / 'html'}")
    return code
