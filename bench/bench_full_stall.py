"""Do answers stall while the 30-minute full comparison runs? (issue 26, point 5)

    python bench/bench_full_stall.py [--notes 100000] [--rounds 3]

bench_sync_scale.py runs the stand-in Trilium inside its own process, so its Python work on a
100,000-note listing competes for the interpreter lock with the syncer and the searches it
measures, and the search latency it reports during a full comparison is an upper bound. Here the
stand-in is a process of its own (`python -m trilium_recall.demo.standin`), as a real Trilium
is: this process holds what the engine holds — the syncer on an event loop and a search thread
with its own reader connection — and the search core's latency (keyword hits, meaning hits, the
sections' rows) is measured idle and during each full comparison. Passages are embedded by the
tests' word-hash embedder: the model's cost is bench/build_bench.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_sync_scale import FOLDERS, SearchProbe, percentiles
from bench_versions import synthetic_notebook
from report import load_average, machine

from conftest import HashEmbedder
from test_sync import TOKEN, Harness
from trilium_recall.server.engine import SWITCH_INTERVAL_S


class StandInProcess:
    """The stand-in CLI serving a notebook folder, until closed."""

    def __init__(self, notebook: Path, version: str) -> None:
        command = [sys.executable, "-m", "trilium_recall.demo.standin", "--notebook", str(notebook)]
        command += ["--token", TOKEN, "--trilium-version", version]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().split()
        if ready[:1] != ["READY"]:
            self.close()
            raise SystemExit(f"the stand-in did not start: {ready}")
        self._url = ready[1]

    def url(self) -> str:
        return self._url

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


async def measure(h: Harness, rounds: int) -> list[tuple[str, str]]:
    started = time.perf_counter()
    await h.syncer.full()
    rows = [
        (
            f"first build ({len(h.indexed())} notes indexed)",
            f"{time.perf_counter() - started:.1f} s",
        )
    ]
    with SearchProbe(h) as idle:
        await asyncio.sleep(10)
    rows.append(("search core, idle (10 s)", percentiles(idle.samples)))
    for n in range(1, rounds + 1):
        with SearchProbe(h) as during:
            started = time.perf_counter()
            await h.syncer.full()
            took = time.perf_counter() - started
        rows.append(
            (f"search core during full comparison {n} ({took:.1f} s)", percentiles(during.samples))
        )
        rows.append(("  longest search during it", f"{max(during.samples, default=0):.0f} ms"))
        # What only the cyclic collector can free: a comparison's garbage in reference cycles.
        rows.append(("  cyclic garbage it left (objects)", f"{gc.collect():,}"))
    return rows


async def run(args: argparse.Namespace, tmp: Path) -> list[tuple[str, str]]:
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as the engine sets it for its process
    notebook = tmp / "notebook"
    notebook.mkdir()
    synthetic_notebook(notebook, args.notes, folders=FOLDERS)
    trilium = StandInProcess(notebook, args.version)
    work = tmp / "index"
    work.mkdir(mode=0o700)
    h = Harness(trilium, work, HashEmbedder())
    try:
        return await measure(h, args.rounds)
    finally:
        await h.close()
        trilium.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--version", default="0.105", choices=("0.93", "0.105"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = load_average()[0]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o700)  # the index holds notes
        rows = asyncio.run(run(args, Path(tmp)))
    print(machine())
    print(f"load average (1 min) before / after: {load:.2f} / {load_average()[0]:.2f}")
    print(f"stand-in (own process) as Trilium {args.version}, {args.notes} notes\n")
    print("| step | figure |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
