"""Dates in prompts and in where notes are filed (search/dates.py): what counts as a date, what
does not, and which prompt words a dated note then matches."""

from __future__ import annotations

import datetime

import pytest

from trilium_recall.index.terms import stems
from trilium_recall.search import dates
from trilium_recall.search.dates import Date, as_said, asking_terms, prompt_dates
from trilium_recall.search.filed import journal_days, note_dates, read_dates

DECEMBER_21 = "Trilium Demo › Journal › 2021 › 12 - December › 21 - Thursday"


def said(prompt: str) -> list[tuple[str, str]]:
    return [(str(m.date), m.said) for m in prompt_dates(prompt)]


@pytest.mark.parametrize(
    ("prompt", "dates"),
    [
        ("what did i buy on the christmas shopping trip on the 21st", [("day 21", "21st")]),
        ("what xmas ideas did i jot down back in late november", [("nov", "november")]),
        ("am i off work on the 28th of december?", [("28 dec", "28th of december")]),
        ("the youtube video from monday dec 18, whats the url", [("18 dec", "monday dec 18")]),
        ("how many shops were hit during the sep 3 incident?", [("3 sep", "sep 3")]),
        ("sessions left hanging during the sept outage", [("sep", "sept")]),
        ("the postmortem of 2026-09-03", [("3 sep 2026", "2026-09-03")]),
        ("march 3rd, 2021 standup", [("3 mar 2021", "march 3rd 2021")]),
        ("was hab ich am 24. Dezember gemacht", [("24 dec", "24 dezember")]),
        ("qu'est-ce que j'ai noté le 3 décembre", [("3 dec", "3 decembre")]),
        ("the plan for may", []),  # "may" alone after "for" is not told from the verb
        ("what happened in may", [("may", "may")]),
        ("anything from may 19?", [("19 may", "may 19")]),
        ("what broke during the sept outage", [("sep", "sept")]),
        ("at the end of march", [("mar", "march")]),
        ("lo que pasó el 21 de diciembre de 2021", [("21 dec 2021", "21 de diciembre de 2021")]),
        ("le 3 mars", [("3 mar", "3 mars")]),
        ("le 1er mai", [("1 may", "1er mai")]),
        ("em 3 de março", [("3 mar", "3 de marco")]),
        ("am 3. Mai", [("3 may", "3 mai")]),
        # numeric dates whose order is clear
        ("what did i do on 21.10.2026", [("21 oct 2026", "21.10.2026")]),
        ("notes from 12/21/2021", [("21 dec 2021", "12/21/2021")]),
        ("notes from 2021/12/21", [("21 dec 2021", "2021/12/21")]),
        ("what happened on 10/21", [("21 oct", "10/21")]),
        # each day once: a repeated date is no log
        ("dec 18, yes dec 18, on dec 18 and dec 18", [("18 dec", "dec 18")]),
    ],
)
def test_a_prompt_names_a_date_by_day_month_and_year(prompt: str, dates: list) -> None:
    assert said(prompt) == dates


@pytest.mark.parametrize(
    "prompt",
    [
        "convert J2000 RA/Dec to the current date",
        "you may want to pass the 3rd argument",
        "art of the 21st century",
        "is there life on mars",
        "march the cursor to the end of the line",
        "how do i sort a list of dates",
        "a 2nd opinion on this regex",
        "python 3.11 release",
        # a number beside a word that is only maybe a month (reviewed: each was a date)
        "python 3 may be slower than 2",
        "node 18 may crash on startup",
        "convert dec 10 to binary",
        "RA 10h Dec 20 deg",
        "chapter 3 mars",
        "this may be a dumb question",
        "the mars rover",
        "how do I compute the APR",
        "the march of progress",
        "rio de janeiro",
        "julio's birthday party",
        # an ordinal not after "on"
        "the 3rd is broken, why?",
        "which worked better, the 1st or the 2nd?",
        # no such day, a season, a version
        "on feb 30",
        "the 2011-12 season",
        "v2020-1 of the api",
        "2024-02-30",
        # a word of time without a day, or a name
        "convert from dec to hex",
        "email from jan about the release",
        "hi im jan",
        "signals from mars",
        "the pr from jun fixed it",
        "ask april about it",
        # a numeric pair whose order is not clear, or not after "on"
        "24/7 support",
        "add 1/2 cup",
        "on 3/4 of the nodes",
        # a rule of a calendar, not a day
        "cron for the last friday of the month",
    ],
)
def test_words_that_only_look_like_dates_are_not_dates(prompt: str) -> None:
    assert prompt_dates(prompt) == []


