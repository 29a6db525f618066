"""Dates as a prompt says them: "on the 21st", "the 28th of december", "monday dec 18", "sep 3",
"late november", "2026-09-03", in the six languages the prompt's language is told in.

A journal is looked up by date ("what did I buy on the 21st", "the gift ideas I jotted down in
late november"), and filed.py matches these dates to where the notes are filed. Words that are
also other words ("may", "march", "mars", "dec" as in RA/Dec, "julio") are a month only beside
an ordinal or a year, or after a word of time ("in may", "during the sept outage", "from may
19", "monday dec 18"): "python 3 may be slower" names no date. A bare ordinal is a day only
after "on" ("on the 21st"): "the 3rd argument", "the 1st or the 2nd" are not. A time of day
makes a date a log's timestamp, and a prompt naming more than a few dates is a pasted log or
table: neither says which notes to look in.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..index.terms import STOP_WORDS, index_term, words
from .topic import POINTING_WORDS

# Month names in the six languages the prompt's language is told in (languages.MARKERS),
# without diacritics as the keyword index folds them.
_MONTH_NAMES = (
    "january januar janvier enero janeiro gennaio",
    "february februar fevrier febrero fevereiro febbraio",
    "march marz mars marzo",
    "april avril abril aprile",
    "may mai mayo maio maggio",
    "june juni juin junio junho giugno",
    "july juli juillet julio julho luglio",
    "august aout agosto",
    "september septembre septiembre setembro settembre",
    "october oktober octobre octubre outubro ottobre",
    "november novembre noviembre novembro",
    "december dezember decembre diciembre dezembro dicembre",
)
_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
MONTHS: dict[str, int] = {
    **{name: n for n, names in enumerate(_MONTH_NAMES, 1) for name in names.split()},
    **{name: n for n, name in enumerate(_ABBREVIATIONS, 1)},
    "sept": 9,
}
# Each is also a verb, a planet, a sea, a name, a coordinate ("RA/Dec") or a short word.
_AMBIGUOUS = frozenset(
    {"may", "march", "mars", "mai", "mayo", "maio", "august", "julio", "janeiro", "sept"}
    | set(_ABBREVIATIONS)
)
# Words of time before a month ("in may", "from may 19"); "the" counts after one of them
# ("during the sept outage"), and "of" after a part ("end of march").
_TIME_WORDS = frozenset(
    "in during since early mid late last next until till before after from around im seit "
    "bis anfang ende en em au desde".split()
)
_PARTS = frozenset("end start beginning middle rest".split())
_OF = frozenset({"of", "de", "di", "del"})  # "28th of december", "21 de diciembre"
WEEKDAYS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch
    donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche lunes
    martes miercoles jueves viernes sabado domingo lunedi martedi mercoledi giovedi venerdi
    segunda terca quarta quinta sexta""".split()
)
# Words that ask what a day held rather than name a topic: "what happened on the 22nd".
_ENGLISH_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAY_NUMBERS = {name: n for n, name in enumerate(_ENGLISH_WEEKDAYS)}
_ASKING = POINTING_WORDS | frozenset(
    "happened happen happening going go went entry entries journal diary day today remind "
    "reminder".split()
)
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?")
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th)")
YEAR = re.compile(r"((?:19|20)\d\d)")
ISO_DATE = re.compile(
    r"(?<![\w-])((?:19|20)\d\d)-(0?[1-9]|1[0-2])(?:-(0?[1-9]|[12]\d|3[01]))?(?![\w-])"
)
# A date with a time of day is a log's or a program's timestamp ("2026-10-21T10:04",
# "Dec 21 10:15:01 host sshd"), not a day the person names.
_TIMESTAMP = re.compile(
    r"(?<![\w-])(?:(?:19|20)\d\d-\d\d?-\d\d?|[A-Za-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?)"
    r"[T ]\s*\d{1,2}:\d\d"
)
# Days named from today, in the six languages ("hier" is left out: German's "here"). They find
# the day's notes and decide a prompt that is mostly that day, but match no word and rule no
# note out: "why does my build fail today" is about the build, today's note is one answer.
_RELATIVE = {
    "today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1, "heute": 0, "gestern": -1,
    "vorgestern": -2, "aujourd": 0, "demain": 1, "hoy": 0, "ayer": -1, "anteayer": -2,
    "hoje": 0, "ontem": -1, "anteontem": -2, "oggi": 0, "ieri": -1, "domani": 1,
}  # fmt: skip
# Dates are read in the prompt's start; a prompt naming more than MAX_DATES is a log or table.
DATE_CHARS = 2000
MAX_DATES = 3


