"""The patching sweep over several fine-tuning seeds: each fine-tune's claim rests on every seed, not on one run.

The conceptual chapter fine-tunes each encoder setting once per fine-tuning seed (``finetune_seeds`` of them:
the study's ``seed``, then ``seed + 1``, ...), the fine-tune's seed (:attr:`~probekit.studies.conceptual.finetune.FinetuneConfig.seed`:
its batches and initial state) the only thing that changes: the same triplets, evaluation items and bootstrap seed.
:func:`pooled_sweep` gives

* the sweep's rows pooled over the seeds (:func:`pool`): a row of a patched model becomes the mean over seeds with
  :func:`probekit.stats.pooled_ci` (two levels: seeds, then the items, drawn once for all seeds since they share them), ``n`` its items over all
  seeds (:func:`probekit.studies.lab_pooled.pooled_row`); a row whose items are the same under every seed (the
  original model, α = 0) stays as it is, and a row not rebuilt from items (:mod:`probekit.studies.lab_items`) stays
  the first seed's;
* each pooled row's per-seed rows (:func:`probekit.studies.lab_pooled.seed_rows`; the first seed's are today's
  rows exactly), for the lab's claims to show beside the pooled verdict (:func:`judged`).

The first seed's fine-tunes ship as weights (``<zoo>/finetuned/<key>``, the α figure and the training losses read
them); every other seed's sweep ships as numbers only, the per-item values of its rows
(``<zoo>/finetuned/seeds/<key>.parquet``, :data:`~probekit.studies.lab_items.ITEM_COLUMNS`; the weights of five
seeds' fifteen fine-tunes would not fit the zoo's 40 MB), under a key of its fine-tunes' keys (base, settings and
seed, triplets), the α values, the evaluation items and the bootstrap seed: a run that differs in any of them
trains and evaluates that seed again (and keeps its numbers in the cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from probekit.studies import lab
from probekit.studies.conceptual import finetune_cache
from probekit.results import Row
from probekit.studies.conceptual.finetune import FinetuneConfig
from probekit.studies.lab_items import Arrays, Key, arrays, deciding_rows, key, labels, split, summary
from probekit.studies.lab_pooled import pooled_row, seed_rows
from probekit.toymodels import seed_items

#: one fine-tuning seed's sweep: fseed -> (its rows, its checkpoints by name)
Sweep = Callable[[int], tuple[pd.DataFrame, dict[str, Path]]]
#: :func:`pool`'s per-seed rows: row key -> {fine-tuning seed: its row}, None for a row not pooled
SeedRows = dict[Key, dict[int, dict[str, Any]] | None]

#: what a lab claim about a fine-tune adds: each fine-tuning seed's deciding rows (JSON, as
#: :data:`probekit.studies.lab.SEED_FIELDS`' ``seed_rows``), each seed's verdict, whether they agree, and a note
#: ("fine-tuning seeds disagree: ...", or why the line rests on one seed)
FIELDS = ["finetune_seed_rows", "finetune_seed_verdicts", "finetune_seeds_agree", "finetune_seeds_note"]


def seeds(first: int, count: int) -> list[int]:
    """The fine-tuning seeds of a run: ``first`` (the study's seed, today's fine-tunes), then the next ones."""
    if count < 1:
        raise ValueError(f"finetune_seeds={count}: a sweep needs at least one fine-tuning seed")
    return list(range(first, first + count))


def items_fingerprint(table: pd.DataFrame | None) -> str:
    """An evaluation table's identity (its image columns as paths relative to their folder; None: "")."""
    if table is None:
        return ""
    return finetune_cache.fingerprint(table, list(table.columns), [c for c in table.columns if c.startswith("image")])


