"""Dates as a prompt says them: "on the 21st", "the 28th of december", "monday dec 18", "sep 3",
"late november", "2026-09-03", "21.10.2026", "am 3. Mai", spans ("dec 18-21", "vom 3. bis 9.
Mai": spans.py), "yesterday", "last friday", with the month names and days from today of
the six languages the prompt's language is told in.

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

import datetime
import re
from collections.abc import Collection, Sequence

from ...index.terms import STOP_WORDS, index_term, words
from ..languages import MARKERS
from ..topic import POINTING_WORDS
from .days import number_at
from .figures import numeric_dates
from .from_today import days_from_today
from .mentions import Date, DateMention, consecutive, span_mentions, valid_day
from .spans import DASHED, Context, spans
from .words import (
    AMBIGUOUS_MONTHS,
    DASHES,
    DAY_NUMBER,
    DAY_WORDS,
    ENGLISH_TIME_WORDS,
    FOREIGN_AMBIGUOUS,
    MONTH_OF,
    MONTHS,
    ORDINAL,
    SHORT_MONTHS,
    SPAN_TO,
    TIME_WORDS,
    WEEKDAYS,
    WHEN_WORDS,
    YEAR,
)

_PARTS = frozenset("end start beginning middle rest".split())
_MONTH_PARTS = frozenset("early mid late anfang ende".split())  # right before a month
# Words that ask what a day held rather than name a topic ("what happened on the 22nd", "was
# habe ich am 21. Oktober gemacht"), with each language's function words (languages.MARKERS).
# Not "day", "today" or "going": "what day is it today?" and "what's going on today" are chat.
_ASKING = (
    POINTING_WORDS
    | frozenset().union(*MARKERS.values())
    | WHEN_WORDS
    | frozenset(
        """happened happen happening went entry entries journal diary note notes notiz notizen
        nota notas remind reminder planned
        plan plans agenda schedule summarize summary recap todo list did done doing fait gemacht
        passiert habe hecho hice hizo paso feito fiz aconteceu fatto successo qu ai""".split()
    )
)
_ASKED_VERB = re.compile(r"\b(?:did|have|had|was|were)\s+(?:i|we)\s+(\w+)", re.IGNORECASE)
_ASKED_DOING = re.compile(r"\b(?:did|have|had)\s+(?:i|we)\s+(?:do|done)\b", re.IGNORECASE)
_HAPPENED = re.compile(r"\b(?:happened|happen|went on|noted|wrote down)\b", re.IGNORECASE)
# A day as a client sends it (`today`): the shape the MCP tool's schema gives too.
DAY_WRITTEN = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")
DAY_FORM = "a date written YYYY-MM-DD, in 1900-2099"  # what error messages ask for
# A date with a time of day is a log's or a program's timestamp ("2026-10-21T10:04",
# "Dec 21 10:15:01 host sshd"), not a day the person names.
_TIMESTAMP = re.compile(
    r"(?<![\w-])(?:(?:19|20)\d\d-\d\d?-\d\d?|[A-Za-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?)"
    r"[T ]\s*\d{1,2}:\d\d"
)
# A prompt that opens with a month's word and a day, then a stop ("may 19 — anything noted?",
# "jan 5: standup"): the word is the month even where it is also another ("may 2 processes
# write at once?" goes on with a word).
# A stop is punctuation before no number: "may 3, 4 or 5 threads", "may 2 - 3 workers", "may
# 3.5" go on with numbers.
_OPENS_WITH_A_DAY = re.compile(
    rf"\s*[^\W\d_]{{3,9}}\.?\s+{DAY_NUMBER.pattern}(?:\s*[{DASHES}]\s*{DAY_NUMBER.pattern})?"
    rf"\s*(?:[{DASHES}:?!,.](?!\s*\d)|$)"
)
# Dates are read in the prompt's start; a prompt naming more than MAX_DATES is a log or table.
DATE_CHARS = 2000
MAX_DATES = 3


def as_said(mentions: Sequence[DateMention]) -> list[dict[str, object]]:
    """The dates as the prompt said them, for `explain`: a week's days as one span ("last
    week" = "12 oct 2026 – 18 oct 2026")."""
    said: dict[str, list[DateMention]] = {}
    for mention in mentions:
        said.setdefault(mention.said, []).append(mention)
    return [
        {"said": words, "date": _shown(days), "from_today": days[0].relative}
        for words, days in said.items()
    ]


