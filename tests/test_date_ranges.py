"""Spans of days a prompt names outright (search/dates/spans.py), as prompt_dates reads them: every
day of the span, in the order named, and nothing for words that only look like one."""

from __future__ import annotations

import datetime

import pytest

from trilium_recall.search.dates.filed import read_dates
from trilium_recall.search.dates.mentions import Date, days_between
from trilium_recall.search.dates.prompt import as_said, prompt_dates

TODAY = datetime.date(2026, 12, 6)


def span(prompt: str) -> tuple[str, str, int]:
    """(as said, first and last day, how many days) of the one span the prompt names."""
    mentions = prompt_dates(prompt, TODAY)
    (shown,) = as_said(mentions)
    return str(shown["said"]), str(shown["date"]), len(mentions)


@pytest.mark.parametrize(
    ("prompt", "said", "days", "count"),
    [
        ("what did I do between dec 18 and 21?", "between dec 18 and 21", "18 dec – 21 dec", 4),
        ("notes from dec 18-21", "from dec 18 to 21", "18 dec – 21 dec", 4),
        ("dec 18th–21st standups", "dec 18th to 21st", "18 dec – 21 dec", 4),
        ("what happened from the 3rd to the 9th", "from the 3rd to the 9th", "day 3 – day 9", 7),
        (
            "monday dec 18 to thursday dec 21",
            "monday dec 18 to thursday dec 21",
            "18 dec – 21 dec",
            4,
        ),
        ("december 28 to january 3", "december 28 to january 3", "28 dec – 3 jan", 7),
        ("dec 28 to jan 3, 2027", "dec 28 to jan 3 2027", "28 dec 2026 – 3 jan 2027", 7),
        ("on december 28 to 3", "december 28 to 3", "28 dec – 3 jan", 7),  # a week: the month turns
        ("december 18‒21", "december 18 to 21", "18 dec – 21 dec", 4),  # a figure dash
        ("october 9 - october 14", "october 9 to october 14", "9 oct – 14 oct", 6),
        ("from feb 27 to mar 2", "from feb 27 to mar 2", "27 feb – 2 mar", 5),  # a leap year's
        ("was war vom 3. bis 9. Mai?", "vom 3 bis 9 mai", "3 may – 9 may", 7),
        ("vom 3. bis zum 9. Mai", "vom 3 bis zum 9 mai", "3 may – 9 may", 7),
        ("zwischen dem 3. und 9. Mai", "zwischen dem 3 und 9 mai", "3 may – 9 may", 7),
        ("du 3 au 9 mai", "du 3 au 9 mai", "3 may – 9 may", 7),
        (
            "del 28 de diciembre al 3 de enero",
            "del 28 de diciembre al 3 de enero",
            "28 dec – 3 jan",
            7,
        ),
        ("entre el 3 y el 9 de mayo", "entre el 3 y el 9 de mayo", "3 may – 9 may", 7),
        ("dal 3 al 9 maggio", "dal 3 al 9 maggio", "3 may – 9 may", 7),
        ("de 3 a 9 de maio", "de 3 a 9 de maio", "3 may – 9 may", 7),
        ("2026-12-18 to 2026-12-21", "2026-12-18 to 2026-12-21", "18 dec 2026 – 21 dec 2026", 4),
        (
            "between 2026-12-18 and 2026-12-21",
            "2026-12-18 and 2026-12-21",
            "18 dec 2026 – 21 dec 2026",
            4,
        ),
        ("18.12.2026 - 21.12.2026", "18.12.2026 - 21.12.2026", "18 dec 2026 – 21 dec 2026", 4),
        (
            "du 2026-12-18 jusqu'au 2026-12-21",
            "2026-12-18 jusqu'au 2026-12-21",
            "18 dec 2026 – 21 dec 2026",
            4,
        ),
        # a month's word that is another word in English is a month between words of another
        # language, whatever follows
        ("was habe ich vom 3. bis 9. Mai gemacht", "vom 3 bis 9 mai", "3 may – 9 may", 7),
        ("qu'ai-je fait du 3 au 9 mars dernier", "du 3 au 9 mars", "3 mar – 9 mar", 7),
        # days alone, where days are asked
        ("what did I do on the 7th-9th?", "7th to 9th", "day 7 – day 9", 3),
        # up to today (2026-12-06)
        (
            "what did I do from nov 29 to today",
            "from nov 29 to today",
            "29 nov 2026 – 6 dec 2026",
            8,
        ),
        ("from 2026-11-29 to today", "2026-11-29 to today", "29 nov 2026 – 6 dec 2026", 8),
        ("vom 29.11.2026 bis heute", "29.11.2026 bis heute", "29 nov 2026 – 6 dec 2026", 8),
        (
            "du 29 novembre jusqu'à aujourd'hui",
            "du 29 novembre jusqu a aujourd",
            "29 nov 2026 – 6 dec 2026",
            8,
        ),
        ("between 2026-11-29 and today", "2026-11-29 and today", "29 nov 2026 – 6 dec 2026", 8),
    ],
)
def test_a_span_is_each_of_its_days(prompt: str, said: str, days: str, count: int) -> None:
    assert span(prompt) == (said, days, count)


