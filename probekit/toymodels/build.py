"""Configurations, tokenizer and image processors of the toy models: small members of the real HF families
(CLIPModel, ViLT with ITM and MLM heads, BertForMaskedLM), saved so that ``from_pretrained(dir)`` loads them
exactly like a hub id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..toyworld.vocab import CELL, IMAGE_SIZE, SPECIAL_TOKENS, words

MAX_TEXT = 24            # tokens, [CLS] and [SEP] included
MEAN = STD = [0.5, 0.5, 0.5]
WIDTH, LAYERS, HEADS, FFN = 128, 4, 4, 256


@dataclass(frozen=True)
class Size:
    """The widths and depths of one zoo's models (``probekit train-toy --size``)."""
    width: int           # hidden size of every encoder, and CLIP's projection
    layers: int          # ViLT's encoder layers
    tower_layers: int    # layers of each CLIP tower and of BERT
    heads: int
    ffn: int             # MLP size


#: ``full`` is the shipped zoo's; the smaller ones are opt-in (a cheaper zoo, benchmarks/README.md's recipe pilot)
SIZES = {"full": Size(WIDTH, LAYERS, 3, HEADS, FFN),
         "medium": Size(96, 3, 2, HEADS, 192),
         "small": Size(64, 2, 2, HEADS, 128)}
DEFAULT_SIZE = "full"


def size_of(size: str | Size) -> Size:
    if isinstance(size, Size):
        return size
    if size not in SIZES:
        raise ValueError(f"unknown toy model size {size!r}; choose from {list(SIZES)}")
    return SIZES[size]


def tokenizer(extra: tuple[str, ...] = ()):
    """A lower-casing word-level tokenizer over the toy vocabulary (and ``extra`` words after it, which a recipe's
    captions may add: ``stream.Recipe.extra_words``), as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIAL_TOKENS + words() + [w for w in extra if w not in words()])}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=MAX_TEXT)


def clip_config(vocab_size: int, tok, size: str | Size = DEFAULT_SIZE):
    from transformers import CLIPConfig
    z = size_of(size)
    text = dict(vocab_size=vocab_size, hidden_size=z.width, intermediate_size=z.ffn, num_hidden_layers=z.tower_layers,
                num_attention_heads=z.heads, max_position_embeddings=MAX_TEXT, pad_token_id=tok.pad_token_id,
                bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)
    vision = dict(hidden_size=z.width, intermediate_size=z.ffn, num_hidden_layers=z.tower_layers,
                  num_attention_heads=z.heads, image_size=IMAGE_SIZE, patch_size=CELL)
    return CLIPConfig(text_config=text, vision_config=vision, projection_dim=z.width)


def vilt_config(vocab_size: int, size: str | Size = DEFAULT_SIZE):
    from transformers import ViltConfig
    z = size_of(size)
    return ViltConfig(vocab_size=vocab_size, hidden_size=z.width, num_hidden_layers=z.layers,
                      num_attention_heads=z.heads, intermediate_size=z.ffn, max_position_embeddings=MAX_TEXT,
                      image_size=IMAGE_SIZE, patch_size=CELL, max_image_length=-1, num_images=-1,
                      modality_type_vocab_size=2, architectures=["ViltForImageAndTextRetrieval", "ViltForMaskedLM"])


def bert_config(vocab_size: int, tok, size: str | Size = DEFAULT_SIZE):
    from transformers import BertConfig
    z = size_of(size)
    return BertConfig(vocab_size=vocab_size, hidden_size=z.width, num_hidden_layers=z.tower_layers,
                      num_attention_heads=z.heads, intermediate_size=z.ffn, max_position_embeddings=MAX_TEXT,
                      pad_token_id=tok.pad_token_id)


def clip_processor():
    from transformers import CLIPImageProcessor
    return CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
                              image_mean=MEAN, image_std=STD, do_convert_rgb=True)


def vilt_processor():
    from transformers import ViltImageProcessor
    return ViltImageProcessor(size={"shortest_edge": IMAGE_SIZE}, size_divisor=CELL, image_mean=MEAN, image_std=STD,
                              do_pad=True)


def save_side_files(out: Path, tok, processor=None) -> None:
    """Tokenizer and image processor beside the weights, so AutoTokenizer/AutoImageProcessor load them offline."""
    tok.save_pretrained(out)
    if processor is not None:
        processor.save_pretrained(out)
