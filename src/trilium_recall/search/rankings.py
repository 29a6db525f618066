"""The rankings hybrid search fuses: keyword hits (FTS5's bm25 over the prompt's rarer terms),
meaning hits (the closest snippets), sections holding the prompt's code phrases, notes by their
sections' summed bm25, and reciprocal rank fusion itself. Sections filed on a day the prompt
names are dates/filed.py's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..index.hubness import HUB_WEIGHT
from ..index.store import Store
from ..index.terms import code_phrases, fts_query, idf, is_cjk_pair, prompt_terms
from ..index.vectors import Neighbours
from ..notes.records import SectionHit
from .candidates import NO_KEYWORDS, KeywordHits
from .dates.mentions import DateMention
from .phrasing import without_phrasing

KEYWORD_K = 40
MEANING_K = 40
PHRASE_K = 20
# Fusion by rank, not raw bm25/cosine scales. k = 5 and meaning counted twice: the usual k = 60
# flattens the top ranks so much that a weak hub page listed by both sides beat the note one
# side ranked first (hit@1 0.64 → 0.91 on the notebook; the same choice was best or within
# 0.01 on each of the three eval corpora, eval/RESULTS.md).
RRF_K = 5
COMMON_TERM_SHARE = 0.1  # a term in more than this share of sections is left out of MATCH
MIN_QUERY_TERMS = 2


def keyword_hits(
    store: Store,
    prompt: str,
    k: int = KEYWORD_K,
    with_phrases: bool = True,
    dates: Sequence[DateMention] = (),
) -> KeywordHits:
    """Prompt terms, their IDF over the index, FTS5's best sections for the rare ones, those
    holding the prompt's code phrases, and the `dates` it names (dates/prompt.py)."""
    terms = prompt_terms(prompt)
    if not terms:
        return NO_KEYWORDS
    total, counts = store.term_document_counts(terms)
    weights = {t: idf(total, counts[t]) for t in terms}
    query = fts_query(distinctive_terms(terms, counts, total))
    phrases = code_phrases(prompt) if with_phrases else []
    phrase_hits = store.keyword_search(" OR ".join(phrases), PHRASE_K) if phrases else []
    absent = [t for t in terms if not counts[t]]
    unknown = without_phrasing(absent, prompt)
    uncounted = [t for t in absent if t not in unknown]
    hits = store.keyword_search(query, k)
    return KeywordHits(
        terms, weights, query, hits, phrases, phrase_hits, unknown, uncounted, list(dates)
    )


def meaning_hits(
    store: Store, query_vector: np.ndarray, k: int = MEANING_K, hub_weight: float = HUB_WEIGHT
) -> Neighbours:
    """The sections whose best snippets are closest to the query vector, each snippet's
    hubness taken off at `hub_weight` (index/hubness.py)."""
    return store.vectors.search(query_vector, k, store.exact_vectors, hub_weight)


def note_ranking(
    keyword_hits: Sequence[tuple[int, float]], hits: dict[int, SectionHit]
) -> dict[int, int]:
    """Each keyword section's note's rank among notes by their sections' bm25 summed (FTS5's
    bm25 is lower for better)."""
    notes: dict[tuple[str, str], float] = {}
    for section_id, bm25 in keyword_hits:
        if (hit := hits.get(section_id)) is not None:
            key = (hit.instance, hit.note_id)
            notes[key] = notes.get(key, 0.0) - bm25
    rank = {key: r for r, key in enumerate(sorted(notes, key=notes.__getitem__, reverse=True), 1)}
    return {
        section_id: rank[(hit.instance, hit.note_id)]
        for section_id, _ in keyword_hits
        if (hit := hits.get(section_id)) is not None
    }


def rrf(rankings: Iterable[tuple[Sequence[int], float]], k: int = RRF_K) -> dict[int, float]:
    """Weighted reciprocal rank fusion: Σ weight / (k + rank), rank starting at 1."""
    fused: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def distinctive_terms(terms: Sequence[str], counts: dict[str, int], total: int) -> list[str]:
    """The terms worth a keyword query: common ones add little to bm25 but make FTS5 rank
    most of the index (measured 18 ms → 1.6 ms at 50k sections). With fewer rare ones, the
    rarest few the index holds: a word no section holds matches nothing, and as "rarest" it
    took the place of the prompt's topic ("a transaction in May 2024" searched "2024" OR
    "may"). Rare ones that are all CJK pairs no section holds are most often no words: "红烧肉
    怎么做" in a notebook of eight notes searched only pairs that span two ("肉怎" OR "么做").
    (The same for rare words of any language: held out, 5 answers gained and 12 lost.)"""
    rare = [t for t in terms if counts[t] <= COMMON_TERM_SHARE * total]
    if len(rare) >= MIN_QUERY_TERMS and not all(is_cjk_pair(t) and not counts[t] for t in rare):
        return rare
    held = [t for t in terms if counts[t]] or list(terms)
    return sorted(held, key=counts.__getitem__)[:MIN_QUERY_TERMS]
