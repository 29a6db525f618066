"""Days a prompt names from today, in the six languages the prompt's language is told in:
"yesterday", "the day before yesterday", "last night", "this morning", "last friday",
"vendredi dernier", "what did I do on friday", "next monday", "from monday to wednesday", "last
week", "la semana pasada", "last month", "the 3rd of last month", "3 days ago", "a few days
ago", "vor zwei Wochen", "seit 3 Tagen", "the week before last" (the words: words.py;
weekdays and spans of them: weekdays.py; counts back: counted.py).

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
from collections.abc import Sequence
from typing import NamedTuple

from ...index.terms import STOP_WORDS
from ..languages import prompt_language
from .counted import counted_back
from .days import Days, each_day, month, nearest, number_at, said_at, week
from .mentions import CLOSE_SPAN, LONGEST_SPAN
from .spans import joins, opener
from .weekdays import (
    may_be_a_weekday,
    tense_of,
    weekday,
    weekday_before,
    weekday_span,
    which_after,
)
from .words import (
    BEFORE,
    FURTHER,
    LAST,
    MES_AFTER,
    MONTH_WORDS,
    ORDINAL,
    OVER_THE_WEEKEND,
    OVER_WEEKEND,
    PARTS_OF_DAYS,
    RELATIVE,
    SINCE,
    SPAN_AND,
    SPAN_ARTICLES,
    SPAN_TO,
    THIS,
    UNIT_DAYS,
    WE,
    WEEK_WORDS,
    WEEKEND_WORDS,
    WHICH_WEEKEND,
)


class NamedDay(NamedTuple):
    day: datetime.date
    start: int  # the first token naming it
    end: int  # the last token + 1
    loose: bool  # a span longer than CLOSE_SPAN, or a count back from today


def days_from_today(tokens: Sequence[str], now: datetime.date) -> list[NamedDay]:
    """Each day the tokens name from `now`; a week, a month, or "since" a day, gives each of
    its days, with the same tokens; two readings joined ("from the 9th of last month to today")
    the days from the first to the last."""
    tokens = tuple(tokens)  # `weekdays.tense_of` is read once a prompt, whichever weekday asks
    readings = [reading for i in range(len(tokens)) if (reading := _reading_at(tokens, i, now))]
    found = []
    for days, counted in _spans_of_readings(tokens, _outermost(readings)):
        loose = counted or len(days) > CLOSE_SPAN
        found += [NamedDay(day, start, end, loose) for day, start, end in days]
    return found


Reading = tuple[Days, bool]  # the days one phrase names (the same tokens each), and whether counted


def _reading_at(tokens: tuple[str, ...], i: int, now: datetime.date) -> Reading | None:
    """The days named by the phrase whose main word is at `i`, if any."""
    word, counted = tokens[i], False
    if _offset(tokens, i) is not None or _further(tokens, i) is not None:
        if RELATIVE.get(word) == 0 and WE.intersection(tokens):
            return None  # "what we did today" is the session
        days = _since(tokens, [_relative_day(tokens, i, now)], now)
    elif (offset := PARTS_OF_DAYS.get((tokens[i - 1] if i else "", word))) is not None:
        if offset == 0 and WE.intersection(tokens):
            return None  # "what we did this morning" is the session
        days = _since(tokens, [(now + datetime.timedelta(days=offset), i - 1, i + 1)], now)
    elif span := weekday_span(tokens, i, now, _week):
        days = span
    elif may_be_a_weekday(tokens, i):
        if any(weekday_before(tokens, j) == i for j in range(i + 2, i + 6)):
            return None  # the first day of "from monday to wednesday": read with the last
        days = _since(tokens, weekday(tokens, i, now), now)
    elif word in UNIT_DAYS and (back := counted_back(tokens, i, now)):
        days, counted = _since(tokens, back, now), True
    elif word in WEEK_WORDS or word in WEEKEND_WORDS or word in MONTH_WORDS:
        days = _since(tokens, _period(tokens, i, now), now)
    else:
        return None
    return (days, counted) if days else None


def _outermost(readings: list[Reading]) -> list[Reading]:
    """The readings of the longest phrases: "last week" of "from monday to wednesday last week"
    is read within the span, not beside it."""
    said = {(days[0][1], days[0][2]) for days, _ in readings}
    return [
        (days, counted)
        for days, counted in readings
        if not any(s <= days[0][1] and days[0][2] <= e and (s, e) != days[0][1:] for s, e in said)
    ]


def _spans_of_readings(tokens: Sequence[str], readings: list[Reading]) -> list[Reading]:
    """Two readings joined as a span ("from the 10th of last month to the 5th of this month",
    "between last monday and today", "from the 9th of last month to today") as the days from
    the first one's first day to the second one's last. Two that cannot be walked (backwards,
    or longer than LONGEST_SPAN) are their two ends said loosely, as spans in words are."""
    joined: list[Reading] = []
    for days, counted in sorted(readings, key=lambda r: r[0][0][1]):
        if not (joined and _joined_by_a_word(tokens, joined[-1][0], days)):
            joined.append((_to_a_day(tokens, days) or days, counted))
            continue
        first_days, first_counted = joined.pop()
        first, last = first_days[0][0], days[-1][0]
        opener_at, _ = opener(tokens, first_days[0][1])
        start = first_days[0][1] if opener_at is None else opener_at
        length = (last - first).days + 1
        if 0 < length <= LONGEST_SPAN:
            joined.append((each_day(first, length, start, days[0][2]), first_counted or counted))
        else:
            joined += [(first_days, True), (days, True)]
    return joined


def _to_a_day(tokens: Sequence[str], days: Days) -> Days | None:
    """ "from the 28th of last month to the 3rd": the days up to the next day of that number."""
    at, (opener_at, opening) = days[0][2], opener(tokens, days[0][1])
    if opener_at is None or at >= len(tokens) or not joins(tokens[at], opening):
        return None  # "I moved the meeting yesterday to the 3rd" opens no span
    day_at = at + 1 + said_at(tokens, at + 1, "the")
    number = number_at(tokens, day_at, ORDINAL, 31)
    after = tokens[day_at + 1] if day_at + 1 < len(tokens) else ""
    if number is None or after == "of" or (after and after not in STOP_WORDS):
        return None  # "… to the 5th of this month" is a reading of its own; "… the 2nd floor"
    first, last = days[0][0], days[-1][0] + datetime.timedelta(days=1)
    while last.day != number:  # within a month: every number up to 31 comes round
        last += datetime.timedelta(days=1)
    length = (last - first).days + 1
    return each_day(first, length, opener_at, day_at + 1) if length <= LONGEST_SPAN else None


def _joined_by_a_word(tokens: Sequence[str], first: Days, second: Days) -> bool:
    """Whether `second` follows `first` after a word that joins them ("to", "and" after
    "between"), articles and the rest of a joining phrase aside ("jusqu'à", "fino a")."""
    gap = tokens[first[0][2] : second[0][1]]
    if not gap or any(t not in SPAN_ARTICLES and t not in SPAN_TO for t in gap[1:]):
        return False
    return joins(gap[0], opener(tokens, first[0][1])[1])


def _further(tokens: Sequence[str], i: int) -> int | None:
    """How much further the word before moves the day at `i` ("the day before yesterday",
    "avant-hier"), or None."""
    pair = (tokens[i - 1] if i else "", tokens[i])
    if pair[0] in ("before", "after") and not said_at(tokens, i - 2, "day"):
        return None
    return FURTHER.get(pair)


def _offset(tokens: Sequence[str], i: int) -> int | None:
    """The days from today the word at `i` names: "yesterday", "gestern"; French "hier" only
    in a French prompt or after "avant" (German's "here": "hier ist der Fehler")."""
    word = tokens[i]
    if word == "hier" and (
        (i and tokens[i - 1] == "avant") or prompt_language(" ".join(tokens)) == "fr"
    ):
        return -1
    return RELATIVE.get(word)


def _relative_day(
    tokens: Sequence[str], i: int, now: datetime.date
) -> tuple[datetime.date, int, int]:
    """ "yesterday", "the day before yesterday", "après-demain", "gestern"."""
    previous = tokens[i - 1] if i else ""
    further = _further(tokens, i)
    days = (_offset(tokens, i) or 0) + (further or 0)
    start = i - 1 if further is not None else i
    if previous in ("before", "after"):  # "(the) day before yesterday"
        while start > 0 and tokens[start - 1] in ("day", "the"):
            start -= 1
    return now + datetime.timedelta(days=days), start, i + 1


def _week(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
    """The week said after a span of weekdays: "… last week", "… two weeks ago"."""
    return _period(tokens, i, now) or counted_back(tokens, i, now)


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
    elif said_after := which_after(tokens, i + 1):
        (which, end), start = said_after, i
    elif said_at(tokens, i + 1, "before", "last"):
        start = i - 1 if previous == "the" else i
        end = i + 4 if said_at(tokens, i + 3, tokens[i]) else i + 3
        which = 2 * LAST
    elif (over := _over_the_weekend(tokens, i)) is not None:
        which, start, end = over, i - 1 if previous in OVER_WEEKEND else i - 2, i + 1
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
        return _day_of_month(tokens, start, now, which, end) or month(now, which, start, end)
    return week(now, which, start, end)


def _over_the_weekend(tokens: Sequence[str], i: int) -> int | None:
    """Which weekend "over the weekend", "am Wochenende" is, as the tense says: the last one
    in "what did I do over the weekend", the next one in "what's planned for the weekend"."""
    if tokens[i] not in WEEKEND_WORDS:
        return None
    said = (tokens[i - 1] if i else "") in OVER_WEEKEND
    if not (said or (i >= 2 and tokens[i - 1] == "the" and tokens[i - 2] in OVER_THE_WEEKEND)):
        return None
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if after in WHICH_WEEKEND or after.isdigit():
        return None  # "over the weekend of the 14th", "… two weeks ago": another word says which
    return tense_of(tuple(tokens))


def _day_of_month(
    tokens: Sequence[str], start: int, now: datetime.date, months: int, end: int
) -> Days:
    """ "the 3rd of last month", "the 15th of next month": that day of the month `months` from
    this one; "between the 1st and the 10th of last month", "the 21st-23rd of last month": those
    days; "the 1st and the 10th of last month": the two."""
    last = number_at(tokens, start - 2, ORDINAL, 31) if said_at(tokens, start - 1, "of") else None
    if last is None:
        return []
    first, first_at, both = last, _with_the(tokens, start - 2), False
    opened_at = first_at - 2
    if (opened := number_at(tokens, opened_at, ORDINAL, 31)) is not None:
        opener_at, opening = opener(tokens, opened_at)
        joiner = tokens[first_at - 1]
        if joins(joiner, opening) or joiner in SPAN_AND:
            first, both = opened, not joins(joiner, opening)
            first_at = _with_the(tokens, opened_at) if opener_at is None else opener_at
    days = month(now, months, first_at, end)
    if both:  # "the 10th and the 1st of last month" are the same two days
        first, last = sorted((first, last))
    if not 1 <= first <= last <= len(days):
        return []
    return [days[first - 1], days[last - 1]] if both else days[first - 1 : last]


def _with_the(tokens: Sequence[str], at: int) -> int:
    return at - 1 if said_at(tokens, at - 1, "the") else at


def _since(tokens: Sequence[str], days: Days, now: datetime.date) -> Days:
    """ "since tuesday", "since last week", "desde hace una semana": every day from the first
    one named up to today, when there are at most LONGEST_SPAN of them."""
    if not days or days[0][1] == 0 or tokens[days[0][1] - 1] not in SINCE:
        return days
    first, start, end = days[0]
    if (now - first).days + 1 > LONGEST_SPAN:
        return days
    return each_day(first, (now - first).days + 1, start - 1, end)
