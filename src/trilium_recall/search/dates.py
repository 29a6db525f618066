"""Dates as a prompt says them: "on the 21st", "the 28th of december", "monday dec 18", "sep 3",
"late november", "2026-09-03", "21.10.2026", "am 3. Mai", "yesterday", "last friday", with the
month names and days from today of the six languages the prompt's language is told in.

A journal is looked up by date ("what did I buy on the 21st", "the gift ideas I jotted down in
late november"), and filed.py matches these dates to where the notes are filed. Words that are
also other words ("may", "march", "mars", "dec" as in RA/Dec, "jan", "julio") are a month only
beside an ordinal or a year, after a word of time ("in may", "during the sept outage"), or with
a day after a word such as "from" or "on" ("from may 19"): "python 3 may be slower" and "email
from jan" name no date. A bare ordinal is a day only after "on" ("on the 21st"): "the 3rd
argument", "the 1st or the 2nd" are not. A numeric date is read only when its order is clear,
or as both dates when it has a year ("3/4/2026").
A time of day makes a date a log's timestamp, and a prompt naming more than a few dates is a
pasted log or table: neither says which notes to look in.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..index.terms import STOP_WORDS, index_term, words
from .day_words import WEEKDAYS, WHEN_WORDS
from .days_from_today import days_from_today
from .languages import MARKERS
from .topic import POINTING_WORDS

# Month names in the six languages the prompt's language is told in (languages.MARKERS),
# without diacritics as the keyword index folds them.
_MONTH_NAMES = (
    "january januar janvier enero janeiro gennaio",
    "february februar fevrier febrero fevereiro febbraio",
    "march marz mars marzo marco",
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
    {"may", "march", "mars", "mai", "mayo", "maio", "august", "julio", "janeiro", "marco"}
    | {"april", "june", "sept", *_ABBREVIATIONS}
)
# Words of time that make a lone ambiguous word a month ("in may", "late march"); "the" counts
# after one of them ("during the sept outage"), and "of" after a part ("end of march").
_TIME_WORDS = frozenset(
    "in during since early mid late last next until till before after anfang ende".split()
)
# With a day beside it, these make it one too: "from may 19", "on may 19", "am 3. Mai", "le 3
# mars", "el 3 de mayo" ("email from jan", "hi im jan", "signals from mars" have no day).
_DAY_WORDS = _TIME_WORDS | frozenset(
    "from on around by im am vom seit bis le du au en el em no il al".split()
)
_PARTS = frozenset("end start beginning middle rest".split())
_OF = frozenset({"of", "de", "di", "del"})  # "28th of december", "21 de diciembre"
# Words that ask what a day held rather than name a topic ("what happened on the 22nd", "was
# habe ich am 21. Oktober gemacht"), with each language's function words (languages.MARKERS).
# Not "day", "today" or "going": "what day is it today?" and "what's going on today" are chat.
_ASKING = (
    POINTING_WORDS
    | frozenset().union(*MARKERS.values())
    | WHEN_WORDS
    | frozenset(
        """happened happen happening went entry entries journal diary remind reminder planned
        plan plans agenda schedule summarize summary recap todo list did done doing fait gemacht
        passiert habe hecho hice hizo paso feito fiz aconteceu fatto successo qu ai""".split()
    )
)
_ASKED_VERB = re.compile(r"\b(?:did|have|had|was|were)\s+(?:i|we)\s+(\w+)", re.IGNORECASE)
_ASKED_DOING = re.compile(r"\b(?:did|have|had)\s+(?:i|we)\s+(?:do|done)\b", re.IGNORECASE)
_DAY = re.compile(r"(\d{1,2})(?:st|nd|rd|th|er|e)?")
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th|er)")
YEAR = re.compile(r"((?:19|20)\d\d)")
# A day as a client sends it (`today`): the shape the MCP tool's schema gives too.
DAY_WRITTEN = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")
ISO_DATE = re.compile(
    r"(?<![\w-])((?:19|20)\d\d)-(0?[1-9]|1[0-2])(?:-(0?[1-9]|[12]\d|3[01]))?(?![\w-])"
)
# A date with a time of day is a log's or a program's timestamp ("2026-10-21T10:04",
# "Dec 21 10:15:01 host sshd"), not a day the person names.
_TIMESTAMP = re.compile(
    r"(?<![\w-])(?:(?:19|20)\d\d-\d\d?-\d\d?|[A-Za-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?)"
    r"[T ]\s*\d{1,2}:\d\d"
)
# Numeric dates: 21.10.2026 (day first, with a year), 2021/12/21 (year first), and a day/month
# pair (12/21, 21/12/2021; 3/4/2026 is both readings, `_slashed`).
_DOTTED = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.((?:19|20)\d\d)(?![\w.])")
_SLASHED = re.compile(
    r"(?<![\w/])(?:((?:19|20)\d\d)/)?(\d{1,2})/(\d{1,2})(?:/((?:19|20)\d\d))?(?![\w/])"
)
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

    @property
    def number(self) -> int:
        """The date as a number that orders dates (2021-12-21 → 20211221; a missing field 0)."""
        return (self.year or 0) * 10_000 + (self.month or 0) * 100 + (self.day or 0)

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
    # said loosely ("last month", "3 days ago"): finds its days' notes, rules no other day out
    loose: bool = False
    either: bool = False  # one of the two readings of a date written either way ("3/4/2026")


def as_said(mentions: Sequence[DateMention]) -> list[dict[str, object]]:
    """The dates as the prompt said them, for `explain`: a week's days as one span ("last
    week" = "12 oct 2026 – 18 oct 2026")."""
    said: dict[str, list[DateMention]] = {}
    for mention in mentions:
        said.setdefault(mention.said, []).append(mention)
    return [
        {"said": words, "date": _span(days), "from_today": days[0].relative}
        for words, days in said.items()
    ]


