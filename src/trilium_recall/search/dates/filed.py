"""Where notes are filed in time, and what that says to the dates a prompt names (prompt.py).

No section of a note filed under the day note "21 - Thursday" holds the word "21st", and none
written in November need say "november": keyword search counted a prompt's date words as
unknown (a sign of a prompt about something else) and the prompt decision stayed silent with the
right note ranked first (eval/RESULTS.md, stop 39). A note's date is where Trilium files it: the
journal's `#dateNote` or `#monthNote` label, its own or its nearest ancestor's (classify.py), else
the journal's year, month and day notes in its breadcrumbs ("2021 › 12 - December › 21 -
Thursday") or a date its title gives ("postmortem (Sep 2026)", "draft 2026-09-03"). A prompt's
date words count as matched in a section of a note dated the same (every field the prompt gives
agrees: "the 21st" any month, "late november" any day) that also holds another of its words; the
notes filed on a day the prompt names are candidates of their own (`filed_on`); and a note the
journal files on another day is no answer (`DateReading.another_day`).
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ...index.store import Store
from ...index.terms import index_term, words
from ...notes.classify import BREADCRUMB
from ...notes.records import FiledNote
from .figures import ISO_DATE
from .mentions import Date, DateMention, valid_day
from .prompt import close_days, first_word, spoken_dates
from .words import MONTHS, WEEKDAYS, YEAR

# Trilium's journal titles its month and day notes "12 - December" and "21 - Thursday".
_NUMBERED = re.compile(r"\s*(\d{1,2})\s*-\s*(\w+)")
# A day as a note writes it, looser at the edges than in a prompt (no version numbers there).
_WRITTEN_YMD = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_./](\d\d?)[-_./](\d\d?)(?!\d)")
_WRITTEN_DMY = re.compile(r"(?<!\d)(\d\d?)[-./](\d\d?)[-./]((?:19|20)\d\d)(?!\d)")
FILED_K = 40
SECTIONS_A_NOTE = 5


@dataclass(frozen=True)
class DateReading:
    """What a section's note says to the prompt's dates."""

    dated: tuple[str, ...] = ()  # prompt terms naming a date the note is filed under
    another_day: bool = False  # the journal files it on a day, and none the prompt names
    journal_day: bool = False  # the journal files it on a day (a day note, or under one)
    holds_day: bool = False  # its own text names a whole day the prompt names


NO_READING = DateReading()


def read_dates(
    mentions: Sequence[DateMention],
    terms: Sequence[str],
    literal: Sequence[str],
    held: Collection[str],
    note: tuple[str, Sequence[str], str | None],
    asks_the_day: bool = False,
    *,
    written: Sequence[str] = (),
) -> DateReading:
    """What a section of the note (its title, breadcrumbs and journal labels' dates) says to
    the prompt's dates: the prompt `terms` (not already `literal`ly matched) naming a date the
    note is filed under; whether the journal files it on another day than every day the
    prompt names (unless its own words, the stems it `held`, name the day: "from 19 October"
    in a transcript; a day in figures, as its title or the `written` parts, its heading and
    text, write one).

    A date counts as matched only in a section that also holds another word of the prompt:
    the date says which of the notes about the topic, not what the prompt is about ("book a
    table for two on december 20" is not about the journal's 20th of December). A day named
    from today matches no word ("today" is no word a note holds), and rules notes out only
    beside a day named outright or in a prompt that `asks_the_day` ("what happened on friday",
    "did I note anything about nginx on wednesday"): "why does my build fail today" is about
    the build. A span longer than a week ("last month", "since two weeks ago") rules none out:
    "what index did I add last month" may mean a note of six weeks ago."""
    if not mentions:
        return NO_READING
    title, paths, calendar = note[0], tuple(note[1]), note[2]
    outright = [m for m in mentions if not m.relative]
    dates = note_dates(title, paths, calendar)
    said = {
        index_term(word)
        for m in outright
        if any(m.date.agrees(date) for date in dates)
        for word in m.words
    }
    named = {index_term(word) for m in outright for word in m.words}
    topical = any(index_term(t) not in named for t in literal)
    dated = tuple(t for t in terms if topical and t not in literal and index_term(t) in said)
    ruling = close_days(mentions) if outright or asks_the_day else []
    days = [m.date for m in ruling if m.date.day]
    journal = journal_days(title, paths, calendar)
    holds = holds_a_day(outright, held, (title, *written))
    another = bool(days and journal) and all(d.contradicts(j) for d in days for j in journal)
    return DateReading(dated, another and not holds, bool(journal), holds)


def holds_a_day(
    mentions: Sequence[DateMention], held: Collection[str], written: Sequence[str]
) -> bool:
    """Whether a section's own words (their stems, `held`) name a whole day the prompt names
    outright: "may" and "9" of "may 9" in one section, not "may" alone. A day written in figures
    ("2026-05-05", "5.5.2026") only as a date its `written` parts (title, heading, text) write
    in figures too: "2026" and "05" in a section are a version and a time as often as a day.
    They are read only for such a day, which few prompts name."""
    days: list[Date] | None = None
    for m in mentions:
        if not m.date.day or m.relative:
            continue
        named_by = m.held_as or m.words
        if not all(word.isdigit() for word in named_by):
            if all(index_term(w) in held for w in named_by):
                return True
            continue
        days = _written_days("\n".join(written)) if days is None else days
        if any(m.date.agrees(date) for date in days):
            return True
    return False


def _written_days(text: str) -> list[Date]:
    """The days a note's text writes in figures, however it is cut around them ("last one
    21.10.2026.", "restic-2026-10-21.tar"), a day and month pair each way round."""
    days = [Date(int(y), int(m), int(d)) for y, m, d in _WRITTEN_YMD.findall(text)]
    for a, b, year in _WRITTEN_DMY.findall(text):
        days += [Date(int(year), int(a), int(b)), Date(int(year), int(b), int(a))]
    return days


def filed_on(
    store: Store,
    mentions: Sequence[DateMention],
    instances: Iterable[str],
    limit: int = FILED_K,
) -> list[int]:
    """The sections of `instances`' notes filed on a day the prompt names (or in a month it
    names alone), day notes before the notes under them (shorter breadcrumbs), the latest first
    ("on the 21st" is most likely the last one), at most SECTIONS_A_NOTE of each: meaning search
    does not find "21 - Wednesday" for "what did I do on october 21st", as its text never says
    October."""
    days = [m.date for m in mentions if m.date.day]
    # "what did I write in october": a month named alone files its days' notes
    months = [m.date for m in mentions if m.date.month and not m.date.day]
    keys = {(d.month, d.day) for d in days if d.day}
    keys |= {(d.month, n) for d in months for n in range(1, 32)}
    if not keys:
        return []
    wanted = set(instances)
    found = {
        (note.instance, note.note_id): (depth, note)
        for key in keys
        for date, depth, note in _filed_index(store).get(key, ())
        if note.instance in wanted and any(d.agrees(date) for d in days + months)
    }
    ordered = sorted(
        found.values(), key=lambda p: (p[0], -_latest(p[1]), p[1].instance, p[1].note_id)
    )
    sections: list[int] = []
    for _, note in ordered:
        if len(sections) >= limit:
            break
        # a long day note leaves room for the notes filed under it
        sections += store.section_ids_of(note.instance, [note.note_id])[:SECTIONS_A_NOTE]
    return sections[:limit]


def note_dates(title: str, paths: tuple[str, ...], calendar: str | None) -> tuple[Date, ...]:
    """The dates a note is filed under: the journal labels' (`calendar`, "2026-10-21"), else
    one per breadcrumb path (its title last) that names one."""
    return tuple(date for date, _ in _read_note(title, paths, calendar))


def journal_days(title: str, paths: tuple[str, ...], calendar: str | None) -> tuple[Date, ...]:
    """The days a journal files the note under: a day note's own, or its ancestor's."""
    return tuple(date for date, journal in _read_note(title, paths, calendar) if journal)


@functools.lru_cache(maxsize=1 << 14)
def _read_note(
    title: str, paths: tuple[str, ...], calendar: str | None
) -> tuple[tuple[Date, bool], ...]:
    if labelled := [m for value in (calendar or "").split(",") if (m := ISO_DATE.fullmatch(value))]:
        dates = [Date(*(int(part) if part else None for part in m.groups())) for m in labelled]
        return tuple((date, date.day is not None) for date in dates)  # a day's is a day note's
    found = {_filed_date([*path.split(BREADCRUMB), title]) for path in paths or ("",)}
    return tuple(pair for pair in found if pair is not None)


def _filed_date(segments: Sequence[str]) -> tuple[Date, bool] | None:
    """The date the deepest dated segment gives, with the year of a segment above it, and
    whether its day is a journal day note's."""
    year = month = day = None
    journal = False
    for segment in segments:
        if iso := ISO_DATE.search(segment):
            year, month = int(iso[1]), int(iso[2])
            day, journal = (int(iso[3]) if iso[3] else None), False
        elif YEAR.fullmatch(segment.strip()):
            year, month, day, journal = int(segment), None, None, False
        elif (numbered := _NUMBERED.match(segment)) and (name := first_word(numbered[2])):
            number = int(numbered[1])
            if MONTHS.get(name) == number:  # "12 - December"
                month, day, journal = number, None, False
            elif name in WEEKDAYS and month and valid_day(month, number):  # "21 - Thursday"
                day, journal = number, True
        elif said := [m.date for m in spoken_dates(words(segment)) if m.date.month]:
            year, month, day = said[0].year or year, said[0].month, said[0].day
            journal = False
    return (Date(year, month, day), journal) if month or day else None


def _latest(note: FiledNote) -> int:
    """The note's latest day as a number, for the latest first."""
    return max(d.number for d in note_dates(note.title, note.paths, note.calendar))


# The filed notes of each open store by (month, day), rebuilt when the store reads its filed
# notes again (after a write to the notes): a prompt naming a day looks up its day, not every
# note.
FiledIndex = dict[tuple[int | None, int], list[tuple[Date, int, FiledNote]]]
_INDEXES: weakref.WeakKeyDictionary[Store, tuple[list[FiledNote], FiledIndex]] = (
    weakref.WeakKeyDictionary()
)
_INDEXES_LOCK = threading.Lock()


def _filed_index(store: Store) -> FiledIndex:
    """(month, day) and (None, day) → (the date, breadcrumb depth, note) of each note filed
    on it."""
    notes = store.filed_notes()
    with _INDEXES_LOCK:
        cached = _INDEXES.get(store)
        if cached is not None and cached[0] is notes:
            return cached[1]
    index: FiledIndex = {}
    for note in notes:
        depth = min(path.count(BREADCRUMB) for path in note.paths or ("",))
        for date in note_dates(note.title, note.paths, note.calendar):
            if date.day:
                for key in ((date.month, date.day), (None, date.day)):
                    index.setdefault(key, []).append((date, depth, note))
    with _INDEXES_LOCK:
        _INDEXES[store] = (notes, index)
    return index
