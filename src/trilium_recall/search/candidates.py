"""What search passes along and what `explain` shows: the keyword side of a prompt, each note's
candidate section with its ranks and signals, and the trace of one search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..index.vectors import NO_NEIGHBOURS, Neighbours
from ..notes.html_text import collapse_spaces
from ..notes.records import SectionHit
from .dates.filed import NO_READING, DateReading
from .dates.mentions import DateMention
from .dates.prompt import as_said
from .gate import DEFAULT_SPREAD, CandidateSignals, PromptSignals, PromptVerdict


@dataclass(frozen=True)
class KeywordHits:
    """The keyword side: prompt terms, their IDF, the FTS5 query and its ranked sections."""

    terms: list[str]
    idf: dict[str, float]
    fts_query: str
    hits: list[tuple[int, float]]  # (section id, bm25), best first
    phrases: list[str] = field(default_factory=list)  # the prompt's code as FTS5 phrases
    phrase_hits: list[tuple[int, float]] = field(default_factory=list)  # sections holding one
    # Terms no section holds, less everyday English and option bundles (phrasing.py); after
    # `hybrid.gather`, also none is dated by (dates/filed.py).
    unknown: list[str] = field(default_factory=list)
    # Terms no section holds that phrase the prompt or are its quoted data: not counted.
    uncounted: list[str] = field(default_factory=list)
    dates: list[DateMention] = field(default_factory=list)  # the dates it names (dates/)
    asking: list[str] = field(default_factory=list)  # terms that only ask what a day held
    asks_the_day: bool = False  # the prompt as written has such words ("did I note …")

    def coverage(self, terms: Sequence[str]) -> float:
        """Share of the prompt's IDF weight that `terms` carry."""
        return sum(self.idf[t] for t in terms) / (sum(self.idf.values()) or 1.0)


@dataclass(frozen=True)
class Reference:
    """This notebook's reference points (calibration.py makes them; `explain` shows them)."""

    generic_level: float = 0.0  # mean margin of generic prompts (the gate's offset)
    about_level: float | None = None  # median margin of pseudo-prompts from the notes
    languages: tuple[str, ...] = ()
    pseudo_prompts: int = 0
    reason: str = "not calibrated yet: shipped defaults"
    # The technologies the notebook is about (technologies.py); None: not measured.
    technologies: tuple[str, ...] | None = None

    @property
    def spread(self) -> float:
        """How far prompts about these notes stand above generic chatter, in margin."""
        if self.about_level is None or self.about_level - self.generic_level <= 0.005:
            return DEFAULT_SPREAD
        return self.about_level - self.generic_level

    def to_json(self) -> dict[str, object]:
        return {
            "generic_level": round(self.generic_level, 4),
            "about_level": None if self.about_level is None else round(self.about_level, 4),
            "spread": round(self.spread, 4),
            "languages": list(self.languages),
            "technologies": None if self.technologies is None else list(self.technologies),
            "pseudo_prompts": self.pseudo_prompts,
            "why": self.reason,
        }


@dataclass(frozen=True)
class GenericMatch:
    """The generic prompt (null_bank.py) closest to a query (query–query cosine)."""

    cosine: float
    prompt: str


NO_KEYWORDS = KeywordHits([], {}, "", [])
NO_GENERIC = GenericMatch(-1.0, "")


