"""In-process measurements: the embedder alone, the demo build, re-syncs, re-opening an index,
and where the time of one search goes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
from pydantic import SecretStr

from trilium_recall.classify import Rules
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.embed import E5Embedder
from trilium_recall.search import (
    KEYWORD_K,
    VECTOR_K,
    distinctive_terms,
    fts_query,
    matched_terms,
    prompt_terms,
    search,
)
from trilium_recall.standin import FakeTrilium
from trilium_recall.store import Store
from trilium_recall.sync import EMBED_BATCH, Syncer
from trilium_recall.trilium import TriliumClient

T = TypeVar("T")
INSTANCE = "default"  # the name `trilium-recall serve` gives a single TRILIUM_URL instance


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def bench_settings(data_dir: Path, url: str, token: str) -> Settings:
    instance = Instance(INSTANCE, url, SecretStr(token))
    return load_settings({"RECALL_DATA_DIR": str(data_dir)}, instances={INSTANCE: instance})


# -- 1. the embedder alone ------------------------------------------------------------------


@dataclass
class Rate:
    count: int
    per_s: float  # wall clock
    cpu_ms_each: float  # process CPU per passage: what a busy neighbour cannot inflate


@dataclass
class EmbedderNumbers:
    load_ms: float
    packed: Rate  # ~250-token passages, batches of 8
    demo: Rate  # the demo's own sections, exactly what the build embeds
    query_ms: list[float]
    query_cpu_ms: list[float]


def passage_rate(embedder: E5Embedder, texts: Sequence[str]) -> Rate:
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), EMBED_BATCH):
        embedder.passages(texts[start : start + EMBED_BATCH])
    cpu_ms = (time.process_time() - cpu) * 1000
    return Rate(len(texts), len(texts) / (time.perf_counter() - wall), cpu_ms / len(texts))


def bench_embedder(
    packed: Sequence[str], demo: Sequence[str], prompts: Sequence[str], queries: int
) -> tuple[E5Embedder, EmbedderNumbers]:
    started = time.perf_counter()
    embedder = E5Embedder()
    load_ms = ms_since(started)
    embedder.passages(packed[:EMBED_BATCH])  # warm-up, not counted
    embedder.query(prompts[0])
    packed_rate = passage_rate(embedder, packed)
    demo_rate = passage_rate(embedder, demo)
    query_ms, query_cpu_ms = [], []
    for i in range(queries):
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.query(prompts[i % len(prompts)])
        query_ms.append(ms_since(wall))
        query_cpu_ms.append((time.process_time() - cpu) * 1000)
    return embedder, EmbedderNumbers(load_ms, packed_rate, demo_rate, query_ms, query_cpu_ms)


# -- 2, 3. build and re-syncs ----------------------------------------------------------------


class TimedEmbedder:
    """The real embedder, with the wall time spent inside `passages` added up: the build's
    embedding share measured in the same seconds as the build, whatever else the machine does."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.passage_s = 0.0

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.passages(texts)
        finally:
            self.passage_s += time.perf_counter() - started

    def query(self, text: str) -> np.ndarray:
        return self.inner.query(text)


@dataclass
class Run:
    ms: float
    requests: int
    listed: int


@dataclass
class SyncNumbers:
    build_s: float
    build_cpu_s: float  # this process: syncer, embedder and the in-process fake Trilium
    build_requests: int
    build_embed_s: float  # wall time inside embedder.passages during the build
    notes: int
    sections: int
    skipped: int
    embedded: int
    fulls: list[Run] = field(default_factory=list)
    ticks: list[Run] = field(default_factory=list)


async def _timed_run(fake: FakeTrilium, run: object) -> tuple[Run, object]:
    before = len(fake.requests)
    started = time.perf_counter()
    report = await run  # type: ignore[misc]
    return Run(ms_since(started), len(fake.requests) - before, report.listed), report


