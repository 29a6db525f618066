"""Spans of days a prompt names outright: "dec 18-21", "between dec 18 and 21", "from the 3rd to
the 9th", "28 dec to 3 jan", "vom 3. bis 9. Mai", "du 3 au 9 mai", "del 3 al 9 de mayo", "dal 3
al 9 maggio", "2026-12-18 to 2026-12-21" (the words: words.py).

Read before single dates (prompt.py): "vom 3. bis 9. Mai" read as "9 Mai" alone ruled the
journal's 3rd to 8th out, and "between dec 18 and 21" named no day. Each end is a day with or
without its month and year, and the other end lends what it lacks ("3 bis 9 Mai": both in May;
"dec 28 to jan 3, 2027" starts in 2026; "dec 28 to 3" ends in January, when that makes a week
at most: "dec 21-18" is no span). A span is at most LONGEST_SPAN days long, and "and" joins two
days into one only after "between" ("on dec 18 and 21" is two days). As a single date is, a
span is told from numbers that only look like one by what stands around it:
- a month name that is also another word ("may", "mars", "dec", "jan") only after a word that
  opens a span or says when ("from", "between", "vom", "on", "in") and before no content word:
  "notes from dec 18-21", "vom 3. bis 9. Mai", not "tests between 2 and 4 may fail", "convert
  dec 10-20 to hex", "i have 2-3 mars bars";
- two days of the month alone only as ordinals after "from" or "between", before no content
  word: "from the 3rd to the 9th", not "from the 3rd to the 9th element" or "3 to 9 workers".
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...index.terms import STOP_WORDS
from .mentions import CLOSE_SPAN, Day
from .words import (
    AMBIGUOUS_MONTHS,
    DAY_NUMBER,
    DAY_WORDS,
    LONGEST_SPAN,
    MONTH_OF,
    MONTHS,
    ORDINAL,
    SPAN_AND,
    SPAN_ARTICLES,
    SPAN_BETWEEN,
    SPAN_FROM,
    SPAN_TO,
    WEEKDAYS,
    YEAR,
)

_DASHES = "-–—‒‑−－"  # hyphen, en, em and figure dashes, non-breaking hyphen, minus, full-width
# "dec 18-21", "18th–21st", "dec 18 - jan 3": a dash after a number and before another or a word
# is "to" (dates in figures are taken out of the text before, so "2026-12-18" is not split).
DASHED = re.compile(rf"(?<=\d)((?:st|nd|rd|th)?\.?)\s*[{_DASHES}]\s*(?=\d|[^\W\d_]{{3}})")
# What joins two dates written in figures: "2026-12-18 to 2026-12-21", "18.12.2026 – 21.12.2026".
_FIGURES_JOINED = re.compile(
    rf"\s*(?:[{_DASHES}]|\.\.|" + "|".join(sorted(SPAN_TO)) + r")\s*(?:the\s+|zum\s+)?",
    re.IGNORECASE,
)
_FIGURES_BETWEEN = re.compile(
    r"\b(?:" + "|".join(sorted(SPAN_BETWEEN)) + r")\s+(?:the\s+|dem\s+)?$", re.IGNORECASE
)
_FIGURES_AND = re.compile(r"\s*(?:" + "|".join(sorted(SPAN_AND)) + r")\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    """The days a span names, and the tokens it is said with (`start` to `end`, "to" and the
    word before the first day included)."""

    days: list[Day]
    start: int
    end: int


@dataclass(frozen=True)
class _End:
    day: int
    month: int | None
    year: int | None
    ordinal: bool
    ambiguous: bool  # its month is named by a word that is also another ("may", "dec")
    weekday: bool  # a weekday is named with it ("monday dec 18")
    end: int  # the token after it


def spans(tokens: Sequence[str], opens_with_a_day: bool = False) -> list[Span]:
    """Each span of days the tokens name, first to last; a token belongs to one span at most.
    With `opens_with_a_day`, the prompt opens with a month's word, days and a stop ("dec 18-21
    — anything?"): that word is the month whatever else it may be."""
    found, i = [], 0
    while i < len(tokens):
        span = _span_at(tokens, i, opens_with_a_day and i == 0)
        found += [span] if span else []
        i = span.end if span else i + 1
    return found


def figures_joined(between: str, before: str) -> bool:
    """Whether two dates written in figures, with `between` them and `before` the first, are
    the ends of a span: "2026-12-18 to 2026-12-21", "between 2026-12-18 and 2026-12-21"."""
    if _FIGURES_JOINED.fullmatch(between):
        return True
    return bool(_FIGURES_AND.fullmatch(between) and _FIGURES_BETWEEN.search(before))


def each_day(first: Day, last: Day) -> list[Day]:
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


def _span_at(tokens: Sequence[str], i: int, opening: bool = False) -> Span | None:
    """The span whose first day starts at `i` ("dec 18 to 21", "3 bis 9 mai"), with the word
    before it that opens one ("between", "vom") and its article."""
    first = _end_at(tokens, i)
    if first is None or first.end >= len(tokens):
        return None
    if first.month is None and i and tokens[i - 1] in MONTHS:
        return None  # the day of "jan 1 to jun 30", a span too long to be read from "jan"
    opener_at, opening_word = opener(tokens, i)
    if not joins(tokens[first.end], opening_word):
        return None
    second_at = first.end + 1
    while second_at < len(tokens) and tokens[second_at] in SPAN_ARTICLES:
        second_at += 1
    last = _end_at(tokens, second_at)
    before = opening_word or (tokens[i - 1] if i else "")  # "on dec 18-21" says when
    opens = opening and first.month is not None
    if last is None or not (opens or _told_apart(tokens, first, last, before)):
        return None
    days = _days(first, last)
    if len(days) < 2:
        return None
    return Span(days, i if opener_at is None else opener_at, last.end)


