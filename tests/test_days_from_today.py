"""Days a prompt names from today (search/dates/from_today.py and counted.py, their words in
words.py): "yesterday", "last friday", "on friday" by the tense, weeks, months, counts back from
today, and how they find or rule out the journal's notes."""

from __future__ import annotations

import datetime

import pytest

from trilium_recall.search.dates import prompt as dates
from trilium_recall.search.dates.filed import read_dates
from trilium_recall.search.dates.mentions import Date
from trilium_recall.search.dates.prompt import (
    as_said,
    asking_terms,
    asks_the_day,
    close_days,
    prompt_dates,
    said_loosely,
)


@pytest.mark.parametrize(
    ("prompt", "day", "named"),
    [
        ("what did i do yesterday?", Date(2026, 10, 21), "yesterday"),
        ("what happened the day before yesterday", Date(2026, 10, 20), "the day before yesterday"),
        ("anything on my list for tomorrow", Date(2026, 10, 23), "tomorrow"),
        ("notes from last friday", Date(2026, 10, 16), "last friday"),
        ("notes from last thursday", Date(2026, 10, 15), "last thursday"),  # not today
        ("was hab ich gestern gemacht", Date(2026, 10, 21), "gestern"),
        ("day before yesterday", Date(2026, 10, 20), "day before yesterday"),
        ("the day after tomorrow", Date(2026, 10, 24), "the day after tomorrow"),
        ("après-demain", Date(2026, 10, 24), "apres demain"),
        ("l'altro ieri", Date(2026, 10, 20), "altro ieri"),
        ("avant-hier", Date(2026, 10, 20), "avant hier"),
        ("qu'est-ce que j'ai fait hier ?", Date(2026, 10, 21), "hier"),  # French, so yesterday
        ("qu'est-ce que j'ai fait avant-hier ?", Date(2026, 10, 20), "avant hier"),
        ("übermorgen", Date(2026, 10, 24), "ubermorgen"),
        ("was habe ich letzten Freitag gemacht", Date(2026, 10, 16), "letzten freitag"),
        ("qu'ai-je fait vendredi dernier ?", Date(2026, 10, 16), "vendredi dernier"),
        ("¿qué hice el viernes pasado?", Date(2026, 10, 16), "viernes pasado"),
        ("o que fiz na sexta-feira passada", Date(2026, 10, 16), "sexta feira passada"),
        ("cosa ho fatto venerdì scorso", Date(2026, 10, 16), "venerdi scorso"),
        ("what did I do on friday?", Date(2026, 10, 16), "friday"),  # asked in the past tense
        ("what's planned on friday?", Date(2026, 10, 23), "friday"),  # about what is coming
        ("what is on the agenda next monday", Date(2026, 10, 26), "next monday"),
        ("this monday's standup", Date(2026, 10, 19), "this monday"),
        ("was steht am Freitag an?", Date(2026, 10, 23), "freitag"),  # German "was" is "what"
        ("was habe ich am Montag vor?", Date(2026, 10, 26), "montag"),
    ],
)
def test_a_day_named_from_today_is_counted_from_the_engine_s_date(
    monkeypatch: pytest.MonkeyPatch, prompt: str, day: Date, named: str
) -> None:
    monkeypatch.setattr(dates, "today", lambda: datetime.date(2026, 10, 22))  # a Thursday
    (mention,) = prompt_dates(prompt)
    assert (mention.date, mention.said, mention.relative) == (day, named, True)


def test_hier_is_yesterday_only_in_french() -> None:
    assert (
        prompt_dates("hier ist der Fehler in der Konfiguration", datetime.date(2026, 10, 22)) == []
    )


