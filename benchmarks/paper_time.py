"""The paper book's projected wall time on one GPU (issue 56, item 4; issue 63): the dress rehearsal of
paper mode (:mod:`probekit.rehearsal`) with full-size random-weight stand-ins of every model of
book/profiles/paper.yaml, each chapter run and timed at two item limits, N and 2N, then projected to the papers'
item counts and fine-tuning steps.

The stand-ins have the real checkpoints' input sizes, patches and processor settings, and ViT-B / BERT-base layers
(ViT-L for CLIP L/14 and BLIP large): see :mod:`probekit.rehearsal.models`.  Speed needs no weights; never read
scores from them.  Every chapter runs on ``--device`` with the profile's batch size, and the conceptual chapter
fine-tunes at the authors' batch (128) for a few steps; ``PROBEKIT_TIMINGS`` makes every scoring job and every
fine-tuning run write its seconds (``probekit.progress.record``).  Each run has a score cache of its own.  For each
chapter the table gives, per model, the items scored at the two limits (the distinct items of its items file), the
seconds of its scoring jobs at each, the seconds per item past start-up (the difference of the seconds over the
difference of the items, so that the jobs' start, loader workers and first batch, does not weigh on it), the
start-up (what the smaller run spent beyond that), and start-up plus seconds per item times the paper's item
count; per fine-tuning run (of the larger run), seconds per step (after the first) times the profile's steps; and
the larger run's other seconds (kernel, loading data and models, metrics, figures), counted once.  A chapter that
exits with an error gives no rows and is named at the end.

What the projection leaves out or overstates: downloads; the rehearsal's photos are 56x40 px, so decoding and
resizing cost less than on real photos; the datasets the rehearsal serves are small, so items stop growing past
their size (a model whose items did not grow has no seconds per item: lower ``--limit``), and at the profile's batch
of 64 both runs may be one batch each, so that the difference is the cost of a larger batch, which on a GPU
understates a full run's; the rehearsal's data sets would need more rows to reach several batches.  Chapters whose item count
probekit does not know are not projected unless ``--items CHAPTER=N`` gives it.

    PYTHONPATH=. python benchmarks/paper_time.py [--limit 8] [--device cuda] [--items prednoun=N ...] [--work DIR]

``--tiny --device cpu`` runs the same code with the rehearsal's tiny stand-ins on the CPU: a smoke test, figures
meaningless.
"""

from __future__ import annotations

import argparse
import datetime
import tempfile
import time
from dataclasses import dataclass
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


@dataclass
class Run:
    """One timed run of a chapter: its exit status, wall seconds, timing records and items per model."""
    limit: int
    code: int
    wall: float
    jobs: pd.DataFrame
    items: pd.Series

    def scoring(self) -> pd.Series:
        """Seconds of each model's scoring jobs (fine-tuning steps apart)."""
        return self.jobs[~self.steps()].groupby("model")["seconds"].sum()

    def steps(self) -> pd.Series:
        return self.jobs["job"].eq("step") if len(self.jobs) else pd.Series(dtype=bool)

    def scored(self, model: str) -> int:
        """Items ``model`` scored; a model the items file does not name (the masking chapter's detector, the
        patched CLIPs) counts the chapter's items."""
        return int(self.items.get(model, self.items.max() if len(self.items) else 0))


def timed_chapter(rehearsal, chapter: str, work: Path, limit: int) -> Run:
    """Run ``chapter`` with the rehearsal's profile on ``limit`` items and a score cache of its own (so that a
    larger run scores every item again)."""
    path = work / f"timings-{chapter}-{limit}.jsonl"
    t0 = time.perf_counter()
    with environment({"PROBEKIT_TIMINGS": str(path)}):
        code = probekit(["--root", str(rehearsal.project), "run", chapter, "--profile", str(rehearsal.profile),
                         "-p", "limit", str(limit), "-p", "cache_dir", str(work / f"scores-{chapter}-{limit}"),
                         "--no-build", "--quiet"])
    wall = time.perf_counter() - t0
    jobs = pd.read_json(path, lines=True) if path.is_file() else pd.DataFrame(columns=["model", "job", "items",
                                                                                        "seconds"])
    items = chapter_items(rehearsal.project, chapter) if code == 0 else pd.Series(dtype=int)
    return Run(limit, code, wall, jobs, items)


