"""The vector mirror's search alone: time and memory, this tree against another, and with
glibc's mmap threshold fixed (issue 26, engine memory).

    python bench/bench_heap.py [--rows 370672] [--searches 300] [--rounds 3] [--before SRC]

No model, no SQLite (exact rows are the codes' own): `--rows` random snippets, searched from
two threads in turn as the engine's pool runs them. Each round runs, in fresh processes one
after the other: `--before SRC` (another tree's `src` folder, e.g. from `git archive <rev>
src`, first on PYTHONPATH), this tree, and this tree with `MALLOC_MMAP_THRESHOLD_=1048576`
(glibc then gives back every block of 1 MiB or more at once, instead of raising its threshold
to the size of each big block freed and keeping those pages in the threads' heaps). Printed:
search p50 / p99 and RSS after (which holds the random codes twice: the mirror's and the
copy exact() reads).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from trilium_recall.index.vectors import VectorIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_bench import percentile, rss_mib

DIM = 384
FIXED = {"MALLOC_MMAP_THRESHOLD_": str(1 << 20)}


def child(rows: int, searches: int) -> dict[str, float]:
    rng = np.random.default_rng(26)
    mirror = VectorIndex(DIM)
    codes = rng.integers(-40, 40, size=(rows, DIM), dtype=np.int8)
    ids = np.arange(rows)
    unmeasured = np.full(rows, np.nan)  # no hubness
    # `codes` kept for exact(): same in every mode
    mirror.load(rows, [(ids, ids // 7, codes, unmeasured)])

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
    rss = rss_mib(os.getpid())[0]
    return {"p50": percentile(took, 50), "p99": percentile(took, 99), "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=370_672)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another tree's src folder")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rows, args.searches)))
        return
    modes: list[tuple[str, dict[str, str]]] = [("this tree", {}), ("+ fixed", FIXED)]
    if args.before:
        modes.insert(0, ("before", {"PYTHONPATH": str(args.before.resolve())}))
    command = [sys.executable, __file__, "--child", "--rows", str(args.rows)]
    command += ["--searches", str(args.searches)]
    for n in range(args.rounds):
        for mode, env in modes:
            done = subprocess.run(
                command, check=True, capture_output=True, env={**os.environ, **env}
            )
            out = json.loads(done.stdout)
            print(
                f"round {n + 1} {mode:<9}: search p50 {out['p50']:.2f} ms, "
                f"p99 {out['p99']:.2f} ms, RSS {out['rss']:.0f} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
