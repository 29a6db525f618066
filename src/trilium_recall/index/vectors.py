"""In-memory int8 mirror of the snippet vectors, scanned by brute force, rescored exactly.

A float32 mirror of every snippet vector took 384 MiB at 262k snippets (50k sections) and was
read whole at each start. This one keeps each vector as 384 int8 codes (a quarter of the
memory; the start reads only these, vector_rows.py), scans them with simsimd's int8 dot
product, and rescores the best RESCORE snippets exactly from their float32 rows in the index
file (`Store.exact_vectors`). Against the float32 search (bench/bench_quantised.py, one run):
recall of its top-40 sections 0.9996 over the eval's 1,041 real queries (min 0.975) and 1.0
on 262k and 1.3M synthetic rows, 4x faster at 262k and 3x at 1.3M; every cosine a caller
sees is exact. HNSW (usearch) recalled 0.94 after a 6-minute build; binary codes 0.74-0.90.
Each snippet belongs to one section; a section ranks by its best snippet's cosine less half
that snippet's hubness (hubness.py), and carries that snippet's exact cosine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import simsimd

from .hubness import HUB_BLOCK, HUB_WEIGHT, hubness

INITIAL_ROWS = 1024
# One global scale: e5's unit vectors keep every component within ±0.21 (bench), so nothing
# clips and a code step is 0.002; rows need no scale of their own to be compared.
SCALE = 127 / 0.25
# Sections are ranked from this many best snippets per wanted section: a section needs only
# one snippet among them, and a top-40 never needed more than 4 snippets a section (eval).
SNIPPETS_PER_SECTION = 8
# Snippets rescored exactly: more than the 320 a top-40 ranks, for those the codes misorder.
RESCORE = 400
# The query's mean and spread over every snippet (the gate's z-score): exact from the float32
# rows of an index of at most this many snippets (the mirror keeps their floats too, up to
# 24 MiB, and lets them go once it holds more), else estimated from this many evenly spaced
# rows' codes (their rounding moved a z-score by up to 0.018 on the eval's corpora, enough to
# move its tables).
SAMPLE_ROWS = 16_384
# Slots a scan scores at a time: its arrays (256 KiB of scores) are reused from the heap at
# every step, where one array of a number per snippet per search (2.8 MiB each at 370k
# snippets, a few a search) was either kept by the threads' heaps (~45 MiB at 50k sections)
# or, given back, paid in page faults (+8 ms a search; bench/RESULTS.md, issue 26 memory).
SCAN_BLOCK = 32_768

# Snippet ids -> their exact float32 vectors (ids no longer stored are left out).
ExactVectors = Callable[[Sequence[int]], dict[int, np.ndarray]]
# Rows just measured for the index file to keep: snippet ids, their codes, their hubness.
KeepHubness = Callable[[np.ndarray, np.ndarray, np.ndarray], None]


def quantise(vectors: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(np.asarray(vectors) * SCALE), -127, 127).astype(np.int8)


def _cosines(query: np.ndarray, codes: np.ndarray, passes: int = 1) -> np.ndarray:
    """The query's cosine with each row of codes, by simsimd's int8 dot product: the query in
    int8 too, on a scale of its own (ranks need no other). A second pass adds the query's
    rounding residual, so only the codes' own rounding is left (for the z-score's spread)."""
    total = np.zeros(len(codes))
    rest = np.asarray(query, dtype=np.float64)
    for _ in range(passes):
        scale = 127 / max(float(np.abs(rest).max()), 1e-12)
        code = np.clip(np.rint(rest * scale), -127, 127).astype(np.int8)
        dots = simsimd.cdist(code[None, :], codes, metric="dot", dtype="int8")
        total += np.asarray(dots).reshape(-1) / (SCALE * scale)
        rest = rest - code / scale
    return total


def _best(scores: np.ndarray, count: int) -> np.ndarray:
    """The slots of the `count` highest scores (free slots score -2, below any cosine)."""
    count = min(count, len(scores))
    return np.argpartition(-scores, count - 1)[:count]


@dataclass(frozen=True)
class Match:
    section_id: int
    cosine: float
    snippet_id: int
    hubness: float = 0.0  # the snippet's (hubness.py), as its ranking weighed it


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
    """Thread-safe in-memory mirror of snippet vectors as int8 codes, one slot a snippet."""

    def __init__(self, dim: int, model: str = "") -> None:
        self.dim, self.model = dim, model  # the model's name: the index file records it
        self._lock = threading.Lock()
        self._codes = np.zeros((INITIAL_ROWS, dim), dtype=np.int8)
        # Slots < SAMPLE_ROWS, while the mirror has no more: allocated zeroed (calloc), so a
        # page costs memory only once a row is written to it; a 50k-section index never does.
        self._floats = np.zeros((SAMPLE_ROWS, dim), dtype=np.float32)
        self._ids = np.full(INITIAL_ROWS, -1, dtype=np.int64)  # snippet id per slot
        self._sections = np.full(INITIAL_ROWS, -1, dtype=np.int64)  # its section per slot
        # Hubness (hubness.py): the prompts it is measured against, each slot's (0 until
        # measured) and whether it has been.
        self._reference = np.zeros((0, dim), dtype=np.float32)
        self._hubs = np.zeros(INITIAL_ROWS, dtype=np.float32)
        self._measured = np.zeros(INITIAL_ROWS, dtype=bool)
        self._unmeasured_hub = 0.0  # what a row not yet measured ranks with
        self._free: list[int] = []
        self._used = self._count = 0

    def __len__(self) -> int:
        return self._count

    def load(self, total: int, chunks: Iterable[tuple[np.ndarray, ...]]) -> None:
        """Fill an empty mirror at start from chunks of (snippet ids, section ids, codes,
        hubness: NaN where not measured), into arrays allocated once for `total` rows: array
        copies only, no per-row work."""
        with self._lock:
            assert not self._used, "load() fills an empty mirror"
            self._resize(max(total, INITIAL_ROWS))
            for ids, sections, codes, hubs in chunks:
                start, end = self._used, self._used + len(ids)
                if end > len(self._ids):  # rows written since `total` was counted
                    self._resize(2 * end)
                self._ids[start:end], self._sections[start:end] = ids, sections
                self._codes[start:end] = codes
                self._measured[start:end] = ~np.isnan(hubs)
                self._hubs[start:end] = np.nan_to_num(hubs)
                self._used = self._count = end
            self._fill_unmeasured()
            self._drop_floats()

    def set_reference(
        self, reference: np.ndarray, every: bool = False, keep: KeepHubness | None = None
    ) -> int:
        """The prompts hubness is measured against (query vectors, hubness.py), then the
        hubness of each stored row not yet measured (of `every` row when those were measured
        otherwise), from its codes, a block of rows at a time: each block handed to `keep`
        (for the index file) outside the lock, so searches wait for one block at most. How
        many rows were measured."""
        reference = np.asarray(reference, dtype=np.float32).reshape(-1, self.dim)
        with self._lock:
            self._reference, used = reference, self._used
        measured = 0
        for start in range(0, used, HUB_BLOCK):
            with self._lock:
                end = min(start + HUB_BLOCK, used)
                live = self._ids[start:end] >= 0
                wanted = live if every else live & ~self._measured[start:end]
                slots = start + np.flatnonzero(wanted)
                codes = self._codes[slots]
                found = hubness(codes, reference, SCALE)
                self._hubs[slots], self._measured[slots] = found, True
                ids = self._ids[slots]
            measured += len(slots)
            if keep is not None and len(slots):
                keep(ids, codes, found)
        with self._lock:
            self._fill_unmeasured()
        return measured

    def hubness_of(self, vectors: np.ndarray) -> np.ndarray | None:
        """The hubness of new rows (None before a reference is set: measured then), from their
        codes as `set_reference` measures stored rows (equal within float rounding)."""
        reference = self._reference
        return hubness(quantise(vectors), reference, SCALE) if len(reference) else None

    def _fill_unmeasured(self) -> None:
        """A live row not measured yet ranks as a typical measured row would (their mean): a
        zero would lift it ~0.4 above every measured row (hubness ~0.85 in e5). With none
        measured, all count 0 and search ranks by cosine alone. (The lock held.)"""
        live = self._ids[: self._used] >= 0
        measured = live & self._measured[: self._used]
        self._unmeasured_hub = (
            float(self._hubs[: self._used][measured].mean()) if measured.any() else 0.0
        )
        self._hubs[: self._used][live & ~measured] = self._unmeasured_hub

    def load_floats(self, exact: ExactVectors, chunk: int = 1024) -> None:
        """At start, after load(): the float32 rows of the first SAMPLE_ROWS slots, a chunk at
        a time (a dict of all 16,384 at once left 11 MiB more RSS behind at 262k); none for a
        mirror too big to use them."""
        with self._lock:
            ids = self._ids[: len(self._floats)].tolist()
        for start in range(0, len(ids), chunk):
            part = ids[start : start + chunk]
            found = exact([i for i in part if i >= 0])
            with self._lock:
                for slot, snippet_id in enumerate(part, start):
                    # (an add() meanwhile may have grown the mirror past its floats)
                    if slot >= len(self._floats):
                        return
                    if snippet_id in found and self._ids[slot] == snippet_id:
                        self._floats[slot] = found[snippet_id]

    def add(
        self,
        rows: Sequence[tuple[int, int]],
        vectors: np.ndarray,
        hubs: Sequence[float | None] | None = None,
    ) -> None:
        """`rows` are new (snippet id, section id) pairs, one per row of `vectors`, with their
        hubness where the caller measured it (`hubness_of`; else measured here, when a
        reference is set, or ranked as a typical row until it is: `_fill_unmeasured`)."""
        codes = quantise(vectors)
        with self._lock:
            given = None if hubs is None or None in hubs else np.array(hubs, np.float32)
            found = self.hubness_of(vectors) if given is None else given
            measured = found is not None
            if found is None:
                found = np.full(len(codes), self._unmeasured_hub, np.float32)
            for (snippet_id, section_id), code, vector, hub in zip(
                rows, codes, vectors, found, strict=True
            ):
                slot = self._free.pop() if self._free else self._grow()
                self._ids[slot], self._sections[slot] = snippet_id, section_id
                self._codes[slot], self._hubs[slot] = code, hub
                self._measured[slot] = measured
                if slot < len(self._floats):
                    self._floats[slot] = vector
                self._count += 1
            self._drop_floats()

    def remove_sections(self, section_ids: Sequence[int]) -> None:
        if not len(section_ids):
            return
        with self._lock:
            slots = np.flatnonzero(np.isin(self._sections[: self._used], section_ids))
            self._ids[slots] = self._sections[slots] = -1
            self._codes[slots], self._hubs[slots], self._measured[slots] = 0, 0.0, False
            self._free += slots.tolist()
            self._count -= len(slots)

    def search(
        self, query: np.ndarray, k: int, exact: ExactVectors, hub_weight: float = HUB_WEIGHT
    ) -> Neighbours:
        """Top-k sections by their best snippet's exact cosine less `hub_weight` times its
        hubness (vectors are L2-normalised; hubness.py), plus the mean and spread of the
        query's cosine over the snippets (from the codes). Each match carries its exact cosine."""
        with self._lock:
            if not self._count:
                return NO_NEIGHBOURS
            slots, _ = self._top(query, RESCORE, hub_weight)
            ids, sections = self._ids[slots].tolist(), self._sections[slots].tolist()
            hubs = dict(zip(ids, self._hubs[slots].tolist(), strict=True))
            mean, spread = self._spread(query)
        vectors = exact(ids)  # a row deleted since the scan is left out
        kept = [(i, s) for i, s in zip(ids, sections, strict=True) if i in vectors]
        cosines = (np.stack([vectors[i] for i, _ in kept]) @ query).tolist() if kept else []
        # Equal scores (the same text in two notes): the older snippet first.
        ranked = sorted(
            zip(cosines, kept, strict=True),
            key=lambda row: (hub_weight * hubs[row[1][0]] - row[0], row[1][0]),
        )
        best: dict[int, Match] = {}
        for cosine, (snippet_id, section_id) in ranked[: k * SNIPPETS_PER_SECTION]:
            best.setdefault(section_id, Match(section_id, cosine, snippet_id, hubs[snippet_id]))
        return Neighbours(list(best.values())[:k], mean, spread)

    def best_cosines(
        self, queries: np.ndarray, exact: ExactVectors | None = None, candidates: int = 8
    ) -> np.ndarray:
        """Each query's best cosine over every snippet: exact from its best `candidates` by
        code when `exact` is given, else the codes' own (within ~0.002). The lock is taken
        per query, so searches wait for one scan at most."""
        best = np.full(len(queries), -2.0, dtype=np.float32)
        for n, query in enumerate(queries):
            with self._lock:
                if not self._count:
                    return best
                slots, scores = self._top(query, candidates, hub_weight=0.0)
                ids = self._ids[slots].tolist()
            if exact is None:
                best[n] = float(scores.max())
            elif found := exact(ids):
                best[n] = max(float(vector @ query) for vector in found.values())
        return best

    def _top(
        self, query: np.ndarray, count: int, hub_weight: float = HUB_WEIGHT
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `count` slots of the highest approximate cosine with the query less `hub_weight`
        times their hubness, and those scores (free slots score -2), a block of SCAN_BLOCK
        slots at a time (the lock held).
        A block's rows below the `count`-th best score so far cannot make the top: only the
        others are kept and selected (selecting in every whole block took 9 ms a search at
        844,023 snippets, a third of the scan; the result is the same)."""
        slots, scores = np.empty(0, np.int64), np.empty(0)
        floor = -np.inf
        for start in range(0, self._used, SCAN_BLOCK):
            end = min(start + SCAN_BLOCK, self._used)
            block = _cosines(query, self._codes[start:end])
            if hub_weight:
                block -= hub_weight * self._hubs[start:end]
            block[self._ids[start:end] < 0] = -2.0
            kept = np.flatnonzero(block >= floor)
            slots = np.concatenate([slots, kept + start])
            scores = np.concatenate([scores, block[kept]])
            if len(scores) > 2 * count:
                best = _best(scores, count)
                slots, scores = slots[best], scores[best]
                floor = float(scores.min())
        best = _best(scores, count)
        return slots[best], scores[best]

    def _spread(self, query: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the query's cosine over the live rows: exact from
        the floats up to SAMPLE_ROWS slots, else from evenly spaced rows' codes."""
        if self._used <= SAMPLE_ROWS:
            scores = (self._floats[: self._used] @ query)[self._ids[: self._used] >= 0]
        else:
            stride = -(-self._used // SAMPLE_ROWS)
            live = self._ids[: self._used : stride] >= 0
            # simsimd reads the strided rows in place: no 6 MiB copy a search.
            scores = _cosines(query, self._codes[: self._used : stride], passes=2)[live]
        spread = float(scores.std()) if len(scores) > 1 else 1.0
        return float(scores.mean()), spread or 1.0

    def _drop_floats(self) -> None:
        """Past SAMPLE_ROWS slots the spread comes from the codes (and `_used` never shrinks):
        the floats are let go (24 MiB)."""
        if self._used > SAMPLE_ROWS and len(self._floats):
            self._floats = self._floats[:0].copy()

    def _grow(self) -> int:
        if self._used == len(self._ids):
            self._resize(2 * len(self._ids))
        self._used += 1
        return self._used - 1

    def _resize(self, rows: int) -> None:
        extra = rows - len(self._ids)
        self._codes = np.concatenate([self._codes, np.zeros((extra, self.dim), np.int8)])
        self._ids = np.concatenate([self._ids, np.full(extra, -1, dtype=np.int64)])
        self._sections = np.concatenate([self._sections, np.full(extra, -1, dtype=np.int64)])
        self._hubs = np.concatenate([self._hubs, np.zeros(extra, dtype=np.float32)])
        self._measured = np.concatenate([self._measured, np.zeros(extra, dtype=bool)])
