"""The guided-masking probe on real data: SVO-Probes' positive pairs with the verb located and the subject boxed.

Each distinct (sentence, positive image) of SVO-Probes becomes one item.  The verb is the middle word of
``pos_triplet``; it is found in the sentence by lemma (any inflected form: "jogs", "jogging", "ran") and, where
the lemma occurs more than once, by its place after the triplet's subject (:func:`locate_verb`), and a
sentence where no word has that lemma is not guessed at: it is dropped, counted and listed in
``items.attrs["unlocated"]``.  No model runs here: the items leave ``subject_box`` None and carry the subject
noun (``subject``), which the masking study (``probekit.studies.masking.study``) gives to an open-vocabulary detector
adapter (``probekit.scorers``); the toy world's items carry their exact boxes instead.

:func:`verb_choice_items` turns a ``verbs`` table's verb-negative rows into the two sentences a model chooses
between under the positive image: the sentence, and the same sentence with its verb swapped for the negative's
(:func:`swap_verb`, inflected alike).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd
from lemminflect import getAllInflections, getAllInflectionsOOV, getAllLemmas, getAllLemmasOOV, getInflection

_WORD = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")


def verb_forms(lemma: str) -> set[str]:
    """Every inflected form of the verb ``lemma`` that lemminflect knows (its rules for unknown verbs)."""
    lemma = lemma.lower()
    table = getAllInflections(lemma, upos="VERB") or getAllInflectionsOOV(lemma, upos="VERB")
    return {lemma} | {form.lower() for forms in table.values() for form in forms}


def noun_forms(noun: str) -> set[str]:
    """The head word (last word) of ``noun`` and its noun inflections ("troupe" -> troupe, troupes)."""
    head = noun.strip().lower().split()[-1] if noun.strip() else ""
    table = getAllInflections(head, upos="NOUN") or getAllInflectionsOOV(head, upos="NOUN")
    return {head} | {form.lower() for forms in table.values() for form in forms} if head else set()


def locate_verb(sentence: str, lemma: str, subject: str | None = None) -> tuple[int, int] | None:
    """Character span of the verb ``lemma`` in ``sentence``, located by a rule on the triplet's order, or None.

    No part-of-speech tagger runs here (their models need a download); the rule, in order:

    1. the candidates are the words that are forms of the verb ``lemma`` (one of its inflections, or a word that
       lemmatizes to it as a verb);
    2. when the triplet's ``subject`` (its head noun or that noun's plural) occurs in the sentence and a
       candidate follows it, the verb is the first candidate after the subject's first occurrence: in English
       captions the verb follows its subject ("A dance troupe dances": the noun "dance" precedes "troupe";
       "Kids dance by a dancing fountain": the verb is "dance", not the participle after it);
    3. otherwise (no subject given, the caption names it differently, or nothing follows it) the verb is the
       first candidate inflected as a verb (a form other than the bare lemma: "dances", "dancing", "danced"),
       else the first candidate.

    Multi-word verbs ("pick up") are never located: masking one word of them would be a guess.
    """
    lemma = lemma.strip().lower()
    if not lemma or not _WORD.fullmatch(lemma):
        return None
    forms = verb_forms(lemma)
    words = list(_WORD.finditer(sentence))
    candidates = []
    for i, match in enumerate(words):
        word = match.group().lower()
        lemmas = getAllLemmas(word, upos="VERB").get("VERB") or getAllLemmasOOV(word, upos="VERB").get("VERB", ())
        if word in forms or lemma in lemmas:
            candidates.append((i, match))
    subject_at = next((i for i, m in enumerate(words) if m.group().lower() in noun_forms(subject or "")), None)
    after = [m for i, m in candidates if subject_at is not None and i > subject_at]
    if after:
        return after[0].span()
    inflected = [m for _, m in candidates if m.group().lower() != lemma]
    chosen = inflected[0] if inflected else (candidates[0][1] if candidates else None)
    return chosen.span() if chosen is not None else None


#: the tag a surface form is read as when it could be several: "hit" (VBD, VBP, VB, VBN) is read as past, which
#: suits any subject ("a man hit" -> "a man threw", not "a man throw")
TAGS = ("VBG", "VBZ", "VBD", "VBP", "VB", "VBN")


def swap_verb(sentence: str, span: tuple[int, int], lemma: str) -> str | None:
    """``sentence`` with the verb at ``span`` replaced by the verb ``lemma`` in the same inflection (the first of
    :data:`TAGS` the surface form has as a form of its own lemma, capitalised alike); None when the surface is no
    verb form lemminflect knows."""
    surface = sentence[span[0]:span[1]]
    word = surface.lower()
    lemmas = getAllLemmas(word, upos="VERB").get("VERB") or getAllLemmasOOV(word, upos="VERB").get("VERB", ())
    tags = {tag for lem in lemmas for tag, forms in
            (getAllInflections(lem, upos="VERB") or getAllInflectionsOOV(lem, upos="VERB")).items() if word in forms}
    tag = next((t for t in TAGS if t in tags), None)
    found = getInflection(lemma.lower(), tag, inflect_oov=True) if tag else ()
    if not found:
        return None
    swapped = found[0].capitalize() if surface[:1].isupper() else found[0]
    return sentence[:span[0]] + swapped + sentence[span[1]:]


def verb_choice_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """One item per verb-negative row of a ``verbs`` table with a positive image: ``image`` (the positive one),
    ``sentence_pos`` (the sentence, verb ``verb_pos``) and ``sentence_neg`` (its verb swapped for the negative
    triplet's, ``verb_neg``), the verb's span (``verb_start``, ``verb_end``) in ``sentence_pos``, and each verb's
    surface form (``word_pos``, ``word_neg``).  Rows whose verb cannot be located or inflected are left out and
    counted in ``attrs["unlocated"]``."""
    rows, unlocated = [], 0
    verb_rows = pairs[pairs["verb_neg"].astype(bool) & pairs["pos_image"].notna()]
    for item in verb_rows.itertuples(index=False):
        subject, verb_pos = triplet_subjects([item.pos_triplet])[0], item.pos_triplet.split(",")[1].strip()
        verb_neg = item.neg_triplet.split(",")[1].strip()
        span = locate_verb(item.sentence, verb_pos, subject)
        negative = swap_verb(item.sentence, span, verb_neg) if span else None
        if negative is None:
            unlocated += 1
            continue
        assert span is not None  # a negative is made only where the verb was located
        rows.append({"item_id": item.item_id, "image": item.pos_image, "sentence_pos": item.sentence,
                     "sentence_neg": negative, "verb_pos": verb_pos, "verb_neg": verb_neg, "verb_start": span[0],
                     "verb_end": span[1], "word_pos": item.sentence[span[0]:span[1]],
                     "word_neg": negative[span[0]:len(negative) - len(item.sentence) + span[1]]})
    items = pd.DataFrame(rows, columns=["item_id", "image", "sentence_pos", "sentence_neg", "verb_pos", "verb_neg",
                                        "verb_start", "verb_end", "word_pos", "word_neg"])
    items.attrs["unlocated"] = unlocated
    return items


def pair_subject_boxes(pairs: pd.DataFrame) -> tuple[list, list]:
    """Subject boxes of the positive and negative image of every row of a ``verbs`` table: the generator's own
    ``pos_subject_box``/``neg_subject_box`` columns when it has them (the toy world knows them exactly), else
    None for every image (a real release: the study asks a detector)."""
    if {"pos_subject_box", "neg_subject_box"} <= set(pairs.columns):
        return pairs["pos_subject_box"].tolist(), pairs["neg_subject_box"].tolist()
    return [None] * len(pairs), [None] * len(pairs)


def triplet_subjects(triplets) -> list[str]:
    """The subject noun of each "subject,verb,object" triplet (the detector's query)."""
    return [t.split(",")[0].strip() for t in triplets]


def masking_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """Masking items (without boxes) from a verbs table: one per (sentence, positive image), verb located.

    Sentences whose verb cannot be located are listed in ``attrs["unlocated"]`` as {sentence, verb} records.
    """
    pos = pairs.drop_duplicates(["sentence", "pos_image_id"]).reset_index(drop=True)
    triplets = pos["pos_triplet"].str.split(",")
    rows, unlocated = [], []
    for item, triplet in zip(pos.itertuples(index=False), triplets):
        subject, verb = triplet[0].strip(), item.verb
        span = locate_verb(item.sentence, verb, subject)
        if span is None:
            unlocated.append({"sentence": item.sentence, "verb": verb})
            continue
        digest = hashlib.sha1(f"{item.sentence}|{item.pos_image_id}".encode()).hexdigest()[:12]
        rows.append({"item_id": f"svo-{digest}", "image_id": str(item.pos_image_id), "image": item.pos_image,
                     "sentence": item.sentence, "verb": verb, "verb_start": span[0], "verb_end": span[1],
                     "subject": subject, "subject_box": None})
    items = pd.DataFrame(rows, columns=["item_id", "image_id", "image", "sentence", "verb", "verb_start",
                                        "verb_end", "subject", "subject_box"])
    items.attrs["unlocated"] = unlocated
    return items


def load_svo_masking(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """The 'masking' probe from SVO-Probes' positive pairs; ``subject_box`` is None (no model runs here: the
    masking study fills it from a detector).

    ``limit`` and ``seed`` draw rows of SVO-Probes as its loader does (``probekit.data.svo.load_svo_probes``);
    the items are the distinct positive pairs among them, so at most ``limit``.
    """
    from probekit.data.svo import load_svo_probes

    return masking_items(load_svo_probes(data_dir, limit, seed, split))