async def bench_sync(
    db_path: Path, fake: FakeTrilium, token: str, embedder: E5Embedder, repeats: int
) -> SyncNumbers:
    """First full build of the demo notebook, then full comparisons and ticks with no change."""
    settings = bench_settings(db_path.parent, fake.url(), token)
    store = Store(db_path)
    client = TriliumClient(fake.url(), token)
    timed = TimedEmbedder(embedder)
    syncer = Syncer(
        settings.instances[INSTANCE], client, store, timed, Rules.from_settings(settings)
    )
    try:
        cpu = time.process_time()
        build, report = await _timed_run(fake, syncer.full())
        build_cpu_s = time.process_time() - cpu
        counts = store.counts(INSTANCE)
        numbers = SyncNumbers(
            build.ms / 1000,
            build_cpu_s,
            build.requests,
            timed.passage_s,
            int(counts["notes"]),
            int(counts["sections"]),
            report.skipped,  # type: ignore[attr-defined]
            syncer.status.embedded,
        )
        for _ in range(repeats):
            numbers.fulls.append((await _timed_run(fake, syncer.full()))[0])
        for _ in range(repeats):
            numbers.ticks.append((await _timed_run(fake, syncer.tick()))[0])
        return numbers
    finally:
        await client.aclose()
        store.close()


# -- 4. re-opening an existing index -----------------------------------------------------------


@dataclass
class ReopenNumbers:
    open_ms: float
    load_vectors_ms: float
    vectors: int
    embedder_ms: float

    @property
    def total_ms(self) -> float:
        return self.open_ms + self.load_vectors_ms + self.embedder_ms


def bench_reopen(db_path: Path, with_embedder: bool = True) -> ReopenNumbers:
    """What Engine.__init__ does before it can answer: open + migrate, fill the vector mirror,
    load the model."""
    started = time.perf_counter()
    store = Store(db_path)
    open_ms = ms_since(started)
    started = time.perf_counter()
    vectors = store.load_vectors()
    load_ms = ms_since(started)
    store.close()
    embedder_ms = 0.0
    if with_embedder:
        started = time.perf_counter()
        E5Embedder()
        embedder_ms = ms_since(started)
    return ReopenNumbers(open_ms, load_ms, vectors, embedder_ms)


# -- where one search spends its time ---------------------------------------------------------


STAGE_NAMES = ("idf", "keyword", "embed", "vector", "section_hits", "matched_terms", "search")


@dataclass
class Stages:
    """Per prompt, (wall ms, process CPU ms) of each step of search() timed on its own, plus
    search() whole. CPU time is what another busy process on the machine cannot inflate."""

    times: dict[str, list[tuple[float, float]]] = field(
        default_factory=lambda: {name: [] for name in STAGE_NAMES}
    )
    keyword_hits: list[int] = field(default_factory=list)

    def wall(self, name: str) -> list[float]:
        return [w for w, _ in self.times[name]]

    def cpu(self, name: str) -> list[float]:
        return [c for _, c in self.times[name]]


def bench_stages(
    db_path: Path, embedder: E5Embedder, prompts: Sequence[str], rounds: int
) -> Stages:
    settings = bench_settings(db_path.parent, "http://127.0.0.1:9", "unused")
    store = Store(db_path)
    store.load_vectors()
    stages = Stages()
    try:
        search(store, embedder, settings, prompts[0])  # warm caches
        for _ in range(rounds):
            for prompt in prompts:
                _one_prompt(store, embedder, settings, prompt, stages)
    finally:
        store.close()
    return stages


def _timed(stages: Stages, name: str, run: Callable[[], T]) -> T:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    stages.times[name].append(
        ((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000)
    )
    return result


def _one_prompt(
    store: Store, embedder: E5Embedder, settings: Settings, prompt: str, stages: Stages
) -> None:
    terms = prompt_terms(prompt)
    total, counts = _timed(stages, "idf", lambda: store.term_document_counts(terms))
    match = fts_query(distinctive_terms(terms, counts, total))
    keyword = _timed(
        stages, "keyword", lambda: store.keyword_search(match, KEYWORD_K) if terms else []
    )
    stages.keyword_hits.append(len(keyword))
    query = _timed(stages, "embed", lambda: embedder.query(prompt))
    neighbours = _timed(stages, "vector", lambda: store.vectors.search(query, VECTOR_K))
    ids = list(dict.fromkeys([i for i, _ in keyword] + [i for i, _ in neighbours.hits]))
    hits = _timed(stages, "section_hits", lambda: store.section_hits(ids))
    _timed(stages, "matched_terms", lambda: [matched_terms(terms, h) for h in hits.values()])
    _timed(stages, "search", lambda: search(store, embedder, settings, prompt))


def run_sync(coro: object) -> SyncNumbers:
    return asyncio.run(coro)  # type: ignore[arg-type]
