"""Hybrid search: keyword hits ∥ meaning hits → RRF → area weight → best section per note →
the gate (gate.py) → summary stands in for source.

Plain functions over a `Store`, an `Embedder` and the generic-prompt bank; /recall, MCP, the CLI
and the eval script all call `search()`. `SearchTrace` records every step so `explain` can show
why recall spoke or stayed silent.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .calibration import Reference
from .candidates import NO_KEYWORDS, Candidate, KeywordHits, SearchResult, SearchTrace
from .config import Settings
from .embed import Embedder
from .gate import FITTED, GateThresholds, PromptSignals, judge_candidates, judge_prompt
from .generic import GenericMatch, GenericPrompts
from .languages import is_foreign, prompt_language
from .store import Store
from .summary import summaries_for_sources
from .tokens import fts_query, matched_terms, prompt_terms
from .vectors import Neighbours

KEYWORD_K = 40
MEANING_K = 40
# Fusion by rank, not raw bm25/cosine scales. k = 5 and meaning counted twice: the usual k = 60
# flattens the top ranks so much that a weak hub page listed by both sides beat the note one
# side ranked first (hit@1 0.64 → 0.91 on the notebook; the same choice was best or within
# 0.01 on each of the three eval corpora, eval/RESULTS.md).
RRF_K = 5
KEYWORD_WEIGHT = 1.0
MEANING_WEIGHT = 2.0
COMMON_TERM_SHARE = 0.1  # a term in more than this share of sections is left out of MATCH
MIN_QUERY_TERMS = 2


def gate_thresholds(settings: Settings) -> GateThresholds:
    """The fitted gate, shifted by the user's RECALL_GATE_STRICTNESS."""
    return FITTED.with_strictness(settings.gate_strictness)


def keyword_hits(store: Store, prompt: str, k: int = KEYWORD_K) -> KeywordHits:
    """Prompt terms, their IDF over the index, and FTS5's best sections for the rare ones."""
    terms = prompt_terms(prompt)
    if not terms:
        return NO_KEYWORDS
    total, counts = store.term_document_counts(terms)
    idf = {t: math.log((total + 1) / (counts[t] + 0.5)) for t in terms}
    query = fts_query(distinctive_terms(terms, counts, total))
    return KeywordHits(terms, idf, query, store.keyword_search(query, k))


def meaning_hits(store: Store, query_vector: np.ndarray, k: int = MEANING_K) -> Neighbours:
    """The sections whose best snippets are closest to the query vector."""
    return store.vectors.search(query_vector, k)


def search(
    store: Store,
    embedder: Embedder,
    generic: GenericPrompts,
    settings: Settings,
    prompt: str,
    *,
    gate: GateThresholds | None = None,
    limit: int = 3,
    instance: str | None = None,
    exclude: frozenset[tuple[str, str]] = frozenset(),
) -> SearchResult:
    """Steps: keyword hits ∥ query vector → meaning hits → RRF → area weight → best section per
    note → prompt decision → candidate decisions → summary stands in for source → top `limit`
    not already sent (`exclude`)."""
    gathered = gather(store, embedder, generic, settings, prompt, instance)
    return decide(store, settings, gathered, gate or gate_thresholds(settings), limit, exclude)


@dataclass(frozen=True)
class Gathered:
    """Everything search knows before the gate decides: the same for every gate setting."""

    candidates: list[Candidate]
    trace: SearchTrace
    query_vector: np.ndarray
    started: float


def gather(
    store: Store,
    embedder: Embedder,
    generic: GenericPrompts,
    settings: Settings,
    prompt: str,
    instance: str | None = None,
) -> Gathered:
    """Keyword hits ∥ query vector → meaning hits → RRF → area weight → best section per note."""
    started = time.perf_counter()
    trace = SearchTrace(keyword=keyword_hits(store, prompt), reference=generic.reference)
    trace.language = prompt_language(prompt)
    trace.foreign = is_foreign(trace.language, generic.reference.languages)
    trace.keyword_ms = (time.perf_counter() - started) * 1000
    embedding_started = time.perf_counter()
    query_vector = embedder.query(prompt)
    trace.embed_ms = (time.perf_counter() - embedding_started) * 1000
    trace.neighbours = meaning_hits(store, query_vector)
    trace.generic = generic.closest(query_vector)
    candidates = fuse(store, settings, trace.keyword, trace.neighbours, query_vector, instance)
    return Gathered(candidates, trace, query_vector, started)


