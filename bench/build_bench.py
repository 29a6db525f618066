"""In-process measurements: the embedder alone, the first build of real exports against the raw
model on the same texts, re-syncs, re-opening an index, and where the time of one search goes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from corpus import sorted_batches
from pydantic import SecretStr

from standin_faults import FaultyTrilium
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.index.embed import E5Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.terms import matched_terms
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.search.hybrid import KEYWORD_WEIGHT, MEANING_WEIGHT, search
from trilium_recall.search.null_bank import GenericPrompts
from trilium_recall.search.rankings import KEYWORD_K, MEANING_K, keyword_hits, meaning_hits, rrf
from trilium_recall.sync.run_status import RunReport
from trilium_recall.sync.syncer import EMBED_BATCH, Syncer
from trilium_recall.trilium.client import TriliumClient

T = TypeVar("T")
INSTANCE = "default"  # the name `trilium-recall serve` gives a single TRILIUM_URL instance


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def bench_settings(data_dir: Path, url: str, token: str) -> Settings:
    instance = Instance(INSTANCE, url, SecretStr(token))
    return load_settings({"RECALL_DATA_DIR": str(data_dir)}, instances={INSTANCE: instance})


def fresh_embedder() -> tuple[E5Embedder, float]:
    """A new E5Embedder (its own model thread), warmed by one query and one passage batch so
    neither side of a comparison pays the first call; and its load time in ms."""
    started = time.perf_counter()
    embedder = E5Embedder()
    load_ms = ms_since(started)
    embedder.query("warm up")
    embedder.passages(["warm up"] * EMBED_BATCH)
    return embedder, load_ms


# -- 1. the embedder alone ------------------------------------------------------------------


@dataclass
class Rate:
    count: int
    seconds: float  # wall clock
    cpu_s: float  # process CPU: what a busy neighbour cannot inflate

    @property
    def per_s(self) -> float:
        return self.count / self.seconds

    @property
    def cpu_ms_each(self) -> float:
        return self.cpu_s * 1000 / self.count


def passage_rate(embedder: E5Embedder, batches: Sequence[Sequence[str]]) -> Rate:
    wall, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        embedder.passages(batch)
    count = sum(len(b) for b in batches)
    return Rate(count, time.perf_counter() - wall, time.process_time() - cpu)


@dataclass
class EmbedderNumbers:
    load_ms: float
    packed: Rate  # ~250-token passages, batches of 8
    snippets: Rate  # the demo notebook's snippets in length-sorted batches of 8
    query_ms: list[float]
    query_cpu_ms: list[float]


def query_times(
    embedder: E5Embedder, prompts: Sequence[str], count: int
) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of `count` E5Embedder.query calls, prompts cycling."""
    wall_ms, cpu_ms = [], []
    for i in range(count):
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.query(prompts[i % len(prompts)])
        wall_ms.append(ms_since(wall))
        cpu_ms.append((time.process_time() - cpu) * 1000)
    return wall_ms, cpu_ms


def bench_embedder(
    packed: list[str], snippets: list[str], prompts: Sequence[str], queries: int
) -> EmbedderNumbers:
    embedder, load_ms = fresh_embedder()
    try:
        packed_batches = [packed[i : i + EMBED_BATCH] for i in range(0, len(packed), EMBED_BATCH)]
        packed_rate = passage_rate(embedder, packed_batches)
        snippet_rate = passage_rate(embedder, sorted_batches(snippets, EMBED_BATCH))
        query_ms, query_cpu_ms = query_times(embedder, prompts, queries)
    finally:
        embedder.close()
    return EmbedderNumbers(load_ms, packed_rate, snippet_rate, query_ms, query_cpu_ms)


# -- 2, 3. first build, raw baseline, re-syncs -------------------------------------------------


