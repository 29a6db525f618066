"""The product before the issue-12 work (commit 15ec4b2: section vectors, no warm-up, the model
called from the search threads) against the current engine, on the same demo notebook, in the
same run (issue 11: /recall p50 may grow by at most 5 ms).

The old `src/` comes from `git archive` into a temporary directory and its engine runs as
`python -m trilium_recall.cli serve` with `PYTHONPATH=<that dir>`, the same environment and its
own index directory (its schema differs), as eval/old_gate.py runs the old search.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engine_bench import (
    Samples,
    Started,
    percentile,
    sequential,
    start_engine,
)

from engine_process import EngineProcess
from trilium_recall.demo.mode import DEMO_TOKEN, start_demo_trilium

OLD_COMMIT = "15ec4b2"
REPO = Path(__file__).resolve().parents[1]


def old_source(into: Path, commit: str = OLD_COMMIT) -> Path:
    """`git archive <commit> src` extracted under `into`; returns the directory to put on
    PYTHONPATH (the one holding `trilium_recall/`)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "src"], check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    return into / "src"


def check_imports_old(pythonpath: Path) -> None:
    """Fail loudly if PYTHONPATH does not win over the editable install of the current code."""
    found = subprocess.run(
        [sys.executable, "-c", "import trilium_recall; print(trilium_recall.__file__)"],
        env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not found.startswith(str(pythonpath)):
        raise RuntimeError(f"PYTHONPATH={pythonpath} imports {found}, not the old source")


def start_old(work: Path, trilium_url: str, token: str, commit: str = OLD_COMMIT) -> Started:
    """The old engine on an index of its own, built from the same Trilium on its first start."""
    source = old_source(work / "old-src", commit)
    check_imports_old(source)
    data = work / "old-index"
    data.mkdir(parents=True, exist_ok=True)
    return start_engine(data, trilium_url, token, ("ok",), extra_env={"PYTHONPATH": str(source)})


@contextlib.contextmanager
def demo_engines(commit: str) -> Iterator[tuple[EngineProcess, EngineProcess]]:
    """The engine at `commit` and the engine as it is now, each with an index of its own built
    from one demo stand-in Trilium; all three stopped on the way out."""
    fake = start_demo_trilium()
    with tempfile.TemporaryDirectory(prefix="recall-commits-") as work:
        new_dir = Path(work) / "new"
        new_dir.mkdir()  # the engine's log goes there before the engine makes it
        try:
            old = start_old(Path(work), fake.url(), DEMO_TOKEN, commit)
            try:
                new = start_engine(new_dir, fake.url(), DEMO_TOKEN, ("ok",))
                try:
                    yield old.engine, new.engine
                finally:
                    new.engine.stop()
            finally:
                old.engine.stop()  # also when the new engine fails to start
        finally:
            fake.stop()


@dataclass
class Comparison:
    old: Samples = field(default_factory=Samples)
    new: Samples = field(default_factory=Samples)
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (old, new) p50 per round

    @property
    def p50_growth_ms(self) -> float:
        return percentile(self.new.wall, 50) - percentile(self.old.wall, 50)


def compare(
    old: EngineProcess, new: EngineProcess, prompts: tuple[str, ...], rounds: int, requests: int
) -> Comparison:
    """`rounds` × `requests` sequential /recall requests against each engine, alternating which
    goes first, so both see the same machine."""
    found = Comparison()
    for number in range(rounds):
        order = [("old", old), ("new", new)]
        if number % 2:
            order.reverse()
        p50 = {}
        for name, engine in order:
            samples = sequential(engine, prompts, requests)
            getattr(found, name).merge(samples)
            p50[name] = percentile(samples.wall, 50)
        found.rounds.append((p50["old"], p50["new"]))
    return found
