"""Shared fixtures: the whole book executed once per test worker (pytest-xdist) on the toy world.

Environment knobs (for developers; CI sets none of them):
- ``PROBEKIT_TEST_CHAPTERS=verbs,masking``: execute only these chapters (the others get placeholder pages).
- ``PROBEKIT_TEST_LIMIT=40``: the ``limit`` given to every chapter (default 60; ``none`` = chapter defaults). With a
  limit, the conceptual chapter also fine-tunes on fewer triplets for fewer steps (``SMALL_FINETUNE``).
- ``PROBEKIT_TEST_CACHE=/some/dir``: keep toy data and the score cache there between sessions (default:
  fresh, under the session's tmp dir).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one thread per worker (and per chapter kernel it starts): threads of several workers on too few cores
    # spin against each other and make the run several times slower
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

import nbformat
import pytest

from probekit import book as bk
from probekit import chapters as ch
from probekit.environ import environment

REPO = Path(__file__).resolve().parents[1]
TEST_LIMIT = os.environ.get("PROBEKIT_TEST_LIMIT", "60")
#: the conceptual chapter's fine-tuning in a limited run: the sweep's every α and encoder setting, with 100 steps of
#: 32 triplets on 200 of each kind (the chapter's default, 625 steps of 128 on 1,000 of each kind, takes about 3 min),
#: two fine-tuning seeds (the chapter's five pooled as on the page, at two fifths of the cost)
SMALL_FINETUNE = {"finetune_steps": 100, "finetune_batch": 32, "finetune_triplets": 200, "finetune_seeds": 2}


def _selected_chapters() -> list[str]:
    wanted = os.environ.get("PROBEKIT_TEST_CHAPTERS")
    return [c for c in ch.CHAPTERS if not wanted or c in wanted.split(",")]



def notebook_text(nb) -> str:
    """Everything an executed notebook shows as text: markdown, HTML (as written, then as read: a table cell's
    number and its interval on the line below read "62.3 [55.0, 70.1]") and plain outputs and streams."""
    from bs4 import BeautifulSoup
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            html = str(data.get("text/html", ""))
            read = " ".join(BeautifulSoup(html, "html.parser").get_text(" ").split()) if html else ""
            texts.append(str(data.get("text/markdown", "")) + html + "\n" + read
                         + str(data.get("text/plain", "")) + str(out.get("text", "")))
    return "\n".join(texts)


def notebook_images(nb) -> int:
    """How many PNG figures an executed notebook shows."""
    return sum("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))

SCRATCH_PARAMETERS = "# written here at execution: the verbs study's parameters"


def scratch_chapter(title: str, *cells: str) -> str:
    """A chapter source (jupytext MyST) with a parameters cell (the verbs study's, once executed) and the given
    code cells; a cell starting with ":tags: [...]" keeps that line as its tags."""
    head = ("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  display_name: Python 3\n"
            "  language: python\n  name: python3\n---\n\n")
    body = [f"# {title}", f"```{{code-cell}} ipython3\n:tags: [parameters]\n\n{SCRATCH_PARAMETERS}\n```"]
    body += [f"```{{code-cell}} ipython3\n{cell.strip()}\n```" for cell in cells]
    return head + "\n\n".join(body) + "\n"


def copy_project(dest: Path, *, with_outputs: Path | None = None) -> Path:
    """A copy of this repository's book project in ``dest`` (see ``probekit.book.copy_project``)."""
    return bk.copy_project(REPO, dest, with_outputs=with_outputs)


def toy_params(project: Path, data_root: Path) -> tuple[dict[str, dict], ch.Profile]:
    """The toy profile and its parameters for every chapter, with data and score cache under
    ``data_root`` and the session's small ``limit``."""
    profile = ch.load_profile(project, "toy")
    extra = {"data_dir": str(data_root / "data"), "cache_dir": str(data_root / "scores")}
    small = {}
    if TEST_LIMIT.lower() != "none":
        extra["limit"] = int(TEST_LIMIT)
        small = {"conceptual": SMALL_FINETUNE}
    params = {c: ch.resolve(c, {**profile.params[c], **extra, **small.get(c, {})}) for c in ch.CHAPTERS}
    return params, profile


@pytest.fixture(scope="session")
def executed_book(tmp_path_factory) -> Path:
    """Every chapter executed once on the toy world (toy profile, small ``limit``), and the book built.

    Returns a directory ``B`` laid out as:
    - ``B/<chapter>.ipynb``: the executed notebook of each chapter that ran (verbs, prednoun, masking,
      conceptual), ``B/<chapter>.results.parquet`` the result rows it exported (and ``.items.parquet`` its item
      rows, where its study keeps them); a chapter that failed has
      neither and ``B/<chapter>.error.txt`` holds the one-line error (chapter, cell, exception) instead;
    - ``B/summary.ipynb``: the summary page executed after the chapters (or ``B/summary.error.txt``);
    - ``B/html/``: the built HTML book (``html/index.html``; chapter pages ``html/book/chapters/<chapter>.html``,
      with figures as ``<img>`` files under ``html/_images/``);
    - ``B/project/``: the project copy the book was built in (``_config.yml``, ``_toc.yml``, ``book/``);
    - ``B/data/``: the data root given to ``toy_params``: toy data in ``B/data/data`` (``data_dir``) and the
      score cache in ``B/data/scores`` (``cache_dir``), warm for later runs with the same parameters.
    Treat it as read-only: copy ``B/project`` (``copy_project(dest, with_outputs=B)``) before re-executing.
    Use the ``executed_chapter`` fixture to get a chapter's notebook or fail with its error.
    """
    out = tmp_path_factory.mktemp("executed_book")
    project = copy_project(out / "project")
    data_root = Path(os.environ["PROBEKIT_TEST_CACHE"]) if os.environ.get("PROBEKIT_TEST_CACHE") else out / "data"
    params, profile = toy_params(project, data_root)
    selected = _selected_chapters()
    with environment(profile.env):
        failures = bk.execute_all(project, {c: params[c] for c in selected}, profile=profile.name,
                                  progress=False, log=lambda msg: None)
    for chapter in [*selected, ch.SUMMARY]:
        if chapter in failures:
            (out / f"{chapter}.error.txt").write_text(failures[chapter] + "\n")
            continue
        shutil.copy2(ch.output_path(project, chapter), out / f"{chapter}.ipynb")
        if chapter != ch.SUMMARY:
            shutil.copy2(ch.results_path(project, chapter), out / f"{chapter}.results.parquet")
            if ch.items_path(project, chapter).exists():
                shutil.copy2(ch.items_path(project, chapter), out / f"{chapter}.items.parquet")
    html = bk.build(project, log=lambda msg: None)
    shutil.copytree(html, out / "html")
    if data_root != out / "data":
        (out / "data").symlink_to(data_root)
    return out


@pytest.fixture(scope="session")
def executed_chapter(executed_book):
    """``executed_chapter(name)`` -> the executed notebook (nbformat) of chapter ``name`` (or of the summary
    page, ``"summary"``), or a test failure naming its error (or a skip when PROBEKIT_TEST_CHAPTERS left it
    out)."""
    def get(chapter: str):
        path = executed_book / f"{chapter}.ipynb"
        error = executed_book / f"{chapter}.error.txt"
        if error.exists():
            pytest.fail(error.read_text().strip())
        if not path.exists():
            pytest.skip(f"chapter {chapter!r} not executed (PROBEKIT_TEST_CHAPTERS)")
        return nbformat.read(path, as_version=4)
    return get


@pytest.fixture(scope="module")
def hand_made_annotations():
    """Annotation files written by a test in the real files' places are not the files whose hashes
    ``probekit.checksums`` records: their hash check is off for the module (tests/test_download.py tests it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBEKIT_SKIP_SHA256", "1")
        yield


def check_headlines_from_items(result, out: Path) -> int:
    """Write ``result``'s item rows as ``probekit export --items --format csv`` does, read them back, and assert
    every row of its study's ``FROM_ITEMS`` (:class:`probekit.results.FromItems`) is that rebuild of the export;
    each entry must match at least one row.  Returns how many rows were checked."""
    import pandas as pd

    from probekit.chapters.export import _write
    from probekit.results import items_frame, select
    from probekit.studies import STUDIES

    exported = pd.read_csv(_write(items_frame(result.items), out / f"{result.study}.items.csv", "csv"))
    checked = 0
    for where, rebuild in STUDIES[result.study].from_items:
        rows = select(result.ours(), **where)
        assert len(rows), where
        for _, row in rows.iterrows():
            assert rebuild.value(exported, row["model"]) == pytest.approx(row["value"], rel=1e-12), (where, row)
            checked += 1
    return checked