@dataclass(frozen=True)
class Date:
    """A calendar date as far as it is known: any field may be missing."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def agrees(self, other: Date) -> bool:
        """Whether `other` has every field this date gives, and the same."""
        return all(mine is None or mine == theirs for mine, theirs in self._pairs(other))

    def contradicts(self, other: Date) -> bool:
        """Whether a field both give differs."""
        pairs = self._pairs(other)
        return any(None not in (mine, theirs) and mine != theirs for mine, theirs in pairs)

    def _pairs(self, other: Date) -> tuple[tuple[int | None, int | None], ...]:
        return ((self.year, other.year), (self.month, other.month), (self.day, other.day))

    def __str__(self) -> str:
        """ "21 dec 2021", "nov", "day 21": the fields it gives."""
        month = _ABBREVIATIONS[self.month - 1] if self.month else None
        if self.day and not month:
            return f"day {self.day}" + (f" of {self.year}" if self.year else "")
        return " ".join(str(p) for p in (self.day, month, self.year) if p) or "no date"


@dataclass(frozen=True)
class DateMention:
    """A date the prompt names: the words it is named with and the text they were read from."""

    date: Date
    words: tuple[str, ...]
    said: str
    relative: bool = False  # named from today ("yesterday", "last friday")

    def to_json(self) -> dict[str, object]:
        return {"said": self.said, "date": str(self.date), "from_today": self.relative}


def today() -> datetime.date:
    """The engine's local date: what "yesterday" in a prompt is counted from."""
    return datetime.date.today()


def prompt_dates(prompt: str) -> list[DateMention]:
    """The dates a prompt names: ISO dates, a month with or without a day and a year, a day
    after "on" ("on the 21st"), a day named from today; none in a prompt naming more than
    MAX_DATES."""
    head = _TIMESTAMP.sub(" ", prompt[:DATE_CHARS])
    iso = [
        DateMention(Date(int(m[1]), int(m[2]), int(m[3])), tuple(words(m[0])), m[0])
        for m in ISO_DATE.finditer(head)
        if m[3]  # "2011-12" is as often a season or a version as a month
    ]
    tokens = words(ISO_DATE.sub(" ", head))
    mentions = iso + spoken_dates(tokens) + _from_today(tokens, today())
    return mentions if len(mentions) <= MAX_DATES else []


def _from_today(tokens: Sequence[str], now: datetime.date) -> list[DateMention]:
    """ "yesterday", "the day before yesterday", "last friday", "gestern", "ayer"."""
    mentions = []
    for i, word in enumerate(tokens):
        before = tokens[max(0, i - 3) : i]
        if word in _RELATIVE:
            back = -1 if word == "yesterday" and before[-3:] == ["the", "day", "before"] else 0
            said = (*before[-3:], word) if back else (word,)
            days = _RELATIVE[word] + back
        elif word in _WEEKDAY_NUMBERS and before[-1:] == ["last"]:
            days = -((now.weekday() - _WEEKDAY_NUMBERS[word]) % 7 or 7)
            said = ("last", word)
        else:
            continue
        day = now + datetime.timedelta(days=days)
        mentions.append(DateMention(Date(day.year, day.month, day.day), said, " ".join(said), True))
    return mentions


def day_terms(mentions: Sequence[DateMention], terms: Sequence[str]) -> list[str]:
    """The prompt `terms` that name a day ("october", "21st" of "on october 21st")."""
    said = {index_term(word) for m in mentions if m.date.day for word in m.words}
    return [term for term in terms if index_term(term) in said]


