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
from dataclasses import dataclass, field, replace

import numpy as np

from .config import Settings
from .embed import Embedder
from .gate import (
    FITTED,
    CandidateSignals,
    GateThresholds,
    PromptSignals,
    PromptVerdict,
    judge_candidates,
    judge_prompt,
)
from .generic import GenericMatch, GenericPrompts
from .store import SectionHit, Store
from .tokens import fts_query, matched_terms, prompt_terms
from .vectors import NO_NEIGHBOURS, Match, Neighbours

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
# A source keeps its own place only when its section beats its summary's by this much cosine:
# e5 similarities sit in a narrow band, so small gaps are noise.
SOURCE_DETAIL_MARGIN = 0.02
EXCERPT_CHARS = 1200


@dataclass(frozen=True)
class KeywordHits:
    """The keyword side: prompt terms, their IDF, the FTS5 query and its ranked sections."""

    terms: list[str]
    idf: dict[str, float]
    fts_query: str
    hits: list[tuple[int, float]]  # (section id, bm25), best first

    def coverage(self, terms: Sequence[str]) -> float:
        """Share of the prompt's IDF weight that `terms` carry."""
        return sum(self.idf[t] for t in terms) / (sum(self.idf.values()) or 1.0)


NO_KEYWORDS = KeywordHits([], {}, "", [])
NO_GENERIC = GenericMatch(-1.0, "")


@dataclass(frozen=True)
class Candidate:
    """One note's best section on its way through the pipeline (also what `explain` prints)."""

    hit: SectionHit
    keyword_rank: int | None
    meaning_rank: int | None
    cosine: float  # of the section's best snippet
    snippet_id: int | None
    matched_terms: tuple[str, ...]
    coverage: float
    fused: float
    weight: float
    score: float
    passed: bool = False
    reason: str = ""
    stands_for: str | None = None  # note id of the source this summary stands in for

    @property
    def key(self) -> tuple[str, str]:
        return (self.hit.instance, self.hit.note_id)

    def signals(self) -> CandidateSignals:
        return CandidateSignals(self.cosine, self.coverage, len(self.matched_terms))

    def to_json(self) -> dict[str, object]:
        return {
            "note_id": self.hit.note_id,
            "title": self.hit.title,
            "heading": self.hit.heading,
            "area": self.hit.area,
            "keyword_rank": self.keyword_rank,
            "meaning_rank": self.meaning_rank,
            "cosine": round(self.cosine, 4),
            "matched_terms": list(self.matched_terms),
            "coverage": round(self.coverage, 2),
            "fused": round(self.fused, 5),
            "area_weight": self.weight,
            "score": round(self.score, 5),
            "passed": self.passed,
            "why": self.reason,
            "stands_for": self.stands_for,
        }


@dataclass
class SearchTrace:
    keyword: KeywordHits = NO_KEYWORDS
    neighbours: Neighbours = NO_NEIGHBOURS
    generic: GenericMatch = NO_GENERIC
    signals: PromptSignals | None = None
    verdict: PromptVerdict | None = None
    candidates: list[Candidate] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)
    keyword_ms: float = 0.0
    embed_ms: float = 0.0
    total_ms: float = 0.0

    def to_json(self, top: int = 10) -> dict[str, object]:
        """What `explain` shows: each step's inputs, the prompt decision, each candidate's."""
        signals = self.signals
        return {
            "terms": self.keyword.terms,
            "idf": {term: round(weight, 2) for term, weight in self.keyword.idf.items()},
            "fts_query": self.keyword.fts_query,
            "keyword_hits": len(self.keyword.hits),
            "meaning_hits": len(self.neighbours.hits),
            "cosine_mean": round(self.neighbours.mean, 4),
            "cosine_std": round(self.neighbours.std, 4),
            "closest_generic_prompt": self.generic.prompt,
            "generic_cosine": round(self.generic.cosine, 4),
            "prompt": None
            if signals is None or self.verdict is None
            else {
                "top_cosine": round(signals.top_cosine, 4),
                "generic_offset": round(signals.offset, 4),
                "margin": round(signals.margin, 4),
                "agreement": round(signals.agreement, 3),
                "coverage": round(signals.coverage, 3),
                "terms": signals.terms,
                "zscore": round(signals.zscore, 2),
                "score": round(self.verdict.score, 3),
                "parts": {k: round(v, 3) for k, v in self.verdict.parts.items()},
                "about_notes": self.verdict.about_notes,
                "why": self.verdict.reason,
            },
            "keyword_ms": round(self.keyword_ms, 1),
            "embed_ms": round(self.embed_ms, 1),
            "search_ms": round(self.total_ms, 1),
            "candidates": [c.to_json() for c in self.candidates[:top]],
            "substitutions": self.substitutions,
        }


