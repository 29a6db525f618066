"""A source with a wiki summary shows up as the summary, unless the source itself holds the
matching detail: its best snippet is closer to the prompt than any of the summary's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..config import Settings
from ..index.store import Store
from ..index.vectors import Match
from ..notes.records import SectionHit
from .candidates import Candidate, SearchTrace

# A source keeps its own place when its section is closer to the prompt than its summary's by
# more than this. The closer one wins: a margin of 0.02 (read as noise) sent the summary for
# three detail questions only the source answers, and no margin from 0.03 down to 0 lost a hit
# the summary gave (notebook eval set: hit@3 0.762 at 0.02, 0.781 at 0; eval/RESULTS.md).
SOURCE_DETAIL_MARGIN = 0.0


def summaries_for_sources(
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
                f"{match.cosine:.3f}); it ranks as wiki"
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
    return dedupe(result)


def _best_summary(
    store: Store,
    query_vector: np.ndarray,
    instance: str,
    note_ids: Sequence[str],
    by_note: dict[tuple[str, str], Candidate],
) -> tuple[SectionHit, Match] | None:
    """The summaries' section closest to the query, if it is a wiki page."""
    section_ids = store.section_ids_of(instance, note_ids)
    matches = store.best_snippets(section_ids, query_vector)
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


def dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for candidate in sorted(candidates, key=lambda c: (not c.passed, -c.score)):
        if candidate.key not in seen:
            seen.add(candidate.key)
            unique.append(candidate)
    return unique