def decide(
    store: Store,
    settings: Settings,
    gathered: Gathered,
    gate: GateThresholds,
    limit: int = 3,
    exclude: frozenset[tuple[str, str]] = frozenset(),
) -> SearchResult:
    """Prompt decision → candidate decisions → summary stands in for source → top `limit`."""
    trace = replace(gathered.trace, substitutions=[])
    candidates = _judge(gathered.candidates, trace, gate)
    trace.candidates = candidates
    chosen = summaries_for_sources(store, settings, gathered.query_vector, candidates, trace)
    trace.total_ms = (time.perf_counter() - gathered.started) * 1000
    passages = [c for c in chosen if c.passed and c.key not in exclude]
    return SearchResult(passages[:limit], trace)


def fuse(
    store: Store,
    settings: Settings,
    keyword: KeywordHits,
    neighbours: Neighbours,
    query_vector: np.ndarray,
    instance: str | None = None,
) -> list[Candidate]:
    """RRF of both rankings times the area weight; each note's best section, best first."""
    keyword_ids = [section_id for section_id, _ in keyword.hits]
    meaning_ids = [match.section_id for match in neighbours.hits]
    fused = rrf([(keyword_ids, KEYWORD_WEIGHT), (meaning_ids, MEANING_WEIGHT)])
    hits = store.section_hits(list(fused))
    matches = {match.section_id: match for match in neighbours.hits}
    matches |= store.vectors.best_snippets([i for i in fused if i not in matches], query_vector)
    keyword_rank = {section_id: rank for rank, section_id in enumerate(keyword_ids, start=1)}
    meaning_rank = {section_id: rank for rank, section_id in enumerate(meaning_ids, start=1)}
    best: dict[tuple[str, str], Candidate] = {}
    for section_id, fused_score in fused.items():
        hit = hits.get(section_id)
        if hit is None or hit.instance not in settings.instances:
            continue  # left over from an instance no longer configured
        if instance and hit.instance != instance:
            continue
        match = matches.get(section_id)
        terms = matched_terms(keyword.terms, hit.title, hit.heading, hit.text)
        weight = settings.area_weights[hit.area]
        candidate = Candidate(
            hit=hit,
            keyword_rank=keyword_rank.get(section_id),
            meaning_rank=meaning_rank.get(section_id),
            cosine=match.cosine if match else -1.0,
            snippet_id=match.snippet_id if match else None,
            matched_terms=terms,
            coverage=keyword.coverage(terms),
            fused=fused_score,
            weight=weight,
            score=fused_score * weight,
        )
        if candidate.key not in best or candidate.score > best[candidate.key].score:
            best[candidate.key] = candidate
    return sorted(best.values(), key=lambda c: -c.score)


def prompt_signals(
    candidates: Sequence[Candidate],
    neighbours: Neighbours,
    generic: GenericMatch,
    reference: Reference,
    foreign: bool = False,
) -> PromptSignals:
    top = max(candidates, key=lambda c: c.cosine, default=None)
    strongest = max(candidates, key=lambda c: c.coverage, default=None)
    top_cosine = top.cosine if top else -1.0
    return PromptSignals(
        top_cosine=top_cosine,
        generic_cosine=generic.cosine,
        generic_prompt=generic.prompt,
        offset=reference.generic_level,
        agreement=top.coverage if top else 0.0,
        coverage=strongest.coverage if strongest else 0.0,
        terms=len(strongest.matched_terms) if strongest else 0,
        zscore=neighbours.zscore(top_cosine) if top else 0.0,
        foreign=foreign,
        spread=reference.spread,
    )


def _judge(
    candidates: list[Candidate], trace: SearchTrace, gate: GateThresholds
) -> list[Candidate]:
    trace.signals = prompt_signals(
        candidates, trace.neighbours, trace.generic, trace.reference, trace.foreign
    )
    trace.verdict = judge_prompt(trace.signals, gate)
    verdicts = judge_candidates([c.signals() for c in candidates], trace.verdict, gate)
    judged = [
        replace(c, passed=passed, reason=reason)
        for c, (passed, reason) in zip(candidates, verdicts, strict=True)
    ]
    return sorted(judged, key=lambda c: (not c.passed, -c.score))


def rrf(rankings: Iterable[tuple[Sequence[int], float]], k: int = RRF_K) -> dict[int, float]:
    """Weighted reciprocal rank fusion: Σ weight / (k + rank), rank starting at 1."""
    fused: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def distinctive_terms(terms: Sequence[str], counts: dict[str, int], total: int) -> list[str]:
    """The terms worth a keyword query: common ones add little to bm25 but make FTS5 rank
    most of the index (measured 18 ms → 1.6 ms at 50k sections). Keeps the rarest few always."""
    rare = [t for t in terms if counts[t] <= COMMON_TERM_SHARE * total]
    return (
        rare
        if len(rare) >= MIN_QUERY_TERMS
        else sorted(terms, key=counts.__getitem__)[:MIN_QUERY_TERMS]
    )
