"""Dates written in figures: "2026-10-21", "21.10.2026" (day first, with a year), "2021/12/21"
(year first), a day/month pair ("12/21", "21/12/2021"; "3/4/2026" is both readings), and two of
them joined as a span ("2026-12-18 to 2026-12-21"). Read before the words around them
(prompt.py), and taken out of the text so that their numbers are read as nothing else."""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence

from ...index.terms import words
from .mentions import Date, DateMention, Day, days_between, span_mentions, valid_day
from .words import DASHES, SPAN_AND, SPAN_BETWEEN, SPAN_TO, TODAY_WORDS

ISO_DATE = re.compile(
    r"(?<![\w-])((?:19|20)\d\d)-(0?[1-9]|1[0-2])(?:-(0?[1-9]|[12]\d|3[01]))?(?![\w-])"
)
_DOTTED = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.((?:19|20)\d\d)(?![\w.])")
_SLASHED = re.compile(
    r"(?<![\w/])(?:((?:19|20)\d\d)/)?(\d{1,2})/(\d{1,2})(?:/((?:19|20)\d\d))?(?![\w/])"
)
# What joins two dates in figures into a span: "2026-12-18 to 2026-12-21", "18.12.2026 –
# 21.12.2026", "du 2026-12-18 jusqu'au 2026-12-21"; "and" only after "between".
_JOINED = re.compile(
    rf"\s*(?:[{DASHES}]|\.\.|" + "|".join(sorted(SPAN_TO)) + r")(?:['’]\s*(?:au|a|à))?\s*"
    r"(?:the\s+|zum\s+)?",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    r"\b(?:" + "|".join(sorted(SPAN_BETWEEN)) + r")\s+(?:the\s+|dem\s+)?$", re.IGNORECASE
)
_AND = re.compile(r"\s*(?:" + "|".join(sorted(SPAN_AND)) + r")\s*", re.IGNORECASE)
# "2026-10-19 to today", "vom 19.10.2026 bis heute": the days up to today (group 1: the words
# that join them, read as `_JOINED` and `_AND` read them between two dates).
_TO_TODAY = re.compile(
    rf"(\s*(?:[{DASHES}]|(?:" + "|".join(sorted(SPAN_TO | SPAN_AND)) + r")(?:['’]\s*(?:au|a|à))?)"
    r"\s+)(?:" + "|".join(sorted(TODAY_WORDS)) + r")\b",
    re.IGNORECASE,
)


def numeric_dates(text: str, now: datetime.date) -> tuple[list[DateMention], str]:
    """ISO dates and numeric dates (`_slashed` says which are read), two joined as a span
    ("2026-12-18 to 2026-12-21"), or one up to today ("2026-10-19 to today", `now`), as its
    days, and the text without them."""
    found: list[tuple[re.Match[str], Date, bool]] = []  # (where, date, one of two readings)
    for m in ISO_DATE.finditer(text):
        if m[3]:  # "2011-12" is as often a season or a version as a month
            found.append((m, Date(int(m[1]), int(m[2]), int(m[3])), False))
    for m in _DOTTED.finditer(text):
        found.append((m, Date(int(m[3]), int(m[2]), int(m[1])), False))
    for m in _SLASHED.finditer(text):
        readings = _slashed(m, words(text[: m.start()])[-1:] == ["on"])
        found += [(m, date, len(readings) > 1) for date in readings]
    days = sorted(
        (
            f
            for f in found
            if f[1].month and f[1].day and valid_day(f[1].month, f[1].day, f[1].year)
        ),
        key=lambda f: f[0].start(),
    )
    mentions, read = _figures(text, days, now)
    for start, end in read:  # "… to today" is read with its date, not as today alone
        text = text[:start] + " " * (end - start) + text[end:]
    for pattern in (ISO_DATE, _DOTTED, _SLASHED):
        text = pattern.sub(" ", text)
    return mentions, text


def _figures(
    text: str, found: Sequence[tuple[re.Match[str], Date, bool]], now: datetime.date
) -> tuple[list[DateMention], list[tuple[int, int]]]:
    """A mention of each date written in figures, or of each day of a span two of them make or
    one makes up to today (its two ends, said loosely, for a span that cannot be walked:
    backwards, or longer than LONGEST_SPAN); and where the words "to today" were read."""
    mentions: list[DateMention] = []
    read: list[tuple[int, int]] = []
    i = 0
    while i < len(found):
        first, start, either = found[i]
        before = text[: first.start()]
        pair = i + 1 < len(found) and not (either or found[i + 1][2])
        if pair and _span_between(text[first.end() : found[i + 1][0].start()], before):
            said = text[first.start() : found[i + 1][0].end()]
            mentions += _span(said, _as_day(start), _as_day(found[i + 1][1]))
            i += 2
            continue
        to_today = _TO_TODAY.match(text, first.end()) if start.year and not either else None
        if to_today and _span_between(to_today[1], before):
            said = text[first.start() : to_today.end()]
            mentions += _span(said, _as_day(start), (now.year, now.month, now.day))
            read.append((first.end(), to_today.end()))
        else:
            mentions.append(DateMention(start, tuple(words(first[0])), first[0], either=either))
        i += 1
    return mentions, read


def _span(said: str, first: Day, last: Day) -> list[DateMention]:
    """The days from `first` to `last`; a span that cannot be walked is its two ends, said
    loosely (they name days still, and rule no journal day out)."""
    named = tuple(words(said))
    if days := days_between(first, last):
        return span_mentions(days, named, said, {})
    return span_mentions(list(dict.fromkeys([first, last])), named, said, {}, loose=True)


def _span_between(between: str, before: str) -> bool:
    """Whether two days in figures (or one and "today"), with `between` them and `before` the
    first, are the ends of a span: "and" only after "between"."""
    return bool(_JOINED.fullmatch(between) or (_AND.fullmatch(between) and _BETWEEN.search(before)))


def _as_day(date: Date) -> Day:
    return (date.year, date.month, date.day or 0)


def _slashed(m: re.Match[str], after_on: bool) -> list[Date]:
    """2021/12/21; 12/21/2021 or 21/12/2021 (the part over 12 is the day); 12/21 only after
    "on" ("24/7 support" is no date). A pair either part of which can be the month is both
    dates with a year ("3/4/2026": 4 March in Europe, 3 April in the US) and none without
    ("on 3/4 of the nodes")."""
    first_year, a, b, last_year = m[1], int(m[2]), int(m[3]), m[4]
    if first_year:
        return [Date(int(first_year), a, b)] if not last_year else []
    if not (last_year or after_on):
        return []
    orders = [(month, day) for month, day in dict.fromkeys([(a, b), (b, a)]) if 1 <= month <= 12]
    if not orders or (len(orders) > 1 and not last_year):
        return []
    year = int(last_year) if last_year else None
    return [Date(year, month, day) for month, day in orders if 1 <= day <= 31]
