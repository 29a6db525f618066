"""Where the engine's memory goes on a big index (issue 26: RSS ≤ 300 MiB at 50k sections).

    python bench/synth_notebook.py index --sections 50000 --out /tmp/syn50k/recall.sqlite3
    python bench/engine_memory.py /tmp/syn50k [--requests 300] [--tracemalloc]

Runs the engine in this process (the `serve` command's `Engine`, without HTTP or syncers:
Trilium is down in the scale bench too) on an existing index, and prints, after start (load +
warm) and after `--requests` sequential recalls of the eval prompts: RSS split into anonymous
and file-backed memory (/proc/self/smaps_rollup), the largest mappings (smaps), numpy arrays
held by the vector mirror, SQLite's own heap (`apsw.memory_used`, high water), threads, and
with `--tracemalloc` the top Python allocation sites (it slows recalls: latency is then moot).
`bench/scale.py` is the HTTP-level figure (RSS of `trilium-recall serve`) this one explains.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import re
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import apsw
import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import eval_prompts  # noqa: E402
from engine_bench import memory_mib, percentile  # noqa: E402

from procs import closed_port_url  # noqa: E402
from trilium_recall.config import load_settings  # noqa: E402
from trilium_recall.search.answers import RecallRequest  # noqa: E402
from trilium_recall.server.engine import Engine  # noqa: E402

MIB = 2**20
TOP = 12


def mappings() -> list[tuple[float, str]]:
    """RSS in MiB by mapping name ([heap], [anon], a library or file), largest first."""
    sizes: Counter[str] = Counter()
    name = ""
    header = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if header.match(line):
            parts = line.split(maxsplit=5)
            name = parts[5].strip() if len(parts) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            sizes[name] += int(line.split()[1]) / 1024
    return sorted(((size, name) for name, size in sizes.items()), reverse=True)


def mirror_arrays(engine: Engine) -> dict[str, float]:
    """The vector mirror's numpy arrays, MiB each (their allocated size, not rows in use)."""
    mirror = engine.vectors
    return {
        name: array.nbytes / MIB
        for name, array in vars(mirror).items()
        if isinstance(array, np.ndarray)
    }


def report(stage: str, engine: Engine) -> None:
    print(f"\n== {stage}")
    for key, value in memory_mib(os.getpid()).items():
        print(f"  {key:<14} {value:8.1f} MiB")
    tasks = len(os.listdir("/proc/self/task"))
    print(f"  threads        {threading.active_count():8d} Python, {tasks} OS")
    sqlite, high = apsw.memory_used() / MIB, apsw.memory_high_water() / MIB
    print(f"  sqlite heap    {sqlite:8.1f} MiB (high water {high:.1f})")
    print(f"  connections    {len(engine._readers) + 1} held by the engine")
    for name, size in mirror_arrays(engine).items():
        print(f"  mirror {name:<8} {size:8.1f} MiB")
    print("  largest mappings (RSS):")
    for size, name in mappings()[:TOP]:
        print(f"    {size:8.1f} MiB  {name}")
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        print(f"  python heap (tracemalloc) {current / MIB:.1f} MiB, peak {peak / MIB:.1f} MiB")
        for stat in tracemalloc.take_snapshot().statistics("lineno")[:TOP]:
            frame = stat.traceback[0]
            where = f"{Path(frame.filename).name}:{frame.lineno}"
            print(f"    {stat.size / MIB:8.2f} MiB  {stat.count:8d} blocks  {where}")


async def run(data: Path, requests: int) -> None:
    env = {
        "RECALL_DATA_DIR": str(data),
        "TRILIUM_URL": closed_port_url(),
        "TRILIUM_ETAPI_TOKEN": "bench-token",
        "RECALL_LOGIN_PASSWORD": "bench-password-long-enough",
        "RECALL_TIME_BUDGET_MS": "60000",
    }
    started = time.perf_counter()
    engine = Engine(load_settings(env, quiet=True))
    await engine.warm()
    took = time.perf_counter() - started
    print(f"engine loaded and warm in {took:.1f} s, {len(engine.vectors):,} snippets")
    try:
        report("after start (load + warm)", engine)
        prompts = eval_prompts()
        took = []
        for n in range(requests):
            began = time.perf_counter()
            await engine.recall(RecallRequest(prompts[n % len(prompts)]))
            took.append((time.perf_counter() - began) * 1000)
        print(
            f"\n{requests} recalls: p50 {percentile(took, 50):.1f} ms, "
            f"p99 {percentile(took, 99):.1f} ms (in-process, no HTTP)"
        )
        report(f"after {requests} recalls", engine)
        # What glibc holds freed but not returned: the RSS malloc_trim gives back.
        ctypes.CDLL(None).malloc_trim(0)
        print(f"\n== after malloc_trim(0): rss {memory_mib(os.getpid())['rss']:.1f} MiB")
    finally:
        await engine.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a folder holding recall.sqlite3")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--tracemalloc", action="store_true", help="trace Python allocations")
    args = parser.parse_args()
    if not (args.data / "recall.sqlite3").is_file():
        sys.exit(f"engine_memory: no recall.sqlite3 in {args.data}")
    if args.tracemalloc:
        tracemalloc.start()
    asyncio.run(run(args.data, args.requests))


if __name__ == "__main__":
    main()