def test_a_day_named_from_today_matches_no_word_and_rules_no_note_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dates, "today", lambda: datetime.date(2021, 12, 22))
    on_the_18th = ("CI", ("Journal › 2021 › 12 - December › 18 - Monday",), None)
    today = prompt_dates("why does my build fail today")
    reading = read_dates(today, ["build", "fail", "today"], ["build"], set(), on_the_18th)
    assert reading.dated == () and not reading.another_day
    # beside a day named outright it is a day the prompt names too: the 18th is neither
    both = prompt_dates("the flaky test yesterday, and on december 21st")
    assert len(both) == 2
    reading = read_dates(both, ["flaky", "test", "december", "21st"], [], set(), on_the_18th)
    assert reading.another_day
    on_the_21st = ("CI", ("Journal › 2021 › 12 - December › 21 - Tuesday",), None)
    assert not read_dates(both, ["flaky"], [], set(), on_the_21st).another_day


def test_a_day_named_from_today_crosses_months_and_years(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dates, "today", lambda: datetime.date(2027, 1, 1))  # a Friday
    assert [m.date for m in prompt_dates("what did i do yesterday")] == [Date(2026, 12, 31)]
    assert [m.date for m in prompt_dates("last saturday")] == [Date(2026, 12, 26)]
    assert [m.date for m in prompt_dates("last friday")] == [Date(2026, 12, 25)]
    since = [m.date.day for m in prompt_dates("what did I do since last saturday?")]
    assert since == [26, 27, 28, 29, 30, 31, 1]  # every day from it up to today


@pytest.mark.parametrize(
    ("prompt", "monday", "named"),
    [
        ("what did I work on last week?", Date(2026, 10, 12), "last week"),
        ("résume la semaine dernière", Date(2026, 10, 12), "semaine derniere"),
        ("was steht diese Woche an", Date(2026, 10, 19), "diese woche"),
        ("was habe ich letzte Woche gemacht", Date(2026, 10, 12), "letzte woche"),
        ("termine nächste Woche", Date(2026, 10, 26), "nachste woche"),
        ("qué hice la semana pasada", Date(2026, 10, 12), "semana pasada"),
        ("cosa ho fatto la settimana scorsa", Date(2026, 10, 12), "settimana scorsa"),
        ("anything due next week", Date(2026, 10, 26), "next week"),
    ],
)
def test_a_week_named_from_today_is_each_of_its_days(prompt: str, monday: Date, named: str) -> None:
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 22))  # a Thursday
    assert [m.said for m in mentions] == [named] * 7 and all(m.relative for m in mentions)
    first = datetime.date(monday.year, monday.month, monday.day)  # type: ignore[arg-type]
    days = [first + datetime.timedelta(days=n) for n in range(7)]
    assert [m.date for m in mentions] == [Date(d.year, d.month, d.day) for d in days]


def test_the_past_week_is_the_seven_days_before_today() -> None:
    mentions = prompt_dates("what happened in the past week", datetime.date(2026, 10, 22))
    assert [m.date.day for m in mentions] == [15, 16, 17, 18, 19, 20, 21]


@pytest.mark.parametrize(
    "prompt",
    [
        "friday deploys are risky, should we freeze?",  # a weekday no word says which one of
        "on friday we deploy",  # neither past nor coming: which friday?
        "the last week of the sprint is for bug fixes",
        "last friday of the month is payday",
        "what did I do on friday 3rd",  # a day of the month, not last friday
        "la segunda pasada del algoritmo falla",  # Spanish "the second pass"
        "our AI pipeline runs on sunday",
        "the 9 am friday standup was cancelled",  # "am" after a number is a time of day
    ],
)
def test_a_weekday_or_week_that_says_no_day_is_none(prompt: str) -> None:
    assert prompt_dates(prompt, datetime.date(2026, 10, 22)) == []


def test_a_weekday_before_a_date_is_that_date_s() -> None:
    # asked in the past tense, "on monday" alone would be last Monday
    (mention,) = prompt_dates("what did I watch on monday dec 18", datetime.date(2026, 10, 22))
    assert (mention.date, mention.relative) == (Date(None, 12, 18), False)


def test_a_day_named_from_today_before_a_number_is_still_that_day() -> None:
    """Only a weekday before a month or a day is that date's ("monday dec 18")."""
    for prompt in ("the test I wrote yesterday may be flaky", "yesterday 3 builds broke"):
        (mention,) = prompt_dates(prompt, datetime.date(2026, 10, 22))
        assert mention.said == "yesterday", prompt