def project(chapter: str, small: Run, large: Run, paper_items: int | None, paper_steps: int) -> list[dict]:
    """The table's rows for one chapter: one per model, one per fine-tuning run, one for the rest.

    A model's seconds per item are those past start-up: the difference of its scoring seconds at the two limits
    over the difference of its items (NaN where its items did not grow: the rehearsal's data set is that small);
    its start-up (loader workers, first batch, cache) is what the smaller run spent beyond that, counted once.  A
    difference that is not positive (noise larger than the work) gives NaN too: such a model is not projected."""
    rows = []
    small_seconds = small.scoring()
    for model, seconds in large.scoring().items():
        n0, n1 = small.scored(model), large.scored(model)
        s0 = float(small_seconds.get(model, 0.0))
        per = (seconds - s0) / (n1 - n0) if n1 > n0 and seconds > s0 else float("nan")
        start = s0 - per * n0
        rows.append(dict(chapter=chapter, model=model, items=f"{n0}, {n1}", seconds=f"{s0:.1f}, {seconds:.1f}",
                         per_item=per, start=start, paper=paper_items,
                         projected=start + per * paper_items if paper_items else float("nan")))
    for tune in large.jobs[large.steps()].itertuples():
        per = tune.seconds / tune.items if tune.items else float("nan")
        rows.append(dict(chapter=chapter, model=f"{tune.model}, batch {tune.batch:.0f}", items=str(tune.items),
                         seconds=f"{tune.seconds:.1f}", per_item=per, start=float("nan"), paper=paper_steps,
                         projected=per * paper_steps))
    rest = large.wall - large.jobs["seconds"].sum() if len(large.jobs) else large.wall
    rows.append(dict(chapter=chapter, model="(kernel, loading, metrics, figures: once)", items=None,
                     seconds=f"{rest:.1f}", per_item=float("nan"), start=float("nan"), paper=None, projected=rest))
    return rows


def show(row: dict, work: Path) -> None:
    def num(x, fmt):
        return "—" if x is None or x != x else format(x, fmt)

    model = row["model"].replace(f"{work}/", "")   # a patched model's folder, from the work folder on
    print(f"| {row['chapter']} | {model} | {row['items'] or '—'} | {row['seconds']} | {num(row['per_item'], '.4f')} "
          f"| {num(row['start'], '.1f')} | {num(row['paper'], ',')} | {num(row['projected'] / 60, '.1f')} |",
          flush=True)


def total(rows: list[dict], chapters: list[str], counts: dict, failed: dict, dev: str) -> int:
    """The projected total (or why there is none) and the chapters without rows; 1 where no chapter gave rows."""
    for chapter, why in failed.items():
        print(f"{chapter}: no rows ({why})")
    if not rows:
        print(f"no chapter produced rows ({', '.join(failed) or 'none was run'}): no projection")
        return 1
    table = pd.DataFrame(rows)
    known = table[table["paper"].notna() | table["items"].isna()]
    unprojected = table[table["paper"].notna() & table["projected"].isna()]
    missing = sorted(set(chapters) - set(counts) - set(failed))
    print(f"projected total, one {dev}: {known['projected'].sum() / 3600:.2f} h"
          + (f" (without the scoring of {', '.join(missing)}: item counts not known, pass --items)" if missing else "")
          + (f" (without {', '.join(failed)}: no rows)" if failed else "")
          + (f" (without {', '.join(unprojected['chapter'] + ' ' + unprojected['model'])}: no seconds per item past "
             f"start-up)" if len(unprojected) else ""))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=8,
                        help="items per chapter in the smaller timed run; the larger has twice (default 8)")
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
    print(f"{datetime.date.today()}, {dev}, torch {torch.__version__}; limits {args.limit} and {2 * args.limit}, "
          f"{'tiny' if args.tiny else 'full-size'} random stand-ins")
    for chapter, (n, source) in PAPER_ITEMS.items():
        print(f"- {chapter}: {n:,} items, {source}")
    rows, failed = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        t0 = time.perf_counter()
        rehearsal = prepare(work, limit=args.limit, full=not args.tiny, device=args.device)
        print(f"stand-ins and served data written in {time.perf_counter() - t0:.0f} s (not projected)")
        paper_steps = read_profile(rehearsal.project, "paper").params["conceptual"]["finetune_steps"]
        print("| chapter | model | items (or steps) at the two limits | seconds at the two limits "
              "| seconds per item past start-up (or per step) | start-up seconds | paper's items (or steps) "
              "| projected min |\n|---|---|---|---|---|---|---|---|", flush=True)
        with served(rehearsal):
            for chapter in args.chapters:
                small = timed_chapter(rehearsal, chapter, work, args.limit)
                large = timed_chapter(rehearsal, chapter, work, 2 * args.limit) if small.code == 0 else small
                if large.code:
                    failed[chapter] = f"exit {large.code} at limit {large.limit} after {large.wall:.0f} s"
                    continue
                for row in project(chapter, small, large, counts.get(chapter), paper_steps):
                    show(row, work.resolve())
                    rows.append(row)
    return total(rows, args.chapters, counts, failed, dev)


if __name__ == "__main__":
    raise SystemExit(main())
