"""Dates as a prompt says them and as the notes are filed under them.

A journal is looked up by date: "what did I buy on the 21st", "the gift ideas I jotted down in
late november", "the sep 3 incident". No section of a note filed under the day note "21 -
Thursday" holds the word "21st", and none written in November need say "november": keyword
search counted those words as unknown (a sign of a prompt about something else) and the prompt
decision stayed silent with the right note ranked first (eval/RESULTS.md, stop 39).

So a prompt's date words count as matched in a section whose note is dated the same: every
field the prompt gives (year, month, day) is the note's too. "The 21st" agrees with the 21st of
any month, "late november" with any day of November. A note's date is where Trilium files it
(the journal's year, month and day notes in its breadcrumbs: "2021 › 12 - December › 21 -
Thursday") or one its title gives ("postmortem (Sep 2026)", "draft 2026-09-03").

Words that are also other words ("may", "march", "mars", "dec" as in RA/Dec) are a month only
with a day or a year beside them or a word such as "in" or "late" before them; a bare ordinal
is a day only after "the" or "on" and before no content word ("the 3rd argument", "the 21st
century" are not dates).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..index.store import Store
from ..index.terms import STOP_WORDS, index_term

# Month names in the six languages the prompt's language is told in (languages.MARKERS),
# without diacritics as the keyword index folds them.
_MONTH_NAMES = (
    "january januar janvier enero janeiro gennaio",
    "february februar fevrier febrero fevereiro febbraio",
    "march marz mars marzo",
    "april avril abril aprile",
    "may mai mayo maio maggio",
    "june juni juin junio junho giugno",
    "july juli juillet julio julho luglio",
    "august aout agosto",
    "september septembre septiembre setembro settembre",
    "october oktober octobre octubre outubro ottobre",
    "november novembre noviembre novembro",
    "december dezember decembre diciembre dezembro dicembre",
)
_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
MONTHS: dict[str, int] = {
    **{name: n for n, names in enumerate(_MONTH_NAMES, 1) for name in names.split()},
    **{name: n for n, name in enumerate(_ABBREVIATIONS, 1)},
    "sept": 9,
}
# Each is also a verb, a planet, a sea, a name or a coordinate ("RA/Dec"), or a short word.
_AMBIGUOUS = frozenset({"may", "march", "mars", "mai", "mayo", "august", "sept", *_ABBREVIATIONS})
_BEFORE_MONTH = frozenset(
    "in during since early mid late last this next until till before after end start the of by "
    "im seit bis en em au".split()
)
WEEKDAYS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch
    donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche lunes
    martes miercoles jueves viernes sabado domingo lunedi martedi mercoledi giovedi venerdi
    segunda terca quarta quinta sexta""".split()
)
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?")
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th)")
_YEAR = re.compile(r"((?:19|20)\d\d)")
_ISO = re.compile(
    r"(?<![\d-])((?:19|20)\d\d)-(0?[1-9]|1[0-2])(?:-(0?[1-9]|[12]\d|3[01]))?(?![\d-])"
)
# A date with a time of day is a log's or a program's timestamp, not a day the person names.
_TIMESTAMP = re.compile(r"[T ]\d{1,2}:\d\d")
# Dates are read in the prompt's start, and a prompt naming more than a few is a pasted log or
# table: its dates say when something ran, not which notes to look in.
DATE_CHARS = 2000
MAX_DATES = 3
# Trilium's journal titles its month and day notes "12 - December" and "21 - Thursday".
_NUMBERED = re.compile(r"\s*(\d{1,2})\s*-\s*(\w+)")
_WORD = re.compile(r"\w+")
_PATH_SEPARATOR = " › "  # how the index writes breadcrumbs (notes/classify.py)
FILED_K = 40


@dataclass(frozen=True)
class Date:
    """A calendar date as far as it is known: any field may be missing."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def agrees(self, other: Date) -> bool:
        """Whether `other` has every field this date gives, and the same."""
        pairs = ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        return all(mine is None or mine == theirs for mine, theirs in pairs)

    def __str__(self) -> str:
        """ "21 dec 2021", "nov", "day 21": the fields it gives."""
        month = _ABBREVIATIONS[self.month - 1] if self.month else None
        if self.day and not month:
            return f"day {self.day}" + (f" of {self.year}" if self.year else "")
        return " ".join(str(p) for p in (self.day, month, self.year) if p) or "no date"


@dataclass(frozen=True)
class DateMention:
    """A date the prompt names, and the words it is named with."""

    date: Date
    words: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"said": " ".join(self.words), "date": str(self.date)}


def tokens(text: str) -> list[str]:
    """Words folded as the keyword index folds them (case, diacritics), split at non-word
    characters: cheaper than FTS5's tokenizer for titles read on every dated search."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return _WORD.findall("".join(c for c in folded if not unicodedata.combining(c)))


def prompt_dates(prompt: str) -> list[DateMention]:
    """The dates a prompt names: ISO dates, a month with or without a day and a year, a bare
    ordinal day ("on the 21st"); none in a prompt naming more than MAX_DATES."""
    head = prompt[:DATE_CHARS]
    iso = [
        DateMention(Date(int(m[1]), int(m[2]), int(m[3]) if m[3] else None), tuple(tokens(m[0])))
        for m in _ISO.finditer(head)
        if not _TIMESTAMP.match(head, m.end())
    ]
    mentions = iso + _spoken_dates(tokens(_ISO.sub(" ", head)))
    return mentions if len(mentions) <= MAX_DATES else []


