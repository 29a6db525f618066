"""Days as the readers of dates count them (from_today.py, counted.py, weekdays.py): the days of
a week, of a month, the nearest weekday of a name, each day of a span, with the tokens that named
them; and two readings of tokens they share (a number at a place, words said at a place)."""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Sequence

Days = list[tuple[datetime.date, int, int]]  # (day, first token, last token + 1)


def nearest(now: datetime.date, weekday: int, which: int) -> datetime.date:
    """The weekday `which` ones from today: -1 the last one before it, 1 the next one after it
    (-2, 2: one further), 0 this week's."""
    if which < 0:
        last = now - datetime.timedelta(days=(now.weekday() - weekday) % 7 or 7)
        return last - datetime.timedelta(weeks=-which - 1)
    if which > 0:
        following = now + datetime.timedelta(days=(weekday - now.weekday()) % 7 or 7)
        return following + datetime.timedelta(weeks=which - 1)
    return now + datetime.timedelta(days=weekday - now.weekday())


def week(now: datetime.date, weeks: int, start: int, end: int) -> Days:
    """The seven days of the week `weeks` from this one, Monday first."""
    monday = now - datetime.timedelta(days=now.weekday()) + datetime.timedelta(weeks=weeks)
    return each_day(monday, 7, start, end)


def month(now: datetime.date, months: int, start: int, end: int) -> Days:
    """Each day of the month `months` from this one."""
    year, index = divmod(now.year * 12 + now.month - 1 + months, 12)
    first = datetime.date(year, index + 1, 1)
    return each_day(first, calendar.monthrange(year, index + 1)[1], start, end)


def number_at(tokens: Sequence[str], i: int, pattern: re.Pattern[str], most: int) -> int | None:
    """The number `pattern` reads in the token at `i`, when it is from 1 to `most`."""
    if not 0 <= i < len(tokens) or (found := pattern.fullmatch(tokens[i])) is None:
        return None
    value = int(found[1])
    return value if 1 <= value <= most else None


def said_at(tokens: Sequence[str], start: int, *said: str) -> bool:
    """Whether the words `said` stand in `tokens` from `start` on."""
    return start >= 0 and tuple(tokens[start : start + len(said)]) == said


def each_day(first: datetime.date, days: int, start: int, end: int) -> Days:
    """`days` days from `first` on, each named by the tokens from `start` to `end`."""
    return [(first + datetime.timedelta(days=d), start, end) for d in range(days)]