def _shown(mentions: Sequence[DateMention]) -> str:
    """ "21 oct 2026"; the days of a span as the first and last, in the order named ("12 oct 2026
    – 18 oct 2026"; "28 dec – 3 jan" has no year to sort by); the two readings of a date
    written either way round ("4 mar 2026 or 3 apr 2026")."""
    if mentions[0].either:
        return " or ".join(str(m.date) for m in sorted(mentions, key=lambda m: m.date.number))
    ends = dict.fromkeys([str(mentions[0].date), str(mentions[-1].date)])
    apart = len(mentions) == 2 and not consecutive(mentions[0].date, mentions[1].date)
    return (" and " if apart else " – ").join(ends)  # "the 1st and the 10th of last month"


def close_days(mentions: Sequence[DateMention]) -> list[DateMention]:
    """The dates that say which days closely enough to rule the journal's other days out: not
    those said loosely ("last month", "3 days ago": mentions.CLOSE_SPAN)."""
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
    now = now or today()
    numeric, head = numeric_dates(head, now)
    tokens = words(DASHED.sub(r"\1 to ", head))
    context = Context(now, bool(_OPENS_WITH_A_DAY.match(head)), _asks_what_days_held(head))
    ranged, taken = _spans(tokens, context)
    # A span's words are read as nothing else ("dec 18 to 21" is not also "dec 18").
    rest = ["" if i in taken else token for i, token in enumerate(tokens)]
    spoken = spoken_dates(rest, context.opens_with_a_day, context.asks_the_day)
    dated_weekdays = {m.words[0] for m in spoken if m.words[0] in WEEKDAYS}  # "monday dec 18"
    found = numeric + ranged + spoken + _from_today(rest, now, dated_weekdays)
    # Each day once ("2026-10-21 (october 21st)"); a day named from today keeps its own words,
    # so "last week and yesterday" shows both.
    kept = {(m.date, m.said if m.relative else None): m for m in reversed(found)}
    mentions = list(kept.values())[::-1]
    return mentions if len({m.said for m in mentions}) <= MAX_DATES else []  # a week is one


def _spans(tokens: Sequence[str], context: Context) -> tuple[list[DateMention], set[int]]:
    """The days of each span the tokens name ("dec 18 to 21": spans.py), and the tokens
    it is said with."""
    mentions: list[DateMention] = []
    taken: set[int] = set()
    for span in spans(tokens, context):
        said = tuple(tokens[span.start : span.end])
        mentions += span_mentions(span.days, said, " ".join(said), span.month_words)
        # A span that cannot be walked is its two ends, said loosely: its words name days
        # still (no topic), and rule no journal day out.
        mentions += span_mentions(span.ends, said, " ".join(said), span.month_words, loose=True)
        taken.update(range(span.start, span.end))
    return mentions, taken


def _from_today(
    tokens: Sequence[str], now: datetime.date, dated_weekdays: Collection[str]
) -> list[DateMention]:
    """ "yesterday", "the day before yesterday", "last friday", "last week" (each of its days):
    from_today.py; not a weekday a date the prompt names already holds."""
    mentions = []
    for day, start, end, loose in days_from_today(tokens, now):
        after = [t for t in tokens[end : end + 2] if t != "the"][:1]
        of_a_date = tokens[end - 1] in dated_weekdays or (after and ORDINAL.fullmatch(after[0]))
        if of_a_date:  # "on monday dec 18", "friday the 3rd": that date, not last friday
            continue
        said = tuple(tokens[start:end])
        date = Date(day.year, day.month, day.day)
        mentions.append(DateMention(date, said, " ".join(said), relative=True, loose=loose))
    return mentions


def day_terms(mentions: Sequence[DateMention], terms: Sequence[str]) -> list[str]:
    """The prompt `terms` that name a day ("october", "21st" of "on october 21st"), or a month
    named alone, whose days' notes are filed in it (dates/filed.py)."""
    said = {index_term(word) for m in mentions if m.date.day or m.date.month for word in m.words}
    return [term for term in terms if index_term(term) in said]


def _asks_what_days_held(text: str) -> bool:
    """Whether a prompt asks what the person did or what happened ("what did I do", "what was
    I working on", "what happened"): days of the month alone are days there ("from the 3rd to
    the 9th"), not in "sort the list from the 1st to the 5th"."""
    return bool(_ASKED_VERB.search(text) or _HAPPENED.search(text))


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