def test_since_a_day_is_every_day_up_to_today() -> None:
    mentions = prompt_dates("notes since tuesday", datetime.date(2026, 10, 22))
    assert [m.date.day for m in mentions] == [20, 21, 22]
    assert {m.said for m in mentions} == {"since tuesday"}


def test_each_day_named_from_today_is_shown_as_said() -> None:
    assert as_said(prompt_dates("on 3/4/2026")) == [
        {"said": "3/4/2026", "date": "4 mar 2026 or 3 apr 2026", "from_today": False}
    ]
    monday = datetime.date(2026, 10, 26)
    mentions = prompt_dates("what did I do last week and yesterday", monday)
    assert as_said(mentions) == [
        {"said": "last week", "date": "19 oct 2026 – 25 oct 2026", "from_today": True},
        {"said": "yesterday", "date": "25 oct 2026", "from_today": True},
    ]


@pytest.mark.parametrize(
    ("prompt", "days", "named"),
    [
        ("the tests passed before yesterday's deploy", [25], "yesterday"),  # not the 24th
        ("ship it after tomorrow's standup", [27], "tomorrow"),
        ("o que eu fiz na última quarta-feira", [21], "ultima quarta feira"),
        ("¿qué hice el último viernes?", [23], "ultimo viernes"),
        ("the job failed last friday 3 times", [23], "last friday"),  # a count, not a date
        ("what did I do since yesterday", [25, 26], "since yesterday"),
        ("depuis lundi dernier", [19, 20, 21, 22, 23, 24, 25, 26], "depuis lundi dernier"),
        ("what happened monday", [19], "monday"),  # a weekday ending a past-tense question
        ("qu'est-ce que j'ai fait mercredi", [21], "mercredi"),
        ("what did I do last weekend", [24, 25], "last weekend"),
        ("what did I do over the weekend", [24, 25], "over the weekend"),  # by the tense
        ("was habe ich am Wochenende gemacht?", [24, 25], "am wochenende"),
        ("what's planned for the weekend?", [31, 1], "for the weekend"),
        ("what did I do today", [26], "today"),
        ("kannst du mir sagen, was am Mittwoch ansteht", [28], "mittwoch"),
        ("sag mir, was am Mittwoch los war", [21], "mittwoch"),  # German "war" is past
    ],
)
def test_more_ways_of_naming_days_from_today(prompt: str, days: list[int], named: str) -> None:
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 26))  # a Monday
    assert [m.date.day for m in mentions] == days
    assert {m.said for m in mentions} == {named}


@pytest.mark.parametrize(
    "prompt",
    [
        "summarize what we did today",  # "we" and today: the session with the assistant
        "the build runs over the weekend",  # no tense says which weekend
        "how was the weekend",
        "what did I do over the weekend of the 14th",  # another word says which weekend
    ],
)
def test_days_that_are_not_the_journal_s(prompt: str) -> None:
    assert prompt_dates(prompt, datetime.date(2026, 10, 26)) == []