class RecordingEmbedder:
    """The real embedder, keeping every passage text it is given and the wall time spent inside
    `passages`: the build's embedding share measured in the same seconds as the build, and
    exactly the texts the raw baseline must embed."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.texts: list[str] = []
        self.passage_s = 0.0

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.passages(texts)
        finally:
            self.passage_s += time.perf_counter() - started
            self.texts.extend(texts)

    def query(self, text: str) -> np.ndarray:
        return self.inner.query(text)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.queries(texts)


@dataclass
class Run:
    ms: float
    requests: int
    listed: int


@dataclass
class BuildNumbers:
    build_s: float
    build_cpu_s: float  # this process: syncer, embedder and the in-process fake Trilium
    build_requests: int
    embed_s: float  # wall time inside embedder.passages during the build
    texts: list[str]  # every snippet text the build embedded, in order
    notes: int
    sections: int
    skipped: int
    raw: Rate | None = None  # a fresh E5Embedder on `texts` in sorted batches of 8
    fulls: list[Run] = field(default_factory=list)
    ticks: list[Run] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        assert self.raw is not None
        return self.build_s / self.raw.seconds


async def _timed_run(fake: FaultyTrilium, run: Coroutine[Any, Any, RunReport]) -> Run:
    before = len(fake.requests)
    started = time.perf_counter()
    report = await run
    return Run(ms_since(started), len(fake.requests) - before, report.listed)


async def _build(db_path: Path, fake: FaultyTrilium, token: str, repeats: int) -> BuildNumbers:
    settings = bench_settings(db_path.parent, fake.url(), token)
    embedder, _ = fresh_embedder()
    recording = RecordingEmbedder(embedder)
    store = Store(db_path, VectorIndex(embedder.dim))
    client = TriliumClient(fake.url(), token)
    syncer = Syncer(
        settings.instances[INSTANCE], client, store, recording, Rules.from_settings(settings)
    )
    try:
        before = len(fake.requests)
        wall, cpu = time.perf_counter(), time.process_time()
        report = await syncer.full()
        build_s, build_cpu_s = time.perf_counter() - wall, time.process_time() - cpu
        counts = store.counts(INSTANCE)
        numbers = BuildNumbers(
            build_s,
            build_cpu_s,
            len(fake.requests) - before,
            recording.passage_s,
            recording.texts,
            int(counts["notes"]),
            int(counts["sections"]),
            report.skipped,
        )
        for _ in range(repeats):
            numbers.fulls.append(await _timed_run(fake, syncer.full()))
        for _ in range(repeats):
            numbers.ticks.append(await _timed_run(fake, syncer.tick()))
        return numbers
    finally:
        await client.aclose()
        store.close()
        embedder.close()


def bench_build(db_path: Path, fake: FaultyTrilium, token: str, repeats: int) -> BuildNumbers:
    """First full build into an empty index (a fresh E5Embedder), full comparisons and ticks
    with nothing changed, then the raw baseline: another fresh E5Embedder on exactly the texts
    the build embedded, sorted by length in batches of 8."""
    numbers = asyncio.run(_build(db_path, fake, token, repeats))
    embedder, _ = fresh_embedder()
    try:
        numbers.raw = passage_rate(embedder, sorted_batches(numbers.texts, EMBED_BATCH))
    finally:
        embedder.close()
    return numbers


# -- 4. re-opening an existing index -----------------------------------------------------------


@dataclass
class ReopenNumbers:
    open_ms: float
    load_vectors_ms: float
    vectors: int
    embedder_ms: float
    generic_ms: float  # the generic-prompt bank read and calibrated against the index

    @property
    def total_ms(self) -> float:
        return self.open_ms + self.load_vectors_ms + self.embedder_ms + self.generic_ms


def bench_reopen(db_path: Path, with_embedder: bool = True) -> ReopenNumbers:
    """What Engine.__init__ and Engine.warm do before the first search can run: open +
    migrate, fill the vector mirror, load the model, read and calibrate the generic bank."""
    started = time.perf_counter()
    store = Store(db_path, VectorIndex(E5Embedder.dim))
    open_ms = ms_since(started)
    started = time.perf_counter()
    vectors = store.load_vectors()
    load_ms = ms_since(started)
    embedder_ms = generic_ms = 0.0
    if with_embedder:
        started = time.perf_counter()
        embedder = E5Embedder()
        embedder_ms = ms_since(started)
        started = time.perf_counter()
        GenericPrompts.load(embedder, store).calibrated(store.vectors)
        generic_ms = ms_since(started)
        embedder.close()
    store.close()
    return ReopenNumbers(open_ms, load_ms, vectors, embedder_ms, generic_ms)


# -- where one search spends its time ---------------------------------------------------------


STAGE_NAMES = (
    "keyword",
    "embed",
    "meaning",
    "generic",
    "section_hits",
    "best_snippets",
    "matched_terms",
    "search",
)


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
    store = Store(db_path, VectorIndex(embedder.dim))
    store.load_vectors()
    generic = GenericPrompts.load(embedder, store).calibrated(store.vectors)
    stages = Stages()
    try:
        search(store, embedder, generic, settings, prompts[0])  # warm caches
        for _ in range(rounds):
            for prompt in prompts:
                _one_prompt(store, embedder, generic, settings, prompt, stages)
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
    store: Store,
    embedder: E5Embedder,
    generic: GenericPrompts,
    settings: Settings,
    prompt: str,
    stages: Stages,
) -> None:
    """search()'s steps one by one, as search() and fuse() call them."""
    keyword = _timed(stages, "keyword", lambda: keyword_hits(store, prompt, KEYWORD_K))
    stages.keyword_hits.append(len(keyword.hits))
    query = _timed(stages, "embed", lambda: embedder.query(prompt))
    neighbours = _timed(stages, "meaning", lambda: meaning_hits(store, query, MEANING_K))
    _timed(stages, "generic", lambda: generic.closest(query))
    keyword_ids = [i for i, _ in keyword.hits]
    meaning_ids = [m.section_id for m in neighbours.hits]
    fused = rrf([(keyword_ids, KEYWORD_WEIGHT), (meaning_ids, MEANING_WEIGHT)])
    hits = _timed(stages, "section_hits", lambda: store.section_hits(list(fused)))
    ranked = set(meaning_ids)
    rest = [i for i in fused if i not in ranked]
    _timed(stages, "best_snippets", lambda: store.best_snippets(rest, query))
    _timed(
        stages,
        "matched_terms",
        lambda: [matched_terms(keyword.terms, h.title, h.heading, h.text) for h in hits.values()],
    )
    _timed(stages, "search", lambda: search(store, embedder, generic, settings, prompt))
