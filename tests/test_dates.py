"""Dates in prompts and in where notes are filed (search/dates/): what counts as a date, what
does not, and which prompt words a dated note then matches."""

from __future__ import annotations

import pytest

from trilium_recall.index.terms import stems
from trilium_recall.search.dates.filed import holds_a_day, journal_days, note_dates, read_dates
from trilium_recall.search.dates.mentions import Date
from trilium_recall.search.dates.prompt import asking_terms, prompt_dates

DECEMBER_21 = "Trilium Demo › Journal › 2021 › 12 - December › 21 - Thursday"


def said(prompt: str) -> list[tuple[str, str]]:
    return [(str(m.date), m.said) for m in prompt_dates(prompt)]


@pytest.mark.parametrize(
    ("prompt", "dates"),
    [
        ("what did i buy on the christmas shopping trip on the 21st", [("day 21", "21st")]),
        ("what xmas ideas did i jot down back in late november", [("nov", "late november")]),
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
        # either part can be the month: with a year, both readings
        ("what did i do on 3/4/2026", [("4 mar 2026", "3/4/2026"), ("3 apr 2026", "3/4/2026")]),
        ("on 5/5/2026", [("5 may 2026", "5/5/2026")]),
        # each day once: a repeated date is no log
        ("dec 18, yes dec 18, on dec 18 and dec 18", [("18 dec", "dec 18")]),
        # a month's short word and a day, in a prompt asking what a day held
        ("what did i do oct 3", [("3 oct", "oct 3")]),
        ("what happened dec 18", [("18 dec", "dec 18")]),
        ("what was i working on sep 12?", [("12 sep", "sep 12")]),
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
        # a prompt asking what a day held, with a number before a month's word or "may"
        "what did i do wrong, python 3 may be slower than 2",
        "what happened to node 18 may crash",
        "what did i miss, chapter 3 mars",
        "what did i do wrong: may 3 threads write at once?",
        # ... or with words after the month's short word and its number
        "what happened when i convert dec 10 to binary",
        "what did i do wrong with RA 10h Dec 20 deg",
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
        "what did the Aztecs see in Mars",  # English words make no French month
        "gods in mars",
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


def test_a_day_in_figures_is_held_only_where_it_is_written_in_figures() -> None:
    """ "2026" and "05" apart are a year and a time; "may" and "5" apart are no day either."""
    asked = prompt_dates("what did I do on 2026-05-05?")
    held = set(stems("release 2026 went out at 05:05"))
    assert not holds_a_day(asked, held, ("release 2026 went out at 05:05",))
    for text in ("restore test on 2026-05-05", "Protokoll vom 5.5.2026.", "restic-2026-05-05.tar"):
        assert holds_a_day(asked, set(stems(text)), ("Log", text)), text
    spoken = prompt_dates("what did I do on may 5th 2026?")
    assert holds_a_day(spoken, set(stems("on may 5th 2026 we")), ())