@pytest.mark.parametrize(
    ("prompt", "first", "last", "named"),
    [
        ("what did I do last month?", Date(2026, 9, 1), Date(2026, 9, 30), "last month"),
        ("le mois dernier", Date(2026, 9, 1), Date(2026, 9, 30), "mois dernier"),
        (
            "was habe ich letzten Monat gemacht",
            Date(2026, 9, 1),
            Date(2026, 9, 30),
            "letzten monat",
        ),
        ("el mes que viene", Date(2026, 11, 1), Date(2026, 11, 30), "mes que viene"),
        ("this month's invoices", Date(2026, 10, 1), Date(2026, 10, 31), "this month"),
        ("what happened in the past month", Date(2026, 9, 22), Date(2026, 10, 21), "past month"),
        ("what did i do 3 days ago?", Date(2026, 10, 19), Date(2026, 10, 19), "3 days ago"),
        ("a couple of days ago", Date(2026, 10, 20), Date(2026, 10, 20), "a couple of days ago"),
        (
            "two weeks ago I fixed the backup",
            Date(2026, 10, 5),
            Date(2026, 10, 11),
            "two weeks ago",
        ),
        ("a month ago", Date(2026, 9, 1), Date(2026, 9, 30), "a month ago"),
        ("vor zwei Wochen", Date(2026, 10, 5), Date(2026, 10, 11), "vor zwei wochen"),
        ("il y a trois jours", Date(2026, 10, 19), Date(2026, 10, 19), "il y a trois jours"),
        ("hace una semana", Date(2026, 10, 12), Date(2026, 10, 18), "hace una semana"),
        ("o que fiz há três dias", Date(2026, 10, 19), Date(2026, 10, 19), "ha tres dias"),
        ("cosa ho fatto tre giorni fa", Date(2026, 10, 19), Date(2026, 10, 19), "tre giorni fa"),
        ("the week before last", Date(2026, 10, 5), Date(2026, 10, 11), "the week before last"),
        (
            "the week before last week",
            Date(2026, 10, 5),
            Date(2026, 10, 11),
            "the week before last week",
        ),
        ("what changed in the last month", Date(2026, 9, 22), Date(2026, 10, 21), "last month"),
        ("since two weeks ago", Date(2026, 10, 5), Date(2026, 10, 22), "since two weeks ago"),
        ("desde hace una semana", Date(2026, 10, 12), Date(2026, 10, 22), "desde hace una semana"),
        ("o que fiz 3 dias atrás", Date(2026, 10, 19), Date(2026, 10, 19), "3 dias atras"),
        ("vorletztes Wochenende", Date(2026, 10, 10), Date(2026, 10, 11), "vorletztes wochenende"),
        ("what did I do last sat morning", Date(2026, 10, 17), Date(2026, 10, 17), "last sat"),
        ("vorletzte Woche", Date(2026, 10, 5), Date(2026, 10, 11), "vorletzte woche"),
        ("übernächsten Freitag", Date(2026, 10, 30), Date(2026, 10, 30), "ubernachsten freitag"),
        ("what did I do last fri?", Date(2026, 10, 16), Date(2026, 10, 16), "last fri"),
        ("what did I do on tues", Date(2026, 10, 20), Date(2026, 10, 20), "tues"),
        (
            "¿qué hay el viernes que viene?",
            Date(2026, 10, 23),
            Date(2026, 10, 23),
            "viernes que viene",
        ),
        ("since last month", Date(2026, 9, 1), Date(2026, 10, 22), "since last month"),
        # two weekdays: the second read as a weekday alone is, or by the tense
        (
            "what did I do from monday to wednesday?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "from monday to wednesday",
        ),
        (
            "what happened between friday and monday",
            Date(2026, 10, 16),
            Date(2026, 10, 19),
            "between friday and monday",
        ),
        (
            "was habe ich von Montag bis Mittwoch gemacht?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "von montag bis mittwoch",
        ),
        (
            "what's planned from monday to wednesday?",
            Date(2026, 10, 26),
            Date(2026, 10, 28),
            "from monday to wednesday",
        ),
        (
            "what did I do from monday to thursday?",  # today is the last of them
            Date(2026, 10, 19),
            Date(2026, 10, 22),
            "from monday to thursday",
        ),
        (
            "what did I do from monday to wednesday last week?",
            Date(2026, 10, 12),
            Date(2026, 10, 14),
            "from monday to wednesday last week",
        ),
        (
            "what did I do from last monday to wednesday?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "from last monday to wednesday",
        ),
        (
            "¿qué hice entre el lunes y el miércoles?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "entre el lunes y el miercoles",
        ),
        (
            "o que fiz de segunda-feira a quarta-feira?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "de segunda feira a quarta feira",
        ),
        # "del … al …": "al" is the word that joins, not an article
        (
            "¿qué hice del lunes al miércoles?",
            Date(2026, 10, 19),
            Date(2026, 10, 21),
            "del lunes al miercoles",
        ),
        (
            "qu'ai-je fait du lundi au mercredi la semaine dernière",
            Date(2026, 10, 12),
            Date(2026, 10, 14),
            "du lundi au mercredi la semaine derniere",
        ),
        # a week counted back after them: that week's days
        (
            "what did I do from monday to wednesday two weeks ago?",
            Date(2026, 10, 5),
            Date(2026, 10, 7),
            "from monday to wednesday two weeks ago",
        ),
        (
            "was habe ich von Montag bis Mittwoch vor zwei Wochen gemacht?",
            Date(2026, 10, 5),
            Date(2026, 10, 7),
            "von montag bis mittwoch vor zwei wochen",
        ),
        (
            "qu'ai-je fait du lundi au mercredi il y a deux semaines",
            Date(2026, 10, 5),
            Date(2026, 10, 7),
            "du lundi au mercredi il y a deux semaines",
        ),
        # what is coming: from the first weekday on or after today (a Thursday)
        (
            "what's planned from friday to monday?",
            Date(2026, 10, 23),
            Date(2026, 10, 26),
            "from friday to monday",
        ),
        (
            "was habe ich von Montag bis heute gemacht?",
            Date(2026, 10, 19),
            Date(2026, 10, 22),
            "von montag bis heute",
        ),
        # two readings joined
        (
            "from the 10th of last month to the 5th of this month",
            Date(2026, 9, 10),
            Date(2026, 10, 5),
            "from the 10th of last month to the 5th of this month",
        ),
        (
            "from the 28th of last month to the 3rd",
            Date(2026, 9, 28),
            Date(2026, 10, 3),
            "from the 28th of last month to the 3rd",
        ),
        (
            "between last monday and today",
            Date(2026, 10, 19),
            Date(2026, 10, 22),
            "between last monday and today",
        ),
        # days of a month named from today, and a span up to today
        (
            "what did I do between the 1st and the 10th of last month",
            Date(2026, 9, 1),
            Date(2026, 9, 10),
            "between the 1st and the 10th of last month",
        ),
        (
            "wireguard mtu change the 21st-23rd of last month",
            Date(2026, 9, 21),
            Date(2026, 9, 23),
            "the 21st to 23rd of last month",
        ),
        (
            "what did I do from the 9th of last month to today",
            Date(2026, 9, 9),
            Date(2026, 10, 22),
            "from the 9th of last month to today",
        ),
        # a few: two to five days back
        ("what did I do a few days ago", Date(2026, 10, 17), Date(2026, 10, 20), "a few days ago"),
        ("vor ein paar Tagen", Date(2026, 10, 17), Date(2026, 10, 20), "vor ein paar tagen"),
        ("il y a quelques jours", Date(2026, 10, 17), Date(2026, 10, 20), "il y a quelques jours"),
        ("hace unos días", Date(2026, 10, 17), Date(2026, 10, 20), "hace unos dias"),
        ("qualche giorno fa", Date(2026, 10, 17), Date(2026, 10, 20), "qualche giorno fa"),
        # "seit" and "depuis" before a count: the days up to today
        ("vor einigen Tagen", Date(2026, 10, 17), Date(2026, 10, 20), "vor einigen tagen"),
        ("há poucos dias", Date(2026, 10, 17), Date(2026, 10, 20), "ha poucos dias"),
        ("seit 3 Tagen hängt der Build", Date(2026, 10, 19), Date(2026, 10, 22), "seit 3 tagen"),
        ("seit ein paar Tagen", Date(2026, 10, 17), Date(2026, 10, 22), "seit ein paar tagen"),
        ("depuis deux semaines", Date(2026, 10, 8), Date(2026, 10, 22), "depuis deux semaines"),
        # a day of a month named from today
        (
            "what did I do on the 3rd of last month",
            Date(2026, 9, 3),
            Date(2026, 9, 3),
            "the 3rd of last month",
        ),
        (
            "the 15th of next month",
            Date(2026, 11, 15),
            Date(2026, 11, 15),
            "the 15th of next month",
        ),
    ],
)
def test_spans_counted_from_today(prompt: str, first: Date, last: Date, named: str) -> None:
    """Months, counts back from today and the shorter ways of saying a day: each day once, in
    order, under the words that named them."""
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 22))  # a Thursday
    assert {m.said for m in mentions} == {named} and all(m.relative for m in mentions)
    days = [datetime.date(m.date.year, m.date.month, m.date.day) for m in mentions]  # type: ignore[arg-type]
    assert days == sorted(set(days))
    assert (mentions[0].date, mentions[-1].date) == (first, last)
    assert len(days) == (days[-1] - days[0]).days + 1  # no day of the span left out