@pytest.mark.parametrize(
    "prompt",
    [
        "node 18-20 support matrix",  # no month: versions
        "pages 10-20 of the may report",
        "3 to 9 workers",  # numbers, not ordinals
        "the 3rd to the 9th argument",  # ordinals, but nothing opens a span of days
        "feb 30 to mar 2",  # no such day
        "jan 1 to jun 30",  # longer than a span is read (and "jan 1" alone is a name and a number)
        "python 3.10-3.12",
        # a month's word that is also another word, with no word saying when, or before a content
        # word: a count, a coordinate, a planet, a verb
        "may 3-4 people join the call?",
        "tests between 2 and 4 may fail",
        "i have 2-3 mars bars",
        "convert dec 10-20 to hex",
        "ask jan 2 to 3 questions",
        "les chiffres de 3 à 7 sept fois",
        "a 9-5 may suit you",
        # ordinals that number something else
        "from the 3rd to the 9th element of the array",
        "between the 1st and 2nd half",
        "dramatiq retries between the 3rd and the 5th attempt",
        # a month lent backwards makes more than a week
        "12-5 dec",
        # a month's word opening a prompt with numbers that go on: counts, decimals, no day
        "may 2 - 3 dramatiq threads enough?",
        "may 3, 4 or 5 threads be enough for dramatiq?",
        "sept 3, 4 ou 8 threads pour dramatiq ?",
        "may 3.5 be rounded?",
        "may 99?",
        "dec 45 — x",
        # ordinals with no question about what days held
        "what's the difference between the 1st and the 2nd?",
        "move items from the 1st to the 2nd",
        "on the 3rd-9th",
        "sort the list from the 1st to the 5th",
        "plan the migration from the 1st to the 3rd",
    ],
)
def test_numbers_that_only_look_like_a_span_are_none(prompt: str) -> None:
    assert prompt_dates(prompt, TODAY) == []


def test_and_without_between_is_two_days_not_the_days_between() -> None:
    """ "on dec 18 and 21" names two days (the 21st as stop 40 read it: a bare number is no
    day), never the 19th and 20th."""
    days = {m.date for m in prompt_dates("what did i do on dec 18 and 21", TODAY)}
    assert Date(None, 12, 19) not in days and Date(None, 12, 18) in days


@pytest.mark.parametrize(
    "prompt",
    [
        "from december 21-18",  # lent backwards, it would run to the 18th of January
        "from oct 22 to 19",
        "from sep 1 to dec 2",  # 93 days
        "2026-12-21 to 2026-12-18",
        "between 2026-07-01 and 2026-10-26",
    ],
)
def test_a_span_that_cannot_be_walked_is_its_two_ends_said_loosely(prompt: str) -> None:
    """Neither end is a day said closely (one would rule the journal's other days out), and
    both still name days: read as nothing, their figures were keywords that found other
    notes."""
    mentions = prompt_dates(prompt, TODAY)
    assert 1 <= len(mentions) <= 2 and all(m.loose for m in mentions)


