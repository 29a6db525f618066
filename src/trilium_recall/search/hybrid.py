"""Hybrid search: keyword hits ∥ meaning hits → RRF → area weight → best section per note →
learned order of the first ten → the gate (gate.py) → summary stands in for source.

Plain functions over a `Store`, an `Embedder` and the generic-prompt bank; /recall, MCP, the CLI
and the eval script all call `search()`. `SearchTrace` records every step so `explain` can show
why recall spoke or stayed silent.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..config import Settings
from ..index.embed import Embedder
from ..index.hubness import HUB_WEIGHT
from ..index.store import Store
from ..index.terms import is_cjk_pair, prompt_terms, stems, terms_in
from ..index.vectors import Match, Neighbours
from ..notes.records import SectionHit
from .candidates import (
    Candidate,
    KeywordHits,
    SearchResult,
    SearchTrace,
    folders,
    mark_folders,
    matched_text,
    one_of_each_text,
)
from .dates.filed import filed_on, read_dates
from .dates.prompt import asking_terms, asks_the_day, day_terms, prompt_dates, said_loosely
from .excerpts import second_sections
from .gate import (
    FITTED,
    CandidateOrder,
    GateThresholds,
    PromptSignals,
    judge_candidates,
    judge_prompt,
)
from .languages import in_another_language, prompt_language, text_language
from .null_bank import GenericPrompts
from .rankings import RRF_K, keyword_hits, meaning_hits, note_ranking, rrf
from .signals import beside_the_day, closest_section, matched_share, prompt_signals
from .summaries import summaries_for_sources
from .technologies import named_technologies, names_another_stack
from .topic import application_is_topic, index_holds, topic_of

# Meaning counted twice in the fusion (see rankings.RRF_K).
KEYWORD_WEIGHT = 1.0
MEANING_WEIGHT = 2.0
# A question is the same with or without its mark: embedded with a trailing "?" or "!", 43 of
# the eval's 1,402 prompts landed on the other side of the prompt decision's line. Meaning
# search reads the prompt without them (keyword search never read them).
_END_MARKS = "?!？！ \t\r\n"
# Sections holding the prompt's pasted code or quoted text as a phrase: a third ranking in the
# fusion, as strong as the keyword side (issue 23, Build 8).
PHRASE_WEIGHT = 1.0
# Keyword evidence of a long section (a table of every shortcut matches a word of almost any
# prompt) is counted in what would be sent: the text around its best snippet (issue 23, Build 7).
EVIDENCE_CHARS = 600
# A note whose sections match the prompt's words between them: a fourth ranking, of notes by the
# keyword side's bm25 summed over their sections. bm25 over whole notes ranked the answer in the
# top 3 more often than the fused sections on the system-administration handbook (0.817 against
# 0.783); at half a ranking's weight the gate-open ranking reaches it (eval/RESULTS.md).
NOTE_WEIGHT = 0.5
# The first candidates re-ordered by the gate's learned order (GateThresholds.order): RRF ranks
# by rank only, so a note ranked 2nd with a clearly closer snippet stays 2nd. Fitted on the
# eval corpora's first ten notes (eval/evaluate.py), so only those are re-ordered.
ORDER_DEPTH = 10


@dataclass(frozen=True)
class Ranking:
    """How search ranks before the gate decides (eval/fit.py holds the ranking before issue 23,
    and eval/evaluate.py runs both on the same indexes)."""

    phrase_weight: float = PHRASE_WEIGHT
    evidence_chars: int | None = EVIDENCE_CHARS  # None: the whole section counts
    note_weight: float = NOTE_WEIGHT
    dates: bool = True  # the dates a prompt names read (dates/)
    hub_weight: float = HUB_WEIGHT  # snippets near every prompt ranked down (index/hubness.py)


RANKING = Ranking()


def gate_thresholds(settings: Settings) -> GateThresholds:
    """The fitted gate, shifted by the user's RECALL_GATE_STRICTNESS."""
    return FITTED.with_strictness(settings.gate_strictness)


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
    today: datetime.date | None = None,
) -> SearchResult:
    """Steps: keyword hits ∥ query vector → meaning hits → RRF → area weight → best section per
    note → prompt decision → candidate decisions → summary stands in for source → top `limit`
    not already sent (`exclude`). Days the prompt names from today count from `today` (the
    asker's date; None: the engine's)."""
    gathered = gather(store, embedder, generic, settings, prompt, instance, today=today)
    return decide(store, settings, gathered, gate or gate_thresholds(settings), limit, exclude)