def with_dated_terms(
    matched: tuple[str, ...],
    terms: Sequence[str],
    mentions: Sequence[DateMention],
    title: str,
    paths: Sequence[str],
) -> tuple[str, ...]:
    """The prompt `terms` a section `matched`, with those naming a date its note (`title`,
    filed under `paths`) is dated, in prompt order."""
    if not mentions:
        return matched
    dates = note_dates(title, tuple(paths))
    said = {
        index_term(word)
        for mention in mentions
        if any(mention.date.agrees(date) for date in dates)
        for word in mention.words
    }
    return tuple(term for term in terms if term in matched or index_term(term) in said)


def filed_on(store: Store, mentions: Sequence[DateMention], limit: int = FILED_K) -> list[int]:
    """The sections of notes filed on a day the prompt names, the day's own note first (its
    breadcrumbs are the shortest): meaning search does not find "21 - Wednesday" for "what did
    I do on october 21st", as its text never says October."""
    days = [mention.date for mention in mentions if mention.date.day]
    if not days:
        return []
    filed = sorted(
        (min(path.count(_PATH_SEPARATOR) for path in note.paths or ("",)), note.note_id, note)
        for note in store.filed_notes()
        if any(day.agrees(date) for date in note_dates(note.title, note.paths) for day in days)
    )
    sections: list[int] = []
    for _, _, note in filed:
        if len(sections) >= limit:
            break
        sections += store.section_ids_of(note.instance, [note.note_id])
    return sections[:limit]


def day_terms(mentions: Sequence[DateMention], terms: Sequence[str]) -> list[str]:
    """The prompt `terms` that name a day ("october", "21st" of "on october 21st")."""
    said = {index_term(word) for m in mentions if m.date.day for word in m.words}
    return [term for term in terms if index_term(term) in said]


def on_another_day(mentions: Sequence[DateMention], title: str, paths: Sequence[str]) -> bool:
    """Whether the note is filed on a day, and on none the prompt names: a journal's 18th of
    December does not answer "what did I do on May 18th"."""
    days = [mention.date for mention in mentions if mention.date.day]
    if not days:
        return False
    filed = [date for date in note_dates(title, tuple(paths)) if date.day]
    return bool(filed) and not any(day.agrees(date) for date in filed for day in days)


@functools.lru_cache(maxsize=1 << 14)
def note_dates(title: str, paths: tuple[str, ...]) -> tuple[Date, ...]:
    """The dates a note is filed under: one per breadcrumb path (its title last) that names
    one."""
    found = {_filed_date([*path.split(_PATH_SEPARATOR), title]) for path in paths or ("",)}
    return tuple(date for date in found if date is not None)


def _filed_date(segments: Sequence[str]) -> Date | None:
    """The date the deepest dated segment gives, with the year of a segment above it."""
    year = month = day = None
    for segment in segments:
        if iso := _ISO.search(segment):
            year, month = int(iso[1]), int(iso[2])
            day = int(iso[3]) if iso[3] else None
        elif _YEAR.fullmatch(segment.strip()):
            year, month, day = int(segment), None, None
        elif (numbered := _NUMBERED.match(segment)) and (name := tokens(numbered[2])[0]):
            if name in MONTHS:
                month, day = MONTHS[name], None
            elif name in WEEKDAYS and 1 <= int(numbered[1]) <= 31:
                day = int(numbered[1])
        elif said := [m.date for m in _spoken_dates(tokens(segment)) if m.date.month]:
            year, month, day = said[0].year or year, said[0].month, said[0].day
    return Date(year, month, day) if month or day else None


def _spoken_dates(words: Sequence[str]) -> list[DateMention]:
    mentions: list[DateMention] = []
    used: set[int] = set()
    for i, word in enumerate(words):
        if word in MONTHS and (found := _month_at(words, i)) is not None:
            span, date = found
            used.update(span)
            mentions.append(DateMention(date, tuple(words[j] for j in span)))
    for i, word in enumerate(words):
        if i not in used and (day := _bare_day(words, i)) is not None:
            mentions.append(DateMention(Date(day=day), (word,)))
    return mentions


def _month_at(words: Sequence[str], i: int) -> tuple[range, Date] | None:
    """The date around the month name `words[i]`: "28th of december", "december 28, 2021",
    "monday dec 18"; None for a word that is only maybe a month and stands alone."""
    start, end, day, year = i, i + 1, None, None
    if (after := _number(words, end, _DAY, 31)) is not None:
        day, end = after, end + 1
    else:
        before = i - 2 if i >= 2 and words[i - 1] == "of" else i - 1
        if (found := _number(words, before, _DAY, 31)) is not None:
            day, start = found, before
    if (found := _number(words, end, _YEAR, 2099)) is not None:
        year, end = found, end + 1
    alone = day is None and year is None
    if alone and words[i] in _AMBIGUOUS and (i == 0 or words[i - 1] not in _BEFORE_MONTH):
        return None
    if start > 0 and words[start - 1] in WEEKDAYS:
        start -= 1
    return range(start, end), Date(year, MONTHS[words[i]], day)


def _bare_day(words: Sequence[str], i: int) -> int | None:
    """The day of an ordinal after "the" or "on" that no content word follows: "on the 21st"."""
    ordinal = _ORDINAL.fullmatch(words[i])
    if ordinal is None or not 1 <= int(ordinal[1]) <= 31:
        return None
    if i == 0 or words[i - 1] not in ("the", "on"):
        return None
    following = words[i + 1] if i + 1 < len(words) else None
    if following is not None and (following not in STOP_WORDS or following == "of"):
        return None
    return int(ordinal[1])


def _number(words: Sequence[str], i: int, pattern: re.Pattern[str], most: int) -> int | None:
    if not 0 <= i < len(words) or (found := pattern.fullmatch(words[i])) is None:
        return None
    value = int(found[1])
    return value if 1 <= value <= most else None
