"""A study's lab judged pooled over seeds, when the retrained seeds' items are kept beside the zoo.

:func:`pooled_over_seeds` wraps each study's ``run``: on the toy world with lab models its lab keeps the values
behind every lab row (``result.data["lab_items"]``, :func:`probekit.studies.lab_items.split`), and when
``seed_items.parquet`` lies beside the zoo's checkpoints (:mod:`probekit.toymodels.seed_items`) it judges every lab
line pooled over this run's seed (the zoo's, 0 for the shipped one) and the file's other seeds (:func:`pool`):

* a line's deciding rows (a check's row; a claim's paired difference, or its two rows) become their pooled rows
  (:func:`probekit.studies.lab_pooled.pooled_row`: the mean over seeds, a two-level bootstrap interval), and its
  verdict, ``expected`` and ``ok`` are decided from them by the study's own :class:`~probekit.studies.lab.Check` /
  :class:`~probekit.studies.lab.PaperClaim` (:func:`~probekit.studies.lab.check_verdict`,
  :func:`~probekit.studies.lab.claim_verdict`); a claim decided by its difference shows its two rows pooled too;
* each seed's rows (:func:`~probekit.studies.lab_pooled.seed_rows`: this seed's are today's rows exactly) and the
  verdict each gets ride beside it: ``seed_rows`` (JSON, as :attr:`probekit.studies.lab_pooled.Pooled.line`:
  one entry per seed and deciding row), ``seed_verdicts``, ``seeds_agree`` and ``seeds_note`` ("seeds disagree:
  ..." where they do), and what the note says as fields: ``seeds_kind`` (:data:`POOLED`, :data:`ONE` or
  :data:`TUNED`), ``seeds`` (JSON: the seeds the line rests on, this run's first) and ``seeds_disagree`` (JSON: each
  seed's verdict where they disagree, else empty);
* a line that cannot be pooled keeps today's row and verdict, ``seeds_note`` says why: a row not run, a derived row
  (not rebuilt from items, :mod:`probekit.studies.lab_items`), or a seed of the file without the row; a line
  pooled over the conceptual chapter's fine-tuning seeds says so instead (:data:`FINETUNED`: the zoo model they
  fine-tune is this seed's alone).

Without the file (or inside :func:`unpooled`: the seed comparison scores each zoo on its own) the lab's frames are
exactly today's.  Pooled or not, the wrapped run then judges its lab once (:func:`probekit.studies.lab_holm.judge`:
the chapter's Holm family and its verdict lines, ``StudyResult.lab_lines``).
"""

from __future__ import annotations

import functools
import json
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping, TypeVar

import numpy as np
import pandas as pd

from probekit.studies import STUDIES, lab, lab_holm
from probekit.results import Row, StudyResult
from probekit.stats import aligned
from probekit.studies.lab_items import Arrays, arrays, deciding_rows, key, labels, summary
from probekit.studies.lab_pooled import Pooled, pooled_row, seed_rows
from probekit.toymodels import seed_items

_POOLING: ContextVar[bool] = ContextVar("probekit_pool_seeds", default=True)
#: how a line that cannot be pooled begins its ``seeds_note``: it rests on this run's seed alone
ONE_SEED = "rests on seed {seed} alone, not pooled"
#: the ``seeds_note`` of a line instead pooled over the fine-tuning seeds of one zoo model (its ``finetune_seed_rows``,
#: :mod:`probekit.studies.conceptual.finetune_seeds`), where the zoo's seeds cannot pool it
FINETUNED = "pooled over {count} fine-tuning seeds of the zoo model trained with seed {seed}; not over the zoo's seeds"
#: a line's ``seeds_kind``: pooled over the zoo's training seeds, resting on this run's seed alone (:data:`ONE_SEED`),
#: or pooled over one zoo model's fine-tuning seeds instead (:data:`FINETUNED`)
POOLED, ONE, TUNED = "training seeds", "one seed", "fine-tuning seeds"
#: the columns :func:`pool` adds to ``lab_checks`` and ``lab_claims``
SEED_COLUMNS = lab.SEED_FIELDS
P = TypeVar("P")   # a study's parameters


@contextmanager
def unpooled() -> Iterator[None]:
    """Score the lab on this zoo alone inside the block, even with a ``seed_items.parquet`` beside it."""
    token = _POOLING.set(False)
    try:
        yield
    finally:
        _POOLING.reset(token)


