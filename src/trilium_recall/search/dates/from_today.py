"""Days a prompt names from today, in the six languages the prompt's language is told in:
"yesterday", "the day before yesterday", "last friday", "vendredi dernier", "what did I do on
friday", "next monday", "from monday to wednesday", "last week", "la semana pasada", "last
month", "the 3rd of last month", "3 days ago", "a few days ago", "vor zwei Wochen", "seit 3
Tagen", "the week before last" (the words: words.py; counts back: counted.py).

A journal is looked up this way as often as by date ("what did I work on last week?"). A
weekday alone is a day only when the prompt says which one: "last", "next", "this" or the
like beside it, or after "on" ("from", "am", "el", "na") in a question asked in the past tense
("what did I do on friday": the last one) or about what is coming ("what's planned on friday":
the next one); "friday deploys are risky" names no day. "Next friday" asked on a Thursday is
tomorrow. A week is its seven days, Monday first, a month each of its days ("the past week",
"in the last month": the 7 or 30 days before today); "two weeks ago" is that week, "a month
ago" that month, "3 days ago" the day, "a few days ago" the second to the fifth day back;
"since" a day, and "seit" or "depuis" a count ("seit 3 Tagen"), is every day from it up to
today. "The last 30 days" is left out: it is as often a query's window ("plot the last 30
days").
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from typing import NamedTuple

from .counted import counted_back
from .days import Days, each_day, month, nearest, said_at, week
from .mentions import CLOSE_SPAN
from .spans import joins, opener
from .words import (
    ABBREVIATED,
    AFTER,
    AFTER_ABBREVIATION,
    AFTER_WAS,
    BEFORE,
    COMING,
    COMING_AFTER,
    COMING_SEPARATED,
    DAY_NUMBERS,
    FURTHER,
    LAST,
    LONGEST_SPAN,
    MES_AFTER,
    MONTH_WORDS,
    NEXT,
    ON,
    ONLY_DAYS,
    ORDINAL,
    ORDINAL_NAMES,
    PAST,
    PORTUGUESE_ON,
    PRONOUNS,
    RELATIVE,
    SINCE,
    SPAN_ARTICLES,
    SPAN_TO,
    THIS,
    TODAY_WORDS,
    UNIT_DAYS,
    WE,
    WEEK_WORDS,
    WEEKDAY_NUMBERS,
    WEEKEND_WORDS,
)


class NamedDay(NamedTuple):
    day: datetime.date
    start: int  # the first token naming it
    end: int  # the last token + 1
    loose: bool  # a span longer than CLOSE_SPAN, or a count back from today


def days_from_today(tokens: Sequence[str], now: datetime.date) -> list[NamedDay]:
    """Each day the tokens name from `now`; a week, a month, or "since" a day, gives each of
    its days, with the same tokens."""
    tokens = tuple(tokens)  # `_tense` is read once a prompt, whichever weekday asks
    found: list[NamedDay] = []
    for i, word in enumerate(tokens):
        counted: Days = []
        if word in RELATIVE or _further(tokens, i) is not None:
            if RELATIVE.get(word) == 0 and WE.intersection(tokens):
                continue  # "what we did today" is the session
            days = _since(tokens, [_relative_day(tokens, i, now)], now)
        elif span := _weekday_span(tokens, i, now):
            days = span
        elif _may_be_a_weekday(tokens, i):
            if any(_weekday_before(tokens, j) == i for j in range(i + 2, i + 6)):
                continue  # the first day of "from monday to wednesday": read with the last
            days = _since(tokens, _weekday(tokens, i, now), now)
        elif word in UNIT_DAYS and (counted := counted_back(tokens, i, now)):
            days = _since(tokens, counted, now)
        elif word in WEEK_WORDS or word in WEEKEND_WORDS or word in MONTH_WORDS:
            days = _since(tokens, _period(tokens, i, now), now)
        else:
            continue
        days = _up_to_today(tokens, days, now)
        loose = bool(counted) or len(days) > CLOSE_SPAN
        found += [NamedDay(day, start, end, loose) for day, start, end in days]
    return _outermost(found)


def _outermost(found: list[NamedDay]) -> list[NamedDay]:
    """The days named by the longest words: "today" of "from the 9th of last month to today" is
    read within that span, not beside it (it would be a day said closely among loose ones)."""
    spans = {(d.start, d.end) for d in found}
    return [
        d
        for d in found
        if not any(s <= d.start and d.end <= e and (s, e) != (d.start, d.end) for s, e in spans)
    ]


def _further(tokens: Sequence[str], i: int) -> int | None:
    """How much further the word before moves the day at `i` ("the day before yesterday",
    "avant-hier"), or None."""
    pair = (tokens[i - 1] if i else "", tokens[i])
    if pair[0] in ("before", "after") and not said_at(tokens, i - 2, "day"):
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
    feira = said_at(tokens, i + 1, "feira")
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
    return [(nearest(now, DAY_NUMBERS[tokens[i]], which), start, end)]


def _weekday_span(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """ "from monday to wednesday", "between friday and monday", "von Montag bis Mittwoch",
    "entre el lunes y el miércoles": each day from the first weekday to the second (a week and
    a day from one to the same). The days are those of the week said after ("from monday to
    wednesday last week"), from a first weekday said which ("from last monday to wednesday"),
    or up to the second one as the tense says: the latest on or before today in the past
    ("what did I do from monday to friday" asked on a Friday is this week), the next on or
    after it for what is coming."""
    first_at = _weekday_before(tokens, i)
    if first_at is None:
        return []
    first, last = DAY_NUMBERS[tokens[first_at]], DAY_NUMBERS[tokens[i]]
    length = (last - first - 1) % 7 + 2
    end = i + 2 if said_at(tokens, i + 1, "feira") else i + 1
    which = first_at - 1 if first_at and tokens[first_at - 1] in BEFORE else None
    opener_at, _ = opener(tokens, first_at if which is None else which)
    start = first_at if opener_at is None else opener_at
    if which is not None:  # "from last monday to wednesday"
        day = nearest(now, first, BEFORE[tokens[which]])
        return each_day(day, length, min(start, which), end)
    if week := _week_after(tokens, end, now):
        monday, end = week
        day = monday + datetime.timedelta(days=(first - monday.weekday()) % 7)
        return each_day(day, length, start, end)
    tense = _tense(tokens)
    if tense is None:
        return []
    ahead = (last - now.weekday()) % 7 if tense > 0 else -((now.weekday() - last) % 7)
    final = now + datetime.timedelta(days=ahead)
    return each_day(final - datetime.timedelta(days=length - 1), length, start, end)


def _weekday_before(tokens: Sequence[str], i: int) -> int | None:
    """Where the first weekday of a span ending with the weekday at `i` is named, or None:
    "monday to wednesday", "el lunes y el miércoles" (after "between": "entre"), "segunda-feira
    a quarta-feira" (Portuguese names that are ordinals only with "feira")."""
    if not (2 <= i < len(tokens)) or tokens[i] not in WEEKDAY_NUMBERS:
        return None
    joiner_at = i - 1
    while joiner_at > 0 and tokens[joiner_at] in SPAN_ARTICLES:
        joiner_at -= 1
    first_at = joiner_at - 1
    if first_at >= 1 and tokens[first_at] == "feira":
        first_at -= 1
    while first_at > 0 and tokens[first_at] in SPAN_ARTICLES:
        first_at -= 1
    if first_at < 0 or tokens[first_at] not in WEEKDAY_NUMBERS:
        return None
    named = (first_at, i)
    feira = all(said_at(tokens, at + 1, "feira") for at in named)
    if not feira and any(tokens[at] in ORDINAL_NAMES for at in named):
        return None  # "da segunda à quarta tentativa": the second to the fourth attempt
    return first_at if joins(tokens[joiner_at], opener(tokens, first_at)[1]) else None


def _week_after(
    tokens: Sequence[str], at: int, now: datetime.date
) -> tuple[datetime.date, int] | None:
    """(its Monday, the token after it) of a week said at `at`: "last week", "la semaine
    dernière", "letzte Woche"."""
    for week_at in (at, at + 1):
        if week_at < len(tokens) and tokens[week_at] in WEEK_WORDS:
            days = _period(tokens, week_at, now)
            if days and days[0][1] == at:
                return days[0][0], days[0][2]
    return None


def _which_after(tokens: Sequence[str], end: int) -> tuple[int, int] | None:
    """(which one, end of the words) for a word after a weekday, week or month that says which:
    "dernier", "scorsa", "que viene"."""
    if end < len(tokens) and tokens[end] in AFTER:
        return AFTER[tokens[end]], end + 1
    if said_at(tokens, end, *COMING_AFTER):
        return NEXT, end + 2
    return None


def _on(tokens: Sequence[str], i: int) -> bool:
    """Whether the weekday at `i` follows a word saying when ("on friday", "am Freitag"; not
    "9 am friday") or ends the prompt ("what happened monday", "cosa ho fatto mercoledì")."""
    previous = tokens[i - 1] if i else ""
    if i == len(tokens) - 1:
        return True
    return previous in ON and not (previous == "am" and i > 1 and tokens[i - 2].isdigit())


@functools.lru_cache(maxsize=16)
def _tense(tokens: tuple[str, ...]) -> int | None:
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
    if said_at(tokens, i - 2, "before", "last") or (
        tokens[i] == "mes" and previous not in MES_AFTER
    ):
        return []  # "the week before last week" is one week; French "mes" is "my"
    if previous in BEFORE and after != "of":  # "the last week of the sprint"
        which, start, end = BEFORE[previous], i - 1, i + 1
    elif said_after := _which_after(tokens, i + 1):
        (which, end), start = said_after, i
    elif said_at(tokens, i + 1, "before", "last"):
        start = i - 1 if previous == "the" else i
        end = i + 4 if said_at(tokens, i + 3, tokens[i]) else i + 3
        which = 2 * LAST
    else:
        return []
    if tokens[i] in WEEKEND_WORDS:  # the last one ends before today
        saturday = (
            nearest(now, 5, which)
            if which != THIS
            else now + datetime.timedelta(days=5 - now.weekday())
        )
        return each_day(saturday, 2, start, end)
    if previous == "past" or (previous == "last" and said_at(tokens, i - 2, "the")):
        length = UNIT_DAYS[tokens[i]]
        return each_day(now - datetime.timedelta(days=length), length, start, end)
    if tokens[i] in MONTH_WORDS:
        return _day_ofmonth(tokens, start, now, which, end) or month(now, which, start, end)
    return week(now, which, start, end)


def _day_ofmonth(
    tokens: Sequence[str], start: int, now: datetime.date, months: int, end: int
) -> Days:
    """ "the 3rd of last month", "the 15th of next month": that day of the month `months` from
    this one; "between the 1st and the 10th of last month", "the 21st-23rd of last month": those
    days."""
    last = _ordinal_at(tokens, start - 2) if said_at(tokens, start - 1, "of") else None
    if last is None:
        return []
    first, first_at = last, _with_the(tokens, start - 2)
    opened_at = first_at - 2
    opened = _ordinal_at(tokens, opened_at)
    if opened is not None:
        opener_at, opening = opener(tokens, opened_at)
        if joins(tokens[first_at - 1], opening):
            first = opened
            first_at = _with_the(tokens, opened_at) if opener_at is None else opener_at
    days = month(now, months, first_at, end)
    return days[first - 1 : last] if 1 <= first <= last <= len(days) else []


def _ordinal_at(tokens: Sequence[str], at: int) -> int | None:
    found = ORDINAL.fullmatch(tokens[at]) if 0 <= at < len(tokens) else None
    return int(found[1]) if found else None


def _with_the(tokens: Sequence[str], at: int) -> int:
    return at - 1 if said_at(tokens, at - 1, "the") else at


def _up_to_today(tokens: Sequence[str], days: Days, now: datetime.date) -> Days:
    """ "from the 9th of last month to today", "von letzter Woche bis heute": every day from
    the first one named up to today, when there are at most LONGEST_SPAN of them."""
    if not days:
        return days
    first, start, end = days[0]
    to_today = end + 1 < len(tokens) and tokens[end] in SPAN_TO and tokens[end + 1] in TODAY_WORDS
    if not to_today or not 0 <= (now - first).days < LONGEST_SPAN:
        return days
    opener_at, _ = opener(tokens, start)
    start = start if opener_at is None else opener_at
    return each_day(first, (now - first).days + 1, start, end + 2)


def _since(tokens: Sequence[str], days: Days, now: datetime.date) -> Days:
    """ "since tuesday", "since last week", "desde hace una semana": every day from the first
    one named up to today, when there are at most LONGEST_SPAN of them."""
    if not days or days[0][1] == 0 or tokens[days[0][1] - 1] not in SINCE:
        return days
    first, start, end = days[0]
    if (now - first).days + 1 > LONGEST_SPAN:
        return days
    return each_day(first, (now - first).days + 1, start - 1, end)