def holds_a_day(mentions: Sequence[DateMention], terms: Sequence[str], held: Iterable[str]) -> bool:
    """Whether the `held` terms (a section's own words) name a whole day the prompt names:
    "may" and "19" of "may 19" in one section, not "19" alone."""
    held_stems = {index_term(term) for term in held}
    prompt_stems = {index_term(term) for term in terms}
    return any(
        m.date.day and {index_term(w) for w in m.words} & prompt_stems <= held_stems
        for m in mentions
        if {index_term(w) for w in m.words} & prompt_stems and not m.relative
    )


def asking_terms(terms: Sequence[str]) -> list[str]:
    """The prompt `terms` that only ask what a day held ("happened", "noted", "entry")."""
    return [term for term in terms if term in _ASKING]


def spoken_dates(tokens: Sequence[str]) -> list[DateMention]:
    mentions: list[DateMention] = []
    used: set[int] = set()
    for i, word in enumerate(tokens):
        if word in MONTHS and (found := _month_at(tokens, i)) is not None:
            span, date = found
            used.update(span)
            said = tuple(tokens[j] for j in span)
            mentions.append(DateMention(date, said, " ".join(said)))
    for i, word in enumerate(tokens):
        if i not in used and (day := _bare_day(tokens, i)) is not None:
            mentions.append(DateMention(Date(day=day), (word,), word))
    return mentions


def _month_at(tokens: Sequence[str], i: int) -> tuple[range, Date] | None:
    """The date around the month name `tokens[i]`: "28th of december", "december 28, 2021",
    "monday dec 18", "21 de diciembre de 2021"; None for a word that is only maybe a month."""
    month, ambiguous = MONTHS[tokens[i]], tokens[i] in _AMBIGUOUS
    start, end, day, year, ordinal = i, i + 1, None, None, False
    if (after := _number(tokens, end, _DAY, 31)) is not None:
        day, end, ordinal = after, end + 1, bool(_ORDINAL.fullmatch(tokens[i + 1]))
    else:
        before = i - 2 if i >= 2 and tokens[i - 1] in _OF else i - 1
        if (found := _number(tokens, before, _DAY, 31)) is not None:
            day, start, ordinal = found, before, bool(_ORDINAL.fullmatch(tokens[before]))
    year_at = end + 1 if end < len(tokens) and tokens[end] in _OF else end
    if (found := _number(tokens, year_at, YEAR, 2099)) is not None:
        year, end = found, year_at + 1
    if ambiguous and not (ordinal or year or _time_word_before(tokens, start, day is not None)):
        return None
    if start > 0 and tokens[start - 1] in WEEKDAYS:
        start -= 1
    if day is not None and not valid_day(month, day):
        return None
    return range(start, end), Date(year, month, day)


def _time_word_before(tokens: Sequence[str], start: int, with_day: bool) -> bool:
    """ "in may", "monday dec 18", "during the sept outage", "end of march", and "on" with a
    day ("on may 19"; "on mars" is not a date)."""
    before = tokens[start - 1] if start > 0 else ""
    earlier = tokens[start - 2] if start > 1 else ""
    return (
        before in _TIME_WORDS
        or (before == "on" and with_day)
        or before in WEEKDAYS
        or (before == "the" and earlier in _TIME_WORDS)
        or (before in _OF and earlier in _PARTS)
    )


def _bare_day(tokens: Sequence[str], i: int) -> int | None:
    """The day of "on the 21st", "on the 3rd?": an ordinal after "on" or "on the", before no
    content word."""
    ordinal = _ORDINAL.fullmatch(tokens[i])
    if ordinal is None or not 1 <= int(ordinal[1]) <= 31:
        return None
    before = tokens[max(0, i - 2) : i]
    if not (before[-1:] == ["on"] or before == ["on", "the"]):
        return None
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if following is not None and (following not in STOP_WORDS or following in _OF):
        return None
    return int(ordinal[1])


def _number(tokens: Sequence[str], i: int, pattern: re.Pattern[str], most: int) -> int | None:
    if not 0 <= i < len(tokens) or (found := pattern.fullmatch(tokens[i])) is None:
        return None
    value = int(found[1])
    return value if 1 <= value <= most else None


def valid_day(month: int, day: int) -> bool:
    return 1 <= day <= calendar.monthrange(2024, month)[1]  # a leap year: 29 february is a day


def first_word(text: str) -> str | None:
    return next(iter(words(text)), None)
