"""Progress bars for long loops, and a chapter kernel that prints nothing but the chapter's own outputs.

Chapters are executed in a kernel set up by :func:`quiet_kernel` (papermill shows progress per cell on the
terminal instead); set ``PROBEKIT_PROGRESS=0`` yourself to silence every bar of probekit.
"""

from __future__ import annotations

import os
import warnings

from tqdm import tqdm
from tqdm.std import TqdmWarning

#: the kernel start-up line ``probekit.chapters`` gives every chapter's kernel
KERNEL_STARTUP = "import probekit.progress; probekit.progress.quiet_kernel()"


def progress_enabled() -> bool:
    return os.environ.get("PROBEKIT_PROGRESS", "1") != "0"


def bar(iterable=None, *, total: int | None = None, desc: str | None = None, unit: str = "it",
        disable: bool = False, leave: bool = True) -> tqdm:
    """A tqdm bar, off when ``disable`` or when ``PROBEKIT_PROGRESS=0``."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=disable or not progress_enabled(), leave=leave)


def quiet_kernel() -> None:
    """Run first in a chapter's kernel, before any cell: no bars, no warnings on the page.

    - Bars off: probekit's (``PROBEKIT_PROGRESS=0``) and those of huggingface_hub and transformers
      (``HF_HUB_DISABLE_PROGRESS_BARS=1``); every refresh of a bar would be an output of the page.
    - tqdm's "IProgress not found" warning: ``tqdm.auto`` (imported by transformers and huggingface_hub at
      import time, whether or not a bar is ever drawn) looks for ipywidgets when it finds itself in a Jupyter
      kernel, and warns on stderr when they are missing.  Pages show no bars, so importing it here with that
      warning ignored settles ``tqdm.auto`` on the console bar for the rest of the kernel.
    - Python warnings (deprecations and the like from libraries) are ignored: they are for developers, who
      see them when running ``probekit.studies.<study>.run`` outside the book.  Errors still raise and fail
      the chapter.
    """
    os.environ["PROBEKIT_PROGRESS"] = "0"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        import tqdm.autonotebook  # noqa: F401  (the import is the point)
    warnings.simplefilter("ignore")
