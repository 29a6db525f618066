"""In-process measurements: the embedder alone, the demo build, re-syncs, re-opening an index,
and where the time of one search goes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import SecretStr

from trilium_recall.classify import Rules
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.embed import E5Embedder
from trilium_recall.fake_trilium import FakeTrilium
from trilium_recall.search import KEYWORD_K, VECTOR_K, fts_query, idf_weights, prompt_terms, search
from trilium_recall.store import Store
from trilium_recall.sync import EMBED_BATCH, Syncer
from trilium_recall.trilium import TriliumClient

INSTANCE = "default"  # the name `trilium-recall serve` gives a single TRILIUM_URL instance


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def bench_settings(data_dir: Path, url: str, token: str) -> Settings:
    instance = Instance(INSTANCE, url, SecretStr(token))
    return load_settings({"RECALL_DATA_DIR": str(data_dir)}, instances={INSTANCE: instance})


# -- 1. the embedder alone ------------------------------------------------------------------


@dataclass
class EmbedderNumbers:
    load_ms: float
    packed_count: int
    packed_per_s: float  # ~250-token passages, batches of 8
    demo_count: int
    demo_per_s: float  # the demo's own sections, exactly what the build embeds
    query_ms: list[float]


def passages_per_second(embedder: E5Embedder, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), EMBED_BATCH):
        embedder.passages(texts[start : start + EMBED_BATCH])
    return len(texts) / (time.perf_counter() - started)


def bench_embedder(
    packed: Sequence[str], demo: Sequence[str], prompts: Sequence[str], queries: int
) -> tuple[E5Embedder, EmbedderNumbers]:
    started = time.perf_counter()
    embedder = E5Embedder()
    load_ms = ms_since(started)
    embedder.passages(packed[:EMBED_BATCH])  # warm-up, not counted
    embedder.query(prompts[0])
    packed_rate = passages_per_second(embedder, packed)
    demo_rate = passages_per_second(embedder, demo)
    query_ms = []
    for i in range(queries):
        started = time.perf_counter()
        embedder.query(prompts[i % len(prompts)])
        query_ms.append(ms_since(started))
    numbers = EmbedderNumbers(load_ms, len(packed), packed_rate, len(demo), demo_rate, query_ms)
    return embedder, numbers


# -- 2, 3. build and re-syncs ----------------------------------------------------------------


@dataclass
class Run:
    ms: float
    requests: int
    listed: int


@dataclass
class SyncNumbers:
    build_s: float
    build_requests: int
    notes: int
    sections: int
    skipped: int
    embedded: int
    fulls: list[Run] = field(default_factory=list)
    ticks: list[Run] = field(default_factory=list)


async def _timed(fake: FakeTrilium, run: object) -> tuple[Run, object]:
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
    syncer = Syncer(
        settings.instances[INSTANCE], client, store, embedder, Rules.from_settings(settings)
    )
    try:
        build, report = await _timed(fake, syncer.full())
        counts = store.counts(INSTANCE)
        numbers = SyncNumbers(
            build.ms / 1000,
            build.requests,
            int(counts["notes"]),
            int(counts["sections"]),
            report.skipped,  # type: ignore[attr-defined]
            syncer.status.embedded,
        )
        for _ in range(repeats):
            numbers.fulls.append((await _timed(fake, syncer.full()))[0])
        for _ in range(repeats):
            numbers.ticks.append((await _timed(fake, syncer.tick()))[0])
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


@dataclass
class Stages:
    """Per prompt, in ms: each step of search() timed on its own, plus search() whole."""

    idf: list[float] = field(default_factory=list)
    keyword: list[float] = field(default_factory=list)
    embed: list[float] = field(default_factory=list)
    vector: list[float] = field(default_factory=list)
    section_hits: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    keyword_hits: list[int] = field(default_factory=list)


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


def _one_prompt(
    store: Store, embedder: E5Embedder, settings: Settings, prompt: str, stages: Stages
) -> None:
    terms = prompt_terms(prompt)
    started = time.perf_counter()
    idf_weights(store, terms)
    stages.idf.append(ms_since(started))
    started = time.perf_counter()
    keyword = store.keyword_search(fts_query(terms), KEYWORD_K) if terms else []
    stages.keyword.append(ms_since(started))
    stages.keyword_hits.append(len(keyword))
    started = time.perf_counter()
    query = embedder.query(prompt)
    stages.embed.append(ms_since(started))
    started = time.perf_counter()
    neighbours = store.vectors.search(query, VECTOR_K)
    stages.vector.append(ms_since(started))
    ids = list(dict.fromkeys([i for i, _ in keyword] + [i for i, _ in neighbours.hits]))
    started = time.perf_counter()
    store.section_hits(ids)
    stages.section_hits.append(ms_since(started))
    started = time.perf_counter()
    search(store, embedder, settings, prompt)
    stages.search.append(ms_since(started))


def run_sync(coro: object) -> SyncNumbers:
    return asyncio.run(coro)  # type: ignore[arg-type]
