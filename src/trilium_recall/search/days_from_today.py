"""Days a prompt names from today, in the six languages the prompt's language is told in:
"yesterday", "the day before yesterday", "last friday", "vendredi dernier", "what did I do on
friday", "next monday", "last week", "la semana pasada".

A journal is looked up this way as often as by date ("what did I work on last week?"). A
weekday alone is a day only when the prompt says which one: "last", "next", "this" or the
like beside it, or after "on" ("from", "am", "el", "na") in a question asked in the past tense
("what did I do on friday": the last one) or about what is coming ("what's planned on friday":
the next one); "friday deploys are risky" names no day. "Next friday" asked on a Thursday is
tomorrow. A week is its seven days, Monday first ("the past week": the seven before today);
"since" a day is every day from it up to today.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

# Each language's weekday names, Monday first, without diacritics as the keyword index folds
# them (Portuguese "sexta-feira" is read as "sexta", "feira").
_WEEKDAY_NAMES = (
    "monday montag lundi lunes lunedi segunda",
    "tuesday dienstag mardi martes martedi terca",
    "wednesday mittwoch mercredi miercoles mercoledi quarta",
    "thursday donnerstag jeudi jueves giovedi quinta",
    "friday freitag vendredi viernes venerdi sexta",
    "saturday samstag samedi sabado sabato",
    "sunday sonntag dimanche domingo domenica",
)
WEEKDAY_NUMBERS = {name: n for n, names in enumerate(_WEEKDAY_NAMES) for name in names.split()}
WEEKDAYS = frozenset(WEEKDAY_NUMBERS)

# Days named from today ("hier" alone is left out: German's "here"). They find the day's notes
# and decide a prompt that is mostly that day, but match no word: "why does my build fail
# today" is about the build, today's note is one answer.
_RELATIVE = {
    "today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1, "heute": 0, "gestern": -1,
    "vorgestern": -2, "ubermorgen": 2, "aujourd": 0, "demain": 1, "hoy": 0, "ayer": -1,
    "anteayer": -2, "hoje": 0, "ontem": -1, "anteontem": -2, "amanha": 1, "oggi": 0, "ieri": -1,
    "domani": 1, "dopodomani": 2,
}  # fmt: skip
# A word before that moves the day one further: "the day before yesterday", "après-demain",
# "l'altro ieri", "pasado mañana", "avant-hier" (English only after "day": "before
# yesterday's deploy" is yesterday).
_FURTHER = {
    ("before", "yesterday"): -1, ("after", "tomorrow"): 1, ("apres", "demain"): 1,
    ("altro", "ieri"): -1, ("pasado", "manana"): 2, ("avant", "hier"): -2,
}  # fmt: skip

# Which weekday or week a word beside it means: the last one before today, the next one after
# it, or the one this week (today included); as a number, also how many weeks from this one.
# Before the name ("last friday", "letzte Woche", "el pasado viernes", "ce vendredi") or after
# it ("vendredi dernier", "venerdì scorso", "sexta-feira passada"; "viernes que viene" is left
# out: two words).
_LAST, _NEXT, _THIS = -1, 1, 0
_BEFORE = {
    **dict.fromkeys(
        """last past previous letzte letzten letzter letztes vergangene vergangenen vergangener
        vorige vorigen voriger pasado ultimo ultima""".split(),
        _LAST,
    ),
    **dict.fromkeys(
        """next coming upcoming nachste nachsten nachster kommende kommenden kommender proximo
        proxima prossimo prossima""".split(),
        _NEXT,
    ),
    **dict.fromkeys(
        "this diesen dieser diese ce cette esta este nesta neste questa questo".split(), _THIS
    ),
}
_AFTER = {
    **dict.fromkeys(
        "dernier derniere passe passee pasado pasada passada passado scorso scorsa".split(), _LAST
    ),
    **dict.fromkeys("prochain prochaine prossimo prossima proximo proxima".split(), _NEXT),
}
_WEEK_WORDS = frozenset("week woche semaine semana settimana".split())
_WEEKEND_WORDS = frozenset("weekend wochenende".split())  # its Saturday and Sunday
# "since tuesday", "seit letzter Woche", "depuis lundi", "desde ayer": every day up to today.
_SINCE = frozenset("since seit depuis desde".split())
# Words of a conversation with the assistant: "summarize what we did today" is the session.
_WE = frozenset("we us our wir".split())
# Portuguese weekday names that are also ordinals ("la segunda pasada": the second pass): a day
# only as "segunda-feira" or after a word that puts it in time ("na sexta").
_ORDINAL_NAMES = frozenset("segunda terca quarta quinta sexta".split())
_PORTUGUESE_ON = frozenset("na nesta proxima ultima".split())
# A weekday after one of these is a day the prompt names when its tense says which one: "what
# did I do on friday" (the last), "what's planned on friday" (the next), "¿qué hice el viernes?",
# "was habe ich am Freitag gemacht". French "le vendredi" is every Friday, and is left out.
_ON = frozenset("on from am el na".split())
_PAST = frozenset(
    """did was were had happened went wrote noted met said decided discussed talked bought
    worked fixed finished started sent called habe hatte war waren gemacht passiert etait fait
    hice hizo paso fue hecho fiz fez aconteceu foi fatto successo""".split()
)
_COMING = frozenset("will planned scheduled upcoming agenda wird werde geplant prevu".split())


def days_from_today(
    tokens: Sequence[str], now: datetime.date
) -> list[tuple[datetime.date, int, int]]:
    """(day, first token, last token + 1) for each day the tokens name from `now`; a week, or
    "since" a day, gives each of its days, with the same tokens."""
    found: list[tuple[datetime.date, int, int]] = []
    for i, word in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if word in _RELATIVE or _further(tokens, i) is not None:
            if not (_RELATIVE.get(word) == 0 and _WE.intersection(tokens)):
                found += _since(tokens, [_relative_day(tokens, i, now)], now)
        elif word in WEEKDAY_NUMBERS and following != "of":  # "last friday of the month"
            found += _since(tokens, _weekday(tokens, i, now), now)
        elif word in _WEEK_WORDS or word in _WEEKEND_WORDS:
            found += _since(tokens, _week(tokens, i, now), now)
    return found


def _further(tokens: Sequence[str], i: int) -> int | None:
    """How much further the word before moves the day at `i` ("the day before yesterday",
    "avant-hier"), or None."""
    pair = (tokens[i - 1] if i else "", tokens[i])
    if pair[0] in ("before", "after") and tokens[i - 2 : i - 1] != ["day"]:
        return None
    return _FURTHER.get(pair)


def _relative_day(
    tokens: Sequence[str], i: int, now: datetime.date
) -> tuple[datetime.date, int, int]:
    """ "yesterday", "the day before yesterday", "après-demain", "gestern"."""
    word, previous = tokens[i], tokens[i - 1] if i else ""
    further = _further(tokens, i)
    days = _RELATIVE.get(word, 0) + (further or 0)
    start = i - 1 if further is not None else i
    if previous in ("before", "after"):  # "(the) day before yesterday"
        while start > 0 and tokens[start - 1] in ("day", "the"):
            start -= 1
    return now + datetime.timedelta(days=days), start, i + 1


def _weekday(
    tokens: Sequence[str], i: int, now: datetime.date
) -> list[tuple[datetime.date, int, int]]:
    """ "last friday", "vendredi dernier", "sexta-feira passada", "this friday", "since
    tuesday", "on friday" asked in the past tense; nothing for a weekday no word says which one
    of, or a Portuguese name read as an ordinal."""
    feira = tokens[i + 1 : i + 2] == ["feira"]
    end = i + 2 if feira else i + 1
    previous = tokens[i - 1] if i else ""
    after = tokens[end] if end < len(tokens) else ""
    if tokens[i] in _ORDINAL_NAMES and not (feira or previous in _PORTUGUESE_ON):
        return []
    if previous in _BEFORE:
        which, start = _BEFORE[previous], i - 1
    elif after in _AFTER:
        which, start, end = _AFTER[after], i, end + 1
    elif previous in _SINCE:
        which, start = _LAST, i
    elif _on(tokens, i) and (tense := _tense(tokens)) is not None:
        which, start = tense, i
    else:
        return []
    return [(_nearest(now, WEEKDAY_NUMBERS[tokens[i]], which), start, end)]


def _on(tokens: Sequence[str], i: int) -> bool:
    """Whether the weekday at `i` follows a word saying when ("on friday", "am Freitag"; not
    "9 am friday") or ends the prompt ("what happened monday", "cosa ho fatto mercoledì")."""
    previous = tokens[i - 1] if i else ""
    if i == len(tokens) - 1:
        return True
    return previous in _ON and not (previous == "am" and i > 1 and tokens[i - 2].isdigit())


def _nearest(now: datetime.date, weekday: int, which: int) -> datetime.date:
    if which == _LAST:
        return now - datetime.timedelta(days=(now.weekday() - weekday) % 7 or 7)
    if which == _NEXT:
        return now + datetime.timedelta(days=(weekday - now.weekday()) % 7 or 7)
    return now + datetime.timedelta(days=weekday - now.weekday())  # this week's


def _tense(tokens: Sequence[str]) -> int | None:
    """The last weekday of its name for a prompt asked in the past tense, the next one for a
    prompt about what is coming, else None: "on friday" alone does not say which."""
    past = any(t in _PAST for t in tokens if t != "was") or _english_was(tokens)
    coming = any(t in _COMING for t in tokens)
    return None if past == coming else (_LAST if past else _NEXT)


_AFTER_WAS = [[word] for word in "i it there we he she the on my that this a in at".split()]


def _english_was(tokens: Sequence[str]) -> bool:
    """Whether "was" is English's past ("what was on friday", "was I off on friday") and not
    German's "what" ("was steht am Freitag an", "sag mir, was am Mittwoch ansteht")."""
    return any(
        word == "was" and tokens[i + 1 : i + 2] in _AFTER_WAS for i, word in enumerate(tokens)
    )


