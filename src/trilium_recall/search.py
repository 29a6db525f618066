"""Hybrid search: keyword top-K + meaning top-K → RRF → area weight → gate → summary for source.

Plain functions over a `Store` and an `Embedder`; /recall, MCP, the CLI and the eval script all
call `search()`. `SearchTrace` records every step so `explain` can show why recall was silent.
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .config import Settings
from .embed import MAX_QUERY_CHARS, Embedder
from .store import SectionHit, Store
from .vectors import Neighbours

KEYWORD_K = 40
VECTOR_K = 40
RRF_K = 60  # the usual constant; fusion ranks matter, not raw bm25/cosine scales
MAX_TERMS = 24
COMMON_TERM_SHARE = 0.1  # a term in more than this share of sections is left out of MATCH
MIN_QUERY_TERMS = 2
# A source keeps its own place only when its section beats its summary's by this much cosine:
# e5 similarities sit in a narrow band, so small gaps are noise.
SOURCE_DETAIL_MARGIN = 0.02
EXCERPT_CHARS = 1200
# When meaning and keywords agree on a section, each may be weaker than alone (eval/RESULTS.md).
AGREE_FRACTION = 0.7
AGREE_Z_SLACK = 0.4
_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    what's where's how's i'm i've i'd let's please tell show give find know need want like get
    got use used using make way thing things something anything also again there's here's it's
    that's can't don't didn't doesn't isn't wasn't won't i'll we'll der die das und ist ein
    eine nicht mit wie was ich le la les de des et est un une pour el los las y en que por con
    para""".split()
)


