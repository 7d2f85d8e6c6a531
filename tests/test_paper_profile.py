"""The paper profile runs the papers' models: no chapter parameter that names models falls back to a toy model."""

from __future__ import annotations

from pathlib import Path

import pytest

from probekit.chapters import CHAPTERS, load_profile, model_names, parameters

ROOT = Path(__file__).resolve().parents[1]


def toy_models(root: Path, chapter: str, values: dict) -> dict[str, list[str]]:
    """Parameter -> the toy models it names once ``values`` override ``chapter``'s defaults: every parameter
    holding model names (``models``, ``*_models``, ``*_model``) and any other whose value is a registry name."""
    registry = set(model_names())
    found = {}
    for name, param in parameters(chapter).items():
        value = values.get(name, param.default)
        entries = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        toys = [v for v in entries if isinstance(v, str) and v.startswith("toy-")
                and (param.is_models or v in registry)]
        if toys:
            found[name] = toys
    return found


def test_the_check_finds_a_toy_default_left_in_place():
    # prednoun's clip_models defaults to the toy CLIP: with no override the check must report it
    found = toy_models(ROOT, "prednoun", {})
    assert {k: found[k] for k in ("models", "clip_models", "perplexity_model")} == {
        "models": ["toy-vilt", "toy-clip"], "clip_models": ["toy-clip"], "perplexity_model": ["toy-bert"]}
    assert set(found) == {"models", "clip_models", "perplexity_model", "lab_models"}
    assert "toy-clip-unbound" in found["lab_models"]
    assert toy_models(ROOT, "prednoun", {"models": ["vilt-coco"], "clip_models": ["clip-vit-b32"],
                                         "perplexity_model": "bert-base", "lab_models": []}) == {}


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_paper_profile_uses_no_toy_model(chapter):
    profile = load_profile(ROOT, "paper")
    assert toy_models(ROOT, chapter, profile.params[chapter]) == {}, chapter
