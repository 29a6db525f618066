"""In-memory mirror of the snippet vectors, searched by brute force, answered per section.

One home for search: numpy over the float32 matrix answers a top-40 query in 0.9 ms at 10k
vectors and 10 ms at 50k, where sqlite-vec's vec0 KNN takes 8.4 and 48 ms for the same 40 rows
(bench/bench_vectors.py); vec0 is brute force too, so it is no way out at scale either. The
durable copy that fills this mirror at start is therefore a plain table of float32 BLOBs
(`snippet_vectors`, migration m010), which writes 1.6-2.2x and fills the mirror 3-4.5x faster
than vec0 did in the same run.
Each snippet belongs to one section; a section's cosine is its best snippet's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

INITIAL_ROWS = 1024
# Sections are ranked from this many best snippets per wanted section: a section needs only
# one snippet among them, and a top-40 never needed more than 4 snippets a section (eval).
SNIPPETS_PER_SECTION = 8


@dataclass(frozen=True)
class Match:
    section_id: int
    cosine: float
    snippet_id: int


@dataclass(frozen=True)
class Neighbours:
    """Best sections for a query, and the query's similarity to the whole index."""

    hits: list[Match]
    mean: float
    std: float

    def zscore(self, cosine: float) -> float:
        """How far a cosine stands above this query's typical similarity to any snippet."""
        return (cosine - self.mean) / self.std


NO_NEIGHBOURS = Neighbours([], 0.0, 1.0)


class VectorIndex:
    """Thread-safe in-memory mirror of snippet vectors for brute-force cosine search."""

    def __init__(self, dim: int, model: str = "") -> None:
        self.dim, self.model = dim, model  # the model's name: the index file records it
        self._lock = threading.Lock()
        self._matrix = np.zeros((INITIAL_ROWS, dim), dtype=np.float32)
        self._ids = np.full(INITIAL_ROWS, -1, dtype=np.int64)  # snippet id per slot
        self._sections = np.full(INITIAL_ROWS, -1, dtype=np.int64)  # its section per slot
        self._slot: dict[int, int] = {}
        self._by_section: dict[int, list[int]] = {}
        self._free: list[int] = []
        self._used = 0

    def __len__(self) -> int:
        return len(self._slot)

    def reserve(self, count: int) -> None:
        """Make room for `count` vectors in one allocation (no doubling copies at start)."""
        with self._lock:
            if count > len(self._ids):
                self._resize(count)

    def upsert(self, rows: Sequence[tuple[int, int]], vectors: np.ndarray) -> None:
        """`rows` are (snippet id, section id) pairs, one per row of `vectors`."""
        with self._lock:
            for (snippet_id, section_id), vector in zip(rows, vectors, strict=True):
                slot = self._slot.get(snippet_id)
                if slot is None:
                    slot = self._free.pop() if self._free else self._grow()
                    self._slot[snippet_id] = slot
                    self._ids[slot] = snippet_id
                    self._sections[slot] = section_id
                    self._by_section.setdefault(section_id, []).append(slot)
                self._matrix[slot] = vector

    def remove_sections(self, section_ids: Iterable[int]) -> None:
        with self._lock:
            for section_id in section_ids:
                for slot in self._by_section.pop(section_id, ()):
                    del self._slot[int(self._ids[slot])]
                    self._ids[slot] = self._sections[slot] = -1
                    self._matrix[slot] = 0
                    self._free.append(slot)

    def search(self, query: np.ndarray, k: int) -> Neighbours:
        """Top-k sections by their best snippet's cosine (vectors are L2-normalised), plus the
        mean and spread of the query's cosine over every snippet."""
        with self._lock:
            if not self._slot:
                return NO_NEIGHBOURS
            live = self._ids[: self._used] >= 0
            scores = self._matrix[: self._used] @ query
            scores[~live] = -2.0
            wanted = min(k * SNIPPETS_PER_SECTION, len(self._slot))
            top = np.argpartition(-scores, wanted - 1)[:wanted]
            best: dict[int, Match] = {}
            for slot in top[np.argsort(-scores[top])]:
                section_id = int(self._sections[slot])
                if section_id not in best:
                    best[section_id] = Match(section_id, float(scores[slot]), int(self._ids[slot]))
            spread = float(scores[live].std()) if len(self._slot) > 1 else 1.0
            return Neighbours(list(best.values())[:k], float(scores[live].mean()), spread or 1.0)

    def best_snippets(self, section_ids: Iterable[int], query: np.ndarray) -> dict[int, Match]:
        """Each known section's best snippet for the query (unknown sections are left out)."""
        with self._lock:
            wanted = [(s, self._by_section[s]) for s in section_ids if s in self._by_section]
            if not wanted:
                return {}
            slots = [slot for _, group in wanted for slot in group]
            scores = dict(zip(slots, (self._matrix[slots] @ query).tolist(), strict=True))
            found = {}
            for section_id, group in wanted:
                slot = max(group, key=scores.__getitem__)
                found[section_id] = Match(section_id, scores[slot], int(self._ids[slot]))
            return found

    def snippet_vector(self, snippet_id: int) -> np.ndarray:
        """A copy of one snippet's vector (eval's learned-gate study reads the matched ones)."""
        with self._lock:
            return self._matrix[self._slot[snippet_id]].copy()

    def best_cosines(self, queries: np.ndarray, rows: int = 4096) -> np.ndarray:
        """Each query's best cosine over every snippet, a block of rows at a time so searches
        wait at most one block (~10 ms) rather than the whole pass."""
        best = np.full(len(queries), -2.0, dtype=np.float32)
        start = 0
        while True:
            with self._lock:
                block = self._matrix[start : min(start + rows, self._used)]
                live = self._ids[start : start + len(block)] >= 0
                if not len(block):
                    return best
                if live.any():
                    best = np.maximum(best, (queries @ block[live].T).max(axis=1))
            start += rows

    def _grow(self) -> int:
        if self._used == len(self._ids):
            self._resize(2 * len(self._ids))
        self._used += 1
        return self._used - 1

    def _resize(self, rows: int) -> None:
        extra = rows - len(self._ids)
        self._matrix = np.concatenate([self._matrix, np.zeros((extra, self.dim), np.float32)])
        self._ids = np.concatenate([self._ids, np.full(extra, -1, dtype=np.int64)])
        self._sections = np.concatenate([self._sections, np.full(extra, -1, dtype=np.int64)])