def spoken_dates(
    tokens: Sequence[str], opens_with_a_day: bool = False, asks_the_day: bool = False
) -> list[DateMention]:
    """Dates said in words: a month with or without a day and a year, a day after "on"; the
    first two tokens a month and a day when `opens_with_a_day` (see _OPENS_WITH_A_DAY); a
    month's short word and the day after it, ending the prompt, when the prompt `asks_the_day`
    held ("what did I do oct 3")."""
    mentions: list[DateMention] = []
    used: set[int] = set()
    for i, word in enumerate(tokens):
        opening = opens_with_a_day and i == 0
        # A short month word and its day must end the prompt: "what happened when I convert dec
        # 10 to binary" names no day.
        asked = asks_the_day and word in SHORT_MONTHS and not any(tokens[i + 2 :])
        if word in MONTHS and (found := _month_at(tokens, i, opening, asked)) is not None:
            span, date = found
            used.update(span)
            said = tuple(tokens[j] for j in span)
            # a month named alone is many days: its notes go along only when on the topic
            loose = date.day is None and date.month is not None
            mentions.append(DateMention(date, said, " ".join(said), loose=loose))
    for i, word in enumerate(tokens):
        if i not in used and (day := _bare_day(tokens, i)) is not None:
            mentions.append(DateMention(Date(day=day), (word,), word))
    return mentions


def _month_at(
    tokens: Sequence[str], i: int, opening: bool = False, asked: bool = False
) -> tuple[range, Date] | None:
    """The date around the month name `tokens[i]`: "28th of december", "december 28, 2021",
    "monday dec 18", "21 de diciembre de 2021"; None for a word that is only maybe a month,
    unless it is `opening` the prompt with a day, or the prompt `asked` what a day held and the
    day follows ("what happened dec 18" names no declination)."""
    month, ambiguous = MONTHS[tokens[i]], tokens[i] in AMBIGUOUS_MONTHS
    start, end, day, year, ordinal = i, i + 1, None, None, False
    if (after := number_at(tokens, end, DAY_NUMBER, 31)) is not None:
        day, end, ordinal = after, end + 1, bool(ORDINAL.fullmatch(tokens[i + 1]))
    else:
        before = i - 2 if i >= 2 and tokens[i - 1] in MONTH_OF else i - 1
        if (found := number_at(tokens, before, DAY_NUMBER, 31)) is not None:
            day, start, ordinal = found, before, bool(ORDINAL.fullmatch(tokens[before]))
    year_at = end + 1 if end < len(tokens) and tokens[end] in MONTH_OF else end
    if (found := number_at(tokens, year_at, YEAR, 2099)) is not None:
        year, end = found, year_at + 1
    said_when = (
        (opening and day is not None)
        or (asked and start == i and day is not None)
        or _time_word_before(tokens, start, day is not None, tokens[i])
    )
    if ambiguous and not (ordinal or year or said_when):
        return None
    if start > 0 and tokens[start - 1] in WEEKDAYS:
        start -= 1
    elif day is None and start > 0 and tokens[start - 1] in _MONTH_PARTS:
        start -= 1  # "late october" is said of the month: "late" is no topic of the prompt
    if day is not None and not valid_day(month, day, year):
        return None
    return range(start, end), Date(year, month, day)


def _time_word_before(tokens: Sequence[str], start: int, with_day: bool, month: str) -> bool:
    """ "in may", "monday dec 18", "during the sept outage", "end of march", and with a day
    "on may 19", "le 3 mars" ("on mars" is not a date). English time words make no month of
    another language's word that is English too: "what did the Aztecs see in Mars"."""
    before = tokens[start - 1] if start > 0 else ""
    earlier = tokens[start - 2] if start > 1 else ""
    time_words = TIME_WORDS - ENGLISH_TIME_WORDS if month in FOREIGN_AMBIGUOUS else TIME_WORDS
    return (
        before in time_words
        or (before in DAY_WORDS and with_day)
        or before in WEEKDAYS
        or (before == "the" and earlier in time_words)
        or (before in MONTH_OF and earlier in _PARTS)
    )


def _bare_day(tokens: Sequence[str], i: int) -> int | None:
    """The day of "on the 21st", "on the 3rd?": an ordinal after "on" or "on the", before no
    content word."""
    ordinal = ORDINAL.fullmatch(tokens[i])
    if ordinal is None or not 1 <= int(ordinal[1]) <= 31:
        return None
    before = tokens[max(0, i - 2) : i]
    if not (before[-1:] == ["on"] or before == ["on", "the"]):
        return None
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if following is not None and (following not in STOP_WORDS or following in MONTH_OF):
        return None
    if following in SPAN_TO and number_at(
        tokens, i + 2 + (tokens[i + 2 : i + 3] == ["the"]), ORDINAL, 31
    ):
        return None  # "on the 3rd to the 9th": a span (spans.py), read only where days are asked
    return int(ordinal[1])


def first_word(text: str) -> str | None:
    return next(iter(words(text)), None)