@dataclass(frozen=True)
class Gathered:
    """Everything search knows before the gate decides: the same for every gate setting."""

    candidates: list[Candidate]  # each note's best section, best first
    sections: list[Candidate]  # every fused section: what the prompt's signals are read from
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
    ranking: Ranking = RANKING,
    today: datetime.date | None = None,
) -> Gathered:
    """Keyword hits ∥ query vector → meaning hits → RRF → area weight → best section per note."""
    started = time.perf_counter()
    asked = topic_of(prompt, lambda: application_is_topic(store), lambda t: index_holds(store, t))
    # Dates are read as written: "did I take notes on the 3rd?" is read for its topic as "the
    # 3rd?", and a bare ordinal is a day only after "on".
    dates = prompt_dates(prompt, today) if ranking.dates else []
    keyword = keyword_hits(store, asked, with_phrases=bool(ranking.phrase_weight), dates=dates)
    if dates:  # read from the prompt as written: "did I note" is left out of its topic
        asking = set(asking_terms(prompt_terms(prompt), prompt))
        topical_asking = [t for t in keyword.terms if t in asking]
        asks = asks_the_day(asking, prompt)
        keyword = replace(keyword, asking=topical_asking, asks_the_day=asks)
    trace = SearchTrace(keyword=keyword, reference=generic.reference)
    trace.searched_as = None if asked == prompt else asked
    trace.language = prompt_language(asked)
    trace.technologies = named_technologies(asked)
    trace.other_stack = names_another_stack(trace.technologies, generic.reference.technologies)
    trace.keyword_ms = (time.perf_counter() - started) * 1000
    embedding_started = time.perf_counter()
    query_vector = embedder.query(asked.rstrip(_END_MARKS) or asked)
    trace.embed_ms = (time.perf_counter() - embedding_started) * 1000
    trace.neighbours = meaning_hits(store, query_vector, hub_weight=ranking.hub_weight)
    trace.generic = generic.closest(query_vector)
    sections = fuse(store, settings, keyword, trace.neighbours, query_vector, instance, ranking)
    # A date's words are matched by now; a day named from today is no word a note need hold.
    known = {term for c in sections for term in c.matched_terms}
    known.update(day_terms([m for m in dates if m.relative], keyword.terms))
    trace.keyword = replace(keyword, unknown=[t for t in keyword.unknown if t not in known])
    closest = closest_section(sections)
    trace.closest_language = text_language(closest.hit.text) if closest else None
    trace.foreign = in_another_language(
        trace.language, generic.reference.languages, trace.closest_language
    )
    if not trace.foreign:  # among notes in its own language, a CJK pair none holds spans two
        trace.keyword = _spanning_pairs_uncounted(trace.keyword)
    return Gathered(best_per_note(sections), sections, trace, query_vector, started)


def _spanning_pairs_uncounted(keyword: KeywordHits) -> KeywordHits:
    """A pair of CJK characters no note holds is most often no word ("肉怎" of "红烧肉怎么做"):
    counted unknown, it made a question to a Chinese notebook look off-topic. In another
    language's notebook it stays counted, as any foreign word (the foreign-language term of the
    gate was fitted with those counted)."""
    spanning = [t for t in keyword.unknown if is_cjk_pair(t)]
    if not spanning:
        return keyword
    unknown = [t for t in keyword.unknown if t not in spanning]
    return replace(keyword, unknown=unknown, uncounted=[*keyword.uncounted, *spanning])


