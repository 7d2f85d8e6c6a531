"""Word pieces of a masked verb: their lemmas, the paper's per-piece rule, and whole words built from pieces.

**Lemmas.**  Words and pieces are lemmatized as verbs with ``lemminflect`` (rule-based, no download at run time;
"ran" -> "run", "sitting" -> "sit").  A word may have several verb lemmas ("saw" -> "see", "saw").

**Piece markers.**  WordPiece (BERT, ViLT, FLAVA) marks a piece that continues a word with a leading "##";
byte-level BPE (RoBERTa, BridgeTower) marks a piece that *starts* a word with "Ġ" (SentencePiece with "▁"), and
an unmarked piece continues the word before it.  :func:`piece_text` is a piece without its marker.

**The paper's rule** (:func:`piece_hits`, :func:`pieces_correct`): the verb is masked with one mask per piece;
at each masked position the gold piece *hits* when its lemma is among the lemmas of that position's top-k
predicted pieces, and a caption is correct when at least half of its pieces hit.  The markers are stripped from
the gold piece and from the predictions alike, so a continuation piece ("##ging") hits when the model predicts
it.  (The authors' code strips "##" from the predictions only, so there a continuation piece never hits and a
two-piece verb is decided by its first piece alone.)

**Whole words** (:func:`top_candidates`, a second metric): each position contributes its top-k pieces, a
combination's probability is the product of its pieces' probabilities (positions are predicted
independently), and the ``k`` most probable combinations, joined into words by the markers
(:func:`join_pieces`), are the top-k words.  For a one-piece verb this is exactly the head's top-k.
"""

from __future__ import annotations

import heapq
import re
from itertools import product

import numpy as np
from lemminflect import getLemma

WORD_START = ("Ġ", "▁")
CONTINUE = "##"


def verb_lemmas(word: str) -> frozenset[str]:
    """All verb lemmas of ``word`` (lower-cased; out-of-vocabulary words by lemminflect's rules); none for text
    of several words (a combination of pieces that spells two words never matches a one-word verb)."""
    w = word.strip().lower()
    if not w or any(c.isspace() for c in w):
        return frozenset()
    w = re.sub(r"[^a-z'-]", "", w)
    if not w:
        return frozenset()
    return frozenset(getLemma(w, upos="VERB", lemmatize_oov=True))


def piece_text(piece: str) -> str:
    """``piece`` without its tokenizer marker ("##", "Ġ" or "▁"), lower-cased."""
    piece = piece.removeprefix(CONTINUE)
    return (piece[1:] if piece.startswith(WORD_START) else piece).strip().lower()


def piece_lemmas(piece: str) -> frozenset[str]:
    """The verb lemmas of a piece's text, or the text itself when it has none (a piece such as "ging")."""
    text = piece_text(piece)
    return verb_lemmas(text) or frozenset([text])


def piece_ranks(gold_pieces, positions) -> list[float]:
    """Per masked position, the rank (1-based) of the first predicted piece whose lemmas meet the gold piece's,
    NaN when none of that position's predictions does."""
    if len(gold_pieces) != len(positions):
        raise ValueError(f"{len(gold_pieces)} gold pieces for {len(positions)} masked positions")
    ranks = []
    for gold, preds in zip(gold_pieces, positions):
        want = piece_lemmas(gold)
        ranks.append(next((float(i + 1) for i, (p, _) in enumerate(preds) if piece_lemmas(p) & want), np.nan))
    return ranks


def piece_hits(gold_pieces, positions, k: int) -> int:
    """How many masked positions have their gold piece among their top-k predictions (by lemma)."""
    return sum(r <= k for r in piece_ranks(gold_pieces, [list(p)[:k] for p in positions]))


def pieces_correct(hits: int, n_pieces: int) -> bool:
    """The paper's caption rule: at least half of the verb's pieces hit."""
    return n_pieces > 0 and 2 * hits >= n_pieces


def join_pieces(pieces) -> str:
    """Join tokenizer pieces into text.  WordPiece: "##x" continues the previous word.  Byte-level BPE /
    SentencePiece (some piece starts with "Ġ" or "▁"): a marked piece starts a word, an unmarked one continues it."""
    bpe = any(p.startswith(WORD_START) for p in pieces)
    words: list[str] = []
    for piece in pieces:
        if bpe and piece.startswith(WORD_START):
            words.append(piece[1:])
        elif words and (bpe or piece.startswith(CONTINUE)):
            words[-1] += piece.removeprefix(CONTINUE)
        else:
            words.append(piece.removeprefix(CONTINUE))
    return " ".join(words)


def top_candidates(positions, k: int) -> list[tuple[str, float]]:
    """The ``k`` most probable words from per-position ``(piece, prob)`` predictions (see the module docstring)."""
    if len(positions) == 1:
        return [(join_pieces([p]), float(q)) for p, q in list(positions[0])[:k]]
    pools = [list(pos)[:k] for pos in positions]
    combos = heapq.nlargest(k, product(*pools), key=lambda c: np.prod([q for _, q in c]))
    return [(join_pieces([p for p, _ in c]), float(np.prod([q for _, q in c]))) for c in combos]
