"""Atomic PNG writes: two processes writing one image never share a temporary file."""

from __future__ import annotations

import numpy as np
from PIL import Image

from probekit.files import save_png


def test_writers_of_one_image_use_their_own_temporary_files(tmp_path, monkeypatch):
    written = []
    real = Image.Image.save

    def spy(self, fp, *args, **kwargs):
        written.append(fp)
        return real(self, fp, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "save", spy)
    target = tmp_path / "scene.png"
    img = Image.fromarray(np.arange(48, dtype=np.uint8).reshape(4, 4, 3))
    save_png(img, target)
    save_png(img, target)
    assert len(written) == 2 and written[0] != written[1] and target not in written
    assert [p.name for p in tmp_path.iterdir()] == ["scene.png"]
    assert np.array_equal(np.asarray(Image.open(target)), np.asarray(img))
