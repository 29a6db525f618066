"""Days counted back from today: "3 days ago" (that day), "two weeks ago" (that week), "a month
ago" (that month), "a few days ago", "vor 3 Tagen", "il y a deux jours", "hace una semana", "há
três dias", "tre giorni fa", and "seit 3 Tagen", "depuis deux semaines" (every day up to today).
All said loosely: people count roughly (from_today.py)."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from .days import Days, each_day, month, said_at, week
from .mentions import LONGEST_SPAN
from .words import (
    AGO_AFTER,
    AGO_BEFORE,
    COUNTS,
    FEW,
    FEW_UNITS,
    IL_Y_A,
    MOST_COUNTED,
    OF_WORDS,
    SINCE_COUNTED,
    UNIT_DAYS,
)


def counted_back(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """ "3 days ago" (that day), "two weeks ago" (that week), "a month ago" (that month), "vor 3
    Tagen", "il y a deux jours", "hace una semana", "há três dias", "tre giorni fa", "a few days
    ago"; "seit 3 Tagen" (up to today); not "il y a 3 jours de retard" (three days of delay)."""
    counted = _count_before(tokens, i)
    if counted is None:
        return []
    count, start = counted
    said = _said_ago(tokens, start, i + 1)
    if said is None:
        return _for_days(tokens, count, start, i, now)
    start, end = said
    unit = UNIT_DAYS[tokens[i]]
    if count is None:
        return _a_few_back(now, unit, start, end)
    if unit == 1:
        return [(now - datetime.timedelta(days=count), start, end)]
    return (week if unit == 7 else month)(now, -count, start, end)


def _count_before(tokens: Sequence[str], i: int) -> tuple[int | None, int] | None:
    """(count, its first token) of the unit at `i`: "3", "two", "zwei", "a couple of"; None
    for "a few", "ein paar" (not the "a" of "il y a")."""
    before = tokens[i - 1] if i else ""
    if before.isdecimal() and 0 < int(before) <= MOST_COUNTED:
        return int(before), i - 1
    if before in COUNTS:
        return COUNTS[before], i - 1
    if before in FEW:
        article = i >= 2 and tokens[i - 2] in ("a", "ein") and not said_at(tokens, i - 4, *IL_Y_A)
        return None, i - 2 if article else i - 1
    if said_at(tokens, i - 2, "couple", "of"):
        return 2, i - 3 if said_at(tokens, i - 3, "a") else i - 2
    return None


def _said_ago(tokens: Sequence[str], start: int, end: int) -> tuple[int, int] | None:
    """(first token, last + 1) of a count said back from today: "… ago", "vor …", "hace …",
    "il y a …"; None for another ("il y a 3 jours de retard": the "de" says delay)."""
    if end < len(tokens) and tokens[end] in AGO_AFTER:
        return start, end + 1
    if end < len(tokens) and tokens[end] in OF_WORDS:
        return None
    if start and tokens[start - 1] in AGO_BEFORE:
        return start - 1, end
    if said_at(tokens, start - 3, *IL_Y_A):
        return start - 3, end
    return None


def _for_days(
    tokens: Sequence[str], count: int | None, start: int, i: int, now: datetime.date
) -> Days:
    """ "seit 3 Tagen", "depuis deux semaines", "seit ein paar Tagen": every day from that many
    back up to today, at most LONGEST_SPAN of them."""
    if not (start and tokens[start - 1] in SINCE_COUNTED):
        return []
    back = (count or FEW_UNITS[1]) * UNIT_DAYS[tokens[i]]
    if back >= LONGEST_SPAN:
        return []
    return each_day(now - datetime.timedelta(days=back), back + 1, start - 1, i + 1)


def _a_few_back(now: datetime.date, unit: int, start: int, end: int) -> Days:
    """ "a few days ago": from FEW_UNITS[1] days back to FEW_UNITS[0]; "a few weeks ago": those
    weeks; a few months are too long to look in."""
    if unit == UNIT_DAYS["month"]:
        return []
    back = FEW_UNITS[1]
    first = now - datetime.timedelta(days=back) if unit == 1 else week(now, -back, start, end)[0][0]
    return each_day(first, (back - FEW_UNITS[0] + 1) * unit, start, end)
