"""``probekit check``: everything a run would need, checked before any work starts, without loading a model,
downloading or executing anything.

For each chapter, on its resolved parameters (defaults, then a profile's values, then overrides): every value
has the parameter's type and every model, dataset and device name is valid (:func:`~probekit.chapters.resolve`);
each model resolves the way the run will load it, with its files present and complete or its download listed
(:mod:`probekit.chapters.model_files`), and can answer what its chapter asks of it, read from the registry or its
config (the ``role`` of the parameter in its study's dataclass: questions of :func:`probekit.scorers.head_for`, at least one of which the model
must answer);
no ``toy-*`` model is given real data (unless ``allow_toy``); the dataset's annotation files are present or
downloadable; the device of every device parameter exists here; the data and score-cache directories are
writable and not full.

A :class:`Problem` is one line naming the chapter(s), the parameter and the fix; the same problem in several
chapters (a profile's ``device: cuda`` on a machine without CUDA) is one line naming them all.  A :class:`Note`
says what a run will fetch (and how big what is here already is).
"""

from __future__ import annotations

import errno
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from probekit.chapters.model_files import model_findings
from probekit.chapters.params import PAPER_SUITE, ValueProblem, parameters, resolve
from probekit.chapters.project import CHAPTERS
from probekit.parameters import DEVICE

MIN_FREE_BYTES = 200 * 2**20  # a data or cache directory with less free space than this is "full"


@dataclass(frozen=True)
class Problem:
    chapters: tuple[str, ...]
    parameter: str
    text: str  # what is wrong and the fix

    def __str__(self) -> str:
        return f"{', '.join(self.chapters)}: parameter {self.parameter!r}: {self.text}"


@dataclass(frozen=True)
class Note:
    chapter: str
    text: str

    def __str__(self) -> str:
        return f"{self.chapter}: {self.text}"


def _data_files():
    """(probe, source) -> [(what, candidate paths under data_dir, URL or None when the user must provide it)]."""
    from probekit import checksums
    from probekit.data import prednoun, svo, vcoco

    svo_csv = ("SVO-Probes annotations", ["svo-probes/svo_probes.csv"], svo.SVO_CSV_URL)
    release = [(name, [f"probe-rcb/**/{name}"], None) for name in
               ("relation_eval_subject.json", "data_compositional_switch.json", "data_object_switch.json",
                "prompt_classes.csv", "background_context_dataset.json")]
    return {
        ("verbs", "svo-probes"): [svo_csv], ("masking", "svo-probes"): [svo_csv],
        ("prednoun", "eval-set"): [("predicate-noun eval_set.json", [prednoun.EVAL_SET_NAME,
                                                                     f"prednoun/{prednoun.EVAL_SET_NAME}"],
                                    prednoun.EVAL_SET_URL)],
        ("masking", "v-coco"): [("V-COCO annotations", [f"v-coco/vcoco_{vcoco.SPLIT}.json"],
                                 vcoco.VCOCO_URL.format(split=vcoco.SPLIT)),
                                ("COCO 2014 annotations", ["coco/annotations/captions_val2014.json",
                                                           "coco/annotations_trainval2014.zip"],
                                 checksums.COCO_ANNOTATIONS_URL)],
        ("probe-r", "probe-r"): release[:1], ("probe-c", "probe-c"): release[1:3],
        ("probe-b", "probe-b"): release[3:],
    }


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.0f} kB"


def _found(data_dir: Path, patterns: list[str]) -> Path | None:
    for pattern in patterns:
        hits = sorted(data_dir.glob(pattern)) if "*" in pattern else [data_dir / pattern]
        for hit in hits:
            if hit.is_file():
                return hit
    return None


def _release_fix(what: str) -> str:
    from probekit.data.conceptual import RELEASE_URL
    return f"download the Probe-R/C/B annotations from {RELEASE_URL} and unpack them there"


