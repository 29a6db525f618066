"""Spans of days a prompt names in words: "dec 18-21", "between dec 18 and 21", "from the 3rd to
the 9th", "28 dec to 3 jan", "from oct 19 to today", "vom 3. bis 9. Mai", "du 3 au 9 mai", "del 3
al 9 de mayo", "dal 3 al 9 maggio" (the words: words.py; spans in figures: figures.py).

Read before single dates (prompt.py): "vom 3. bis 9. Mai" read as "9 Mai" alone ruled the
journal's 3rd to 8th out, and "between dec 18 and 21" named no day. Each end is a day with or
without its month and year, and the other end lends what it lacks ("3 bis 9 Mai": both in May;
"dec 28 to jan 3, 2027" starts in 2026; "dec 28 to 3" ends in January, when that makes a week
at most). "And" joins two days into one only after "between" ("on dec 18 and 21" is two days).
A span that cannot be walked (backwards, or longer than LONGEST_SPAN) names no day at all:
neither end is a day said closely. As a single date is, a span is told from numbers that only
look like one by what stands around it:
- a month's word that is also another word ("may", "dec", "mars", "sept") only after a word
  that opens a span or says when ("from", "between", "on", "in") and before no content word
  ("notes from dec 18-21", not "tests between 2 and 4 may fail" or "convert dec 10-20 to
  hex"); or between words of the language it is a month in ("was habe ich vom 3. bis 9. Mai
  gemacht": German "Mai" is no other word there);
- two days of the month alone only as ordinals after "from", "between" or "on", before no
  content word, in a prompt that asks what days held ("what did I do from the 3rd to the 9th",
  not "move items from the 1st to the 2nd").
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ...index.terms import STOP_WORDS
from .days import number_at
from .mentions import CLOSE_SPAN, Day, days_between, valid_day
from .words import (
    AMBIGUOUS_EVERYWHERE,
    AMBIGUOUS_MONTHS,
    DASHES,
    DAY_NUMBER,
    DAY_WORDS,
    ENGLISH_SPAN_WORDS,
    MONTH_OF,
    MONTHS,
    ORDINAL,
    SPAN_AND,
    SPAN_ARTICLES,
    SPAN_BETWEEN,
    SPAN_FROM,
    SPAN_TO,
    TODAY_WORDS,
    WEEKDAYS,
    YEAR,
)

# "dec 18-21", "18th–21st", "dec 18 - jan 3": a dash after a number and before another or a word
# is "to" (dates in figures are taken out of the text before, so "2026-12-18" is not split).
# The rest of a joining phrase after its first word: "to the", "bis zum", "jusqu'à", "fino a".
_JOINING_PHRASE = SPAN_ARTICLES | SPAN_TO
DASHED = re.compile(rf"(?<=\d)((?:st|nd|rd|th)?\.?)\s*[{DASHES}]\s*(?=\d|[^\W\d_]{{3}})")


@dataclass(frozen=True)
class Span:
    """The days a span names (none for one that cannot be walked: then its two `ends`), the
    tokens it is said with (`start` to `end`, the word that opens it included) and the words it
    names months by."""

    days: list[Day]
    start: int
    end: int
    month_words: dict[int, str]
    ends: list[Day]  # its two ends, when it cannot be walked (no `days`)


@dataclass(frozen=True)
class _End:
    day: int
    month: int | None
    year: int | None
    ordinal: bool
    month_word: str | None  # the word it names its month by
    weekday: bool  # a weekday is named with it ("monday dec 18")
    end: int  # the token after it
    today: bool = False  # "today" ("from oct 19 to today")

    @property
    def ambiguous(self) -> bool:
        """Whether its month's word is also another word ("may", "dec"), no ordinal or year
        saying otherwise."""
        return self.month_word in AMBIGUOUS_MONTHS and not (self.ordinal or self.year)


@dataclass(frozen=True)
class Context:
    """What the prompt around the spans says: its date (`now`: "… to today"), whether it opens
    with a month's word and a day (prompt.py), and whether it asks what days held."""

    now: datetime.date
    opens_with_a_day: bool = False
    asks_the_day: bool = False


def spans(tokens: Sequence[str], context: Context) -> list[Span]:
    """Each span of days the tokens name, first to last; a token belongs to one span at most."""
    found, i = [], 0
    while i < len(tokens):
        span = _span_at(tokens, i, context)
        found += [span] if span else []
        i = span.end if span else i + 1
    return found


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