@dataclass(frozen=True)
class Candidate:
    """One note's best section on its way through the pipeline (also what `explain` prints)."""

    hit: SectionHit
    keyword_rank: int | None
    meaning_rank: int | None
    phrase_rank: int | None  # among sections holding the prompt's code phrases
    note_rank: int | None  # its note among notes by the keyword side's summed bm25
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
    windowed: bool = False  # a long section: keywords counted around its best snippet only
    order_value: float | None = None  # its learned order's value (first ten candidates only)
    filed_rank: int | None = None  # among sections filed on a day the prompt names (dates/filed.py)
    dates: DateReading = NO_READING  # what its note's dates say to the prompt's (dates/filed.py)
    folder: bool = False  # only a title with notes under it: never sent (`folders`)
    # Its best snippet's closeness to any prompt (its best snippet is picked by cosine less half
    # of this: index/hubness.py); 0 where none is kept.
    hubness: float = 0.0

    @property
    def key(self) -> tuple[str, str]:
        return (self.hit.instance, self.hit.note_id)

    def signals(self, filed_share: float) -> CandidateSignals:
        """What the gate reads; `filed_share`: of the prompt's weight beside the day it names,
        the share this note matches (hybrid)."""
        return CandidateSignals(
            self.cosine,
            self.coverage,
            len(self.matched_terms),
            filed=self.filed_rank is not None,
            filed_share=filed_share,
            another_day=self.dates.another_day,
            journal_day=self.dates.journal_day,
            holds_day=self.dates.holds_day,
            folder=self.folder,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "note_id": self.hit.note_id,
            "title": self.hit.title,
            "heading": self.hit.heading,
            "area": self.hit.area,
            "keyword_rank": self.keyword_rank,
            "meaning_rank": self.meaning_rank,
            "phrase_rank": self.phrase_rank,
            "note_rank": self.note_rank,
            "filed_rank": self.filed_rank,
            "dated_terms": list(self.dates.dated),
            "another_day": self.dates.another_day,
            "cosine": round(self.cosine, 4),
            "hubness": round(self.hubness, 4),
            "matched_terms": list(self.matched_terms),
            "coverage": round(self.coverage, 2),
            "fused": round(self.fused, 5),
            "area_weight": self.weight,
            "score": round(self.score, 5),
            "order_value": None if self.order_value is None else round(self.order_value, 3),
            "passed": self.passed,
            "folder": self.folder,  # nothing but a title: not sent
            "why": self.reason,
            "stands_for": self.stands_for,
            "keywords_counted_in": "text around the matched snippet (long section)"
            if self.windowed
            else "whole section",
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
    # The second section each sent passage holds (recall.passages_of).
    second_sections: dict[tuple[str, str], SecondSection] = field(default_factory=dict)
    reference: Reference = field(default_factory=Reference)  # the notebook's (calibration.py)
    searched_as: str | None = None  # the prompt less where to look and machine noise (topic.py)
    language: str | None = None  # the prompt's, when told (languages.py)
    closest_language: str | None = None  # the best-meaning section's, when told
    foreign: bool = False  # a language the notebook, or that section, is not written in
    technologies: tuple[str, ...] = ()  # the technologies the prompt names (technologies.py)
    other_stack: bool = False  # it names some and none the notebook is about
    keyword_ms: float = 0.0
    embed_ms: float = 0.0
    total_ms: float = 0.0

    def to_json(self, top: int = 10) -> dict[str, object]:
        """What `explain` shows: each step's inputs, the prompt decision, each candidate's."""
        signals = self.signals
        return {
            "searched_as": self.searched_as,
            "terms": self.keyword.terms,
            "idf": {term: round(weight, 2) for term, weight in self.keyword.idf.items()},
            "fts_query": self.keyword.fts_query,
            "dates": as_said(self.keyword.dates),
            "asking_terms": self.keyword.asking,  # left out of what a day's notes must match
            "code_phrases": self.keyword.phrases,
            "phrase_hits": len(self.keyword.phrase_hits),
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
                # counted as at most null_bank.TWIN_COSINE: what the margin reads
                "generic_cosine": round(signals.generic_cosine, 4),
                "generic_offset": round(signals.offset, 4),
                "margin": round(signals.margin, 4),
                "agreement": round(signals.agreement, 3),
                "coverage": round(signals.coverage, 3),
                "terms": signals.terms,
                "zscore": round(signals.zscore, 2),
                "scaled_margin": round(signals.scaled_margin, 4),
                "language": self.language,
                "closest_language": self.closest_language,
                "foreign_language": signals.foreign,
                "technologies": list(self.technologies),
                "other_stack": signals.other_stack,
                "unknown_terms": self.keyword.unknown,
                "uncounted_terms": self.keyword.uncounted,
                "unknown_share": round(signals.unknown_share, 3),
                "fused_top": round(signals.fused_top, 4),
                "filed_coverage": round(signals.filed_coverage, 3),
                "unfiled_day_share": round(signals.unfiled_day_share, 3),
                "beside_the_day": round(signals.beside_the_day, 3),
                "score": round(self.verdict.score, 3),
                "parts": {k: round(v, 3) for k, v in self.verdict.parts.items()},
                "about_notes": self.verdict.about_notes,
                "why": self.verdict.reason,
            },
            "reference_points": self.reference.to_json(),
            "keyword_ms": round(self.keyword_ms, 1),
            "embed_ms": round(self.embed_ms, 1),
            "search_ms": round(self.total_ms, 1),
            "candidates": [c.to_json() for c in self.candidates[:top]],
            "substitutions": self.substitutions,
            "second_sections": [s.to_json() for s in self.second_sections.values()],
        }


