"""What the fixed glibc mmap threshold (server/heap.py) costs a search, and what it saves.

    python bench/bench_heap.py [--rows 370672] [--searches 300] [--rounds 3]

The vector mirror's search alone (no model, no SQLite: exact rows are the codes' own), on
`--rows` random snippets, from two search threads in turn as the engine's pool runs them; each
round runs it in a fresh process with glibc's default (dynamic) threshold and in one with
`return_big_blocks()`, alternating, and prints each's search p50 / p99 and RSS after (which
includes the random codes twice: the mirror's and the one exact() reads). With the
fixed threshold each search's per-snippet arrays are mapped and unmapped (page faults) instead
of reused from a thread's heap.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from trilium_recall.index.vectors import VectorIndex
from trilium_recall.server.heap import return_big_blocks

DIM = 384


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def child(rows: int, searches: int, fixed: bool) -> dict[str, float]:
    if fixed:
        return_big_blocks()
    rng = np.random.default_rng(26)
    mirror = VectorIndex(DIM)
    codes = rng.integers(-40, 40, size=(rows, DIM), dtype=np.int8)
    ids = np.arange(rows)
    mirror.load(rows, [(ids, ids // 7, codes)])  # `codes` kept for exact(): same in both modes

    def exact(wanted: list[int]) -> dict[int, np.ndarray]:
        found = {i: codes[i].astype(np.float32) for i in wanted}
        return {i: v / np.linalg.norm(v) for i, v in found.items()}

    queries = rng.normal(size=(searches, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    took: list[float] = []

    def one(query: np.ndarray) -> None:
        started = time.perf_counter()
        mirror.search(query, 40, exact)
        took.append((time.perf_counter() - started) * 1000)

    with ThreadPoolExecutor(2) as pool:  # one search at a time, on either thread
        for query in queries:
            pool.submit(one, query).result()
    took.sort()
    return {"p50": statistics.median(took), "p99": took[int(0.99 * len(took))], "rss": rss_mib()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=370_672)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=("default", "fixed"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rows, args.searches, args.child == "fixed")))
        return
    for n in range(args.rounds):
        for mode in ("default", "fixed"):
            command = [sys.executable, __file__, "--child", mode]
            command += ["--rows", str(args.rows), "--searches", str(args.searches)]
            out = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
            print(
                f"round {n + 1} {mode:<7}: search p50 {out['p50']:.2f} ms, "
                f"p99 {out['p99']:.2f} ms, RSS {out['rss']:.0f} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