def _span(mentions: Sequence[DateMention]) -> str:
    """ "21 oct 2026"; the days of a span named from today as the first and last ("12 oct 2026 –
    18 oct 2026"); the two readings of a date written either way round ("4 mar 2026 or 3 apr
    2026")."""
    days = sorted(mentions, key=lambda m: m.date.number)
    if days[0].either:
        return " or ".join(str(m.date) for m in days)
    return " – ".join(dict.fromkeys([str(days[0].date), str(days[-1].date)]))


def close_days(mentions: Sequence[DateMention]) -> list[DateMention]:
    """The dates that say which days closely enough to rule the journal's other days out: not
    those said loosely ("last month", "3 days ago": days_from_today.CLOSE_SPAN)."""
    return [m for m in mentions if not m.loose]


def said_loosely(mentions: Sequence[DateMention]) -> bool:
    """Whether the prompt names days only loosely: their notes must be on its topic too."""
    return bool(mentions) and not close_days(mentions)


def today() -> datetime.date:
    """The engine's local date: what "yesterday" in a prompt is counted from when the asker
    does not say what their date is."""
    return datetime.date.today()


def parse_day(text: str) -> datetime.date:
    """A date written YYYY-MM-DD in the years dates are read in, and nothing else
    (`date.fromisoformat` also reads "20261206" and week dates, and "next week" from
    9999-12-31 is no date); ValueError otherwise."""
    if not DAY_WRITTEN.fullmatch(text):
        raise ValueError(text)
    return datetime.date.fromisoformat(text)


def prompt_dates(prompt: str, now: datetime.date | None = None) -> list[DateMention]:
    """The dates a prompt names: ISO dates, a month with or without a day and a year, a day
    after "on" ("on the 21st"), a day named from today (`now`, the asker's date; None: the
    engine's); none in a prompt naming more than MAX_DATES."""
    head = _TIMESTAMP.sub(" ", prompt[:DATE_CHARS])
    numeric, head = _numeric_dates(head)
    tokens = words(head)
    spoken = spoken_dates(tokens)
    dated_weekdays = {m.words[0] for m in spoken if m.words[0] in WEEKDAYS}  # "monday dec 18"
    found = numeric + spoken + _from_today(tokens, now or today(), dated_weekdays)
    # Each day once ("2026-10-21 (october 21st)"); a day named from today keeps its own words,
    # so "last week and yesterday" shows both.
    kept = {(m.date, m.said if m.relative else None): m for m in reversed(found)}
    mentions = list(kept.values())[::-1]
    return mentions if len({m.said for m in mentions}) <= MAX_DATES else []  # a week is one


