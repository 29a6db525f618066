"""Where the snippet vectors should live: sqlite-vec's vec0 table, or the numpy mirror alone.

    python bench/bench_vectors.py [--sizes 10000 50000] [--queries 40]

The engine writes every snippet vector into a vec0 table and searches a float32 numpy mirror
filled from it at start (index/vectors.py). For each size, on random unit vectors of the
model's 384 dimensions in a fresh index file (index.file.open_db: WAL, sqlite-vec loaded):
1. a top-40 query: numpy's matrix-vector product over the mirror (VectorIndex.neighbours'
   brute force) against vec0's own KNN (`embedding MATCH ? AND k = 40`);
2. writing the rows: into vec0, and into a plain table of BLOBs;
3. filling the mirror at start: the engine's `load_vectors` query against the same from BLOBs.
Both sides run in the same process on the same vectors; the order of the two alternates.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from trilium_recall.index.file import open_db

DIM = 384
TOP = 40


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def write(db, table: str, matrix: np.ndarray) -> float:
    def insert() -> None:
        with db:
            db.executemany(
                f"INSERT INTO {table} (rowid, embedding) VALUES (?, ?)",
                ((i + 1, row.tobytes()) for i, row in enumerate(matrix)),
            )

    return timed(insert)


def load(db, table: str) -> float:
    def read() -> None:
        rows = db.execute(f"SELECT rowid, embedding FROM {table}").fetchall()
        np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, DIM)

    return timed(read)


def run(size: int, queries: int, folder: Path) -> list[str]:
    rng = np.random.default_rng(size)
    matrix = rng.standard_normal((size, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    asked = rng.standard_normal((queries, DIM), dtype=np.float32)
    asked /= np.linalg.norm(asked, axis=1, keepdims=True)
    db = open_db(folder / f"v{size}.sqlite3")
    db.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{DIM}])")
    db.execute("CREATE TABLE blobs (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    write_vec, write_blob = write(db, "vec", matrix), write(db, "blobs", matrix)
    load_vec, load_blob = load(db, "vec"), load(db, "blobs")
    numpy_ms, vec0_ms, agree = [], [], 0
    for n, query in enumerate(asked):

        def by_numpy(query: np.ndarray = query) -> list[int]:
            scores = matrix @ query
            best = np.argpartition(-scores, TOP)[:TOP]
            return sorted((best[np.argsort(-scores[best])] + 1).tolist())

        def by_vec0(query: np.ndarray = query) -> list[int]:
            rows = db.execute(
                "SELECT rowid FROM vec WHERE embedding MATCH ? AND k = ?",
                (query.tobytes(), TOP),
            ).fetchall()
            return sorted(r[0] for r in rows)

        found: dict[str, list[int]] = {}
        sides = [("numpy", by_numpy, numpy_ms), ("vec0", by_vec0, vec0_ms)]
        for name, side, times in sides if n % 2 else sides[::-1]:
            started = time.perf_counter()
            found[name] = side()
            times.append((time.perf_counter() - started) * 1000)
        agree += found["numpy"] == found["vec0"]
    db.close()
    return [
        f"| {size:,} vectors: top-{TOP} query p50 (numpy / vec0 KNN) | "
        f"{statistics.median(numpy_ms):.1f} / {statistics.median(vec0_ms):.1f} ms | "
        f"same {TOP} rows in {agree} of {queries} queries |",
        f"| {size:,} vectors: write all rows (vec0 / BLOB table) | "
        f"{write_vec:.0f} / {write_blob:.0f} ms | one transaction each |",
        f"| {size:,} vectors: read all rows into the mirror (vec0 / BLOB table) | "
        f"{load_vec:.0f} / {load_blob:.0f} ms | the start-up fill |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    rows = ["| measure | numpy or vec0 / other | note |", "|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            rows += run(size, args.queries, Path(folder))
    print("\n".join(rows))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
