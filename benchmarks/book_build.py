"""Wall time of a full embedded-default book build, and of re-running one chapter whose scores are cached.

    python benchmarks/book_build.py [--chapter verbs] [--limit N] [--keep DIR]

Works on a copy of the book project in a temporary directory with fresh data and score caches (so the
first build is cold), executes every chapter with the toy profile, builds the HTML, then re-runs one
chapter with the same parameters (every score now cached) and the summary page, and rebuilds. Prints one
line per figure.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from pathlib import Path

from probekit import book as bk
from probekit import chapters as ch
from probekit.environ import environment


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", default="verbs", choices=list(ch.CHAPTERS))
    parser.add_argument("--limit", type=int, default=None, help="limit for every chapter (default: theirs)")
    parser.add_argument("--keep", help="work in this directory and keep it (default: a temporary one)")
    args = parser.parse_args()

    repo = ch.find_root(Path(__file__).resolve().parents[1])
    keep = contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory(prefix="probekit-bench-")
    with keep as work:
        run(repo, Path(work), args)


def run(repo: Path, work: Path, args) -> None:
    project = bk.copy_project(repo, work / "project")
    profile = ch.load_profile(project, "toy")
    extra = {"data_dir": str(work / "data"), "cache_dir": str(work / "scores")}
    if args.limit:
        extra["limit"] = args.limit
    params = {c: ch.resolve(c, {**profile.params[c], **extra}) for c in ch.CHAPTERS}
    quiet = dict(progress=False, log=lambda msg: None)
    print(f"probekit book build benchmark ({os.cpu_count()} CPUs) in {work}")

    with environment(profile.env):
        failures, t_exec = _timed(lambda: bk.execute_all(project, params, profile="toy", **quiet))
        _, t_html = _timed(lambda: bk.build(project, log=quiet["log"]))
        print(f"full book build, cold caches:    {t_exec + t_html:7.1f} s  "
              f"(execute {t_exec:.1f} s, HTML {t_html:.1f} s)")
        for chapter, error in failures.items():
            print(f"  failed: {error}")
        if args.chapter in failures:
            return
        _, t_rerun = _timed(lambda: (ch.execute(project, args.chapter, params[args.chapter], **quiet),
                                     ch.execute_summary(project, **quiet)))
        _, t_html2 = _timed(lambda: bk.build(project, log=quiet["log"]))
        print(f"re-run {args.chapter!r}, scores cached: {t_rerun + t_html2:7.1f} s  "
              f"(execute {t_rerun:.1f} s, HTML {t_html2:.1f} s)")


if __name__ == "__main__":
    main()
