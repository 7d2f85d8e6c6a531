"""The ``probekit`` command: execute chapters with parameters, build the book, list what there is.

    probekit list
    probekit run CHAPTER [-p NAME VALUE]... [--params FILE.yaml] [--profile toy|paper|FILE] [--no-build]
    probekit book [--profile toy|paper|FILE] [--no-execute]
    probekit train-toy [...]            (trains the shipped toy models; see probekit.toymodels.train)

Bad input (chapter, parameter, value, profile) prints one line naming it and the valid choices and exits 2
before any work starts. A failing chapter exits 1 naming the chapter, the cell and the error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probekit import book as bk
from probekit import chapters as ch


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="probekit", description="Execute the book's chapters with parameters, "
                                     "build the book, list chapters, parameters, models and datasets.")
    parser.add_argument("--root", help="project directory (holding _toc.yml and book/); default: found from here")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="chapters with their parameters and defaults, models, datasets, profiles")

    run = sub.add_parser("run", help="re-execute one chapter with new parameters and the summary page, then "
                         "rebuild the book")
    run.add_argument("chapter")
    run.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="set a parameter (repeatable); lists as a,b,c; None for None")
    run.add_argument("--params", metavar="FILE.yaml", help="YAML mapping of parameter names to values")
    run.add_argument("--profile", help="start from a profile's values for this chapter (toy, paper or a file)")
    run.add_argument("--no-build", action="store_true", help="execute only; do not rebuild the HTML")

    bookp = sub.add_parser("book", help="execute every chapter and the summary page, then build the HTML book")
    bookp.add_argument("--profile", default="toy", help="toy (default), paper, or a profile YAML file")
    bookp.add_argument("--no-execute", action="store_true",
                       help="only build the HTML from the notebooks already in book/chapters/")

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
    return f"executed in {meta.get('seconds', '?')} s with {given}"


def _list(root: Path) -> None:
    print(f"book: {root}")
    print(f"profiles: {', '.join(ch.profile_names(root))}")
    try:
        print(f"models: {', '.join(ch.model_names())} (or a local checkpoint directory)")
    except ImportError as err:
        print(f"models: unavailable ({err})")
    for chapter in ch.CHAPTERS:
        state = _executed_state(ch.output_path(root, chapter))
        print(f"\n{chapter}: {ch.title(root, chapter)}  [{state}]")
        print(f"  datasets: {', '.join(ch.dataset_choices(chapter))}")
        for p in ch.parameters(root, chapter).values():
            print(f"  {p.name} = {p.default!r}" + (f"    # {p.help}" if p.help else ""))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["train-toy"]:
        from probekit.toymodels.train import main as train_main
        return train_main(argv[1:]) or 0
    args = _parser().parse_args(argv)
    try:
        root = ch.find_root(args.root)
        if args.command == "list":
            _list(root)
            return 0
        if args.command == "run":
            chapter = ch.check_chapter(args.chapter)
            profile = ch.load_profile(root, args.profile) if args.profile else None
            given = dict(profile.params[chapter]) if profile else {}
            if args.params:
                given.update(ch.read_params_file(args.params))
            given.update(dict(args.param))
            params = ch.resolve(root, chapter, given)
            with bk.environment(profile.env if profile else {}):
                ch.execute(root, chapter, params, profile=profile.name if profile else None)
                ch.execute_summary(root)  # the summary page shows this run's numbers
            if not args.no_build:
                bk.build(root)
            return 0
        if args.no_execute:
            bk.build(root)
            return 0
        profile = ch.load_profile(root, args.profile)
        with bk.environment(profile.env):
            failures = bk.execute_all(root, profile.params, profile=profile.name)
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
    except KeyboardInterrupt:
        print("probekit: interrupted; no page was changed by the unfinished chapter, and the scores computed "
              "so far are cached for the next run", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