def pooled_over_seeds(run: Callable[[P], StudyResult]) -> Callable[[P], StudyResult]:
    """A study's ``run(params)`` whose lab, where it kept its items (``lab_items``: the toy world with lab models)
    and the seeds' file lies beside the zoo, is judged pooled over seeds (:func:`pool`); then its lab is judged once
    (:func:`probekit.studies.lab_holm.judge`)."""
    @functools.wraps(run)
    def wrapped(params: P) -> StudyResult:
        result = run(params)
        found = seed_items.read() if "lab_items" in result.data and _POOLING.get() else None
        if found is not None:
            pool(result, found, seed_items.zoo_seed())
        lab_holm.judge(result)
        return result
    return wrapped


def _seeds_of(r: Row | None, here: Arrays, there: Mapping[int, Arrays],
              seed: int) -> tuple[dict[int, dict[str, Any]], dict[str, Any]] | str:
    """(each seed's row, the pooled row) of row ``r``, or why it cannot be pooled."""
    if not isinstance(r, Mapping):
        return "a row was not run"
    k = key(r)
    if k not in here:
        return f"{r['model']}'s {r['metric']} row is derived, not rebuilt from items"
    values, spec, units, ids = here[k]
    lacking = [s for s, found in there.items() if k not in found or found[k][1] != spec]
    if lacking:
        return (f"no {r['model']} {r['metric']} row under seed {', '.join(map(str, lacking))} "
                f"(its members not retrained with {'that seed' if len(lacking) == 1 else 'those seeds'})")
    matched = {s: _same_items(values, units, ids, found[k]) for s, found in there.items()}
    order = {s: o for s, o in matched.items() if o is not None}
    other = [s for s in there if s not in order]
    if other:   # a run on other items (a limit, another seed of the item draw): its seeds are not these items'
        named = ids is not None and all(there[s][k][3] is not None for s in other)
        return (f"seed {', '.join(map(str, other))} of {seed_items.ITEMS_FILE} was scored on other items than this "
                f"run's {len(values)}" + (" (other item ids)" if named else ""))
    per_seed = {seed: values, **{s: found[k][0][order[s]] for s, found in there.items()}}
    clusters = {seed: units, **{s: _in(found[k][2], order[s]) for s, found in there.items()}}
    args = {**summary(spec), "clusters": clusters, **labels(r)}
    return seed_rows(per_seed, **args), pooled_row(per_seed, **args)


def _same_items(values: np.ndarray, units: np.ndarray | None, ids: np.ndarray | None,
                theirs: tuple[np.ndarray, Any, np.ndarray | None, np.ndarray | None]) -> np.ndarray | None:
    """The order that puts another seed's values of a row (``theirs``: :func:`~probekit.studies.lab_items.arrays`'
    entry) on this run's items, or None when they are over other items.  Where both name their items (ids) they
    must hold the same ids, in any order (:func:`probekit.stats.aligned`); where either names them by position only
    (a row whose caller gives no ids, a file written before items carried ids), as many values.  Aligned, the
    units must be the same."""
    their_values, _, their_units, their_ids = theirs
    both = ids is not None and their_ids is not None
    order = aligned(ids, their_ids) if both else (
        np.arange(len(values)) if len(values) == len(their_values) else None)
    if order is None or units is None or their_units is None:
        return order if units is None and their_units is None else None
    return order if np.array_equal(units, their_units[order]) else None


def _in(units: np.ndarray | None, order: np.ndarray) -> np.ndarray | None:
    return None if units is None else units[order]


def _line(line: Row, judge: Callable[[list[Any]], str], here: Arrays, there: Mapping[int, Arrays],
          seed: int) -> dict[str, Any]:
    """The pooled fields of ``line`` (deciding on :func:`deciding_rows`): ``pooled`` (the pooled rows), ``verdict``
    and :data:`SEED_COLUMNS`; or only what :func:`_one_seed` says when a row cannot be pooled."""
    found: list[Any] = [_seeds_of(r, here, there, seed) for r in deciding_rows(line)]
    why = next((f for f in found if isinstance(f, str)), None)
    if why:
        return _one_seed(line, why, seed)
    each = {s: [per[s] for per, _ in found] for s in found[0][0]}
    together = [p for _, p in found]
    p = Pooled(rows={s: rs[0] for s, rs in each.items()}, seed_verdicts={s: judge(rs) for s, rs in each.items()},
               row=together[0], verdict=judge(together))
    return dict(pooled=together, verdict=p.verdict, **p.seeds(each), seeds_kind=POOLED, seeds=json.dumps(list(each)))