def test_a_note_is_dated_by_the_journal_it_is_filed_in() -> None:
    assert note_dates("Office party", (DECEMBER_21,), None) == (Date(2021, 12, 21),)
    assert note_dates("12 - December", ("Journal › 2021",), None) == (Date(2021, 12),)
    assert note_dates("2021", ("Journal",), None) == ()  # a year alone dates nothing a prompt asks


def test_a_note_is_dated_by_its_title_and_each_clone_by_its_own_path() -> None:
    assert note_dates("Postmortem draft (2026-09-03)", ("Wiki › Raw",), None) == (Date(2026, 9, 3),)
    assert note_dates("Summary — DB postmortem (Sep 2026)", ("Wiki",), None) == (Date(2026, 9),)
    clones = ("Journal › 2021 › 11 - November › 28 - Tuesday", "Journal › 2021 › Epics › Shopping")
    assert note_dates("Christmas gift ideas", clones, None) == (Date(2021, 11, 28),)
    assert note_dates("Chapter 3 - Installation", ("Manual",), None) == ()
    assert note_dates("Vacation days", ("Journal › 2021 › Epics › Christmas",), None) == ()


def test_a_dated_note_matches_the_words_that_name_its_date() -> None:
    mentions = prompt_dates("what did i buy on the shopping trip on the 21st")
    terms = ["buy", "shopping", "trip", "21st"]
    literal = ["shopping"]
    reading = read_dates(mentions, terms, literal, set(), ("Office party", (DECEMBER_21,), None))
    assert reading.dated == ("21st",) and not reading.another_day and reading.journal_day
    other_day = DECEMBER_21.replace("21 - Thursday", "22 - Friday")
    reading = read_dates(mentions, terms, literal, set(), ("Shopping", (other_day,), None))
    assert reading.dated == () and reading.another_day
    assert read_dates([], terms, literal, set(), ("Office party", (DECEMBER_21,), None)).dated == ()
    # the date alone says which notes, not what about: no other word, no dated word
    alone = read_dates(mentions, terms, [], set(), ("Office party", (DECEMBER_21,), None))
    assert alone.dated == ()


def test_only_the_journal_s_own_days_rule_a_note_out() -> None:
    # a date in a title dates the note, but is no reason to drop it for another day
    mentions = prompt_dates("what starts on 19 october")
    title = "Transcript — architecture sync 2026-10-07"
    assert note_dates(title, ("Wiki › Raw",), None) == (Date(2026, 10, 7),)
    assert journal_days(title, ("Wiki › Raw",), None) == ()
    terms = ["starts", "19", "october"]
    assert not read_dates(mentions, terms, [], set(), (title, ("Wiki",), None)).another_day
    # a section that says the day itself is not ruled out by where it is filed
    on_the_18th = ("Todo", ("Journal › 2021 › 12 - December › 18 - Monday",), None)
    asked = prompt_dates("what did i plan on december 21st")
    terms = ["plan", "december", "21st"]
    assert read_dates(asked, terms, [], set(), on_the_18th).another_day
    says_it = read_dates(asked, terms, [], stems("due by December 21st"), on_the_18th)
    assert says_it.holds_day and not says_it.another_day
    # a one-digit day is held as its digit: "may" alone does not hold "may 9"
    may_9 = prompt_dates("anything from may 9?")
    assert not read_dates(may_9, ["may"], ["may"], stems("it may fail"), on_the_18th).holds_day
    assert read_dates(may_9, ["may"], ["may"], stems("renew by May 9"), on_the_18th).holds_day
    # a field the journal does not give is no contradiction
    on_a_day = prompt_dates("on the 18th")
    assert not read_dates(on_a_day, ["18th"], [], set(), on_the_18th).another_day


