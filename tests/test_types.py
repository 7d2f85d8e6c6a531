"""mypy passes over ``probekit/`` with the configuration in pyproject.toml ([tool.mypy]: strict on the result
schema and on probekit.studies, default level elsewhere), so a wrong type is a failing test in `make test`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes_over_the_package():
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
