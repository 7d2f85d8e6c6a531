"""Hostile inputs to the annotation loaders (property-based): valid files with an entry or a field deleted, a
value of the wrong type, a whole entry replaced, the file truncated or broken by non-UTF-8 bytes.  Each loader
either reads the file or raises its own named error naming the file (and the entry and field where there is
one); never an exception from inside pandas or json.  Deterministic (derandomized), bounded examples."""

from __future__ import annotations

import copy
import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probekit.data import background, conceptual, prednoun, svo, vcoco
from probekit.data.conceptual import AnnotationError
from probekit.data.prednoun import EvalSetError
from probekit.data.svo import SvoCsvError

pytestmark = pytest.mark.usefixtures("hand_made_annotations")

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
                           | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=3),
                           max_leaves=6)
BAD_BYTES = st.sampled_from([b"\xff", b"\xc3\x28", b"\x80\x80", b"\xed\xa0\x80", b"\x00"])


def _containers(doc, path=()):
    """Every list and dict inside ``doc`` with its path."""
    if isinstance(doc, (list, dict)):
        yield path, doc
        for key, value in (enumerate(doc) if isinstance(doc, list) else doc.items()):
            yield from _containers(value, (*path, key))


@st.composite
def hostile_json(draw, doc) -> bytes:
    """``doc`` (a valid file's content) with one structural change, then maybe broken at the byte level."""
    doc = copy.deepcopy(doc)
    action = draw(st.sampled_from(["keep", "delete", "replace", "whole"]))
    if action == "whole":
        doc = draw(JSON_VALUES)
    elif action != "keep":
        places = [(p, c) for p, c in _containers(doc) if len(c)]
        _, container = places[draw(st.integers(0, len(places) - 1))]
        keys = list(range(len(container))) if isinstance(container, list) else list(container)
        key = keys[draw(st.integers(0, len(keys) - 1))]
        if action == "delete":
            del container[key]
        else:
            container[key] = draw(JSON_VALUES)
    return _break(draw, json.dumps(doc).encode("utf-8"))


def _break(draw, data: bytes) -> bytes:
    how = draw(st.sampled_from(["keep", "keep", "truncate", "bad bytes"]))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if how == "truncate":
        return data[:at]
    if how == "bad bytes":
        return data[:at] + draw(BAD_BYTES) + data[at:]
    return data


@st.composite
def hostile_csv(draw, header: list[str], rows: list[list[str]]) -> bytes:
    header, rows = list(header), [list(r) for r in rows]
    action = draw(st.sampled_from(["keep", "drop column", "cell", "short row", "extra cells"]))
    column = draw(st.integers(0, len(header) - 1))
    row = draw(st.integers(0, len(rows) - 1))
    if action == "drop column":
        del header[column]
        rows = [r[:column] + r[column + 1:] for r in rows]
    elif action == "cell":
        rows[row][column] = draw(st.text(max_size=12) | st.sampled_from(["", "nan", "True,False", '"', "\n"]))
    elif action == "short row":
        rows[row] = rows[row][:column]
    elif action == "extra cells":
        rows[row] += draw(st.lists(st.text(max_size=4), min_size=1, max_size=3))
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    return _break(draw, out.getvalue().encode("utf-8"))


# every example's file lives under one folder that is removed when the test process ends (23,000 folders were
# left behind in /tmp by earlier runs, one per example)
_ROOT = tempfile.TemporaryDirectory(prefix="probekit-fuzz-")


def _file(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(dir=_ROOT.name))
    path = folder / name
    path.write_bytes(data)
    return path


def _reads_or_names(load, path: Path, errors) -> None:
    try:
        load(path)
    except errors as err:
        assert str(path) in str(err), err


# --------------------------------------------------------------------------------------------- SVO-Probes

SVO_ROWS = [["a dog runs in a park", "dog,run,park", "dog,sit,park", "101", "102", "http://h/101.jpg",
             "http://h/102.jpg", "False", "True", "False"],
            ["a man rides a horse", "man,ride,horse", "woman,ride,horse", "103", "104", "http://h/103.jpg",
             "http://h/104.jpg", "True", "False", "False"]]


@SETTINGS
@given(st.data())
def test_svo_csv(data):
    path = _file(data.draw(hostile_csv(svo.CSV_COLUMNS, SVO_ROWS)), "svo_probes.csv")
    _reads_or_names(svo.read_svo_csv, path, SvoCsvError)


# ------------------------------------------------------------------------------------- predicate–noun