def data_findings(sources: list[tuple[str, str]], data_dir: Path) -> tuple[list[str], list[str]]:
    """(problems, notes) about the annotation files a run reads from ``data_dir`` for ``sources`` [(probe,
    source)]: present and verified against its recorded hash, or not verifiable (no hash known: a note), or present
    but not matching (a problem: the run would refuse it); downloaded at run time; or missing (one problem for all
    of them)."""
    from probekit.checksums import state

    problems, notes, missing = [], [], []
    files = [f for probe_source in sources for f in _data_files().get(probe_source, [])]
    for what, patterns, url in files:
        hit = _found(data_dir, patterns)
        said = state(hit, url) if hit is not None else ""
        if said.startswith("present, does not match"):
            problems.append(f"{what} {hit}: {said}")
        elif hit is not None:
            notes.append(f"{what}: {said}, {hit} ({_size(hit.stat().st_size)})")
        elif url:
            notes.append(f"{what}: not here; downloaded at run time from {url} to {data_dir / patterns[-1]}")
        else:
            missing.append((what, data_dir / patterns[0].split("/")[0]))
    if missing:
        problems.append(f"{', '.join(w for w, _ in missing)} not under {missing[0][1]} and not downloadable "
                        f"automatically; fix: {_release_fix(missing[0][0])}, or set data_dir")
    if files:
        notes.append(f"images: those not under {data_dir} yet are downloaded at run time")
    return problems, notes


def cuda_devices() -> int:
    """How many CUDA devices this machine has (0 without CUDA); imports torch only when asked."""
    import torch
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def mps_available() -> bool:
    import torch
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def device_problem(device: str, parameter: str = "device") -> str | None:
    """Why ``device``, the value of a device ``parameter``, is not on this machine; None when it is."""
    device = str(device)
    if device.startswith("cuda"):
        count, index = cuda_devices(), int(device.partition(":")[2] or 0)
        if count == 0:
            return (f"{device!r} requested but CUDA is not available here; fix: -p {parameter} cpu (or auto), or "
                    "run on a machine with an NVIDIA GPU")
        if index >= count:
            return f"{device!r} requested but this machine has {count} CUDA device(s); fix: -p {parameter} cuda:0..cuda:{count - 1}"
    if device == "mps" and not mps_available():
        return f"'mps' requested but Apple's MPS backend is not available here; fix: -p {parameter} cpu (or auto)"
    return None


def disk_problem(directory: Path, what: str, setting: str) -> str | None:
    """One line when ``directory`` (or the nearest existing folder above it) cannot take files or is full."""
    from probekit.cache import disk_message
    existing = next(p for p in [directory, *directory.parents] if p.exists())
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
        full = shutil.disk_usage(existing).free < MIN_FREE_BYTES
    except OSError as err:
        message = disk_message(err, directory, what, setting)
        return message or f"{what} {directory} cannot be used ({err}); fix: set {setting} to another directory"
    if full:
        return disk_message(OSError(errno.ENOSPC, "full"), directory, what, setting)
    return None


def _stand_in(spec) -> SimpleNamespace:
    """What ``head_for`` reads of a scorer, from its registry entry: no weights are loaded."""
    return SimpleNamespace(name=spec.name, capabilities=spec.capabilities, match_calibrated=spec.calibrated,
                           choice_head="similarity" if "similarity" in spec.capabilities else "match")


def role_problem(name: str, questions: tuple[str, ...], toy_data: bool) -> str | None:
    from probekit.scorers import REGISTRY, can_answer, model_spec
    spec = model_spec(name)  # already resolved by the parameter check, so it does not fail here
    if any(can_answer(_stand_in(spec), q) for q in questions):
        return None
    able = [n for n, s in REGISTRY.items() if n.startswith("toy-") == toy_data
            and any(can_answer(_stand_in(s), q) for q in questions)]
    heads = ", ".join(spec.capabilities) + ("" if spec.calibrated else "; its match head is not calibrated")
    return (f"{name} cannot answer {' or '.join(map(repr, questions))} (it has {heads}); fix: drop it or use a "
            f"model that can, e.g. {', '.join(able[:3])}")


