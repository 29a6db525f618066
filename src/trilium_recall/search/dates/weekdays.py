"""Weekdays a prompt names from today: "last friday", "vendredi dernier", "what did I do on
friday" (by the tense), "since tuesday", and spans of them, "from monday to wednesday", "del lunes
al miércoles", "von Montag bis Mittwoch last week" (the words: words.py; from_today.py reads the
rest and gathers them)."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Sequence

from .days import Days, each_day, nearest, said_at
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
    LAST,
    MONTH_OF,
    NEXT,
    ON,
    ONLY_DAYS,
    ORDINAL_NAMES,
    PAST,
    PORTUGUESE_ON,
    PRONOUNS,
    SINCE,
    SPAN_AND,
    SPAN_ARTICLES,
    SPAN_TO,
    THIS,
    TODAY_WORDS,
    UNIT_DAYS,
    WEEKDAY_NUMBERS,
)

# Words that tie a week on to a span of weekdays: "… de la semana pasada", "… of last week".
_TIES = SPAN_ARTICLES | MONTH_OF | frozenset("la der des della da na no in".split())
# The days of a week named at a token ("last week"): from_today.py's reading, handed in.
WeekAt = Callable[[Sequence[str], int, datetime.date], Days]


def may_be_a_weekday(tokens: Sequence[str], i: int) -> bool:
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


def weekday(tokens: Sequence[str], i: int, now: datetime.date) -> Days:
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
    elif said_after := which_after(tokens, end):
        (which, end), start = said_after, i
    elif previous in SINCE:
        which, start = LAST, i
    elif _on(tokens, i) and (tense := tense_of(tokens)) is not None:
        which, start = tense, i
    elif _to_today(tokens, i, end):  # "from monday to today", "von Montag bis heute"
        which, start = LAST, i
    else:
        return []
    return [(nearest(now, DAY_NUMBERS[tokens[i]], which), start, end)]


def weekday_span(tokens: Sequence[str], i: int, now: datetime.date, week_at: WeekAt) -> Days:
    """ "from monday to wednesday", "between friday and monday", "von Montag bis Mittwoch",
    "del lunes al miércoles": each day from the first weekday to the second (a week and a day
    from one to the same). The days are those of the week said after ("from monday to
    wednesday last week"), from a first weekday said which ("from last monday to wednesday"),
    or as the tense says: in the past up to the latest of the second on or before today ("what
    did I do from monday to friday" asked on a Friday is this week), for what is coming from
    the first on or after today."""
    first_at = weekday_before(tokens, i)
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
    if week := _week_after(tokens, end, now, week_at):
        monday, end = week
        if monday is None:
            return []  # "from monday to wednesday a few weeks ago": which week is not said
        day = monday + datetime.timedelta(days=(first - monday.weekday()) % 7)
        return each_day(day, length, start, end)
    tense = tense_of(tokens)
    if tense is None:
        return []
    if tense > 0:  # what is coming: from the first weekday on or after today
        day = now + datetime.timedelta(days=(first - now.weekday()) % 7)
        return each_day(day, length, start, end)
    final = now - datetime.timedelta(days=(now.weekday() - last) % 7)
    return each_day(final - datetime.timedelta(days=length - 1), length, start, end)


def weekday_before(tokens: Sequence[str], i: int) -> int | None:
    """Where the first weekday of a span ending with the weekday at `i` is named, or None:
    "monday to wednesday", "el lunes y el miércoles" (after "between": "entre"), "segunda-feira
    a quarta-feira" (Portuguese names that are ordinals only with "feira")."""
    if not (2 <= i < len(tokens)) or tokens[i] not in WEEKDAY_NUMBERS:
        return None
    joiner_at = i - 1  # "y el miércoles", "bis zum Mittwoch"; "al" of "del lunes al" joins
    while joiner_at > 0 and tokens[joiner_at] in SPAN_ARTICLES and _joins(tokens[joiner_at - 1]):
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
    tokens: Sequence[str], at: int, now: datetime.date, week_at: WeekAt
) -> tuple[datetime.date | None, int] | None:
    """(its Monday, the token after it) of a week said at `at`, or after words that only tie
    it on: "last week", "la semaine dernière", "de la semana pasada", "of last week", "two
    weeks ago", "vor zwei Wochen"; no Monday for weeks that are not one ("a few weeks ago")."""
    week_days = UNIT_DAYS["week"]
    for word_at in range(at, min(at + 5, len(tokens))):  # "… il y a deux semaines"
        if UNIT_DAYS.get(tokens[word_at]) == week_days:  # "week", "weeks", "Wochen"
            days = week_at(tokens, word_at, now)
            tie = tokens[at : days[0][1]] if days else ["?"]
            if not all(t in _TIES for t in tie):
                return None
            return (days[0][0] if len(days) == week_days else None), days[-1][2]
    return None


def which_after(tokens: Sequence[str], end: int) -> tuple[int, int] | None:
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
def tense_of(tokens: tuple[str, ...]) -> int | None:
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


def _joins(word: str) -> bool:
    """Whether `word` may join two days (whichever opened the span: checked by `spans.joins`)."""
    return word in SPAN_TO or word in SPAN_AND


def _to_today(tokens: Sequence[str], i: int, end: int) -> bool:
    """Whether the weekday named at `i` to `end` is joined to "today" after it."""
    to = end + 1 < len(tokens) and tokens[end + 1] in TODAY_WORDS
    return to and joins(tokens[end], opener(tokens, i)[1])