@pytest.mark.parametrize(
    "prompt",
    [
        "did it run on sun hardware",  # an abbreviation before a content word
        "this sun is bright",  # "this sun" is the sun
        "on sat?",  # no tense says which Saturday
        "a few days of work",  # no "ago"
        "a few months ago",  # a few months is too long to look in
        "notes between monday and wednesday",  # no tense says which week
        "o que aconteceu da segunda à quarta tentativa?",  # the second to the fourth attempt
        "seit 200 Tagen",  # longer than a span is read
        "the last 2 weeks of the year are quiet",
        "in the last month of the year",
        "the sun may set late",  # an abbreviation never makes "may" a month
        "mes notes de la semaine",  # French "mes" is "my"
        "the cache keeps 30 days of logs",
        "how do I plot the last 30 days in pandas",  # a query's window, as often as a journal's
        "il y a 3 jours de retard sur le projet",  # there are three days of delay
        "il progetto ha due settimane di ritardo",
        "mes passe-temps préférés",  # French "mes" is "my"
        "when I last sat down with the budget",  # "last" an adverb
        "the last sat in orbit",
        "what was the effect on sun?",
        "² days ago",  # a digit int() does not read
    ],
)
def test_spans_and_abbreviations_that_say_no_day(prompt: str) -> None:
    assert prompt_dates(prompt, datetime.date(2026, 10, 22)) == []


