"""The conceptual chapter's fine-tuned toy CLIPs, shipped beside the zoo so that a book build does not retrain
them: ``probekit train-toy`` ends with :func:`ship` when it retrained the shipped zoo's ``toy-clip`` (or with
``--finetunes``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from probekit.environ import environment


def ship(out, device: str = "cpu") -> list[Path]:
    """Run the conceptual study at the chapter's defaults on the zoo in ``out`` (its fine-tunes trained, or found
    already shipped with the same key, in a fresh data folder) and copy the first fine-tuning seed's fine-tunes
    to ``out/finetuned``, the other seeds' sweeps as numbers (:mod:`probekit.studies.conceptual.finetune_seeds`)."""
    from probekit.studies.conceptual import study as conceptual, finetune_cache
    from probekit.studies.conceptual.params import Params

    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="probekit-finetunes-") as tmp, \
            environment({"PROBEKIT_TOY_CHECKPOINTS": str(out)}):
        params = Params(models=["toy-clip"], lab_models=[], data_dir=tmp, device=device)
        conceptual.run(params)
        return finetune_cache.ship(Path(tmp) / "finetune", out, seeds={params.seed})
