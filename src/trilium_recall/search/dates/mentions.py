"""What a prompt's dates are read into (prompt.py, spans.py, figures.py,
from_today.py): a calendar date as far as it is known, and a date the prompt names with the
words it names it by."""

from __future__ import annotations

import calendar
import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from .words import MONTH_ABBREVIATIONS

# The longest span that says which days closely enough to rule the journal's other days out
# ("what did I work on last week"); "last month", "between sep 1 and 15" and "3 days ago" are
# said loosely.
CLOSE_SPAN = 7
# The most days a span is read as ("since tuesday", "between sep 1 and oct 31"): a quarter.
LONGEST_SPAN = 92
# (year, month, day) as a prompt gives them: the year, and until a span is read the month, may
# be missing.
Day = tuple[int | None, int | None, int]


@dataclass(frozen=True)
class Date:
    """A calendar date as far as it is known: any field may be missing."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def agrees(self, other: Date) -> bool:
        """Whether `other` has every field this date gives, and the same."""
        return all(mine is None or mine == theirs for mine, theirs in self._pairs(other))

    def contradicts(self, other: Date) -> bool:
        """Whether a field both give differs."""
        pairs = self._pairs(other)
        return any(None not in (mine, theirs) and mine != theirs for mine, theirs in pairs)

    @property
    def number(self) -> int:
        """The date as a number that orders dates (2021-12-21 → 20211221; a missing field 0)."""
        return (self.year or 0) * 10_000 + (self.month or 0) * 100 + (self.day or 0)

    def _pairs(self, other: Date) -> tuple[tuple[int | None, int | None], ...]:
        return ((self.year, other.year), (self.month, other.month), (self.day, other.day))

    def __str__(self) -> str:
        """ "21 dec 2021", "nov", "day 21": the fields it gives."""
        month = MONTH_ABBREVIATIONS[self.month - 1] if self.month else None
        if self.day and not month:
            return f"day {self.day}" + (f" of {self.year}" if self.year else "")
        return " ".join(str(p) for p in (self.day, month, self.year) if p) or "no date"


@dataclass(frozen=True)
class DateMention:
    """A date the prompt names: the words it is named with and the text they were read from."""

    date: Date
    words: tuple[str, ...]
    said: str
    relative: bool = False  # named from today ("yesterday", "last friday")
    # said loosely ("last month", "3 days ago"): finds its days' notes, rules no other day out
    loose: bool = False
    either: bool = False  # one of the two readings of a date written either way ("3/4/2026")
    # The words a note that names this day itself would hold, when they are not `words`: a
    # span's day is named by the whole span ("between october 19 and 21"), a note by "october"
    # and "20" ("from 20 October" in a transcript).
    held_as: tuple[str, ...] = ()


def valid_day(month: int, day: int, year: int | None = None) -> bool:
    """Whether the month has that day: in `year`, else in a leap year (29 february is a day)."""
    return 1 <= day <= calendar.monthrange(year or 2024, month)[1]


def days_between(first: Day, last: Day) -> list[Day]:
    """The days from `first` to `last`, both with their month; none when the last is before
    the first, either is no day, or there are more than LONGEST_SPAN. Without years the span
    is walked in a leap year (29 February is a day), or across the turn of one."""
    (first_year, first_month, first_day), (last_year, last_month, last_day) = first, last
    if first_month is None or last_month is None:
        return []
    turns = (first_month, first_day) > (last_month, last_day)
    walked_first = first_year or (2023 if turns else 2024)
    walked_last = last_year or (walked_first + 1 if turns else walked_first)
    try:
        day = datetime.date(walked_first, first_month, first_day)
        final = datetime.date(walked_last, last_month, last_day)
    except ValueError:
        return []
    if not 0 <= (final - day).days < LONGEST_SPAN:
        return []
    days: list[Day] = []
    while day <= final:
        days.append((day.year if first_year else None, day.month, day.day))
        day += datetime.timedelta(days=1)
    return days


def span_mentions(
    days: Sequence[Day],
    said: tuple[str, ...],
    text: str,
    month_words: dict[int, str],
    loose: bool | None = None,
) -> list[DateMention]:
    """A span's days, named outright by its words; said loosely when there are more than
    CLOSE_SPAN (or as `loose` says)."""
    loose = len(days) > CLOSE_SPAN if loose is None else loose
    return [
        DateMention(Date(*day), said, text, loose=loose, held_as=_held_as(day, month_words))
        for day in days
    ]


def _held_as(day: Day, month_words: dict[int, str]) -> tuple[str, ...]:
    """The words a note naming one day of a span would hold: its month's word in the prompt
    (`month_words`) and its number, "20th" for a day of any month (as "on the 20th" is held),
    or the day in figures."""
    year, month, number = day
    if month is None:
        return (_ordinal(number),)
    if month in month_words:
        return (month_words[month], str(number))
    return tuple(str(part) for part in (year, month, number) if part is not None)


def _ordinal(number: int) -> str:
    """ "1st", "2nd", "11th", "21st": as a prompt writes a day of the month in English."""
    teens = 10 <= number % 100 <= 13
    return f"{number}{'th' if teens else {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th')}"


def consecutive(first: Date, second: Date) -> bool:
    """Whether `second` is the day after `first` (fields either lacks are taken as agreeing)."""
    if first.month is None or second.month is None:
        return first.day is not None and second.day == first.day + 1
    one = (first.year, first.month, first.day or 0)
    other = (second.year if first.year else None, second.month, second.day or 0)
    return len(days_between(one, other)) == 2
