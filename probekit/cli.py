"""The ``probekit`` command: execute chapters with parameters, build the book, list what there is.

    probekit list
    probekit check [CHAPTER...] [-p NAME VALUE]... [--params FILE.yaml] [--profile toy|paper|FILE] [--allow-toy]
    probekit run CHAPTER [-p NAME VALUE]... [--params FILE.yaml] [--profile toy|paper|FILE] [--no-build] [--quiet]
    probekit book [--profile toy|paper|FILE] [--no-execute] [--quiet]
    probekit export [CHAPTER...] [--format csv|json|parquet] [--items] [--out DIR]
    probekit train-toy [...]            (trains the shipped toy models; see probekit.toymodels.train)
    torchrun --nproc_per_node N -m probekit run CHAPTER [...]   (its scoring sharded over N ranks: probekit.shard)

Bad input (chapter, parameter, value, profile, a model without the head its chapter needs, a toy model on real
data, data that is neither here nor downloadable, a device this machine lacks, a read-only or full directory)
prints one line per problem naming the chapter, the parameter and the fix, and exits 2 before any work starts
(``check`` does only that; ``run`` and ``book`` check first).  A failing chapter exits 1 naming the chapter, the
cell and the error.  Ctrl-C or SIGTERM stops a run leaving every page as it was and the score cache consistent
(exit 130).  ``--quiet`` turns every progress bar off (for CI logs).
"""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

from probekit import book as bk
from probekit import chapters as ch
from probekit import shard
from probekit.chapters import check as preflight
from probekit.chapters.profiles import read_profile
from probekit.environ import environment


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="probekit", description="Execute the book's chapters with parameters, "
                                     "build the book, list chapters, parameters, models and datasets.")
    parser.add_argument("--root", help="project directory (holding _toc.yml and book/); default: found from here")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="chapters with their parameters and defaults, models, datasets, profiles")
    given = argparse.ArgumentParser(add_help=False)
    given.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                       help="set a parameter (repeatable); lists as a,b,c; None for None")
    given.add_argument("--params", metavar="FILE.yaml", help="YAML mapping of parameter names to values")
    safety = argparse.ArgumentParser(add_help=False)
    safety.add_argument("--allow-toy", action="store_true", help="allow toy models on real (non-toy) data")
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("--quiet", action="store_true", help="no progress bars (for CI logs)")

    checkp = sub.add_parser("check", parents=[given, safety], help="check what a run would do, without "
                            "downloading or executing anything: one line per problem, exit 2 if any")
    checkp.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapters to check (default: all)")
    checkp.add_argument("--profile", help="the profile's values (toy, paper or a file); default: the chapters' own")
    checkp.add_argument("--quiet", action="store_true", help="print problems only")

    run = sub.add_parser("run", parents=[given, safety, quiet], help="re-execute one chapter with new parameters "
                         "and the summary page, then rebuild the book")
    run.add_argument("chapter")
    run.add_argument("--profile", help="start from a profile's values for this chapter (toy, paper or a file)")
    run.add_argument("--no-build", action="store_true", help="execute only; do not rebuild the HTML")

    bookp = sub.add_parser("book", parents=[safety, quiet], help="execute every chapter and the summary page, "
                           "then build the HTML book")
    bookp.add_argument("--profile", default="toy", help="toy (default), paper, or a profile YAML file")
    bookp.add_argument("--no-execute", action="store_true",
                       help="only build the HTML from the notebooks already in book/chapters/")

    exportp = sub.add_parser("export", help="write chapters' result rows (and per-item rows) as CSV, JSON or "
                             "parquet, from their last run")
    exportp.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapters to export (default: all)")
    exportp.add_argument("--format", default="csv", help="csv (default), json or parquet")
    exportp.add_argument("--items", action="store_true", help="also one row per scored item and model")
    exportp.add_argument("--out", default=".", help="directory to write into (default: here)")

    sub.add_parser("train-toy", add_help=False, help="train the toy models shipped in the package")
    return parser


def _executed_state(path: Path) -> str:
    if not path.exists():
        return "not executed"
    import nbformat
    meta = nbformat.read(path, as_version=4).metadata.get("probekit", {})
    if meta.get("placeholder"):
        return "not executed"
    given = ", ".join(f"{k}={v!r}" for k, v in meta.get("parameters", {}).items()) or "defaults"
    return f"executed with {given}"


def _list(root: Path) -> None:
    print(f"book: {root}")
    print(f"profiles: {', '.join(ch.profile_names(root))}")
    try:
        print(f"models: {', '.join(ch.model_names())}; or a checkpoint directory or hub id (family read from its "
              f"config), FAMILY:SOURCE (e.g. vilt:my-org/my-vilt), or an open_clip ARCH:TAG (e.g. RN50:yfcc15m)")
    except ImportError as err:
        print(f"models: unavailable ({err})")
    print(_plugin_families())
    for chapter in ch.CHAPTERS:
        state = _executed_state(ch.output_path(root, chapter))
        print(f"\n{chapter}: {ch.title(root, chapter)}  [{state}]")
        print(f"  datasets: {', '.join(ch.dataset_choices(chapter))}")
        for p in ch.parameters(chapter).values():
            print(f"  {p.name} = {p.default!r}" + (f"    # {p.help}" if p.help else ""))


def _plugin_families() -> str:
    """One line: the model families installed packages add (``probekit.scorers`` entry points), each with its
    adapter and the package it comes from; one a built-in family shadows is marked unused."""
    from probekit.plugins import SCORERS, provenance
    from probekit.scorers.registry import FAMILIES

    found = [f"{name} ({where}{'; unused: a built-in family has that name' if name in FAMILIES else ''})"
             for name, where in sorted(provenance(SCORERS).items())]
    return f"plugin families: {'; '.join(found) if found else 'none installed (entry point group probekit.scorers)'}"


