"""The code stays lint-clean and type-checks: run as part of the suite so CI enforces it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "src", "tests", "bench", "eval")
    assert done.returncode == 0, done.stdout + done.stderr
    formatted = _run("ruff", "format", "--check", "src", "tests", "bench", "eval")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_mypy_finds_nothing() -> None:
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