def _one_seed(line: Row, why: str, seed: int) -> dict[str, Any]:
    """``seeds_note``, ``seeds_kind``, ``seeds`` and ``seeds_disagree`` of ``line`` when the zoo's seeds cannot pool
    it (``why``): :data:`FINETUNED` for a line pooled over fine-tuning seeds, else :data:`ONE_SEED`."""
    tuned = line.get("finetune_seed_rows")
    if isinstance(tuned, str) and tuned:
        seeds = list(dict.fromkeys(e["seed"] for e in json.loads(tuned)))
        note, kind = FINETUNED.format(count=len(seeds), seed=seed), TUNED
    else:
        seeds, note, kind = [seed], f"{ONE_SEED.format(seed=seed)}: {why}", ONE
    return dict(seeds_note=note, seeds_kind=kind, seeds=json.dumps(seeds), seeds_disagree="[]")


def _or_pooled(r: Row | None, here: Arrays, there: Mapping[int, Arrays], seed: int) -> Row | None:
    """Row ``r`` pooled where it can be (a claim's rows shown beside the difference that decides it), else as is."""
    found = _seeds_of(r, here, there, seed)
    return r if isinstance(found, str) else found[1]


def pool(result: StudyResult, found: pd.DataFrame, seed: int) -> None:
    """Judge ``result``'s lab lines pooled over its own seed ``seed`` and the other seeds in ``found`` (the seeds'
    items file): ``lab_checks`` and ``lab_claims`` gain :data:`SEED_COLUMNS` (see the module's docstring)."""
    mine = found[(found["study"] == result.study) & (found["seed"] != seed)]
    defined = STUDIES[result.study].lab_lines
    checks, claims = result.data["lab_checks"], result.data["lab_claims"]
    if len(checks) != len(defined.CHECKS) or len(claims) != len(defined.CLAIMS):
        return
    if not len(mine):   # none of the chapter's lab models retrained with another seed: every line says so
        others = ", ".join(map(str, sorted(set(found["seed"].astype(int)) - {seed})))
        why = f"none of its models retrained with seed {others}"
        for name, frame in (("lab_checks", checks), ("lab_claims", claims)):
            said = pd.DataFrame([_one_seed(line, why, seed) for _, line in frame.iterrows()], index=frame.index)
            result.data[name] = frame.assign(**{c: None for c in SEED_COLUMNS}).assign(**said)
        return
    here = arrays(result.data["lab_items"])
    there = {int(s): arrays(part.drop(columns="seed")) for s, part in mine.groupby("seed")}

    out = []
    for (_, line), c in zip(checks.iterrows(), defined.CHECKS):
        got = _line(line, lambda rs, c=c: lab.check_verdict(  # type: ignore[misc]  # c: bound now
                        rs[0], c.role, c.by_construction),
                    here, there, seed)
        if "pooled" in got:
            expected = None if got["verdict"] == lab.BY_DESIGN else lab.EXPECTED[c.role]
            line = {**line, "row": got.pop("pooled")[0], "expected": expected,
                    "ok": expected is None or got["verdict"] == expected}
        out.append({**line, **got})
    result.data["lab_checks"] = pd.DataFrame(out, columns=[*checks.columns, *SEED_COLUMNS])

    out = []
    for (_, line), c in zip(claims.iterrows(), defined.CLAIMS):
        a, b = (_or_pooled(line[x], here, there, seed) for x in ("a", "b"))
        by_diff = isinstance(line["diff"], Mapping)
        gains = [_or_pooled(g, here, there, seed) for g in line.get("gains", [])]
        judge = ((lambda rs, c=c, a=a, b=b, g=gains: lab.claim_verdict(c, a, b, rs[0], g)) if by_diff
                 else (lambda rs, c=c, g=gains: lab.claim_verdict(c, *rs, gains=g)))  # type: ignore[misc]  # rs: a, b
        got = _line(line, judge, here, there, seed)
        if "pooled" in got:
            rows = got.pop("pooled")
            line = {**line, "a": a, "b": b, "gains": gains,
                    **({"diff": rows[0]} if by_diff else {"a": rows[0], "b": rows[1]})}
        out.append({**line, **got})
    result.data["lab_claims"] = pd.DataFrame(out, columns=[*claims.columns, *SEED_COLUMNS])


__all__ = ["FINETUNED", "ONE", "ONE_SEED", "POOLED", "SEED_COLUMNS", "TUNED", "pool", "pooled_over_seeds", "unpooled"]