def _given(root: Path, args, chapters: list[str]) -> tuple[dict[str, dict], ch.Profile | None]:
    """{chapter: values given} from the profile, the params file and ``-p`` (which apply to every chapter
    having the parameter; one no chapter has is refused)."""
    profile = read_profile(root, args.profile) if args.profile else None
    given = {c: dict(profile.params[c]) if profile else {} for c in map(ch.check_chapter, chapters)}
    extra = dict(ch.read_params_file(args.params)) if getattr(args, "params", None) else {}
    extra.update(dict(getattr(args, "param", [])))
    for name, value in extra.items():
        having = [c for c in given if name in ch.parameters(c)]
        if not having and len(given) > 1:
            raise ch.ParameterError(f"no chapter of {', '.join(given)} has a parameter {name!r}")
        for c in having or given:
            given[c][name] = value
    return given, profile


def _preflight(given: dict[str, dict], args, profile: ch.Profile | None, *, show_notes: bool = False) -> int:
    """Print every problem (one line each, exit status 2) or nothing (0); notes when asked.  Checked under the
    profile's environment (its hub cache, its offline switch), as the run will load."""
    with environment(profile.env if profile else {}):
        problems, notes = preflight.check(given, allow_toy=args.allow_toy)
    for problem in problems:
        print(f"probekit: error: {problem}", file=sys.stderr)
    for note in notes if show_notes else []:
        print(f"probekit: {note}")
    return 2 if problems else 0


def _terminate(signum, frame):
    raise KeyboardInterrupt


@contextmanager
def _sigterm_as_ctrl_c():
    """SIGTERM stops the block the way Ctrl-C does (pages untouched, cache flushed, a toy model's training
    resumable); the previous handler afterwards.  Signal handlers can only be set from the main thread."""
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _ship_finetunes(argv: list[str]) -> int:
    """After ``train-toy`` retrained the shipped zoo's ``toy-clip`` (no ``--out``), or with ``--finetunes``: the
    conceptual chapter's fine-tunes of it, shipped beside it (``--out``'s zoo otherwise fine-tunes on first use)."""
    from probekit.chapters.finetunes import ship
    from probekit.toymodels.train import CHECKPOINTS

    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--out")
    p.add_argument("--models", nargs="+", default=["toy-clip"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--rescore", action="store_true")
    p.add_argument("--finetunes", action="store_true")
    a, _ = p.parse_known_args(argv)
    if a.rescore or "toy-clip" not in a.models or (a.out and not a.finetunes):
        return 0
    for path in ship(Path(a.out) if a.out else CHECKPOINTS, a.device):
        print(f"probekit train-toy: shipped the conceptual chapter's fine-tune {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["train-toy"]:
        from probekit.toymodels.train import main as train_main
        with _sigterm_as_ctrl_c():
            rest = [a for a in argv[1:] if a != "--finetunes"]
            return train_main(rest) or _ship_finetunes(argv[1:])
    args = _parser().parse_args(argv)
    progress = not getattr(args, "quiet", False)
    try:
        root = ch.find_root(args.root)
        if args.command == "list":
            _list(root)
            return 0
        if args.command == "check":
            given, profile = _given(root, args, args.chapters or list(ch.CHAPTERS))
            code = _preflight(given, args, profile, show_notes=not args.quiet)
            if not code:
                print(f"probekit: check passed: {', '.join(given)}")
            return code
        if args.command == "export":
            from probekit.chapters.export import export
            for path in export(root, args.chapters or list(ch.CHAPTERS), args.format, args.items, Path(args.out)):
                print(f"probekit: wrote {path}")
            return 0
        if args.command == "book" and args.no_execute:
            bk.build(root)
            return 0
        rank, world = shard.launched()
        if args.command == "book" and world > 1:
            raise ch.ParameterError(f"probekit book runs as one process, not {world} ranks: shard one chapter at a "
                                    "time with torchrun ... -m probekit run CHAPTER, then probekit book --no-execute")
        given, profile = _given(root, args, [args.chapter] if args.command == "run" else list(ch.CHAPTERS))
        if _preflight(given, args, profile):
            return 2
        params = {c: ch.resolve(c, values) for c, values in given.items()}
        env = {**(profile.env if profile else {}), **({} if progress and rank == 0 else {"PROBEKIT_PROGRESS": "0"})}
        with _sigterm_as_ctrl_c(), environment(env):
            if args.command == "run":
                with environment(shard.kernel_environment() if world > 1 else {}):
                    if rank > 0:  # its share of the scores goes to the shared cache; rank 0 makes the pages
                        ch.execute_only(root, args.chapter, params[args.chapter])
                        return 0
                    ch.execute(root, args.chapter, params[args.chapter], profile=profile.name if profile else None,
                               progress=progress)
                ch.execute_summary(root, progress=progress)  # the summary page shows this run's numbers
                failures = {}
            else:
                assert profile is not None  # a book is always built under a profile (toy by default)
                failures = bk.execute_all(root, params, profile=profile.name, progress=progress)
        if args.command == "book" or not args.no_build:
            bk.build(root)
        if failures:
            print(f"probekit: {len(failures)} chapter(s) failed: {', '.join(failures)}", file=sys.stderr)
            return 1
        return 0
    except ch.ParameterError as err:
        print(f"probekit: error: {err}", file=sys.stderr)
        return 2
    except ch.ChapterFailed as err:
        print(f"probekit: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # a page or the book could not be written: read-only or full
        print(f"probekit: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("probekit: interrupted; no page was changed by the unfinished chapter, and the scores computed "
              "so far are cached for the next run", file=sys.stderr)
        return 130


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
