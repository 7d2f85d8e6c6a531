"""Progress bars for long loops, and a chapter kernel that prints nothing but the chapter's own outputs.

On the terminal a book run shows one bar per chapter (its cells, drawn by papermill) and one per scoring job
(items/s and ETA, drawn from inside the chapter's kernel, below the chapter's bar).  The kernel is set up by
:func:`quiet_kernel`: its bars go to the terminal the kernel was started from, never into the page.
``PROBEKIT_PROGRESS=0`` (what ``probekit --quiet`` sets) silences every bar of probekit.  Where the output is not a
terminal (a log file, a CI job), no bar frame is written: each job writes one line when it ends (:class:`Lines`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings

from tqdm import tqdm
from tqdm.std import TqdmWarning

from probekit.environ import environment

#: where a chapter kernel's bars go (the terminal's stderr, not the page); None outside such a kernel
_terminal = None


def kernel_startup(bars: bool) -> str:
    """The line ``probekit.chapters`` runs first in every chapter's kernel."""
    return f"import probekit.progress; probekit.progress.quiet_kernel(bars={bool(bars)})"


def progress_enabled() -> bool:
    return os.environ.get("PROBEKIT_PROGRESS", "1") != "0"


#: off a terminal, a job that took less than this many seconds writes no line (a cold book has about 130 jobs);
#: ``PROBEKIT_LINE_SECONDS`` sets another (0: a line for every job)
LINE_SECONDS = 5.0


class Lines(tqdm):
    """A bar that draws nothing while it runs and writes one line when it ends (``desc: n unit in time``), if it
    took at least :data:`LINE_SECONDS`: what a job reports where its output is not a terminal, instead of hundreds
    of redrawn frames."""

    def display(self, *args, **kwargs):
        return True

    def close(self):
        took = 0.0 if self.disable else self._time() - self.start_t
        least = float(os.environ.get("PROBEKIT_LINE_SECONDS", LINE_SECONDS))
        if not self.disable and not getattr(self, "_line_written", False) and took >= least:
            self._line_written = True
            done = f"{self.n}/{self.total}" if self.total else f"{self.n}"
            elapsed = self.format_interval(took)
            last = f", {self.postfix}" if self.postfix else ""   # e.g. a fine-tune's last loss
            self.fp.write(f"{self.desc or 'done'}: {done} {self.unit} in {elapsed}{last}\n")
            self.fp.flush()
        super().close()


def record(**fields) -> None:
    """Append ``fields`` as one line of JSON to the file ``PROBEKIT_TIMINGS`` names (nothing without it): each
    scoring job and each fine-tuning run reports its work and seconds there (read by benchmarks/paper_time.py)."""
    path = os.environ.get("PROBEKIT_TIMINGS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(fields) + "\n")


def is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def bar(iterable=None, *, total: int | None = None, desc: str | None = None, unit: str = "it",
        disable: bool = False, leave: bool = True) -> tqdm:
    """A tqdm bar (count, items/s, ETA), off when ``disable`` or when ``PROBEKIT_PROGRESS=0``; in a chapter's
    kernel it is drawn on the terminal, one line below the chapter's bar, and cleared when done.  Where that
    output is not a terminal, a :class:`Lines` bar: one line when the job ends."""
    where = dict(file=_terminal, position=1, leave=False) if _terminal is not None else dict(leave=leave)
    kind = tqdm if is_terminal(where.get("file") or sys.stderr) else Lines
    return kind(iterable, total=total, desc=desc, unit=unit, disable=disable or not progress_enabled(),
                dynamic_ncols=True, **where)


def off():
    """No probekit bars inside (a context manager): for short inner jobs of a longer run that reports its own
    progress (the toy trainers' held-out probes, a line in the training log each)."""
    return environment({"PROBEKIT_PROGRESS": "0"})


def quiet_kernel(bars: bool = False) -> None:
    """Run first in a chapter's kernel, before any cell: no bars and no warnings on the page.

    - probekit's bars (``bars``) are drawn on the file descriptor 2 the kernel inherited, the terminal of the
      ``probekit`` command (the kernel is started with ``capture_fd_output`` off, so that descriptor is not
      the page's stderr); without ``bars`` they are off (``PROBEKIT_PROGRESS=0``).  Those of huggingface_hub and
      transformers are off (``HF_HUB_DISABLE_PROGRESS_BARS=1``).
    - tqdm's "IProgress not found" warning: ``tqdm.auto`` (imported by transformers and huggingface_hub at
      import time, whether or not a bar is ever drawn) looks for ipywidgets when it finds itself in a Jupyter
      kernel, and warns on stderr when they are missing.  Importing it here with that warning ignored settles
      ``tqdm.auto`` on the console bar for the rest of the kernel.
    - Python warnings (deprecations and the like from libraries) are ignored: they are for developers, who
      see them when running ``probekit.studies.<study>.run`` outside the book.  Errors still raise and fail
      the chapter.
    - The kernel's own plumbing log (tornado's) is kept off the terminal: ipykernel 7.4 races at shutdown (its
      control handler flushes stdout after the shutdown request closed the output thread's pipe) and tornado then
      logs a ZMQError traceback ("Socket operation on non-socket") after the chapter is done; ipykernel#1518 fixed
      one path of that race, not this one.
    """
    global _terminal
    if bars and progress_enabled():
        _terminal = os.fdopen(os.dup(2), "w", buffering=1)
    else:
        os.environ["PROBEKIT_PROGRESS"] = "0"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        import tqdm.autonotebook  # noqa: F401  (the import is the point)
    warnings.simplefilter("ignore")
    logging.getLogger("tornado").setLevel(logging.CRITICAL)