def test_since_a_day_long_ago_is_that_day_alone() -> None:
    """ "since 99 weeks ago" would be 700 days to look in: the week it names, no more."""
    mentions = prompt_dates("since 99 weeks ago", datetime.date(2026, 10, 22))
    assert len(mentions) == 7


def test_a_span_longer_than_a_week_rules_no_other_day_out() -> None:
    """ "Last month" is said loosely: the journal's other days stay candidates. "Last week" and
    "yesterday" say which days, and a question about what they held rules the others out."""
    now = datetime.date(2026, 12, 6)
    on_october_9th = ("09 - Friday", ("Journal › 2026 › 10 - October › 09 - Friday",), None)
    terms = ["index", "add", "slow", "query", "last", "month"]
    loose = prompt_dates("what index did I add to fix the slow query last month", now)
    assert not read_dates(loose, terms, [], set(), on_october_9th, asks_the_day=True).another_day
    for close in ("what index did I add last week", "what index did I add yesterday"):
        mentions = prompt_dates(close, now)
        reading = read_dates(mentions, terms, [], set(), on_october_9th, asks_the_day=True)
        assert reading.another_day, close


def test_words_that_only_say_when_ask_what_the_day_held() -> None:
    """German's separated coming tense and the verb of "what did I do" are no topic a day's
    notes must hold."""
    assert asking_terms(["steht", "freitag", "an"], "was steht am Freitag an?") == ["steht", "an"]
    assert asking_terms(["geplant"], "was ist am Montag geplant?") == ["geplant"]
    assert asks_the_day([], "what did I do last sat morning?")  # "do" is no term
    assert asking_terms(["morning", "deploy"], "the deploy yesterday morning") == ["morning"]
    assert not asks_the_day([], "why does my build fail today")


def test_italian_has_is_no_ago() -> None:
    now = datetime.date(2026, 10, 22)
    assert prompt_dates("il team ha una settimana per finire il rilascio", now) == []
    assert [m.said for m in prompt_dates("o que fiz há uma semana", now)] == ["ha uma semana"] * 7


