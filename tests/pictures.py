"""Small random PNG files for scorer tests (the same files for the same seed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def random_pngs(folder: Path, n: int, size: int = 32, seed: int = 0) -> list[str]:
    """``n`` random ``size`` × ``size`` RGB PNGs ``0.png`` … in ``folder`` (existing files are kept)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        path = folder / f"{i}.png"
        pixels = rng.integers(0, 255, (size, size, 3), dtype=np.uint8)
        if not path.exists():
            Image.fromarray(pixels).save(path)
        paths.append(str(path))
    return paths