def _numeric_dates(text: str) -> tuple[list[DateMention], str]:
    """ISO dates and numeric dates (`_slashed` says which are read), and the text without them."""
    found: list[tuple[int, Date, str, bool]] = []  # (where, date, as written, one of two)
    for m in ISO_DATE.finditer(text):
        if m[3]:  # "2011-12" is as often a season or a version as a month
            found.append((m.start(), Date(int(m[1]), int(m[2]), int(m[3])), m[0], False))
    for m in _DOTTED.finditer(text):
        found.append((m.start(), Date(int(m[3]), int(m[2]), int(m[1])), m[0], False))
    for m in _SLASHED.finditer(text):
        readings = _slashed(m, words(text[: m.start()])[-1:] == ["on"])
        found += [(m.start(), date, m[0], len(readings) > 1) for date in readings]
    for pattern in (ISO_DATE, _DOTTED, _SLASHED):
        text = pattern.sub(" ", text)
    mentions = [
        DateMention(date, tuple(words(said)), said, either=either)
        for _, date, said, either in sorted(found, key=lambda f: f[0])
        if date.month and date.day and valid_day(date.month, date.day)
    ]
    return mentions, text


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


def _from_today(
    tokens: Sequence[str], now: datetime.date, dated_weekdays: Collection[str]
) -> list[DateMention]:
    """ "yesterday", "the day before yesterday", "last friday", "last week" (each of its days):
    days_from_today.py; not a weekday a date the prompt names already holds."""
    mentions = []
    for day, start, end, loose in days_from_today(tokens, now):
        after = [t for t in tokens[end : end + 2] if t != "the"][:1]
        of_a_date = tokens[end - 1] in dated_weekdays or (after and _ORDINAL.fullmatch(after[0]))
        if of_a_date:  # "on monday dec 18", "friday the 3rd": that date, not last friday
            continue
        said = tuple(tokens[start:end])
        date = Date(day.year, day.month, day.day)
        mentions.append(DateMention(date, said, " ".join(said), relative=True, loose=loose))
    return mentions


def day_terms(mentions: Sequence[DateMention], terms: Sequence[str]) -> list[str]:
    """The prompt `terms` that name a day ("october", "21st" of "on october 21st")."""
    said = {index_term(word) for m in mentions if m.date.day for word in m.words}
    return [term for term in terms if index_term(term) in said]


def asks_the_day(asking: Collection[str], prompt: str) -> bool:
    """Whether the prompt asks what a day held: it has `asking` terms, or asks what the person
    did ("what did I do", "what have we done": the verb is a stop word, no term)."""
    return bool(asking) or _ASKED_DOING.search(prompt[:DATE_CHARS]) is not None


def asking_terms(terms: Sequence[str], prompt: str) -> list[str]:
    """The prompt `terms` that only ask what a day held: "happened", "noted", "entry", and the
    verb of a question about what the person did ("what did I work on last week", "what was I
    reading on the 3rd": the day's notes answer it, whether or not they say "work")."""
    verbs = {index_term(m[1]) for m in _ASKED_VERB.finditer(prompt[:DATE_CHARS])}
    return [term for term in terms if term in _ASKING or index_term(term) in verbs]


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
    """ "in may", "monday dec 18", "during the sept outage", "end of march", and with a day
    "on may 19", "le 3 mars" ("on mars" is not a date)."""
    before = tokens[start - 1] if start > 0 else ""
    earlier = tokens[start - 2] if start > 1 else ""
    return (
        before in _TIME_WORDS
        or (before in _DAY_WORDS and with_day)
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