def _week(
    tokens: Sequence[str], i: int, now: datetime.date
) -> list[tuple[datetime.date, int, int]]:
    """ "last week", "this week", "la semaine dernière", "la settimana scorsa": its seven
    days, Monday first; "the past week": the seven days before today; "last weekend": its
    Saturday and Sunday."""
    previous = tokens[i - 1] if i else ""
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if previous in _BEFORE and after != "of":  # "the last week of the sprint"
        which, start, end = _BEFORE[previous], i - 1, i + 1
    elif after in _AFTER:
        which, start, end = _AFTER[after], i, i + 2
    else:
        return []
    if tokens[i] in _WEEKEND_WORDS:  # the last one ends before today
        saturday = (
            _nearest(now, 5, which)
            if which != _THIS
            else now + datetime.timedelta(days=5 - now.weekday())
        )
        return [(saturday + datetime.timedelta(days=d), start, end) for d in range(2)]
    if previous == "past":
        first = now - datetime.timedelta(days=7)
    else:
        first = now - datetime.timedelta(days=now.weekday()) + datetime.timedelta(weeks=which)
    return [(first + datetime.timedelta(days=d), start, end) for d in range(7)]


def _since(
    tokens: Sequence[str], days: list[tuple[datetime.date, int, int]], now: datetime.date
) -> list[tuple[datetime.date, int, int]]:
    """ "since tuesday", "since last week": every day from the first one named up to today."""
    if not days or days[0][1] == 0 or tokens[days[0][1] - 1] not in _SINCE:
        return days
    first, start, end = days[0]
    return [
        (first + datetime.timedelta(days=d), start - 1, end) for d in range((now - first).days + 1)
    ]