def _span_at(tokens: Sequence[str], i: int, context: Context) -> Span | None:
    """The span whose first day starts at `i` ("dec 18 to 21", "3 bis 9 mai"), with the word
    before it that opens one ("between", "vom") and its article."""
    first = _end_at(tokens, i)
    if first is None or first.end >= len(tokens):
        return None
    if first.month is None and i and tokens[i - 1] in MONTHS:
        return None  # the day of "jan 1 to jun 30": the span, if any, is read from "jan"
    opener_at, opening = opener(tokens, i)
    joiner = tokens[first.end]
    if not joins(joiner, opening):
        return None
    second_at = first.end + 1  # after the joining phrase: "to the", "bis zum", "jusqu'à"
    while second_at < len(tokens) and tokens[second_at] in _JOINING_PHRASE:
        second_at += 1
    last = _end_at(tokens, second_at) or _today_at(tokens, second_at, context.now)
    opens = context.opens_with_a_day and i == 0 and first.month is not None
    before_at = i - 1 if i and tokens[i - 1] in SPAN_ARTICLES else i  # "on the 3rd-9th"
    said = _Said(opening, tokens[before_at - 1] if before_at else "", joiner)
    if last is None or not (opens or _told_apart(tokens, first, last, said, context)):
        return None
    start = i if opener_at is None else opener_at
    words = {end.month: end.month_word for end in (first, last) if end.month and end.month_word}
    days = _days(first, last)
    lent = [] if days or (first.month is None and last.month is None) else _lent(first, last)
    ends = [end for end in dict.fromkeys(lent) if end[1] and valid_day(end[1], end[2], end[0])]
    return Span(days, start, last.end, words, ends)


class _Said(NamedTuple):
    opening: str  # the word that opens the span ("between", "vom"), or ""
    before: str  # the word before its first day
    joiner: str  # the word that joins its days ("to", "bis"; a dash is read as "to")


def _told_apart(
    tokens: Sequence[str], first: _End, last: _End, said: _Said, context: Context
) -> bool:
    """Whether what stands around the two ends tells a span of days from numbers (see the
    module doc)."""
    opening, joiner = said.opening, said.joiner
    before = opening or said.before
    after = tokens[last.end] if last.end < len(tokens) else ""
    ends_there = after in ("", "to", "and") or (after in STOP_WORDS and after not in MONTH_OF)
    opened = before in SPAN_BETWEEN or before in SPAN_FROM
    if first.month is None and last.month is None:
        asked = context.asks_the_day and (opened or before == "on")
        return asked and first.ordinal and last.ordinal and ends_there
    ambiguous = [end.month_word for end in (first, last) if end.ambiguous]
    said_outright = any((end.ordinal or end.year) and not end.today for end in (first, last))
    if not ambiguous or said_outright:
        return True
    if not AMBIGUOUS_EVERYWHERE.intersection(ambiguous) and not {opening, joiner} <= (
        ENGLISH_SPAN_WORDS | {""}
    ):
        return True  # "vom 3. bis 9. Mai gemacht": German "Mai" is no other word
    said_when = opened or before in DAY_WORDS or first.weekday or last.weekday
    return said_when and ends_there


def _days(first: _End, last: _End) -> list[Day]:
    """Each day from the first end to the last: of any month for two days alone; with the
    month (and year) one end lends the other, and then a week at most when the lent month
    turns ("dec 28 to 3", not "dec 21-18")."""
    if first.month is None and last.month is None:
        return [(None, None, day) for day in range(first.day, last.day + 1)]
    lent_from, lent_to = _lent(first, last)
    days = days_between(lent_from, lent_to)
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
    month_word: str | None = tokens[i] if tokens[i] in MONTHS else None
    day_at = i + 1 if month_word else i
    day = number_at(tokens, day_at, DAY_NUMBER, 31)
    if day is None:
        return None
    end = day_at + 1
    if month_word is None:
        month_at = end + 1 if end < len(tokens) and tokens[end] in MONTH_OF else end
        if month_at < len(tokens) and tokens[month_at] in MONTHS:
            month_word, end = tokens[month_at], month_at + 1
    year_at = end + 1 if end < len(tokens) and tokens[end] in MONTH_OF else end
    year = number_at(tokens, year_at, YEAR, 2099)
    ordinal = bool(ORDINAL.fullmatch(tokens[day_at]))
    month = MONTHS[month_word] if month_word else None
    return _End(day, month, year, ordinal, month_word, weekday, year_at + 1 if year else end)


def _today_at(tokens: Sequence[str], i: int, now: datetime.date) -> _End | None:
    """ "today" as the last end: "from oct 19 to today", "vom 3. Mai bis heute"."""
    if i >= len(tokens) or tokens[i] not in TODAY_WORDS:
        return None
    return _End(now.day, now.month, now.year, False, None, False, i + 1, today=True)