def _eval_entry(i: int, swap: bool) -> dict:
    a, b = ("a dog is sitting", "a dog is running")
    alt_a, alt_b = ("dog sitting", "dog running")
    box = {"id": f"r{i}", "Label1": "dog", "label": "is", "Label2": "sit", "bounding_box": [0.1, 0.1, 0.5, 0.5]}
    return {"id": i, "img_filename": f"abc{i}.jpg", "sentence_target": b if swap else a,
            "sentence_distractor": a if swap else b, "sentence_target_alt": alt_b if swap else alt_a,
            "sentence_distractor_alt": alt_a if swap else alt_b, "subject": "dog", "predicate": "sit",
            "object": "none", "word_target": "sitting", "word_distractor": "running", "pos": "object",
            "open_images_split": "validation", "relationship_target": box, "relationship_distractor": dict(box)}


EVAL_SET = [_eval_entry(0, False), _eval_entry(1, True)]


@SETTINGS
@given(st.data())
def test_prednoun_eval_set(data):
    path = _file(data.draw(hostile_json(EVAL_SET)), "eval_set.json")
    _reads_or_names(prednoun.read_eval_set, path, EvalSetError)


# --------------------------------------------------------------------------------------------------- V-COCO

VCOCO = [{"action_name": "ride_instr", "image_id": [1, 2], "ann_id": [10, 20], "label": [1, 0]}]
CAPTIONS = {"images": [{"id": 1, "width": 640, "height": 480}, {"id": 2, "width": 10, "height": 10}],
            "annotations": [{"image_id": 1, "caption": "a man rides a horse"}]}
INSTANCES = {"annotations": [{"id": 10, "bbox": [10, 20, 100, 200]}, {"id": 20, "bbox": [0, 0, 1, 1]}]}


def _vcoco_tables(captions: Path, instances: Path):
    return vcoco._coco_tables(captions, instances)


@SETTINGS
@given(st.data())
def test_vcoco_actions(data):
    path = _file(data.draw(hostile_json(VCOCO)), "vcoco_test.json")
    tables = _vcoco_tables(_file(json.dumps(CAPTIONS).encode(), "captions_val2014.json"),
                           _file(json.dumps(INSTANCES).encode(), "instances_val2014.json"))
    _reads_or_names(lambda p: vcoco.vcoco_items(vcoco.parse_vcoco(p), *tables), path, AnnotationError)


@SETTINGS
@given(st.data(), st.booleans())
def test_vcoco_coco_annotations(data, hostile_captions):
    captions = _file(data.draw(hostile_json(CAPTIONS)) if hostile_captions else json.dumps(CAPTIONS).encode(),
                     "captions_val2014.json")
    instances = _file(json.dumps(INSTANCES).encode() if hostile_captions else data.draw(hostile_json(INSTANCES)),
                      "instances_val2014.json")
    try:
        vcoco.vcoco_items(VCOCO, *_vcoco_tables(captions, instances))
    except AnnotationError as err:
        assert str(captions if hostile_captions else instances) in str(err), err


# ------------------------------------------------------------------------ Probe-R/C/B (conceptual, background)

PROBE_R = {"2345": {"positive_image_ids": [11, "12"], "negative_image_ids": [13], "positive_prompt": "man on horse",
                    "negative_prompt": "horse on man", "negative_predicate_prompt": "man beside horse",
                    "positive_object": "man", "negative_object": "horse"}}
PROBE_C = [{"img1_prompt": "a red car", "img2_prompt": "a blue car", "img1_composition": "red",
            "img2_composition": "blue", "img1_object": "car", "img2_object": "car", "img1_id": 5, "img2_id": "6"}]
CLASSES = {"dog": "a photo of a dog", "cat": "a photo of a cat"}
BACKGROUND = [{"image_id": 7, "annotations": {"dog": [{"segmentation": [[1, 2, 3, 4, 5, 6]]}]}}]
OBJECT_CONTEXT = [{"image_id": 8, "object": "cat", "other_objects": ["dog"]}]

CONCEPTUAL_CASES = [
    pytest.param("relation_eval_subject.json", PROBE_R, conceptual.parse_probe_r, id="probe-r"),
    pytest.param("data_compositional_switch.json", PROBE_C, lambda p: conceptual.parse_probe_c(p, "composition"), id="probe-c"),
    pytest.param("background_context_dataset.json", BACKGROUND, lambda p: background.parse_background(p, CLASSES), id="probe-b background"),
    pytest.param("object_context_dataset.json", OBJECT_CONTEXT,
                 lambda p: background.parse_object_context(p, CLASSES), id="probe-b object context"),
]


@pytest.mark.parametrize("name, doc, load", CONCEPTUAL_CASES)
def test_conceptual_json(name, doc, load):
    @SETTINGS
    @given(st.data())
    def prop(data):
        _reads_or_names(load, _file(data.draw(hostile_json(doc)), name), AnnotationError)
    prop()


@SETTINGS
@given(st.data())
def test_prompt_classes_csv(data):
    path = _file(data.draw(hostile_csv(["class", "prompt"], [[k, v] for k, v in CLASSES.items()])),
                 "prompt_classes.csv")
    _reads_or_names(background.read_prompt_classes, path, AnnotationError)
