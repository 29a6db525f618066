"""Issue 26: which vector search scales: exact float32 against quantised scans with exact rescoring.

    python bench/bench_quantised.py [--sizes 262144 1310720] [--queries 200] [--hnsw]

Vectors: the real e5 snippet vectors of the 7 eval corpora (eval/.index/*/recall.sqlite3, 30,851
rows, each with its real section) and synthetic sets of 262,144 and 1,310,720 rows made from
them: each row is w·a + (1-w)·b + 0.01·noise for two random real snippet vectors a, b, w uniform
in [0.5, 1], noise standard normal per dimension, renormalised; a synthetic section is 5
consecutive rows (5.25 snippets a section in the 50k bench notebook). Queries: the eval's real
query vectors (eval/.index/queries.npz). Every method answers one query at a time, as search()
does, all in the same process on the same rows:

- `float32`: numpy over the float32 matrix (today's VectorIndex), the exact reference;
- `int8 + rescore N`: simsimd's int8 dot product (SIMD, one thread) of the query's codes
  with every row's codes round(v·127/0.25) (one global scale: e5 components stay within
  ±0.21), the top N rows then rescored exactly from their float32 vectors (what vectors.py
  does, with N = 400);
- `int8 (usearch exact scan) + rescore 400` (--usearch, if usearch is installed): the same with
  usearch's brute-force search in place of simsimd;
- `binary + rescore`: sign bits of (v - mean) with numpy's popcount, top 2,000 rescored from int8
  codes, then top N from float32;
- `hnsw int8` (--hnsw, first size only, if usearch is installed: building it takes minutes
  here): usearch's HNSW graph.

Recall is of the exact top-40 *sections* (a section scores its best snippet; search() ranks the
best 320 snippets) and of the exact top-40 snippets, averaged over the queries.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import simsimd

from trilium_recall.index.file import open_db

HERE = Path(__file__).resolve().parent
INDEXES = HERE.parent / "eval" / ".index"
TOP, SNIPPETS = 40, 320  # search()'s k and the snippets it ranks sections from (k x 8)
SCALE = 127 / 0.25
RESCORE = (100, 200, 400)

Method = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # query -> (rows, cosines)


def real_vectors() -> tuple[np.ndarray, np.ndarray]:
    """Every eval corpus's snippet vectors and section ids (made unique across corpora)."""
    vectors, sections = [], []
    for offset, path in enumerate(sorted(INDEXES.glob("*/recall.sqlite3"))):
        db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        rows = db.execute(
            "SELECT s.section_id, v.embedding FROM snippets s "
            "JOIN snippet_vectors v ON v.id = s.id ORDER BY s.section_id"
        ).fetchall()
        vectors.append(np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(-1, 384))
        sections.append(np.array([r[0] for r in rows]) + offset * 10_000_000)
        db.close()
    return np.concatenate(vectors), np.concatenate(sections)


def synthetic(real: np.ndarray, size: int, seed: int = 26) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((size, real.shape[1]), np.float32)
    for start in range(0, size, 65536):
        n = min(65536, size - start)
        w = rng.uniform(0.5, 1.0, (n, 1)).astype(np.float32)
        a, b = real[rng.integers(len(real), size=n)], real[rng.integers(len(real), size=n)]
        mixed = w * a + (1 - w) * b + 0.01 * rng.standard_normal(a.shape, np.float32)
        out[start : start + n] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return out


def quantise(vectors: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(vectors * SCALE), -127, 127).astype(np.int8)


def best_sections(rows: np.ndarray, cosines: np.ndarray, sections: np.ndarray) -> list[int]:
    order = np.argsort(-cosines)
    seen: dict[int, None] = {}
    for section in sections[rows[order]].tolist():
        seen.setdefault(section, None)
    return list(seen)[:TOP]


def top(scores: np.ndarray, n: int) -> np.ndarray:
    return np.argpartition(-scores, n - 1)[:n]