def test_a_title_that_folds_to_no_word_is_no_date() -> None:
    assert note_dates("12 - \u037a", ("Journal › 2021",), None) == ()


def test_every_field_the_prompt_gives_must_agree() -> None:
    (november,) = prompt_dates("gift ideas from late november")
    (exact,) = prompt_dates("on the 28th of november 2020")
    filed = Date(2021, 11, 28)
    assert november.date.agrees(filed)
    assert not exact.date.agrees(filed)  # the year differs
    assert not november.date.agrees(Date(2021))  # a note dated only by its year


def test_a_log_s_timestamps_are_not_days_the_person_names() -> None:
    assert prompt_dates("2026-10-21T10:04:11Z ERROR connection refused, why?") == []
    assert prompt_dates("2026-10-21 10:04:11 ERROR connection refused, why?") == []
    log = "\n".join(f"Oct {day} 10:00 worker started" for day in range(1, 9))
    assert prompt_dates(log + "\nwhy does the worker restart every day?") == []
    assert said("journal entry for 2026-10-21, please") == [("21 oct 2026", "2026-10-21")]


def test_a_syslog_line_s_day_is_a_timestamp() -> None:
    assert prompt_dates("Dec 21 10:15:01 myhost sshd[811]: Connection closed, what is it?") == []


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
    ],
)
def test_a_day_named_from_today_is_counted_from_the_engine_s_date(
    monkeypatch: pytest.MonkeyPatch, prompt: str, day: Date, named: str
) -> None:
    monkeypatch.setattr(dates, "today", lambda: datetime.date(2026, 10, 22))  # a Thursday
    (mention,) = prompt_dates(prompt)
    assert (mention.date, mention.said, mention.relative) == (day, named, True)


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
        "was steht am Freitag an?",  # German "was" is "what": no tense says which Friday
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


def test_journal_labels_date_a_note_its_title_does_not() -> None:
    """`#dateNote`/`#monthNote` (classify.py keeps them as `calendar`) over the breadcrumbs."""
    custom = ("Standup", ("Journal › Autumn",))
    assert note_dates(*custom, "2026-10-21") == journal_days(*custom, "2026-10-21")
    assert note_dates(*custom, "2026-10-21") == (Date(2026, 10, 21),)
    assert note_dates("Autumn", ("Journal",), "2026-10") == (Date(2026, 10),)
    assert journal_days("Autumn", ("Journal",), "2026-10") == ()  # a month note is no day
    mentions = prompt_dates("the standup on december 21st")
    terms, literal = ["standup", "december", "21st"], ["standup"]
    assert read_dates(mentions, terms, literal, set(), (*custom, "2026-10-21")).another_day
    assert not read_dates(
        mentions, terms, literal, set(), (*custom, None)
    ).another_day  # no date known


def test_the_verb_of_a_question_about_what_one_did_only_asks() -> None:
    """The day's notes answer "what did I work on last week" whether or not they say "work"."""
    assert asking_terms(["work", "week"], "what did I work on last week?") == ["work"]
    assert asking_terms(["reading"], "what was I reading on the 3rd") == ["reading"]
    assert asking_terms(["work", "week"], "is the work week over on friday?") == []
    assert asking_terms(["happened"], "what happened yesterday") == ["happened"]


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
        ("what did I do today", [26], "today"),
    ],
)
def test_more_ways_of_naming_days_from_today(prompt: str, days: list[int], named: str) -> None:
    mentions = prompt_dates(prompt, datetime.date(2026, 10, 26))  # a Monday
    assert [m.date.day for m in mentions] == days
    assert {m.said for m in mentions} == {named}


@pytest.mark.parametrize(
    "prompt",
    [
        "kannst du mir sagen, was am Mittwoch ansteht",  # German "was": no tense
        "summarize what we did today",  # "we" and today: the session with the assistant
    ],
)
def test_days_that_are_not_the_journal_s(prompt: str) -> None:
    assert prompt_dates(prompt, datetime.date(2026, 10, 26)) == []
