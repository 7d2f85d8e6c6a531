"""An open_clip ``ARCH:TAG`` loads with the activation its weights were trained with: OpenAI's tags (and others)
were trained with QuickGELU on architectures whose config says GELU, which open_clip only warns about.  Tiny
stand-ins under the tags' hub repositories (:mod:`probekit.rehearsal.models`), loaded offline in a fresh process
(the hub reads its cache folder and offline switch at import)."""

from __future__ import annotations

import os
import subprocess
import sys

from probekit.rehearsal.models import open_clip_model

SCRIPT = """
from probekit.scorers import load_scorer
for name in ("RN50:openai", "ViT-B-32:laion2b_e16"):
    model = load_scorer(name, family="open_clip", device="cpu", cache_dir=False).model
    print(name, sorted({type(m).__name__ for m in model.transformer.modules() if "GELU" in type(m).__name__}))
"""


def test_quick_gelu_follows_the_pretrained_tag(tmp_path):
    for source in ("RN50:openai", "ViT-B-32:laion2b_e16"):
        open_clip_model(tmp_path / "hub", tmp_path / "configs", source)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub"),
           "PROBEKIT_OPEN_CLIP_CONFIGS": str(tmp_path / "configs"), "PYTHONWARNINGS": "error::UserWarning"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["RN50:openai ['QuickGELU']", "ViT-B-32:laion2b_e16 ['GELU']"]