def decide(
    store: Store,
    settings: Settings,
    gathered: Gathered,
    gate: GateThresholds,
    limit: int = 3,
    exclude: frozenset[tuple[str, str]] = frozenset(),
) -> SearchResult:
    """Prompt decision → candidates in the learned order → summary for source → top `limit`."""
    trace = replace(gathered.trace, substitutions=[])
    candidates = _judge(gathered, trace, gate, store.has_children)
    trace.candidates = candidates
    summarised = summaries_for_sources(store, settings, gathered.query_vector, candidates, trace)
    chosen = in_order(summarised, gate.order)  # a source kept as wiki moves by its new score
    verdict = trace.verdict
    if verdict and verdict.filed and not (verdict.scored and said_loosely(trace.keyword.dates)):
        # the day's own notes, latest first; beside a topic, a month's are ranked as found
        chosen.sort(key=lambda c: (not c.passed, c.filed_rank is None, c.filed_rank or 0))
    trace.total_ms = (time.perf_counter() - gathered.started) * 1000
    # Notes the session already got, and folders, keep their places: the 4th to 9th are weak.
    best, spans = one_of_each_text([c for c in chosen if c.passed], store.snippet_spans)
    sent = [c for c in best[:limit] if c.key not in exclude and not c.folder]
    seconds = second_sections(sent, gathered.sections)
    if seconds:
        spans |= store.snippet_spans([s.section.snippet_id or -1 for s in seconds.values()])
    # A second section that repeats a passing note word for word (man pages share sections) is
    # no more use than the first copy was.
    said = {matched_text(c, spans) for c in best}
    seconds = {k: s for k, s in seconds.items() if matched_text(s.section, spans) not in said}
    return SearchResult(sent, trace, spans, seconds)


def fuse(
    store: Store,
    settings: Settings,
    keyword: KeywordHits,
    neighbours: Neighbours,
    query_vector: np.ndarray,
    instance: str | None = None,
    ranking: Ranking = RANKING,
) -> list[Candidate]:
    """RRF of the rankings times the area weight: every section, best first."""
    keyword_ids = [section_id for section_id, _ in keyword.hits]
    meaning_ids = [match.section_id for match in neighbours.hits]
    phrase_ids = [section_id for section_id, _ in keyword.phrase_hits]
    instances = [instance] if instance else list(settings.instances)
    dated_ids = filed_on(store, keyword.dates, instances) if keyword.dates else []
    fused = rrf(
        [
            (keyword_ids, KEYWORD_WEIGHT),
            (meaning_ids, MEANING_WEIGHT),
            (phrase_ids, ranking.phrase_weight),
        ]
    )
    # The sections filed on a day the prompt names are candidates, with no share of the fusion:
    # a day is not a topic, and they pass only when the prompt is mostly that day
    # (gate.judge_prompt); ranked in, they lifted "book a table for two on december 20".
    for section_id in dated_ids:
        fused.setdefault(section_id, 0.0)
    hits = store.section_hits(list(fused))
    note_rank = note_ranking(keyword.hits, hits) if ranking.note_weight else {}
    for section_id, rank in note_rank.items():
        fused[section_id] += ranking.note_weight / (RRF_K + rank)
    matches = {match.section_id: match for match in neighbours.hits}
    rest = [i for i in fused if i not in matches]
    matches |= store.best_snippets(rest, query_vector, ranking.hub_weight)
    windows = _evidence_windows(store, hits, matches, ranking.evidence_chars)
    keyword_rank = {section_id: rank for rank, section_id in enumerate(keyword_ids, start=1)}
    meaning_rank = {section_id: rank for rank, section_id in enumerate(meaning_ids, start=1)}
    phrase_rank = {section_id: rank for rank, section_id in enumerate(phrase_ids, start=1)}
    filed_rank = {section_id: rank for rank, section_id in enumerate(dated_ids, start=1)}
    sections = []
    for section_id, fused_score in fused.items():
        hit = hits.get(section_id)
        if hit is None or hit.instance not in settings.instances:
            continue  # left over from an instance no longer configured
        if instance and hit.instance != instance:
            continue
        match = matches.get(section_id)
        text = windows.get(section_id, hit.text)
        held = stems(hit.title, hit.heading, text)  # the dates read them as well
        literal = terms_in(keyword.terms, held)
        note = (hit.title, hit.paths, hit.calendar)
        asks, written = keyword.asks_the_day, (hit.heading, text)  # no copy of the text
        dates = read_dates(keyword.dates, keyword.terms, literal, held, note, asks, written=written)
        terms = tuple(t for t in keyword.terms if t in literal or t in dates.dated)
        weight = settings.area_weights[hit.area]
        candidate = Candidate(
            hit=hit,
            keyword_rank=keyword_rank.get(section_id),
            meaning_rank=meaning_rank.get(section_id),
            phrase_rank=phrase_rank.get(section_id),
            note_rank=note_rank.get(section_id),
            cosine=match.cosine if match else -1.0,
            hubness=match.hubness if match else 0.0,
            snippet_id=match.snippet_id if match else None,
            matched_terms=terms,
            coverage=keyword.coverage(terms),
            fused=fused_score,
            weight=weight,
            score=fused_score * weight,
            windowed=section_id in windows,
            filed_rank=filed_rank.get(section_id),
            dates=dates,
        )
        sections.append(candidate)
    return sorted(sections, key=lambda c: -c.score)


