"""The paper book's projected wall time on one GPU (issue 56, item 4): the dress rehearsal of paper mode
(:mod:`probekit.rehearsal`) with full-size random-weight stand-ins of every model of book/profiles/paper.yaml, each
chapter run on a small item limit and timed, then projected to the papers' item counts and fine-tuning steps.

The stand-ins have the real checkpoints' input sizes, patches and processor settings, and ViT-B / BERT-base layers
(ViT-L for CLIP L/14 and BLIP large): see :mod:`probekit.rehearsal.models`.  Speed needs no weights; never read
scores from them.  Every chapter runs on ``--device`` with the profile's batch size, and the conceptual chapter
fine-tunes at the authors' batch (128) for a few steps; ``PROBEKIT_TIMINGS`` makes every scoring job and every
fine-tuning run write its seconds (``probekit.progress.record``).  For each chapter the table gives, per model,
the items the chapter scored (the distinct items of its items file), seconds per item (the model's scoring jobs'
seconds over those items) and that times the paper's item count; per fine-tuning run, seconds per step (after the
first) times the profile's steps; and the chapter's other seconds (kernel, loading data and models, metrics,
figures), counted once.

What the projection leaves out or overstates: downloads; the rehearsal's photos are 56x40 px, so decoding and
resizing cost less than on real photos; on a small limit each job's start (loader workers, first batch) is spread
over few items, so seconds per item overstate those of a full run (a larger ``--limit`` tightens it; the datasets the
rehearsal serves are small, so items stop growing past their size).  Chapters whose item count probekit does not
know are not projected unless ``--items CHAPTER=N`` gives it.

    PYTHONPATH=. python benchmarks/paper_time.py [--limit 8] [--device cuda] [--items prednoun=N ...] [--work DIR]

``--tiny --device cpu`` runs the same code with the rehearsal's tiny stand-ins on the CPU: a smoke test, figures
meaningless.
"""

from __future__ import annotations

import argparse
import datetime
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from probekit import chapters as ch
from probekit.chapters.profiles import read_profile
from probekit.cli import main as probekit
from probekit.environ import environment
from probekit.papers.guided_masking import GUIDED_MASKING_VERB_PAIRS
from probekit.rehearsal import prepare, served

#: chapter -> (items of the paper's run, where the count comes from), in the units the chapter's items file counts
PAPER_ITEMS = {
    "verbs": (36_000, "SVO-Probes rows: Table 4's 36k negative examples, one per row (probekit.papers.svo_probes)"),
    "masking": (GUIDED_MASKING_VERB_PAIRS["pos"], "the positive pairs guided masking could score "
                                                  "(probekit.papers.guided_masking)"),
}


def chapter_items(project: Path, chapter: str) -> pd.Series:
    """Items each model scored in the chapter's last run: distinct (probe, item) in its items file."""
    items = pd.read_parquet(ch.items_path(project, chapter))
    return items.drop_duplicates(["model", "probe", "item_id"]).groupby("model").size()


def timed_chapter(rehearsal, chapter: str, work: Path) -> tuple[int, float, pd.DataFrame]:
    """Run ``chapter`` with the rehearsal's profile: its exit status, wall seconds and the timing records."""
    path = work / f"timings-{chapter}.jsonl"
    t0 = time.perf_counter()
    with environment({"PROBEKIT_TIMINGS": str(path)}):
        code = probekit(["--root", str(rehearsal.project), "run", chapter, "--profile", str(rehearsal.profile),
                         "--no-build", "--quiet"])
    wall = time.perf_counter() - t0
    jobs = pd.read_json(path, lines=True) if path.is_file() else pd.DataFrame(columns=["model", "job", "items",
                                                                                        "seconds"])
    return code, wall, jobs


