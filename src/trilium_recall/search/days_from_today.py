"""Days a prompt names from today, in the six languages the prompt's language is told in:
"yesterday", "the day before yesterday", "last friday", "vendredi dernier", "what did I do on
friday", "next monday", "last week", "la semana pasada", "last month", "3 days ago", "vor zwei
Wochen", "the week before last" (the words: day_words.py).

A journal is looked up this way as often as by date ("what did I work on last week?"). A
weekday alone is a day only when the prompt says which one: "last", "next", "this" or the
like beside it, or after "on" ("from", "am", "el", "na") in a question asked in the past tense
("what did I do on friday": the last one) or about what is coming ("what's planned on friday":
the next one); "friday deploys are risky" names no day. "Next friday" asked on a Thursday is
tomorrow. A week is its seven days, Monday first, a month each of its days ("the past week",
"in the last month": the 7 or 30 days before today); "two weeks ago" is that week, "a month
ago" that month, "3 days ago" the day; "since" a day is every day from it up to today. "The
last 30 days" is left out: it is as often a query's window ("plot the last 30 days").
"""

from __future__ import annotations

import calendar
import datetime
from collections.abc import Sequence
from typing import NamedTuple

from .day_words import (
    ABBREVIATED,
    AFTER,
    AFTER_ABBREVIATION,
    AFTER_WAS,
    AGO_AFTER,
    AGO_BEFORE,
    BEFORE,
    COMING,
    COMING_AFTER,
    COMING_SEPARATED,
    COUNTS,
    DAY_NUMBERS,
    FURTHER,
    IL_Y_A,
    LAST,
    LONGEST_SINCE,
    MES_AFTER,
    MONTH_WORDS,
    MOST_COUNTED,
    NEXT,
    OF_WORDS,
    ON,
    ONLY_DAYS,
    ORDINAL_NAMES,
    PAST,
    PORTUGUESE_ON,
    PRONOUNS,
    RELATIVE,
    SINCE,
    THIS,
    UNIT_DAYS,
    WE,
    WEEK_WORDS,
    WEEKDAY_NUMBERS,
    WEEKEND_WORDS,
)

Days = list[tuple[datetime.date, int, int]]  # (day, first token, last token + 1)
# The longest span that says which days closely enough to rule the journal's other days out
# ("what did I work on last week"); "last month" and "3 days ago" are said loosely.
CLOSE_SPAN = 7


class NamedDay(NamedTuple):
    day: datetime.date
    start: int  # the first token naming it
    end: int  # the last token + 1
    loose: bool  # a span longer than CLOSE_SPAN, or a count back from today


def days_from_today(tokens: Sequence[str], now: datetime.date) -> list[NamedDay]:
    """Each day the tokens name from `now`; a week, a month, or "since" a day, gives each of
    its days, with the same tokens."""
    found: list[NamedDay] = []
    for i, word in enumerate(tokens):
        counted: Days = []
        if word in RELATIVE or _further(tokens, i) is not None:
            if RELATIVE.get(word) == 0 and WE.intersection(tokens):
                continue  # "what we did today" is the session
            days = _since(tokens, [_relative_day(tokens, i, now)], now)
        elif _may_be_a_weekday(tokens, i):
            days = _since(tokens, _weekday(tokens, i, now), now)
        elif word in UNIT_DAYS and (counted := _counted(tokens, i, now)):
            days = _since(tokens, counted, now)
        elif word in WEEK_WORDS or word in WEEKEND_WORDS or word in MONTH_WORDS:
            days = _since(tokens, _period(tokens, i, now), now)
        else:
            continue
        loose = bool(counted) or len(days) > CLOSE_SPAN
        found += [NamedDay(day, start, end, loose) for day, start, end in days]
    return found


def _further(tokens: Sequence[str], i: int) -> int | None:
    """How much further the word before moves the day at `i` ("the day before yesterday",
    "avant-hier"), or None."""
    pair = (tokens[i - 1] if i else "", tokens[i])
    if pair[0] in ("before", "after") and not _said_at(tokens, i - 2, "day"):
        return None
    return FURTHER.get(pair)


def _relative_day(
    tokens: Sequence[str], i: int, now: datetime.date
) -> tuple[datetime.date, int, int]:
    """ "yesterday", "the day before yesterday", "après-demain", "gestern"."""
    word, previous = tokens[i], tokens[i - 1] if i else ""
    further = _further(tokens, i)
    days = RELATIVE.get(word, 0) + (further or 0)
    start = i - 1 if further is not None else i
    if previous in ("before", "after"):  # "(the) day before yesterday"
        while start > 0 and tokens[start - 1] in ("day", "the"):
            start -= 1
    return now + datetime.timedelta(days=days), start, i + 1