@pytest.mark.parametrize(
    ("prompt", "loose"),
    [
        ("what did I do yesterday", False),
        ("what did I work on last week", False),
        ("notes since tuesday", False),
        ("what did I do last month", True),  # a span longer than a week
        ("what did I change 3 days ago", True),  # a count back is said roughly
        ("since two weeks ago", True),
    ],
)
def test_days_said_loosely_rule_no_other_day_out(prompt: str, loose: bool) -> None:
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 22))
    assert mentions and all(m.loose == loose for m in mentions)
    assert said_loosely(mentions) == loose
    assert close_days(mentions) == ([] if loose else mentions)


@pytest.mark.parametrize("first", ["1st", "10th"])
def test_two_days_of_a_month_joined_by_and_are_those_two(first: str) -> None:
    """ "the 1st and the 10th of last month" is two days, not the ten between them, and not
    the whole month when said the other way round."""
    second = "10th" if first == "1st" else "1st"
    mentions = prompt_dates(
        f"what did I do the {first} and the {second} of last month", datetime.date(2026, 10, 22)
    )
    assert [m.date for m in mentions] == [Date(2026, 9, 1), Date(2026, 9, 10)]
    assert as_said(mentions)[0]["date"] == "1 sep 2026 and 10 sep 2026"


def test_a_weekend_counted_back_is_not_also_the_last_one() -> None:
    mentions = prompt_dates(
        "what did I do on the weekend two weeks ago", datetime.date(2026, 10, 26)
    )
    assert {m.said for m in mentions} == {"two weeks ago"}


def test_a_week_that_is_not_one_says_no_weekdays_of_it() -> None:
    """ "a few weeks ago" is several weeks: Monday to Wednesday of which is not said, so
    neither this week's (closely, by the tense) nor the first of them is read."""
    mentions = prompt_dates(
        "what did I do from monday to wednesday a few weeks ago", datetime.date(2026, 10, 22)
    )
    assert mentions and all(m.loose for m in mentions)
    assert {m.said for m in mentions} == {"a few weeks ago"}


def test_two_days_from_today_that_cannot_be_walked_are_their_ends_said_loosely() -> None:
    """As spans in words and figures are: both named, neither ruling other days out."""
    now = datetime.date(2026, 10, 22)
    mentions = prompt_dates("what did I do from today to last monday", now)
    assert [m.date for m in mentions] == [Date(2026, 10, 22), Date(2026, 10, 19)]
    assert all(m.loose for m in mentions)


@pytest.mark.parametrize(
    ("prompt", "said"),
    [
        ("I moved the meeting yesterday to the 3rd", "yesterday"),  # no word opens a span
        ("we moved last friday to the 2nd floor office", "last friday"),  # the 2nd floor
        ("I swapped monday and today shifts", "today"),  # "and" without "between"
    ],
)
def test_a_day_before_words_that_only_look_like_a_span_end_is_itself(
    prompt: str, said: str
) -> None:
    assert {m.said for m in prompt_dates(prompt, datetime.date(2026, 10, 22))} == {said}


@pytest.mark.parametrize(
    ("prompt", "day", "said"),
    [
        ("what did I do last night?", Date(2026, 10, 21), "last night"),
        ("was habe ich letzte Nacht gemacht?", Date(2026, 10, 21), "letzte nacht"),
        ("qu'ai-je fait hier soir ?", Date(2026, 10, 21), "hier soir"),
        ("¿qué hice anoche?", Date(2026, 10, 21), "anoche"),
        ("what did I note this morning?", Date(2026, 10, 22), "this morning"),
        ("¿qué anoté esta mañana?", Date(2026, 10, 22), "esta manana"),
    ],
)
def test_a_part_of_a_day_named_from_today_is_that_day(prompt: str, day: Date, said: str) -> None:
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 22))
    assert [(m.date, m.said) for m in mentions] == [(day, said)]


def test_what_we_did_this_morning_is_the_session() -> None:
    assert prompt_dates("summarize what we did this morning", datetime.date(2026, 10, 22)) == []