def sweep_key(base: str, triplets: pd.DataFrame, configs: Mapping[str, FinetuneConfig], alphas: Sequence[float],
              tables: Mapping[str, pd.DataFrame | None], seed: int) -> str:
    """The identity of one fine-tuning seed's sweep: its fine-tunes' keys (``configs``: encoders -> FinetuneConfig),
    the α values, the evaluation ``tables`` (name -> table or None) and the bootstrap seed."""
    text = json.dumps({"finetunes": {e: finetune_cache.run_key(base, c, triplets) for e, c in configs.items()},
                       "alphas": [float(a) for a in alphas], "seed": seed,
                       "eval": {name: items_fingerprint(t) for name, t in tables.items()}}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _computed(sweep: Sweep, fseed: int) -> tuple[pd.DataFrame, dict[str, Path], pd.DataFrame]:
    """(rows, checkpoints, the rows' per-item values) of fine-tuning seed ``fseed``'s sweep."""
    rows, checkpoints = sweep(fseed)
    found = split(rows)
    return found.rows, checkpoints, found.items


def seed_values(sweep: Sweep, fseed: int, key_: str, cache_root: str | Path) -> Arrays:
    """Row key -> (per-item values, summary) of fine-tuning seed ``fseed``'s sweep: kept in the cache
    (``cache_root/seeds/<key_>.parquet``), else copied there from beside the zoo, else computed (trained, patched,
    evaluated) and kept there."""
    kept = Path(cache_root) / finetune_cache.SEEDS / f"{key_}.parquet"
    if not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        shipped = next((p for p in (r / finetune_cache.SEEDS / kept.name for r in finetune_cache.shipped_roots())
                        if p.is_file()), None)
        tmp = kept.with_name(kept.name + ".partial")   # renamed when whole: an interrupted run leaves no file
        if shipped is not None:
            shutil.copy(shipped, tmp)
        else:
            seed_items.write(_computed(sweep, fseed)[2].assign(seed=fseed), tmp)
        os.replace(tmp, kept)
    return arrays(seed_items.read_file(kept).drop(columns="seed"))


def _same(values: list[np.ndarray]) -> bool:
    return all(v.shape == values[0].shape and np.allclose(v, values[0], rtol=1e-6, atol=1e-9, equal_nan=True)
               for v in values[1:])


def pool(rows: pd.DataFrame, per_seed: Mapping[int, Arrays]) -> tuple[pd.DataFrame, SeedRows]:
    """``rows`` (the first seed's sweep) pooled over the seeds of ``per_seed`` (seed -> :func:`seed_values`' map),
    and row key -> {seed: that seed's row} (the row itself for each seed where they are the same; None for a row
    not pooled) of every row (see the module's docstring)."""
    out: list[dict[str, Any]] = []
    each: dict[tuple[Any, ...], dict[int, dict[str, Any]] | None] = {}
    for _, r in rows.iterrows():
        found: list[Any] = [per_seed[s].get(key(r)) for s in per_seed]
        if any(f is None or f[1] != found[0][1] for f in found):   # derived, or not in every seed: not pooled
            out.append(dict(r))
            each[key(r)] = None
            continue
        if _same([f[0] for f in found]):   # the original model: the same row under every seed
            out.append(dict(r))
            each[key(r)] = {s: dict(r) for s in per_seed}
            continue
        values, args = {s: f[0] for s, f in zip(per_seed, found)}, {**summary(found[0][1]), **labels(r)}
        each[key(r)] = seed_rows(values, **args)
        out.append({**dict(r), **pooled_row(values, **args)})
    return pd.DataFrame(out, columns=rows.columns), each


def pooled_sweep(sweep: Sweep, fseeds: list[int], key_of: Callable[[int], str], cache_root: str | Path
                 ) -> tuple[pd.DataFrame, dict[str, Path], SeedRows]:
    """(the sweep's rows pooled over ``fseeds``, the first seed's checkpoints, :func:`pool`'s per-seed rows);
    ``sweep(fseed)`` runs one seed's sweep (rows, checkpoints), ``key_of(fseed)`` its :func:`sweep_key`.  With one
    seed, exactly ``sweep(fseeds[0])`` and no per-seed rows."""
    if len(fseeds) == 1:
        return (*sweep(fseeds[0]), {})
    rows, checkpoints, items = _computed(sweep, fseeds[0])
    per_seed = {fseeds[0]: arrays(items),
                **{s: seed_values(sweep, s, key_of(s), cache_root) for s in fseeds[1:]}}
    pooled, each = pool(rows, per_seed)
    return pooled, checkpoints, each


def judged(found: pd.DataFrame, defined: list[lab.PaperClaim], each: Mapping[Key, dict[int, dict[str, Any]] | None]
           ) -> pd.DataFrame:
    """The lab's claims (:func:`probekit.studies.lab.claims` of ``defined``) with :data:`FIELDS`: a claim deciding
    on a pooled row (``each``: row key -> {seed: row}, keys as the lab names its rows) gets each fine-tuning seed's
    rows and the verdict each seed's rows give (:func:`probekit.studies.lab.claim_verdict`), the pooled verdict
    being the line's own; one deciding on a sweep row that could not be pooled says it rests on one seed; a claim
    on no sweep row is left blank."""
    out = []
    for (_, line), c in zip(found.iterrows(), defined):
        rows = deciding_rows(line)
        keys = [key(r) if isinstance(r, Mapping) else None for r in rows]
        swept: list[Any] = [each.get(k) for k in keys]  # type: ignore[arg-type]  # a None key finds no row
        fields: dict[str, Any] = dict.fromkeys(FIELDS, "")
        if swept and all(isinstance(e, Mapping) for e in swept):
            fseeds = list(swept[0])

            def pick(r: Row | None, s: int) -> Row | None:
                if not isinstance(r, Mapping):
                    return None
                found = each.get(key(r))
                return found[s] if isinstance(found, Mapping) else r
            verdicts = {s: lab.claim_verdict(c, pick(line["a"], s), pick(line["b"], s), pick(line["diff"], s),
                                             [pick(g, s) for g in line["gains"]]) for s in fseeds}
            agree = len(set(verdicts.values())) == 1
            fields.update(finetune_seed_rows=json.dumps([{"seed": s, **{f: e[s][f] for f in lab.ROW_FIELDS}}
                                                         for s in fseeds for e in swept], default=float),
                          finetune_seed_verdicts=", ".join(f"seed {s}: {v}" for s, v in verdicts.items()),
                          finetune_seeds_agree=agree, finetune_seeds_note="" if agree else (
                              "fine-tuning seeds disagree: " + ", ".join(f"seed {s} {v}" for s, v in verdicts.items())))
        elif any(k in each for k in keys):
            fields["finetune_seeds_note"] = "one fine-tuning seed: a row it decides on was not pooled"
        out.append({**line, **fields})
    return pd.DataFrame(out, columns=[*found.columns, *FIELDS])


__all__ = ["FIELDS", "items_fingerprint", "judged", "pool", "pooled_sweep", "seed_values", "seeds", "sweep_key"]