def in_order(candidates: Sequence[Candidate], order: CandidateOrder | None) -> list[Candidate]:
    """The first ORDER_DEPTH candidates by score re-ordered by the learned order (each one's
    value kept for `explain`), the rest after them by score; passed candidates first."""
    by_score = sorted(candidates, key=lambda c: -c.score)
    if order is not None:
        values = [order.value(*features) for features in order_features(by_score)]
        head = sorted(zip(values, by_score, strict=False), key=lambda pair: -pair[0])
        by_score = [replace(c, order_value=value) for value, c in head] + [
            replace(c, order_value=None) for c in by_score[ORDER_DEPTH:]
        ]
    return sorted(by_score, key=lambda c: not c.passed)


def order_features(candidates: Sequence[Candidate]) -> list[tuple[float, float, float]]:
    """What the learned order reads of the first ORDER_DEPTH candidates (in fused order): the
    rank as RRF counts it, the cosine below the best of them, the keyword coverage."""
    head = candidates[:ORDER_DEPTH]
    best = max((c.cosine for c in head), default=0.0)
    return [
        (1 / (RRF_K + rank), c.cosine - best, c.coverage) for rank, c in enumerate(head, start=1)
    ]


def best_per_note(sections: Iterable[Candidate]) -> list[Candidate]:
    """Each note's best-scoring section, best first."""
    best: dict[tuple[str, str], Candidate] = {}
    for candidate in sections:
        if candidate.key not in best or candidate.score > best[candidate.key].score:
            best[candidate.key] = candidate
    return sorted(best.values(), key=lambda c: -c.score)


def _evidence_windows(
    store: Store, hits: dict[int, SectionHit], matches: dict[int, Match], chars: int | None
) -> dict[int, str]:
    """For each section longer than what would be sent, the text around its best snippet:
    its keyword evidence is counted there, not over the whole table or chapter."""
    if chars is None:
        return {}
    long = {
        i: m.snippet_id for i, m in matches.items() if i in hits and len(hits[i].text) > 2 * chars
    }
    spans = store.snippet_spans(list(long.values())) if long else {}
    windows = {}
    for section_id, snippet_id in long.items():
        if snippet_id in spans:
            start, end = spans[snippet_id]
            text = hits[section_id].text
            windows[section_id] = text[max(0, start - chars // 2) : end + chars // 2]
    return windows


def read_prompt(
    gathered: Gathered, has_children: Callable[[str, str], bool]
) -> tuple[list[Candidate], PromptSignals]:
    """Each note's best section with its folders marked, and what the prompt decision reads of
    the search (a folder vouches for nothing: candidates.folders). The eval fits on the
    same reading."""
    keys = folders(gathered.sections, has_children)  # each note's best section is among them
    notes = mark_folders(gathered.candidates, keys)
    return notes, prompt_signals(mark_folders(gathered.sections, keys), notes, gathered.trace)


def _judge(
    gathered: Gathered,
    trace: SearchTrace,
    gate: GateThresholds,
    has_children: Callable[[str, str], bool],
) -> list[Candidate]:
    """The prompt decision reads every fused section (a note's best-scoring section need not be
    its closest one); the candidate decisions read each note's best, in the learned order."""
    notes, trace.signals = read_prompt(gathered, has_children)
    candidates = in_order(notes, gate.order)
    trace.verdict = judge_prompt(trace.signals, gate)
    # Days said loosely hold many notes: those go with the prompt only when on its topic.
    rest = beside_the_day(trace.keyword) if said_loosely(trace.keyword.dates) else None
    shares = [1.0 if rest is None else matched_share(c, trace.keyword, rest) for c in candidates]
    signals = [c.signals(share) for c, share in zip(candidates, shares, strict=True)]
    verdicts = judge_candidates(signals, trace.verdict, gate)
    judged = [
        replace(c, passed=passed, reason=f"{reason}; a folder, nothing but its title: not sent")
        if passed and c.folder
        else replace(c, passed=passed, reason=reason)
        for c, (passed, reason) in zip(candidates, verdicts, strict=True)
    ]
    return sorted(judged, key=lambda c: not c.passed)
