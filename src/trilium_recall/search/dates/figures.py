"""Dates written in figures: "2026-10-21", "21.10.2026" (day first, with a year), "2021/12/21"
(year first), a day/month pair ("12/21", "21/12/2021"; "3/4/2026" is both readings), and two of
them joined as a span ("2026-12-18 to 2026-12-21"). Read before the words around them
(prompt.py), and taken out of the text so that their numbers are read as nothing else."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...index.terms import words
from .mentions import Date, DateMention, Day, span_mentions, valid_day
from .spans import each_day, figures_joined

ISO_DATE = re.compile(
    r"(?<![\w-])((?:19|20)\d\d)-(0?[1-9]|1[0-2])(?:-(0?[1-9]|[12]\d|3[01]))?(?![\w-])"
)
_DOTTED = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.((?:19|20)\d\d)(?![\w.])")
_SLASHED = re.compile(
    r"(?<![\w/])(?:((?:19|20)\d\d)/)?(\d{1,2})/(\d{1,2})(?:/((?:19|20)\d\d))?(?![\w/])"
)


def numeric_dates(text: str) -> tuple[list[DateMention], str]:
    """ISO dates and numeric dates (`_slashed` says which are read), two joined as a span
    ("2026-12-18 to 2026-12-21") as its days, and the text without them."""
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
        (f for f in found if f[1].month and f[1].day and valid_day(f[1].month, f[1].day)),
        key=lambda f: f[0].start(),
    )
    mentions = _figures(text, days)
    for pattern in (ISO_DATE, _DOTTED, _SLASHED):
        text = pattern.sub(" ", text)
    return mentions, text


def _figures(text: str, found: Sequence[tuple[re.Match[str], Date, bool]]) -> list[DateMention]:
    """A mention of each date written in figures, or of each day of a span two of them make."""
    mentions: list[DateMention] = []
    i = 0
    while i < len(found):
        (first, start, either), days = found[i], []
        if i + 1 < len(found) and not (either or found[i + 1][2]):
            last, end = found[i + 1][0], found[i + 1][1]
            if figures_joined(text[first.end() : last.start()], text[: first.start()]):
                days = each_day(_as_day(start), _as_day(end))
        if days:
            said = text[first.start() : found[i + 1][0].end()]
            mentions += span_mentions(days, tuple(words(said)), said)
            i += 2
        else:
            mentions.append(DateMention(start, tuple(words(first[0])), first[0], either=either))
            i += 1
    return mentions


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