def _names(value: Any) -> list[str]:
    return [] if not value else [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def check_chapter(chapter: str, given: dict[str, Any], *, allow_toy: bool = False
                  ) -> tuple[list[Problem], list[Note], dict[str, Any]]:
    """Problems, notes and the resolved values (defaults updated with ``given``'s valid values) of one chapter."""
    from probekit.cache import default_cache_dir
    from probekit.datasets import default_data_dir

    params = parameters(chapter)
    values = {name: p.default for name, p in params.items()}
    problems, notes, bad = [], [], set()
    for name, value in given.items():
        try:
            values.update(resolve(chapter, {name: value}))
        except ValueProblem as err:  # its text names neither the chapter nor the parameter: the line does, once
            problems.append(Problem((chapter,), name, err.text))
            bad.add(name)
    dataset = values.get("dataset")
    toy_data = dataset == "toy"
    for name, questions in ((p.name, p.role) for p in params.values() if p.role):
        for model in _names(values.get(name)) if name not in bad else []:
            text = role_problem(model, questions, toy_data)
            if text:
                problems.append(Problem((chapter,), name, text))
    for p in (p for p in params.values() if p.is_models and p.name not in bad):
        for model in dict.fromkeys(_names(values.get(p.name))):
            problem, note = model_findings(model)
            problems += [Problem((chapter,), p.name, problem)] if problem else []
            notes += [Note(chapter, note)] if note else []
    for p in params.values():
        if p.is_models and p.name not in bad and not toy_data and not allow_toy and not p.toy_world_only:
            toys = [m for m in _names(values.get(p.name)) if m.startswith("toy-")]
            if toys:
                problems.append(Problem((chapter,), p.name, f"toy model(s) {', '.join(toys)} on dataset {dataset!r} "
                                        "(toy models know only the toy world); fix: give real models, or pass "
                                        "--allow-toy"))
    for p in (p for p in params.values() if p.means == DEVICE and p.name not in bad and values.get(p.name)):
        if text := device_problem(values[p.name], p.name):
            problems.append(Problem((chapter,), p.name, text))
    data_dir = Path(values.get("data_dir") or default_data_dir())
    if "dataset" not in bad and dataset:
        probes = CHAPTERS[chapter].probes
        found, said = data_findings([(p, dataset if len(probes) == 1 else p if dataset == PAPER_SUITE else dataset)
                                     for p in probes], data_dir)
        problems += [Problem((chapter,), "dataset", text) for text in found]
        notes += [Note(chapter, text) for text in said]
    for setting, directory, what in (("data_dir", data_dir, "the data directory"),
                                     ("cache_dir", Path(values.get("cache_dir") or default_cache_dir()),
                                      "the score cache")):
        env = "PROBEKIT_DATA" if setting == "data_dir" else "PROBEKIT_CACHE"
        if setting not in bad and (text := disk_problem(directory, what, f"{setting} (or {env})")):
            problems.append(Problem((chapter,), setting, text))
    return problems, notes, values


def check(given: dict[str, dict[str, Any]], *, allow_toy: bool = False
          ) -> tuple[list[Problem], list[Note]]:
    """Every problem (one per line; identical ones across chapters merged) and note of the chapters in
    ``given`` ({chapter: values given}), in reading order."""
    merged: dict[tuple[str, str], list[str]] = {}
    notes = []
    for chapter in (c for c in CHAPTERS if c in given):
        found, said, _ = check_chapter(chapter, given[chapter], allow_toy=allow_toy)
        for problem in found:
            merged.setdefault((problem.parameter, problem.text), []).append(chapter)
        notes += said
    return [Problem(tuple(chapters), parameter, text) for (parameter, text), chapters in merged.items()], notes

