"""``probekit train-toy --jobs N``: train the zoo's members N at a time, one process each (one per CPU core),
into one ``--out``.  Not several sharing one GPU: ten members on one H200 took about 1 s per ViLT step, against
0.17 s on one CPU thread (benchmarks/README.md).

Each member runs as its own ``probekit train-toy`` with the run's own options followed by ``--models <member>
--threads T --jobs 1`` (a repeated option's last value wins), its log in ``<out>/<member>.log``; the slowest
members start first.  Their entries merge into ``training.json`` under its lock
(``record``) and the model card is written once more when every member has finished, so it shows them all.
Ctrl-C (or SIGTERM) stops every member; each resumes from its last resume file when the same command is run again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any
from pathlib import Path

from .zoo import member

STATUS_EVERY = 60.0   # seconds between the lines that show where each running member is
#: (trainer, hard negatives) from the slowest step to the fastest, as benchmarks/README.md measures them: the
#: slowest members are started first
SLOWEST_FIRST = [("vilt", True), ("vilt", False), ("clip", True), ("clip", False), ("bert", False)]


def slowest_first(models) -> list[str]:
    return sorted(models, key=lambda m: SLOWEST_FIRST.index((member(m).trainer, member(m).hard_negatives)))


def _last_line(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return lines[-1] if lines else "(nothing logged yet)"


def run(a, argv: list[str], out: Path, jobs: int, log=print) -> int:
    """Train ``a.models`` (parsed from the options ``argv``) ``jobs`` at a time; return 0 when all finished, else
    the first failing exit status."""
    threads = a.threads or max(1, (os.cpu_count() or 1) // jobs)
    order = slowest_first(a.models)
    running: dict[str, Any] = {}
    failed: dict[str, int] = {}
    waiting, done = list(order), []
    out.mkdir(parents=True, exist_ok=True)
    last_status = time.time()
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                name = waiting.pop(0)
                command = [sys.executable, "-m", "probekit.cli", "train-toy", *argv, "--models", name,
                           "--threads", str(threads), "--jobs", "1"]
                logfile = out / f"{name}.log"
                with open(logfile, "a") as handle:
                    proc = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
                running[name] = (proc, logfile, time.time())
                log(f"[{name}] started ({threads} thread(s)): log {logfile}")
            time.sleep(1.0)
            for name, (proc, logfile, t0) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                minutes = (time.time() - t0) / 60
                if proc.returncode == 0:
                    done.append(name)
                    log(f"[{name}] finished in {minutes:.1f} min")
                else:
                    failed[name] = proc.returncode
                    log(f"[{name}] failed (exit status {proc.returncode}) after {minutes:.1f} min: "
                        f"{_last_line(logfile)}")
            if running and time.time() - last_status >= STATUS_EVERY:
                last_status = time.time()
                for name, (_, logfile, _) in running.items():
                    log(f"  {_last_line(logfile)}")
    except KeyboardInterrupt:
        for proc, _, _ in running.values():
            proc.send_signal(signal.SIGTERM)   # each saves nothing new: it resumes from its last resume file
        for name, (proc, _, _) in running.items():
            if proc.wait() == 0:   # it finished before the signal reached it
                done.append(name)
        left = [m for m in a.models if m not in done]
        log(f"probekit train-toy: interrupted; finished: {done or 'none'}; to go on, run the same command with "
            f"--models {' '.join(left)} (a member stopped mid-training resumes from its last resume file)")
        return 130
    if done and not a.no_eval:
        from .card import write as write_card
        log(f"model card: {write_card(out)}")
    if failed:
        failed = {m: failed[m] for m in order if m in failed}
        log(f"probekit train-toy: {len(failed)} of {len(a.models)} members failed: "
            + "; ".join(f"{m} (exit status {rc}, log {out / (m + '.log')})" for m, rc in failed.items()))
        return next(iter(failed.values()))
    return 0
