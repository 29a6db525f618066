"""Issue 26: the vector mirror at start and per query, as the product runs it, today's against
the previous commit's, on one index file of synthetic snippets.

    python bench/bench_vector_start.py [--rows 262144] [--queries 200] [--before 4ec36d9]

The file holds `--rows` snippets (bench_quantised.synthetic: mixtures of the eval's real
vectors, 5 a section) written straight into the tables `Store` reads. Each side runs in its own
process (so RSS is its own): open the `Store`, fill the mirror, then the eval's real query
vectors one at a time through `VectorIndex.search` (top 40 sections, as search() asks).
- today: `Store.load_vectors` (one bulk read of the int8 codes) and the int8 scan + exact
  rescoring from the float32 rows;
- before: the `--before` commit's `vectors.py` (float32 mirror, numpy brute force) filled by
  that commit's `load_vectors` loop from the float32 rows.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_quantised import INDEXES, real_vectors, synthetic

from trilium_recall.index import vector_rows
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex

HERE = Path(__file__).resolve().parent


def write_index(path: Path, rows: int) -> None:
    matrix = synthetic(real_vectors()[0], rows)
    store = Store(path, VectorIndex(384))
    with store.atomic() as db:
        db.executemany(
            "INSERT INTO sections (id, instance, note_id, ordinal, heading, text, hash) "
            "VALUES (?, 'bench', ?, 0, '', '', '')",
            ((s, f"n{s}") for s in range(rows // 5 + 1)),
        )
        db.executemany(
            "INSERT INTO snippets (id, section_id, start, end) VALUES (?, ?, 0, 0)",
            ((i + 1, i // 5) for i in range(rows)),
        )
        for i, vector in enumerate(matrix):
            vector_rows.insert(db, i + 1, i // 5, vector, None)
    store.close()


def measure_today(path: Path, queries: np.ndarray) -> dict[str, float]:
    started = time.perf_counter()
    store = Store(path, VectorIndex(384))
    store.load_vectors()
    load_s = time.perf_counter() - started
    return _queries(load_s, lambda q: store.vectors.search(q, 40, store.exact_vectors), queries)


def measure_before(path: Path, queries: np.ndarray, commit: str) -> dict[str, float]:
    source = subprocess.run(
        ["git", "show", f"{commit}:src/trilium_recall/index/vectors.py"],
        capture_output=True, text=True, check=True, cwd=HERE,
    ).stdout  # fmt: skip
    old: dict = {}
    exec(compile(source, "vectors_before.py", "exec"), old)  # our own history, as it was
    started = time.perf_counter()
    store = Store(path)
    index = old["VectorIndex"](384)
    total = store.db.execute("SELECT count(*) FROM snippets").fetchone()[0]
    index.reserve(total)
    rows = store.db.execute(
        "SELECT s.id, s.section_id, v.embedding FROM snippets s "
        "JOIN snippet_vectors v ON v.id = s.id"
    )
    while batch := list(itertools.islice(rows, 4096)):
        matrix = np.frombuffer(b"".join(row[2] for row in batch), dtype=np.float32)
        index.upsert([(row[0], row[1]) for row in batch], matrix.reshape(-1, 384))
    load_s = time.perf_counter() - started
    return _queries(load_s, lambda q: index.search(q, 40), queries)


def _queries(load_s: float, search, queries: np.ndarray) -> dict[str, float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - started) * 1000)
    rss = int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()
    return {
        "load_s": load_s,
        "p50": statistics.median(times),
        "p99": float(np.percentile(times, 99)),
        "rss_mib": rss / 2**20,  # (ru_maxrss would be the parent's: Linux keeps it over exec)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=262_144)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--before", default="4ec36d9")
    parser.add_argument("--side", choices=["today", "before"], help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    asked = np.load(INDEXES / "queries.npz")["vectors"].astype(np.float32)
    queries = asked[np.linspace(0, len(asked) - 1, args.queries).astype(int)]
    if args.side:  # one side, in its own process
        measured = (
            measure_today(args.path, queries)
            if args.side == "today"
            else measure_before(args.path, queries, args.before)
        )
        print(json.dumps(measured))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "recall.sqlite3"
        write_index(path, args.rows)
        print(f"| {args.rows:,} snippets | start: open + fill | query p50 / p99 | RSS |")
        print("|---|---|---|---|")
        for side in ("before", "today", "before", "today"):
            out = subprocess.run(
                [sys.executable, __file__, "--side", side, "--path", str(path),
                 "--queries", str(args.queries), "--before", args.before],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            m = json.loads(out.splitlines()[-1])
            print(
                f"| {side} | {m['load_s']:.2f} s | {m['p50']:.1f} / {m['p99']:.1f} ms | "
                f"{m['rss_mib']:.0f} MiB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