def methods(
    matrix: np.ndarray, codes: np.ndarray, hnsw: object | None, usearch: bool
) -> dict[str, Method]:
    mean = matrix.mean(axis=0)
    bits = np.packbits(matrix - mean > 0, axis=1)

    def exact(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores = matrix @ query
        rows = top(scores, SNIPPETS)
        return rows, scores[rows]

    def rescored(rows: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores = matrix[np.sort(rows)] @ query
        best = top(scores, min(SNIPPETS, len(rows)))
        return np.sort(rows)[best], scores[best]

    def int8(n: int) -> Method:
        def run(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            dots = simsimd.cdist(quantise(query)[None], codes, metric="dot", dtype="int8")
            return rescored(top(np.asarray(dots).reshape(-1), n), query)

        return run

    def usearch_int8(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from usearch.index import MetricKind, search

        found = search(codes, quantise(query), 400, MetricKind.IP, exact=True)
        return rescored(found.keys.astype(np.int64), query)

    def binary(n: int) -> Method:
        def run(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            distances = np.bitwise_count(bits ^ np.packbits(query - mean > 0)).sum(axis=1)
            near = np.argpartition(distances, 1999)[:2000]
            rough = codes[near].astype(np.float32) @ query
            return rescored(near[top(rough, n)], query)

        return run

    found: dict[str, Method] = {"float32": exact}
    found |= {f"int8 + rescore {n}": int8(n) for n in RESCORE}
    found["binary + rescore 400"] = binary(400)
    if usearch:
        found["int8 (usearch exact scan) + rescore 400"] = usearch_int8
    if hnsw is not None:

        def graph(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return rescored(hnsw.search(query, 400).keys.astype(np.int64), query)  # type: ignore[attr-defined]

        found["hnsw int8 + rescore 400"] = graph
    return found


def measure(
    label: str,
    matrix: np.ndarray,
    sections: np.ndarray,
    queries: np.ndarray,
    hnsw: bool,
    usearch: bool,
) -> list[str]:
    codes = quantise(matrix)
    graph, build_s = None, 0.0
    if hnsw:
        from usearch.index import Index

        started = time.perf_counter()
        graph = Index(ndim=matrix.shape[1], metric="ip", dtype="i8", expansion_search=512)
        graph.add(np.arange(len(matrix)), matrix)
        build_s = time.perf_counter() - started
    rows = []
    reference = [methods(matrix, codes, None, False)["float32"](q) for q in queries]
    for name, method in methods(matrix, codes, graph, usearch).items():
        times, section_recall, snippet_recall = [], [], []
        for query, (exact_rows, exact_scores) in zip(queries, reference, strict=True):
            started = time.perf_counter()
            found, cosines = method(query)
            times.append((time.perf_counter() - started) * 1000)
            want = set(best_sections(exact_rows, exact_scores, sections))
            section_recall.append(len(want & set(best_sections(found, cosines, sections))) / TOP)
            want_rows = set(exact_rows[np.argsort(-exact_scores)[:TOP]].tolist())
            got_rows = set(found[np.argsort(-cosines)[:TOP]].tolist())
            snippet_recall.append(len(want_rows & got_rows) / TOP)
        p99 = np.percentile(times, 99)
        memory = {
            "float32": matrix.nbytes,
            "binary + rescore 400": codes.nbytes + bits_bytes(codes),
        }
        mib = memory.get(name, codes.nbytes) / 2**20
        extra = f"; graph {graph.memory_usage / 2**20:.0f} MiB, built in {build_s:.0f} s" if (
            name.startswith("hnsw") and graph is not None
        ) else ""  # fmt: skip
        rows.append(
            f"| {label} | {name} | {statistics.median(times):.1f} / {p99:.1f} ms | "
            f"{np.mean(section_recall):.4f} (min {min(section_recall):.3f}) | "
            f"{np.mean(snippet_recall):.4f} | {mib:.0f} MiB{extra} |"
        )
        print(rows[-1], flush=True)
    return rows


def bits_bytes(codes: np.ndarray) -> int:
    return len(codes) * codes.shape[1] // 8


def sqlite_costs(matrix: np.ndarray, queries: np.ndarray) -> list[str]:
    """What the rescoring and the start cost when the floats stay on disk: N rows by id from a
    BLOB table, and one bulk read of every int8 code into a preallocated array."""
    codes = quantise(matrix)
    with tempfile.TemporaryDirectory() as folder:
        db = open_db(Path(folder) / "v.sqlite3")
        db.execute("CREATE TABLE f (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        db.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, section_id INTEGER, code BLOB)")
        with db:
            db.executemany(
                "INSERT INTO f VALUES (?, ?)", ((i, r.tobytes()) for i, r in enumerate(matrix))
            )
            db.executemany(
                "INSERT INTO c VALUES (?, ?, ?)",
                ((i, i // 5, row.tobytes()) for i, row in enumerate(codes)),
            )
        rng = np.random.default_rng(1)
        lines = []
        for n in RESCORE:
            times = []
            for _ in queries:
                ids = np.sort(rng.choice(len(matrix), n, replace=False)).tolist()
                started = time.perf_counter()
                got = db.execute(
                    f"SELECT id, embedding FROM f WHERE id IN ({','.join('?' * n)})", ids
                ).fetchall()
                np.frombuffer(b"".join(r[1] for r in got), np.float32).reshape(-1, 384)
                times.append((time.perf_counter() - started) * 1000)
            lines.append(
                f"| {len(matrix):,} | fetch {n} float32 rows by id from SQLite | "
                f"{statistics.median(times):.2f} / {np.percentile(times, 99):.2f} ms | | | |"
            )
        started = time.perf_counter()
        rows = db.execute("SELECT id, section_id, code FROM c").fetchall()
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        mirror = np.frombuffer(b"".join(r[2] for r in rows), np.int8).reshape(-1, 384)
        load_ms = (time.perf_counter() - started) * 1000
        assert len(ids) == len(mirror) == len(matrix)
        lines.append(
            f"| {len(matrix):,} | read every int8 code at start | {load_ms:.0f} ms | | | |"
        )
        for line in lines:
            print(line, flush=True)
        db.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[262_144, 1_310_720])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw", action="store_true")
    parser.add_argument("--usearch", action="store_true")
    args = parser.parse_args()
    real, sections = real_vectors()
    asked = np.load(INDEXES / "queries.npz")["vectors"].astype(np.float32)
    picked = asked[np.linspace(0, len(asked) - 1, args.queries).astype(int)]
    print(f"load average {os.getloadavg()[0]:.2f}; {len(real):,} real snippet vectors")
    print(
        "| rows | method | query p50 / p99 | recall top-40 sections (min) | top-40 snippets "
        "| memory |"
    )
    print("|---|---|---|---|---|---|")
    measure(f"{len(real):,} real", real, sections, asked, False, args.usearch)
    for n, size in enumerate(args.sizes):
        matrix = synthetic(real, size)
        first = args.hnsw and not n
        measure(f"{size:,} synthetic", matrix, np.arange(size) // 5, picked, first, args.usearch)
        if n == 0:
            sqlite_costs(matrix, picked)
        del matrix
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