@dataclass(frozen=True)
class Candidate:
    """One section's journey through the pipeline (also what `explain` prints)."""

    hit: SectionHit
    keyword_rank: int | None
    vector_rank: int | None
    cosine: float
    zscore: float
    matched_terms: tuple[str, ...]
    coverage: float
    fused: float
    weight: float
    score: float
    passed: bool
    reason: str
    stands_for: str | None = None  # note id of the source this summary stands in for

    def to_json(self) -> dict[str, object]:
        return {
            "note_id": self.hit.note_id,
            "title": self.hit.title,
            "heading": self.hit.heading,
            "area": self.hit.area,
            "keyword_rank": self.keyword_rank,
            "meaning_rank": self.vector_rank,
            "cosine": round(self.cosine, 4),
            "zscore": round(self.zscore, 2),
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
    terms: list[str] = field(default_factory=list)
    fts_query: str = ""
    idf: dict[str, float] = field(default_factory=dict)
    keyword: list[tuple[int, float]] = field(default_factory=list)
    vector: list[tuple[int, float]] = field(default_factory=list)
    neighbours: Neighbours = field(default_factory=lambda: Neighbours([], 0.0, 1.0))
    candidates: list[Candidate] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)
    keyword_ms: float = 0.0
    embed_ms: float = 0.0
    total_ms: float = 0.0

    def to_json(self, top: int = 10) -> dict[str, object]:
        """What `explain` shows: each step's inputs and the gate's reason per note."""
        return {
            "terms": self.terms,
            "idf": {term: round(weight, 2) for term, weight in self.idf.items()},
            "fts_query": self.fts_query,
            "cosine_mean": round(self.neighbours.mean, 4),
            "cosine_std": round(self.neighbours.std, 4),
            "keyword_hits": len(self.keyword),
            "meaning_hits": len(self.vector),
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


def normalise(text: str) -> str:
    """Case- and accent-folded, like FTS5's unicode61 tokenizer with remove_diacritics."""
    if text.isascii():  # most notes: skip the per-character pass (measured 15-23 ms a query)
        return text.lower()
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def prompt_terms(prompt: str) -> list[str]:
    """Distinct content words of the prompt, in order: the keyword side's vocabulary."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(normalise(prompt[:MAX_QUERY_CHARS])):
        if len(word) > 1 and word not in STOP_WORDS:
            terms.setdefault(word, None)
    return list(terms)[:MAX_TERMS]


def fts_query(terms: Sequence[str]) -> str:
    """Each term quoted (FTS5 operators in the prompt stay plain text), OR-ed together."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def rrf(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: Σ 1 / (k + rank), rank starting at 1."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def matched_terms(terms: Sequence[str], hit: SectionHit) -> tuple[str, ...]:
    words = set(_WORD.findall(normalise(f"{hit.title} {hit.heading} {hit.text}")))
    return tuple(term for term in terms if term in words)


def search(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    prompt: str,
    *,
    limit: int = 3,
    instance: str | None = None,
    exclude: frozenset[tuple[str, str]] = frozenset(),
    mode: str = "hybrid",
) -> SearchResult:
    """Steps: terms → keyword top-K ∥ query vector → meaning top-K → RRF → area weight →
    best section per note → gate → summary stands in for source → top `limit`."""
    started = time.perf_counter()
    trace = SearchTrace(terms=prompt_terms(prompt))
    if trace.terms:
        total, counts = store.term_document_counts(trace.terms)
        trace.idf = {t: math.log((total + 1) / (counts[t] + 0.5)) for t in trace.terms}
        trace.fts_query = fts_query(distinctive_terms(trace.terms, counts, total))
        if mode in ("hybrid", "keyword"):
            trace.keyword = store.keyword_search(trace.fts_query, KEYWORD_K)
    trace.keyword_ms = (time.perf_counter() - started) * 1000
    embedding_started = time.perf_counter()
    query_vector = embedder.query(prompt)
    trace.embed_ms = (time.perf_counter() - embedding_started) * 1000
    trace.neighbours = store.vectors.search(query_vector, VECTOR_K)
    if mode in ("hybrid", "meaning"):
        trace.vector = trace.neighbours.hits
    candidates = _fuse(store, settings, trace, query_vector, instance, exclude, mode)
    trace.candidates = candidates
    chosen = _summaries_for_sources(store, settings, query_vector, candidates, trace)
    trace.total_ms = (time.perf_counter() - started) * 1000
    passages = [c for c in chosen if c.passed and (c.hit.instance, c.hit.note_id) not in exclude]
    return SearchResult(passages[:limit], trace)


def _fuse(
    store: Store,
    settings: Settings,
    trace: SearchTrace,
    query_vector: np.ndarray,
    instance: str | None,
    exclude: frozenset[tuple[str, str]],
    mode: str,
) -> list[Candidate]:
    keyword_ids = [section_id for section_id, _ in trace.keyword]
    vector_ids = [section_id for section_id, _ in trace.vector]
    fused = rrf([keyword_ids, vector_ids])
    hits = store.section_hits(list(fused))
    cosines = dict(trace.vector)
    cosines |= store.vectors.similarity([i for i in fused if i not in cosines], query_vector)
    keyword_rank = {section_id: rank for rank, section_id in enumerate(keyword_ids, start=1)}
    vector_rank = {section_id: rank for rank, section_id in enumerate(vector_ids, start=1)}
    weights = settings.weights
    best: dict[tuple[str, str], Candidate] = {}
    for section_id, fused_score in fused.items():
        hit = hits.get(section_id)
        if hit is None or hit.instance not in settings.instances:
            continue  # left over from an instance no longer configured
        if instance and hit.instance != instance:
            continue
        if (hit.instance, hit.note_id) in exclude:
            continue
        weight = weights.get(hit.area, 0.7)
        cosine = cosines.get(section_id, -1.0)
        zscore = trace.neighbours.zscore(cosine)
        terms = matched_terms(trace.terms, hit)
        coverage = sum(trace.idf[t] for t in terms) / (sum(trace.idf.values()) or 1.0)
        passed, reason = gate(cosine, zscore, terms, coverage, settings, mode)
        candidate = Candidate(
            hit=hit,
            keyword_rank=keyword_rank.get(section_id),
            vector_rank=vector_rank.get(section_id),
            cosine=cosine,
            zscore=zscore,
            matched_terms=terms,
            coverage=coverage,
            fused=fused_score,
            weight=weight,
            score=fused_score * weight,
            passed=passed,
            reason=reason,
        )
        key = (hit.instance, hit.note_id)
        if key not in best or _better(candidate, best[key]):
            best[key] = candidate
    return sorted(best.values(), key=lambda c: (not c.passed, -c.score))


def gate(
    cosine: float,
    zscore: float,
    terms: Sequence[str],
    coverage: float,
    settings: Settings,
    mode: str = "hybrid",
) -> tuple[bool, str]:
    """Pass on meaning, or on a strong keyword match over several distinct prompt terms.

    Meaning: e5 cosines crowd into 0.78-0.93 for everything, so a high cosine alone is not
    enough; it must also stand out from this query's similarity to the whole corpus (z-score).
    Keyword: the matched terms must carry a large share of the prompt's IDF weight, so common
    words ("test", "fix") do not count for much. `mode` "keyword" / "meaning" keeps one side
    only: the baselines of eval/evaluate.py. Thresholds: eval/RESULTS.md.
    """
    s = settings
    if mode != "keyword" and cosine >= s.gate_min_cosine and zscore >= s.gate_min_zscore:
        return True, f"meaning: cosine {cosine:.3f}, z {zscore:.1f}"
    several = len(terms) >= s.gate_keyword_terms
    if mode != "meaning" and several and coverage >= s.gate_keyword_coverage:
        return True, f"keywords: {len(terms)} terms, {coverage:.0%} of the prompt's weight"
    # Both signals moderately strong and agreeing on the same section.
    if (
        mode == "hybrid"
        and several
        and coverage >= s.gate_keyword_coverage * AGREE_FRACTION
        and zscore >= s.gate_min_zscore - AGREE_Z_SLACK
    ):
        return True, f"agree: z {zscore:.1f} and {len(terms)} terms with {coverage:.0%}"
    return False, (
        f"weak: cosine {cosine:.3f} (min {s.gate_min_cosine}), z {zscore:.1f} "
        f"(min {s.gate_min_zscore}), {len(terms)} terms with {coverage:.0%} of the weight "
        f"(min {s.gate_keyword_terms} terms, {s.gate_keyword_coverage:.0%})"
    )


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
    by_note = {(c.hit.instance, c.hit.note_id): c for c in candidates}
    result: list[Candidate] = []
    for candidate in candidates:
        hit = candidate.hit
        if not candidate.passed or hit.area != "sources":
            result.append(candidate)
            continue
        summaries = store.linked_from(hit.instance, [hit.note_id], settings.summary_relations)
        summary_ids = summaries.get(hit.note_id, [])
        if not summary_ids:
            result.append(candidate)
            continue
        summary = _best_section_of(store, query_vector, hit.instance, summary_ids, by_note)
        if summary is None:
            result.append(candidate)
            continue
        summary_hit, summary_cosine = summary
        if candidate.cosine - summary_cosine > SOURCE_DETAIL_MARGIN:
            trace.substitutions.append(
                f"{hit.title}: kept the source (cosine {candidate.cosine:.3f} > summary "
                f"{summary_cosine:.3f} + {SOURCE_DETAIL_MARGIN}); it ranks as wiki"
            )
            # It holds the detail its summary lacks: rank it as the wiki would rank it.
            wiki = settings.weights["wiki"]
            result.append(replace(candidate, weight=wiki, score=candidate.fused * wiki))
            continue
        trace.substitutions.append(f"{hit.title}: shown as its summary {summary_hit.title}")
        result.append(
            replace(candidate, hit=summary_hit, cosine=summary_cosine, stands_for=hit.note_id)
        )
    return _dedupe(result)


def _best_section_of(
    store: Store,
    query_vector: np.ndarray,
    instance: str,
    note_ids: Sequence[str],
    by_note: dict[tuple[str, str], Candidate],
) -> tuple[SectionHit, float] | None:
    section_ids = store.section_ids_of(instance, note_ids)
    if not section_ids:
        return None
    cosines = store.vectors.similarity(section_ids, query_vector)
    best_id = max(cosines, key=cosines.__getitem__)
    hit = store.section_hits([best_id]).get(best_id)
    if hit is None or hit.area != "wiki":
        return None
    known = by_note.get((instance, hit.note_id))
    if known is not None and known.cosine > cosines[best_id]:
        return known.hit, known.cosine
    return hit, cosines[best_id]


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for candidate in sorted(candidates, key=lambda c: (not c.passed, -c.score)):
        key = (candidate.hit.instance, candidate.hit.note_id)
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique


def _better(new: Candidate, old: Candidate) -> bool:
    return (new.passed, new.score) > (old.passed, old.score)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` characters, cut at a sentence or word boundary."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(". "), head.rfind("\n"))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return head[: cut + 1 if cut > 0 else limit].rstrip() + " …"
