"""Dates in prompts and in where notes are filed (search/dates.py): what counts as a date, what
does not, and which prompt words a dated note then matches."""

from __future__ import annotations

import pytest

from trilium_recall.search.dates import Date, note_dates, prompt_dates, with_dated_terms

DECEMBER_21 = "Trilium Demo › Journal › 2021 › 12 - December › 21 - Thursday"


def said(prompt: str) -> list[tuple[str, str]]:
    return [(str(m.date), " ".join(m.words)) for m in prompt_dates(prompt)]


@pytest.mark.parametrize(
    ("prompt", "dates"),
    [
        ("what did i buy on the christmas shopping trip on the 21st", [("day 21", "21st")]),
        ("what xmas ideas did i jot down back in late november", [("nov", "november")]),
        ("am i off work on the 28th of december?", [("28 dec", "28th of december")]),
        ("the youtube video from monday dec 18, whats the url", [("18 dec", "monday dec 18")]),
        ("how many shops were hit during the sep 3 incident?", [("3 sep", "sep 3")]),
        ("sessions left hanging during the sept outage", [("sep", "sept")]),
        ("the postmortem of 2026-09-03", [("3 sep 2026", "2026 09 03")]),
        ("march 3rd, 2021 standup", [("3 mar 2021", "march 3rd 2021")]),
        ("was hab ich am 24. Dezember gemacht", [("24 dec", "24 dezember")]),
        ("qu'est-ce que j'ai noté le 3 décembre", [("3 dec", "3 decembre")]),
        ("the plan for may", []),  # "may" alone after "for" is not told from the verb
        ("what happened in may", [("may", "may")]),
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
    ],
)
def test_words_that_only_look_like_dates_are_not_dates(prompt: str) -> None:
    assert prompt_dates(prompt) == []


def test_a_note_is_dated_by_the_journal_it_is_filed_in() -> None:
    assert note_dates("Office party", (DECEMBER_21,)) == (Date(2021, 12, 21),)
    assert note_dates("12 - December", ("Journal › 2021",)) == (Date(2021, 12),)
    assert note_dates("2021", ("Journal",)) == ()  # a year alone dates nothing a prompt asks


def test_a_note_is_dated_by_its_title_and_each_clone_by_its_own_path() -> None:
    assert note_dates("Postmortem draft (2026-09-03)", ("Wiki › Raw",)) == (Date(2026, 9, 3),)
    assert note_dates("Summary — DB postmortem (Sep 2026)", ("Wiki",)) == (Date(2026, 9),)
    clones = ("Journal › 2021 › 11 - November › 28 - Tuesday", "Journal › 2021 › Epics › Shopping")
    assert note_dates("Christmas gift ideas", clones) == (Date(2021, 11, 28),)
    assert note_dates("Chapter 3 - Installation", ("Manual",)) == ()
    assert note_dates("Vacation days", ("Journal › 2021 › Epics › Christmas",)) == ()


def test_a_dated_note_matches_the_words_that_name_its_date() -> None:
    mentions = prompt_dates("what did i buy on the shopping trip on the 21st")
    terms = ["buy", "shopping", "trip", "21st"]
    matched = ("shopping",)
    assert with_dated_terms(matched, terms, mentions, "Office party", (DECEMBER_21,)) == (
        "shopping",
        "21st",
    )
    other_day = DECEMBER_21.replace("21 - Thursday", "22 - Friday")
    assert with_dated_terms(matched, terms, mentions, "Shopping", (other_day,)) == matched
    assert with_dated_terms(matched, terms, [], "Office party", (DECEMBER_21,)) == matched


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
    assert said("journal entry for 2026-10-21, please") == [("21 oct 2026", "2026 10 21")]