@dataclass(frozen=True)
class SearchResult:
    passages: list[Candidate]
    trace: SearchTrace


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
    started = time.perf_counter()
    trace = SearchTrace(keyword=keyword_hits(store, prompt))
    trace.keyword_ms = (time.perf_counter() - started) * 1000
    embedding_started = time.perf_counter()
    query_vector = embedder.query(prompt)
    trace.embed_ms = (time.perf_counter() - embedding_started) * 1000
    trace.neighbours = meaning_hits(store, query_vector)
    trace.generic = generic.closest(query_vector)
    candidates = fuse(store, settings, trace.keyword, trace.neighbours, query_vector, instance)
    candidates = _judge(candidates, trace, generic.offset, gate or gate_thresholds(settings))
    trace.candidates = candidates
    chosen = _summaries_for_sources(store, settings, query_vector, candidates, trace)
    trace.total_ms = (time.perf_counter() - started) * 1000
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
    offset: float,
) -> PromptSignals:
    top = max(candidates, key=lambda c: c.cosine, default=None)
    strongest = max(candidates, key=lambda c: c.coverage, default=None)
    top_cosine = top.cosine if top else -1.0
    return PromptSignals(
        top_cosine=top_cosine,
        generic_cosine=generic.cosine,
        generic_prompt=generic.prompt,
        offset=offset,
        agreement=top.coverage if top else 0.0,
        coverage=strongest.coverage if strongest else 0.0,
        terms=len(strongest.matched_terms) if strongest else 0,
        zscore=neighbours.zscore(top_cosine) if top else 0.0,
    )


def _judge(
    candidates: list[Candidate], trace: SearchTrace, offset: float, gate: GateThresholds
) -> list[Candidate]:
    trace.signals = prompt_signals(candidates, trace.neighbours, trace.generic, offset)
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


def _summaries_for_sources(
    store: Store,
    settings: Settings,
    query_vector: np.ndarray,
    candidates: list[Candidate],
    trace: SearchTrace,
) -> list[Candidate]:
    """A passing source hit is shown as its wiki summary unless it holds the detail itself."""
    by_note = {c.key: c for c in candidates}
    result: list[Candidate] = []
    for candidate in candidates:
        hit = candidate.hit
        summary = None
        if candidate.passed and hit.area == "sources":
            summaries = store.linked_from(hit.instance, [hit.note_id], settings.summary_relations)
            summary_ids = summaries.get(hit.note_id, [])
            if summary_ids:
                summary = _best_summary(store, query_vector, hit.instance, summary_ids, by_note)
        if summary is None:
            result.append(candidate)
            continue
        summary_hit, match = summary
        if candidate.cosine - match.cosine > SOURCE_DETAIL_MARGIN:
            trace.substitutions.append(
                f"{hit.title}: kept the source (cosine {candidate.cosine:.3f} > summary "
                f"{match.cosine:.3f} + {SOURCE_DETAIL_MARGIN}); it ranks as wiki"
            )
            # It holds the detail its summary lacks: rank it as the wiki would rank it.
            wiki = settings.area_weights["wiki"]
            result.append(replace(candidate, weight=wiki, score=candidate.fused * wiki))
            continue
        trace.substitutions.append(f"{hit.title}: shown as its summary {summary_hit.title}")
        result.append(
            replace(
                candidate,
                hit=summary_hit,
                cosine=match.cosine,
                snippet_id=match.snippet_id,
                stands_for=hit.note_id,
            )
        )
    return _dedupe(result)


def _best_summary(
    store: Store,
    query_vector: np.ndarray,
    instance: str,
    note_ids: Sequence[str],
    by_note: dict[tuple[str, str], Candidate],
) -> tuple[SectionHit, Match] | None:
    """The summaries' section closest to the query, if it is a wiki page."""
    section_ids = store.section_ids_of(instance, note_ids)
    matches = store.vectors.best_snippets(section_ids, query_vector)
    if not matches:
        return None
    match = max(matches.values(), key=lambda m: m.cosine)
    hit = store.section_hits([match.section_id]).get(match.section_id)
    if hit is None or hit.area != "wiki":
        return None
    known = by_note.get((instance, hit.note_id))
    if known is not None and known.snippet_id is not None and known.cosine > match.cosine:
        return known.hit, Match(known.hit.section_id, known.cosine, known.snippet_id)
    return hit, match


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for candidate in sorted(candidates, key=lambda c: (not c.passed, -c.score)):
        if candidate.key not in seen:
            seen.add(candidate.key)
            unique.append(candidate)
    return unique


def excerpt(text: str, limit: int = EXCERPT_CHARS, around: tuple[int, int] | None = None) -> str:
    """At most `limit` characters, cut at sentence or word boundaries; when `around` (a span of
    the text) is given, the excerpt keeps that span — the snippet that matched the prompt."""
    if len(text) <= limit:
        return text
    start = 0
    if around is not None and around[1] > limit:
        start = max(0, min(around[0] - limit // 4, len(text) - limit))
        boundary = max(text.rfind(". ", 0, start + 1), text.rfind("\n", 0, start + 1))
        start = boundary + 1 if boundary >= 0 and start - boundary < limit // 4 else start
    head = text[start : start + limit]
    cut = max(head.rfind(". "), head.rfind("\n"))
    if cut < limit // 2:
        cut = head.rfind(" ")
    body = head[: cut + 1 if cut > 0 else limit].strip()
    return ("… " if start > 0 else "") + body + (" …" if start + len(head) < len(text) else "")