def test_between_is_a_word_not_the_end_of_one() -> None:
    """ "the extra 2026-12-18 and 2026-12-21 builds": "extra" ends in "tra" (Italian "between")."""
    said = [m.said for m in prompt_dates("compare the extra 2026-12-18 and 2026-12-21 builds")]
    assert said == ["2026-12-18", "2026-12-21"]


def test_a_span_longer_than_a_week_is_said_loosely() -> None:
    """A week at most rules the journal's other days out; a fortnight's notes must be on topic."""
    assert not any(m.loose for m in prompt_dates("between dec 1 and 7", TODAY))
    assert all(m.loose for m in prompt_dates("between dec 1 and 15", TODAY))


def test_a_span_s_words_are_no_topic_and_its_days_rule_others_out() -> None:
    """ "vom 3. bis 9. Mai" read as the 9th alone ruled the 5th out: the 5th's journal note
    is now inside the span, the 12th's outside it; "vom" and "bis" name the days."""
    mentions = prompt_dates("was war vom 3. bis 9. Mai?", TODAY)
    note = ("05 - Tuesday", ["Journal › 2026 › 05 - May › 05 - Tuesday"], None)
    later = ("12 - Tuesday", ["Journal › 2026 › 05 - May › 12 - Tuesday"], None)
    terms = ["vom", "bis", "mai"]
    assert not read_dates(mentions, terms, [], set(), note, True).another_day
    assert read_dates(mentions, terms, [], set(), later, True).another_day


def test_days_between_walks_months_and_years() -> None:
    assert len(days_between((2026, 12, 30), (2027, 1, 2))) == 4
    assert days_between((None, 2, 28), (None, 3, 1)) == [(None, 2, 28), (None, 2, 29), (None, 3, 1)]
    assert days_between((2026, 3, 1), (2026, 12, 1)) == []  # longer than LONGEST_SPAN
    assert days_between((None, None, 3), (None, 5, 9)) == []  # the first end without its month


@pytest.mark.parametrize(
    ("prompt", "said"),
    [
        ("may 19 — anything noted?", "may 19"),
        ("jan 5: standup notes", "jan 5"),
        ("dec 18-21 — anything?", "dec 18 to 21"),
        ("may 19 - anything noted?", "may 19"),
    ],
)
def test_a_prompt_opening_with_a_month_s_word_and_a_day_names_that_day(
    prompt: str, said: str
) -> None:
    """ "may 19 — anything noted?" read "19" as a keyword, which matched the journal's "19 -
    Tuesday" of another month (eval/dates.py, held out)."""
    assert {m.said for m in prompt_dates(prompt, TODAY)} == {said}


@pytest.mark.parametrize(
    "prompt", ["may 2 processes write at once?", "may 3-4 people join?", "dec 10-20 to hex"]
)
def test_a_month_s_word_opening_a_prompt_before_a_word_is_no_date(prompt: str) -> None:
    assert prompt_dates(prompt, TODAY) == []


def test_a_day_of_a_span_is_held_by_a_note_naming_it_alone() -> None:
    """A transcript filed on the 23rd that says "from 20 October" answers "between october 19
    and 21" as it answers "what happened on october 20" (the span's words are not all in it);
    one that writes the day in figures answers the span in figures."""
    note = ("23 - Friday", ["Journal › 2026 › 10 - October › 23 - Friday"], None)
    for prompt, held, written in [
        ("what happened between october 19 and 21", {"from", "20", "octob"}, "from 20 October"),
        (
            "2026-10-19 to 2026-10-21",
            {"restic", "2026", "10", "20", "tar"},
            "restic-2026-10-20.tar",
        ),
    ]:
        mentions = prompt_dates(prompt, TODAY)
        reading = read_dates(mentions, [], [], held, note, True, written=[written])
        assert reading.holds_day and not reading.another_day, prompt
