"""Model families and probe sources from other packages, through the ``probekit.scorers`` and ``probekit.datasets``
entry points: a tiny installed package (a dist-info folder on the path) adds a family with its own adapter, and a
chapter runs with it; a probe source is found by the dataset registry and the parameter check."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from PIL import Image

from conftest import REPO, copy_project

ADAPTER = '''
"""A dual encoder with no weights: an image is its mean colour, a text the colours it names."""
import numpy as np
import torch
import torch.nn.functional as F

from probekit.scorers import Scorer

COLOURS = {"red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0)}


class ColourScorer(Scorer):
    family = "colour"
    family_capabilities = ("similarity",)
    choice_head = "similarity"
    head_description = "similarity: cosine of the image's mean RGB and the colours the text names"
    model_types = ("colour_model",)

    def _load(self, source, **options):
        self.preprocessing = "mean RGB"

    def _prepare_images(self, pils):
        return {"rgb": torch.tensor(np.stack([np.asarray(p.convert("RGB"), dtype=np.float32).reshape(-1, 3).mean(0)
                                              for p in pils]))}

    def _tokenize(self, texts):
        return {"rgb": torch.tensor([[1e-3 + sum(COLOURS.get(w, (0, 0, 0))[i] for w in t.lower().split())
                                      for i in range(3)] for t in texts])}

    def _embed_images(self, inputs):
        return F.normalize(inputs["rgb"], dim=-1)

    def _embed_texts(self, inputs):
        return F.normalize(inputs["rgb"], dim=-1)

    def _logit_scale_bias(self):
        return 10.0, 0.0
'''

ITEMS = '''
import pandas as pd
from probekit.toyworld.classify import make_items


def load_items(data_dir, limit, seed, split):
    return make_items(data_dir, limit, seed, split).assign(label=lambda t: t["label"].str.upper())
'''


@pytest.fixture
def plugin_site(tmp_path):
    """A folder that holds an 'installed' package, probekit-colour: its module and its dist-info with entry points."""
    site = tmp_path / "site"
    (site / "probekit_colour").mkdir(parents=True)
    (site / "probekit_colour" / "__init__.py").write_text(textwrap.dedent(ADAPTER))
    (site / "probekit_colour" / "items.py").write_text(textwrap.dedent(ITEMS))
    info = site / "probekit_colour-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probekit-colour\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[probekit.scorers]\ncolour = probekit_colour:ColourScorer\n\n"
                                           "[probekit.datasets]\nclassify:upper = probekit_colour.items:load_items\n")
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    for name in [m for m in sys.modules if m.startswith("probekit_colour")]:
        del sys.modules[name]


def test_a_plugin_family_loads_by_prefix_and_by_model_type(plugin_site, tmp_path):
    from probekit.scorers import families, load_scorer, model_spec

    assert families()["colour"] == "probekit_colour:ColourScorer"
    checkpoint = tmp_path / "my-colour"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text('{"model_type": "colour_model"}')
    spec = model_spec(str(checkpoint))
    assert (spec.family, spec.capabilities) == ("colour", ("similarity",))
    assert spec.head.startswith("similarity: cosine of the image's mean RGB")
    scorer = load_scorer(f"colour:{checkpoint}", cache_dir=False)
    red, blue = Image.new("RGB", (8, 8), "red"), Image.new("RGB", (8, 8), "blue")
    probs = scorer.choose_text([red, blue], [["a red ball", "a blue ball"]] * 2)
    assert probs[0, 0] > 0.99 and probs[1, 1] > 0.99


def test_list_names_each_installed_family_with_its_package(plugin_site, capsys):
    from probekit.cli import main

    assert main(["--root", str(REPO), "list"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("plugin families:")]
    assert lines == ["plugin families: colour (probekit_colour:ColourScorer, from probekit-colour 0.1)"]
    (plugin_site / "probekit_colour-0.1.dist-info" / "entry_points.txt").write_text(
        "[probekit.scorers]\nclip = probekit_colour:ColourScorer\n")
    assert main(["--root", str(REPO), "list"]) == 0
    assert ("plugin families: clip (probekit_colour:ColourScorer, from probekit-colour 0.1; unused: a built-in family "
            "has that name)") in capsys.readouterr().out.splitlines()


def test_a_plugin_probe_source_is_a_dataset(plugin_site, tmp_path):
    from probekit.datasets import load_dataset, sources

    assert sources("classify") == ["toy", "upper"]
    items = load_dataset("classify", "upper", data_dir=tmp_path, limit=5)
    assert len(items) == 5 and items["label"].str.isupper().all()


def test_a_chapter_runs_with_a_plugin_family(plugin_site, executed_book, executed_chapter, tmp_path):
    """The verbs chapter, in a kernel of its own, scores a model of the installed family and names its head."""
    executed_chapter("verbs")
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    data = executed_book / "data"
    cmd = [sys.executable, "-m", "probekit.cli", "--root", str(project), "run", "verbs", "--quiet", "--no-build",
           "-p", "models", "colour:white", "-p", "data_dir", str(data / "data"),
           "-p", "cache_dir", str(data / "scores"), "--profile", "toy"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pd.read_parquet(project / "book" / "chapters" / "verbs.results.parquet")
    ours = rows[rows["model"] == "colour:white"]
    assert len(ours) and set(ours["source"]) == {"ours"} and (ours["n"] > 0).all()