@dataclass(frozen=True)
class SecondSection:
    """The other section of a sent note that goes along with it (excerpts.second_sections),
    and its score as a share of the sent section's."""

    section: Candidate
    share: float

    def to_json(self) -> dict[str, object]:
        hit = self.section.hit
        return {
            "instance": hit.instance,
            "note_id": hit.note_id,
            "heading": hit.heading,
            "ordinal": hit.ordinal,
            "share": round(self.share, 3),
        }


@dataclass(frozen=True)
class SearchResult:
    passages: list[Candidate]
    trace: SearchTrace
    # Where each passage's matched snippet sits in its text: the excerpt is cut around it.
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    # Each passage's second section, where one may go along (the answer's size may leave it out).
    seconds: dict[tuple[str, str], SecondSection] = field(default_factory=dict)


# Why a search whose passing notes are all folders sends nothing (explain, the log, doctor).
FOLDERS_ONLY = "what passed is a folder: nothing to send"


def why_nothing_passed_was_sent(candidates: Sequence[Candidate]) -> str:
    """Why a search sent nothing though the prompt was about the notes: every note that passed
    was a folder, some were already sent in this session, or none passed."""
    passed = [c for c in candidates if c.passed]
    if passed and all(c.folder for c in passed):
        return FOLDERS_ONLY
    if passed:
        return "what passed was already sent in this session"
    return "nothing passed the gate"


def folders(
    sections: Sequence[Candidate], has_children: Callable[[str, str], bool]
) -> frozenset[tuple[str, str]]:
    """The notes among `sections` that hold nothing but their title and have notes filed under
    them ("Journal", "2026", "Personal"), each looked up once. A folder keeps its place among
    the best, sends nothing, vouches for nothing and is no measure of the others (a bare title
    close to a short prompt left every note that answered it "weaker"). A leaf that is only its
    title (a task "Dentist appointment" under a journal day) says something by where it is
    filed, and is sent."""
    titles = {c.key for c in sections if c.hit.title_only}
    return frozenset(key for key in titles if has_children(*key))


def mark_folders(candidates: list[Candidate], keys: frozenset[tuple[str, str]]) -> list[Candidate]:
    """The candidates, those of the notes `keys` names marked a folder (`folders`)."""
    return [replace(c, folder=True) if c.key in keys else c for c in candidates]


def one_of_each_text(
    candidates: Sequence[Candidate],
    snippet_spans: Callable[[Sequence[int]], dict[int, tuple[int, int]]],
) -> tuple[list[Candidate], dict[int, tuple[int, int]]]:
    """The candidates less any whose matched snippet says what one before it already said, and
    where each snippet sits in its section's text (`snippet_spans`, read once: the excerpts are
    cut around them). Man pages and API docs repeat a shared section or example word for word
    in several notes (git's MERGE STRATEGIES under merge, pull and rebase), and three copies
    answer nothing more than one."""
    spans = snippet_spans([c.snippet_id for c in candidates if c.snippet_id is not None])
    said: set[str] = set()
    kept = []
    for candidate in candidates:
        text = matched_text(candidate, spans)
        if text not in said:
            said.add(text)
            kept.append(candidate)
    return kept, spans


def matched_text(candidate: Candidate, spans: dict[int, tuple[int, int]]) -> str:
    """The text of its matched snippet (its whole section without one), white space and case
    folded: what two notes that repeat each other word for word have in common."""
    start, end = spans.get(candidate.snippet_id or -1, (0, len(candidate.hit.text)))
    return collapse_spaces(candidate.hit.text[start:end]).casefold()
