"""The conceptual chapter's fine-tuned toy CLIPs, shipped beside the zoo so that a book build does not retrain
them: ``probekit train-toy`` ends with :func:`ship` whenever it trained ``toy-clip``."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def _zoo(out: Path):
    previous = os.environ.get("PROBEKIT_TOY_CHECKPOINTS")
    os.environ["PROBEKIT_TOY_CHECKPOINTS"] = str(out)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["PROBEKIT_TOY_CHECKPOINTS"]
        else:
            os.environ["PROBEKIT_TOY_CHECKPOINTS"] = previous


def ship(out, device: str = "cpu") -> list[Path]:
    """Run the conceptual study at the chapter's defaults on the zoo in ``out`` (its fine-tunes trained, or found
    already shipped with the same key, in a fresh data folder) and copy each fine-tune to ``out/finetuned``."""
    from probekit.studies import conceptual, finetune_cache
    from probekit.studies.conceptual_params import Params

    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="probekit-finetunes-") as tmp, _zoo(out):
        conceptual.run(Params(models=["toy-clip"], lab_models=[], data_dir=tmp, device=device))
        return finetune_cache.ship(Path(tmp) / "finetune", out)