def _may_be_a_weekday(tokens: Sequence[str], i: int) -> bool:
    """Whether the word at `i` is a weekday's name (not "last friday of the month"), or an
    abbreviation right after "last", "next" or "since" ("last fri", "since tues"; not "when I
    last sat down") or one that is no other word after "on" ("on tues"), at the end of the
    prompt or before a word a day may have after it ("last sat morning")."""
    following = tokens[i + 1] if i + 1 < len(tokens) else ""
    if tokens[i] in WEEKDAY_NUMBERS:
        return following != "of"
    if tokens[i] not in ABBREVIATED or following not in AFTER_ABBREVIATION | {""}:
        return False
    previous = tokens[i - 1] if i else ""
    adverb = i >= 2 and tokens[i - 2] in PRONOUNS  # "I last sat"
    which = BEFORE.get(previous, THIS) != THIS and not adverb
    return which or previous in SINCE or (previous == "on" and tokens[i] in ONLY_DAYS)


def _weekday(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """ "last friday", "vendredi dernier", "sexta-feira passada", "this friday", "since
    tuesday", "on friday" asked in the past tense; nothing for a weekday no word says which one
    of, or a Portuguese name read as an ordinal."""
    feira = _said_at(tokens, i + 1, "feira")
    end = i + 2 if feira else i + 1
    previous = tokens[i - 1] if i else ""
    if tokens[i] in ORDINAL_NAMES and not (feira or previous in PORTUGUESE_ON):
        return []
    if previous in BEFORE:
        which, start = BEFORE[previous], i - 1
    elif said_after := _which_after(tokens, end):
        (which, end), start = said_after, i
    elif previous in SINCE:
        which, start = LAST, i
    elif _on(tokens, i) and (tense := _tense(tokens)) is not None:
        which, start = tense, i
    else:
        return []
    return [(_nearest(now, DAY_NUMBERS[tokens[i]], which), start, end)]


def _which_after(tokens: Sequence[str], end: int) -> tuple[int, int] | None:
    """(which one, end of the words) for a word after a weekday, week or month that says which:
    "dernier", "scorsa", "que viene"."""
    if end < len(tokens) and tokens[end] in AFTER:
        return AFTER[tokens[end]], end + 1
    if _said_at(tokens, end, *COMING_AFTER):
        return NEXT, end + 2
    return None


def _on(tokens: Sequence[str], i: int) -> bool:
    """Whether the weekday at `i` follows a word saying when ("on friday", "am Freitag"; not
    "9 am friday") or ends the prompt ("what happened monday", "cosa ho fatto mercoledì")."""
    previous = tokens[i - 1] if i else ""
    if i == len(tokens) - 1:
        return True
    return previous in ON and not (previous == "am" and i > 1 and tokens[i - 2].isdigit())


def _nearest(now: datetime.date, weekday: int, which: int) -> datetime.date:
    """The weekday `which` ones from today: -1 the last one before it, 1 the next one after it
    (-2, 2: one further), 0 this week's."""
    if which < 0:
        last = now - datetime.timedelta(days=(now.weekday() - weekday) % 7 or 7)
        return last - datetime.timedelta(weeks=-which - 1)
    if which > 0:
        following = now + datetime.timedelta(days=(weekday - now.weekday()) % 7 or 7)
        return following + datetime.timedelta(weeks=which - 1)
    return now + datetime.timedelta(days=weekday - now.weekday())


def _tense(tokens: Sequence[str]) -> int | None:
    """The last weekday of its name for a prompt asked in the past tense, the next one for a
    prompt about what is coming, else None: "on friday" alone does not say which."""
    # "was habe ich am Montag vor": "habe" is no past beside the particle "vor"
    separated = COMING_SEPARATED.get(tokens[-1], frozenset()) if tokens else frozenset()
    past = any(t in PAST and t not in separated for t in tokens if t != "was")
    past = past or _english_was(tokens)
    coming = any(t in COMING for t in tokens) or bool(separated.intersection(tokens))
    return None if past == coming else (LAST if past else NEXT)


def _english_was(tokens: Sequence[str]) -> bool:
    """Whether "was" is English's past ("what was on friday", "was I off on friday") and not
    German's "what" ("was steht am Freitag an", "sag mir, was am Mittwoch ansteht")."""
    return any(
        word == "was" and i + 1 < len(tokens) and tokens[i + 1] in AFTER_WAS
        for i, word in enumerate(tokens)
    )


def _period(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """ "last week", "this week", "la semaine dernière", "la settimana scorsa", "the week before
    last", "last month", "el mes que viene": each of its days, Monday first; "the past week",
    "in the last month": the 7 or 30 days before today; "last weekend": its Saturday and
    Sunday."""
    previous = tokens[i - 1] if i else ""
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if _said_at(tokens, i - 2, "before", "last") or (
        tokens[i] == "mes" and previous not in MES_AFTER
    ):
        return []  # "the week before last week" is one week; French "mes" is "my"
    if previous in BEFORE and after != "of":  # "the last week of the sprint"
        which, start, end = BEFORE[previous], i - 1, i + 1
    elif said_after := _which_after(tokens, i + 1):
        (which, end), start = said_after, i
    elif _said_at(tokens, i + 1, "before", "last"):
        start = i - 1 if previous == "the" else i
        end = i + 4 if _said_at(tokens, i + 3, tokens[i]) else i + 3
        which = 2 * LAST
    else:
        return []
    if tokens[i] in WEEKEND_WORDS:  # the last one ends before today
        saturday = (
            _nearest(now, 5, which)
            if which != THIS
            else now + datetime.timedelta(days=5 - now.weekday())
        )
        return _each_day(saturday, 2, start, end)
    if previous == "past" or (previous == "last" and _said_at(tokens, i - 2, "the")):
        length = UNIT_DAYS[tokens[i]]
        return _each_day(now - datetime.timedelta(days=length), length, start, end)
    if tokens[i] in MONTH_WORDS:
        return _month(now, which, start, end)
    return _week(now, which, start, end)


def _counted(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """ "3 days ago" (that day), "two weeks ago" (that week), "a month ago" (that month), "vor 3
    Tagen", "il y a deux jours", "hace una semana", "há três dias", "tre giorni fa"; not "il y
    a 3 jours de retard" (there are three days of delay)."""
    counted = _count_before(tokens, i)
    if counted is None:
        return []
    count, start = counted
    end = i + 1
    if tokens[end : end + 1] and tokens[end] in AGO_AFTER:
        end += 1
    elif tokens[end : end + 1] and tokens[end] in OF_WORDS:
        return []
    elif start and tokens[start - 1] in AGO_BEFORE:
        start -= 1
    elif _said_at(tokens, start - 3, *IL_Y_A):
        start -= 3
    else:
        return []
    if UNIT_DAYS[tokens[i]] == 1:
        return [(now - datetime.timedelta(days=count), start, end)]
    return (_week if UNIT_DAYS[tokens[i]] == 7 else _month)(now, -count, start, end)


def _count_before(tokens: Sequence[str], i: int) -> tuple[int, int] | None:
    """(count, its first token) of the unit at `i`: "3", "two", "zwei", "a couple of"."""
    before = tokens[i - 1] if i else ""
    if before.isdecimal() and 0 < int(before) <= MOST_COUNTED:
        return int(before), i - 1
    if before in COUNTS:
        return COUNTS[before], i - 1
    if _said_at(tokens, i - 2, "couple", "of"):
        return 2, i - 3 if _said_at(tokens, i - 3, "a") else i - 2
    return None


def _week(now: datetime.date, weeks: int, start: int, end: int) -> Days:
    """The seven days of the week `weeks` from this one, Monday first."""
    monday = now - datetime.timedelta(days=now.weekday()) + datetime.timedelta(weeks=weeks)
    return _each_day(monday, 7, start, end)


def _month(now: datetime.date, months: int, start: int, end: int) -> Days:
    """Each day of the month `months` from this one."""
    year, month = divmod(now.year * 12 + now.month - 1 + months, 12)
    first = datetime.date(year, month + 1, 1)
    return _each_day(first, calendar.monthrange(year, month + 1)[1], start, end)


def _said_at(tokens: Sequence[str], start: int, *said: str) -> bool:
    """Whether the words `said` stand in `tokens` from `start` on."""
    return start >= 0 and tuple(tokens[start : start + len(said)]) == said


def _each_day(first: datetime.date, days: int, start: int, end: int) -> Days:
    return [(first + datetime.timedelta(days=d), start, end) for d in range(days)]


def _since(tokens: Sequence[str], days: Days, now: datetime.date) -> Days:
    """ "since tuesday", "since last week", "desde hace una semana": every day from the first
    one named up to today, when there are at most LONGEST_SINCE of them."""
    if not days or days[0][1] == 0 or tokens[days[0][1] - 1] not in SINCE:
        return days
    first, start, end = days[0]
    if (now - first).days + 1 > LONGEST_SINCE:
        return days
    return _each_day(first, (now - first).days + 1, start - 1, end)
