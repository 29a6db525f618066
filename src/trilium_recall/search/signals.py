"""What the prompt decision reads from one search (gate.PromptSignals): the closest section's
keyword agreement, the best keyword match, the margin's parts, how the notes filed on a day the
prompt names match the rest of it."""

from __future__ import annotations

from collections.abc import Sequence

from .candidates import Candidate, KeywordHits, SearchTrace
from .dates.prompt import day_terms
from .gate import PromptSignals
from .null_bank import TWIN_COSINE


def closest_section(sections: Sequence[Candidate]) -> Candidate | None:
    """The section closest to the prompt in meaning: the one whose keyword agreement the prompt
    decision reads, and whose language the prompt's is compared with."""
    return max(sections, key=lambda c: c.cosine, default=None)


def prompt_signals(
    candidates: Sequence[Candidate], best_notes: Sequence[Candidate], trace: SearchTrace
) -> PromptSignals:
    """What the prompt decision reads: from every fused section (`candidates`), each note's
    best section by fused score (`best_notes`, best first) and the search's `trace`. A folder's
    bare title vouches for nothing (candidates.folders): the closest section, the best
    keyword match and the best note are read from the rest."""
    judged = [c for c in candidates if not c.folder]
    top = closest_section(judged)
    strongest = max(judged, key=lambda c: c.coverage, default=None)
    best = next((c for c in best_notes if not c.folder), None)
    top_cosine = top.cosine if top else -1.0
    keyword, reference = trace.keyword, trace.reference
    return PromptSignals(
        top_cosine=top_cosine,
        generic_cosine=min(trace.generic.cosine, TWIN_COSINE),
        generic_prompt=trace.generic.prompt,
        offset=reference.generic_level,
        agreement=top.coverage if top else 0.0,
        coverage=strongest.coverage if strongest else 0.0,
        terms=len(strongest.matched_terms) if strongest else 0,
        zscore=trace.neighbours.zscore(top_cosine) if top else 0.0,
        foreign=trace.foreign,
        other_stack=trace.other_stack,
        phrase=bool(candidates) and candidates[0].phrase_rank is not None,
        spread=reference.spread,
        unknown_share=keyword.coverage(keyword.unknown) if keyword.terms else 0.0,
        # Before the area weight: RECALL_AREA_WEIGHTS orders notes, it does not decide speech.
        fused_top=best.fused if best else 0.0,
        **_filed_signals(candidates, keyword),
    )


def _filed_signals(sections: Sequence[Candidate], keyword: KeywordHits) -> dict[str, float]:
    """How well the notes filed on a day the prompt names match the rest of it (1 when the
    prompt is a day and words that only ask what it held), and the day's share of the weight
    when no note is filed on it or holds its words (gate.PromptSignals)."""
    days = day_terms(keyword.dates, keyword.terms)
    if not days:
        return {}
    rest = beside_the_day(keyword)
    weight, day_weight = keyword.coverage(rest), keyword.coverage(days)
    filed = [c for c in sections if c.filed_rank]
    unfiled = not (filed or any(c.dates.holds_day for c in sections)) and day_weight > 0
    return {
        "filed_coverage": max((matched_share(c, keyword, rest) for c in filed), default=0.0),
        # against the day and the rest: "what happened on friday" is all day
        "unfiled_day_share": day_weight / (day_weight + weight) if unfiled else 0.0,
        "beside_the_day": weight,
    }


def beside_the_day(keyword: KeywordHits) -> list[str]:
    """The prompt's terms beside the days it names and the words that only ask what they held."""
    days = day_terms(keyword.dates, keyword.terms)
    return [t for t in keyword.terms if t not in days and t not in keyword.asking]


def matched_share(candidate: Candidate, keyword: KeywordHits, rest: Sequence[str]) -> float:
    """The share of the weight of `rest` that `candidate` matches (1 if `rest` weighs none)."""
    weight = keyword.coverage(rest)  # a sum over a few terms: cheap beside the match
    matched = keyword.coverage([t for t in candidate.matched_terms if t in rest])
    return matched / weight if weight else 1.0