def project(chapter: str, jobs: pd.DataFrame, items: pd.Series, wall: float, paper_items: int | None,
            paper_steps: int) -> list[dict]:
    """The table's rows for one chapter: one per model, one per fine-tuning run, one for the rest.  A model the
    items file does not name (the masking chapter's detector, the patched CLIPs) counts the chapter's items."""
    steps = jobs["job"].eq("step") if len(jobs) else pd.Series(dtype=bool)
    rows = []
    for model, seconds in jobs[~steps].groupby("model")["seconds"].sum().items():
        n = int(items.get(model, items.max() if len(items) else 0))
        per = seconds / n if n else float("nan")
        rows.append(dict(chapter=chapter, model=model, items=n, seconds=seconds, per_item=per, paper=paper_items,
                         projected=per * paper_items if paper_items else float("nan")))
    for tune in jobs[steps].itertuples():
        per = tune.seconds / tune.items if tune.items else float("nan")
        rows.append(dict(chapter=chapter, model=f"{tune.model}, batch {tune.batch:.0f}", items=tune.items,
                         seconds=tune.seconds, per_item=per, paper=paper_steps, projected=per * paper_steps))
    rest = wall - jobs["seconds"].sum() if len(jobs) else wall
    rows.append(dict(chapter=chapter, model="(kernel, loading, metrics, figures: once)", items=None, seconds=rest,
                     per_item=float("nan"), paper=None, projected=rest))
    return rows


def show(row: dict, work: Path) -> None:
    def num(x, fmt):
        return "—" if x is None or x != x else format(x, fmt)

    model = row["model"].replace(f"{work}/", "")   # a patched model's folder, from the work folder on
    print(f"| {row['chapter']} | {model} | {num(row['items'], 'd')} | {row['seconds']:.1f} | "
          f"{num(row['per_item'], '.4f')} | {num(row['paper'], ',')} | {num(row['projected'] / 60, '.1f')} |",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=8, help="items per chapter in the timed run (default 8)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--items", nargs="*", default=[], metavar="CHAPTER=N",
                        help="the paper run's item count of a chapter probekit does not know (prednoun, conceptual)")
    parser.add_argument("--chapters", nargs="*", default=list(ch.CHAPTERS), choices=list(ch.CHAPTERS))
    parser.add_argument("--tiny", action="store_true", help="the rehearsal's tiny stand-ins (a smoke test)")
    parser.add_argument("--work", help="folder for the rehearsal (default: a temporary one)")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("paper_time.py projects a GPU's time and needs CUDA; --tiny --device cpu is its smoke test")
    counts = {c: n for c, (n, _) in PAPER_ITEMS.items()}
    counts.update({c: int(n) for c, n in (i.split("=") for i in args.items)})
    dev = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    print(f"{datetime.date.today()}, {dev}, torch {torch.__version__}; limit {args.limit}, "
          f"{'tiny' if args.tiny else 'full-size'} random stand-ins")
    for chapter, (n, source) in PAPER_ITEMS.items():
        print(f"- {chapter}: {n:,} items, {source}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        t0 = time.perf_counter()
        rehearsal = prepare(work, limit=args.limit, full=not args.tiny, device=args.device)
        print(f"stand-ins and served data written in {time.perf_counter() - t0:.0f} s (not projected)")
        paper_steps = read_profile(rehearsal.project, "paper").params["conceptual"]["finetune_steps"]
        print("| chapter | model | items (or steps) | seconds | seconds per item (or step) | paper's items (or steps) "
              "| projected min |\n|---|---|---|---|---|---|---|", flush=True)
        rows = []
        with served(rehearsal):
            for chapter in args.chapters:
                code, wall, jobs = timed_chapter(rehearsal, chapter, work)
                if code:
                    print(f"| {chapter} | exit {code} after {wall:.0f} s: not projected | | | | | |", flush=True)
                    continue
                for row in project(chapter, jobs, chapter_items(rehearsal.project, chapter), wall,
                                   counts.get(chapter), paper_steps):
                    show(row, work.resolve())
                    rows.append(row)
    table = pd.DataFrame(rows)
    known = table[table["paper"].notna() | table["items"].isna()]
    missing = sorted(set(args.chapters) - set(counts))
    print(f"projected total, one {dev}: {known['projected'].sum() / 3600:.2f} h"
          + (f" (without the scoring of {', '.join(missing)}: item counts not known, pass --items)" if missing else ""))


if __name__ == "__main__":
    main()
