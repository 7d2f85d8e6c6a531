"""The one model registry: short name -> family, checkpoint, capabilities, head + normalisation, papers.

``source`` is a hub id, ``toy:<name>`` (a checkpoint shipped in ``probekit/toymodels/checkpoints/<name>``), or for
open_clip ``ARCH:TAG`` (an open_clip architecture and pretrained tag).  Adding a checkpoint of a known family is one
``ModelSpec`` line; a new family is one adapter module plus one ``FAMILIES`` line (module paths, imported lazily).

Papers: svo = Hendricks & Nematzadeh 2021 (SVO-Probes); prednoun = Nikolaus et al. 2022 (predicate-noun
dependencies); masking = guided masking (verb understanding with masked-LM heads); conceptual = Schiappa et al.
2023 (Probe-R/C/B).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import TYPE_CHECKING
import warnings

from probekit.registry import Registry, load

if TYPE_CHECKING:
    import pandas as pd

#: family -> "module:Class" of its adapter (imported only when a model of that family is loaded)
FAMILIES = Registry("model family", {
    "clip": "probekit.scorers.hf_clip:ClipScorer",
    "siglip": "probekit.scorers.hf_clip:SiglipScorer",
    "open_clip": "probekit.scorers.openclip:OpenClipScorer",
    "vilt": "probekit.scorers.vilt:ViltScorer",
    "vilt-itm": "probekit.scorers.vilt:ViltItmScorer",
    "blip": "probekit.scorers.blip:BlipScorer",
    "bridgetower": "probekit.scorers.bridgetower:BridgeTowerScorer",
    "flava": "probekit.scorers.flava:FlavaScorer",
    "bert": "probekit.scorers.bert:BertScorer",
    "owlvit": "probekit.scorers.owlvit:OwlVitScorer",
    "blind": "probekit.scorers.blind:BlindScorer",
})

#: what each family can do when loaded from an arbitrary hub id / directory (narrowed by the checkpoint's heads)
FAMILY_CAPABILITIES = {
    "clip": ("similarity",), "siglip": ("similarity", "match"), "open_clip": ("similarity",),
    "vilt": ("match", "fill_mask"), "vilt-itm": ("match",), "blip": ("match",), "bridgetower": ("match", "fill_mask"),
    "flava": ("match", "similarity", "fill_mask"), "bert": ("fill_mask",), "owlvit": ("detect",),
    "blind": ("match", "fill_mask"),
}

#: how each family's scores are computed (shown by list_models and in the methods chapter)
FAMILY_HEADS = {
    "clip": "similarity: logit_scale x cosine of projected CLS/pooled embeddings; choices: softmax over candidates",
    "siglip": "similarity: logit_scale x cosine + logit_bias; match: sigmoid of that logit; choices: softmax",
    "open_clip": "similarity: logit_scale x cosine of open_clip encode_image/encode_text; choices: softmax",
    "vilt": "match: sigmoid of ViltForImageAndTextRetrieval's single rank logit; fill_mask: ViltForMaskedLM softmax",
    "vilt-itm": "match: softmax of the pretrained checkpoint's 2-way itm_score head, index 1 (calibrated ITM)",
    "blip": "match: softmax of BlipForImageTextRetrieval's ITM head (use_itm_head=True), index 1 (not ITC)",
    "bridgetower": "match: softmax of BridgeTowerForImageAndTextRetrieval's 2-way ITM logits, index 1; "
                   "fill_mask: BridgeTowerForMaskedLM softmax",
    "flava": "match: softmax of FlavaForPreTraining.itm_head on the multimodal encoder, index 1; similarity: "
             "logit_scale x cosine of projected unimodal CLS; fill_mask: mmm_text_head with an image, mlm_head without",
    "bert": "fill_mask: BertForMaskedLM softmax over the vocabulary (text only)",
    "owlvit": "detect: OwlViTForObjectDetection, query 'a photo of a {noun}', highest-scoring box above 0.1",
    "blind": "match: the text's geometric-mean token probability under a text-only masked LM (exact pseudo-"
             "log-likelihood), the image ignored; choices: the likelier text, a tie between images",
}


def families() -> dict[str, str]:
    """family -> ``"module:Class"`` of its adapter: :data:`FAMILIES` and the families installed packages add under
    the ``probekit.scorers`` entry point (:mod:`probekit.plugins`; a built-in name wins)."""
    from probekit.plugins import SCORERS, plugins
    return {**FAMILIES, **{name: value for name, value in plugins(SCORERS).items() if name not in FAMILIES}}


def adapter(family: str):
    """The adapter class of ``family`` (imported now); KeyError for a family nobody provides."""
    return load(families()[family])


def family_capabilities(family: str) -> tuple[str, ...]:
    """What a checkpoint of ``family`` can do at most: :data:`FAMILY_CAPABILITIES`, or a plugin adapter's own
    ``family_capabilities``."""
    return FAMILY_CAPABILITIES.get(family) or tuple(adapter(family).family_capabilities)


def family_head(family: str) -> str:
    """How ``family``'s scores are computed: :data:`FAMILY_HEADS`, or a plugin adapter's ``head_description``."""
    return FAMILY_HEADS.get(family) or adapter(family).head_description or f"{family} adapter"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str
    source: str
    capabilities: tuple[str, ...]
    papers: tuple[str, ...] = ()
    note: str = ""
    options: dict = field(default_factory=dict)
    #: False when the match head has no meaningful zero point (a retrieval head fine-tuned with a softmax over
    #: candidates): it may rank and choose, but is never thresholded as a match probability
    calibrated: bool = True

    @property
    def head(self) -> str:
        return family_head(self.family)


def _s(name, family, source, caps=None, papers=(), note="", calibrated=True, **options):
    return ModelSpec(name, family, source, tuple(caps or FAMILY_CAPABILITIES[family]), tuple(papers), note, options,
                     calibrated)


_SPECS = [
    # toy models shipped in the repo (helper A's toy world), loaded by the same from_pretrained(dir) call
    # toy model zoo shipped in the repo (recipes: probekit/toymodels/checkpoints/MODEL_CARD.md), loaded by the same
    # from_pretrained(dir) call as a hub id
    _s("toy-clip", "clip", "toy:toy-clip", note="HF CLIPModel, InfoNCE over in-batch negatives, toy world"),
    _s("toy-clip-hardneg", "clip", "toy:toy-clip-hardneg", note="toy-clip + one-slot swap hard negatives"),
    _s("toy-clip-unbound", "clip", "toy:toy-clip-unbound",
       note="knock-out of toy-clip-hardneg: captions never say which noun goes with which predicate"),
    _s("toy-clip-noverb", "clip", "toy:toy-clip-noverb",
       note="knock-out of toy-clip-hardneg: each transitive scene drawn as a verb picked at random among all 24 "
            "(the captioned one about 1 time in 24)"),
    _s("toy-clip-scenealways", "clip", "toy:toy-clip-scenealways",
       note="knock-in of toy-clip: objects always drawn in their typical scene (Probe-B's positive control)"),
    _s("toy-clip-noattr", "clip", "toy:toy-clip-noattr",
       note="knock-out of toy-clip: captions never name a colour, size or pattern"),
    _s("toy-vilt", "vilt", "toy:toy-vilt", ("match", "fill_mask"),
       note="HF ViLT with ITM (random negatives) + MLM heads, toy world"),
    _s("toy-vilt-hardneg", "vilt", "toy:toy-vilt-hardneg", ("match", "fill_mask"),
       note="toy-vilt with one-slot swap ITM negatives"),
    _s("toy-vilt-noisy", "vilt", "toy:toy-vilt-noisy", ("match", "fill_mask"),
       note="toy-vilt on a stream where 30% of captions are loosely related (own swaps) or wrong"),
    _s("toy-vilt-mismatch", "vilt", "toy:toy-vilt-mismatch", ("match", "fill_mask"),
       note="toy-vilt on a stream where 30% of captions are another scene's (wrong, never an own swap)"),
    _s("toy-vilt-noverb", "vilt", "toy:toy-vilt-noverb", ("match", "fill_mask"),
       note="knock-out of toy-vilt-hardneg: each transitive scene drawn as a verb picked at random among all 24 "
            "(the captioned one about 1 time in 24)"),
    _s("toy-vilt-unpaired", "vilt", "toy:toy-vilt-unpaired", ("match", "fill_mask"),
       note="knock-out of toy-vilt-hardneg: two-agent captions name both agents and both predicates, never paired "
            "(binding removed)"),
    _s("toy-bert", "bert", "toy:toy-bert", note="text-only BertForMaskedLM: blind baseline and perplexity model"),
    _s("toy-bert-blind", "blind", "toy:toy-bert", calibrated=False,
       note="toy-bert asked image-text questions: scores the text alone (the blind baseline of choice probes)"),
    # HF CLIP / SigLIP
    _s("clip-vit-b32", "clip", "openai/clip-vit-base-patch32", papers=("prednoun", "conceptual")),
    _s("clip-vit-b16", "clip", "openai/clip-vit-base-patch16", papers=("conceptual",)),
    _s("clip-vit-l14", "clip", "openai/clip-vit-large-patch14", papers=("conceptual",)),
    _s("clip-vit-l14-336", "clip", "openai/clip-vit-large-patch14-336", papers=("prednoun", "conceptual")),
    _s("siglip-b16", "siglip", "google/siglip-base-patch16-224", note="not in the papers; a sigmoid-loss contrast"),
    # open_clip: predicate-noun paper Table 6 and the conceptual paper's CLIP backbones
    _s("openclip-rn50-openai", "open_clip", "RN50:openai", papers=("prednoun", "conceptual")),
    _s("openclip-rn101-openai", "open_clip", "RN101:openai", papers=("prednoun", "conceptual")),
    _s("openclip-vit-b32-openai", "open_clip", "ViT-B-32:openai", papers=("prednoun", "conceptual")),
    _s("openclip-vit-l14-openai", "open_clip", "ViT-L-14:openai", papers=("conceptual",)),
    _s("openclip-rn50-yfcc15m", "open_clip", "RN50:yfcc15m", papers=("prednoun",)),
    _s("openclip-rn101-yfcc15m", "open_clip", "RN101:yfcc15m", papers=("prednoun",)),
    _s("openclip-rn50-cc12m", "open_clip", "RN50:cc12m", papers=("prednoun",)),
    _s("openclip-vit-b32-laion400m", "open_clip", "ViT-B-32:laion400m_e32", papers=("prednoun",),
       note="Table 6 also lists laion400m_e31"),
    _s("openclip-vit-b32-laion2b", "open_clip", "ViT-B-32:laion2b_e16", papers=("prednoun",)),
    _s("openclip-vit-l14-laion2b", "open_clip", "ViT-L-14:laion2b_s32b_b82k"),
    _s("openclip-rn50x4-openai", "open_clip", "RN50x4:openai", papers=("conceptual",),
       note="the conceptual paper's 'CLIP CNN'"),
    # ITM / MLM cross-encoders
    _s("vilt-coco", "vilt", "dandelin/vilt-b32-finetuned-coco", ("match",), papers=("prednoun", "conceptual"),
       calibrated=False, note="retrieval head (rank logit): pairwise/ranking only; thresholded ITM is vilt-itm"),
    _s("vilt-itm", "vilt-itm", "https://github.com/dandelin/ViLT/releases/download/200k/vilt_200k_mlm_itm.ckpt",
       papers=("svo", "prednoun"), note="ViLT's pretrained ITM head (authors' checkpoint, converted once)"),
    _s("vilt-mlm", "vilt", "dandelin/vilt-b32-mlm", ("fill_mask",), papers=("masking",)),
    _s("blip-itm-base", "blip", "Salesforce/blip-itm-base-coco", papers=("masking",)),
    _s("blip-itm-large", "blip", "Salesforce/blip-itm-large-coco", papers=("masking",)),
    _s("bridgetower", "bridgetower", "BridgeTower/bridgetower-base-itm-mlm", papers=("conceptual",)),
    _s("flava", "flava", "facebook/flava-full", papers=("conceptual", "masking")),
    _s("bert-base", "bert", "bert-base-uncased", papers=("prednoun", "masking"),
       note="prednoun: sentence perplexity; masking: text-only baseline"),
    # open-vocabulary detector: the masking probe's subject boxes
    _s("owlvit-b32", "owlvit", "google/owlvit-base-patch32", papers=("masking",), note="subject boxes"),
]
REGISTRY: dict[str, ModelSpec] = {s.name: s for s in _SPECS}

WEIGHTS = "model.safetensors"   # a toy member is saved once this file is in its directory
TOY_CHECKPOINTS = Path(__file__).resolve().parent.parent / "toymodels" / "checkpoints"


def resolve_source(source: str) -> str:
    """``toy:<name>`` -> the shipped checkpoint directory, or ``$PROBEKIT_TOY_CHECKPOINTS/<name>`` when that holds
    saved weights (a zoo, or some of its members, retrained with ``probekit train-toy --out``); anything else
    unchanged.  A member the zoo does not hold comes from the shipped zoo; so does one still training there (its
    directory has no weights yet), with a warning.  A zoo directory that does not exist, or a member path that is not
    a directory, is an error: falling back there would score the shipped model under the other zoo's name."""
    if not source.startswith("toy:"):
        return source
    name, path = source[4:], TOY_CHECKPOINTS / source[4:]
    zoo = os.environ.get("PROBEKIT_TOY_CHECKPOINTS")
    if zoo:
        retrained = Path(zoo) / name
        if not Path(zoo).is_dir():
            raise FileNotFoundError(f"PROBEKIT_TOY_CHECKPOINTS={zoo} is not a directory; point it at a zoo written by "
                                    f"`probekit train-toy --out DIR`, or unset it to use the shipped zoo")
        if (retrained / WEIGHTS).is_file():
            path = retrained
        elif os.path.lexists(retrained) and not retrained.is_dir():   # lexists: a broken link too
            raise FileNotFoundError(f"{retrained} is not a checkpoint directory (a broken link, or a file in its "
                                    f"place); retrain it with `probekit train-toy --out {zoo} --models {name}` or "
                                    f"remove it to use the shipped {name}")
        elif retrained.is_dir():
            warnings.warn(f"{retrained} holds no {WEIGHTS} yet (still training?): {name} comes from the shipped zoo, "
                          f"{path}", stacklevel=2)
    if not path.is_dir():
        raise FileNotFoundError(f"toy checkpoint {path} is missing; build it with `probekit train-toy` "
                                f"(or reinstall probekit, which ships it)")
    return str(path)


def list_models() -> pd.DataFrame:
    """The registry as a DataFrame: name, family, source, capabilities, head + normalisation, papers, note."""
    import pandas as pd

    return pd.DataFrame([{"name": s.name, "family": s.family, "source": s.source,
                          "capabilities": ", ".join(s.capabilities), "head": s.head,
                          "papers": ", ".join(s.papers), "note": s.note} for s in _SPECS])