def opener(tokens: Sequence[str], at: int) -> tuple[int | None, str]:
    """(where, which) the word that opens a span whose first day is named at `at` stands:
    "between", "from", "vom", "entre" (with an article after it: "entre el lunes"), or
    (None, "")."""
    before = at - 1 if at and tokens[at - 1] in SPAN_ARTICLES else at
    word = tokens[before - 1] if before else ""
    return (before - 1, word) if word in SPAN_BETWEEN or word in SPAN_FROM else (None, "")


def joins(joiner: str, opening: str) -> bool:
    """Whether `joiner` joins two days into a span opened by `opening`: "to", "bis", "au"
    always; "and", "und", "y" only after "between" ("on dec 18 and 21" is two days)."""
    return joiner in SPAN_TO or (joiner in SPAN_AND and opening in SPAN_BETWEEN)


def _told_apart(tokens: Sequence[str], first: _End, last: _End, before: str) -> bool:
    """Whether what stands around the two ends tells a span of days from numbers (see the
    module doc): a month name that is also another word, or days alone, need the word `before`
    them to open a span or say when, and no content word after them."""
    after = tokens[last.end] if last.end < len(tokens) else ""
    ends_there = after in ("", "to", "and") or (after in STOP_WORDS and after not in MONTH_OF)
    opened = before in SPAN_BETWEEN or before in SPAN_FROM
    if first.month is None and last.month is None:
        return opened and first.ordinal and last.ordinal and ends_there
    dated = first.year or last.year or first.ordinal or last.ordinal  # "may 3rd to 5th"
    if (first.ambiguous or last.ambiguous) and not dated:
        said_when = opened or before in DAY_WORDS or first.weekday or last.weekday
        return said_when and ends_there
    return True


def _days(first: _End, last: _End) -> list[Day]:
    """Each day from the first end to the last: of any month for two days alone; with the
    month (and year) one end lends the other, and then a week at most when the lent month
    turns ("dec 28 to 3", not "dec 21-18")."""
    if first.month is None and last.month is None:
        return [(None, None, day) for day in range(first.day, last.day + 1)]
    lent_from, lent_to = _lent(first, last)
    days = each_day(lent_from, lent_to)
    turned = (first.month is None or last.month is None) and lent_from[1] != lent_to[1]
    return days if not turned or len(days) <= CLOSE_SPAN else []


def _lent(first: _End, last: _End) -> tuple[Day, Day]:
    """The two ends, each with the month and year the other lends it: "3 bis 9 Mai" (May),
    "dec 28 to 3" (the 3rd of January), "dec 28 to jan 3, 2027" (28 December 2026)."""
    first_month, last_month = first.month, last.month
    if first_month is None and last_month is not None:
        first_month = last_month if first.day <= last.day else (last_month - 2) % 12 + 1
    if last_month is None and first_month is not None:
        last_month = first_month if first.day <= last.day else first_month % 12 + 1
    assert first_month is not None and last_month is not None  # one end gives its month
    turns = (first_month, first.day) > (last_month, last.day)
    first_year, last_year = first.year, last.year
    if first_year is None and last_year is not None:
        first_year = last_year - 1 if turns else last_year
    if last_year is None and first_year is not None:
        last_year = first_year + 1 if turns else first_year
    return (first_year, first_month, first.day), (last_year, last_month, last.day)


def _end_at(tokens: Sequence[str], i: int) -> _End | None:
    """A day at `i`: "18", "21st", "dec 18", "monday dec 18", "18 december", "3 de mayo", "28th
    of december 2026"."""
    weekday = i < len(tokens) and tokens[i] in WEEKDAYS
    i += weekday
    if i >= len(tokens):
        return None
    month = MONTHS.get(tokens[i])
    day_at = i + 1 if month else i
    day = number_at(tokens, day_at, DAY_NUMBER, 31)
    if day is None:
        return None
    end = day_at + 1
    if month is None:
        month_at = end + 1 if end < len(tokens) and tokens[end] in MONTH_OF else end
        if month_at < len(tokens) and tokens[month_at] in MONTHS:
            month, end = MONTHS[tokens[month_at]], month_at + 1
    named = tokens[i] if tokens[i] in MONTHS else tokens[end - 1]  # the month's word
    year_at = end + 1 if end < len(tokens) and tokens[end] in MONTH_OF else end
    year = number_at(tokens, year_at, YEAR, 2099)
    ordinal = bool(ORDINAL.fullmatch(tokens[day_at]))
    ambiguous = month is not None and named in AMBIGUOUS_MONTHS and not (ordinal or year)
    return _End(day, month, year, ordinal, ambiguous, weekday, year_at + 1 if year else end)


def number_at(tokens: Sequence[str], i: int, pattern: re.Pattern[str], most: int) -> int | None:
    """The number `pattern` reads in the token at `i`, when it is from 1 to `most`."""
    if not 0 <= i < len(tokens) or (found := pattern.fullmatch(tokens[i])) is None:
        return None
    value = int(found[1])
    return value if 1 <= value <= most else None
