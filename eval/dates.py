"""Is a journal found by date? Prompts naming the days its notes are filed under.

A journal is asked by date: "what did I do on october 21st", "what happened on the 22nd of
december". The labelled sets hold a handful of such prompts, all with a topic beside the date;
this script makes prompts that name only the day, from the notes themselves: every day some
note of a corpus is filed under (its journal labels, breadcrumbs or title give a day and a
month, `search/filed.py`), asked in one of six phrasings chosen by the day's place in the list.
The answer is any note filed on that day. The same phrasings with a day no note is filed under
(the month moved on by five, or a later day) should get silence, and so should six questions
about something else that name a filed day ("what's the weather forecast for …"). The expected
notes come from what the product reads too (`note_dates`): a journal's day notes are the ground
truth of what was filed when, so this measures the search, not the parsing. Scored with the
shipped gate (`gate.FITTED`, not refitted) and the shipped ranking, and with dates switched off
(`--without-dates`: no dated words, no filed notes, no rule for them: the behaviour before).

The last columns name the day from today, with the engine's date set after each filed day:
"what did i do yesterday?" the day after, "… last wednesday?", "… on wednesday?" and "… 3 days
ago?" three days after, "what did i work on last week?" the Tuesday of the next week (any note
filed that week is an answer), "anything in my notes from last month?" the 5th of the next month
(any note filed that month), "… a few days ago?" three days after (any note filed two to five days
before), "… from {weekday} to {the next weekday}?" three days after (the filed day or the next),
and, naming the days outright, "what did i do between sep 2 and 4?" around the filed day (any
note filed on one of the three days). Two groups of phrasings: "fitted", the six the rules were
checked against, and "held out", six written after the rules and never changed after a run.

    python eval/dates.py [--without-dates]      # ~1 min over the cached indexes
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

from evaluate import Corpus, load_all, product, score

from trilium_recall.search.dates import prompt as dates
from trilium_recall.search.dates.filed import note_dates
from trilium_recall.search.dates.mentions import Date
from trilium_recall.search.gate import FITTED, GateThresholds
from trilium_recall.search.hybrid import RANKING, Ranking

MONTHS = (
    "january february march april may june july august september october november december"
).split()
PHRASINGS = {
    "fitted": (
        "what did i do on {Month} {day}{th}?",
        "what happened on the {day}{th} of {month}",
        "anything from {mon} {day}?",
        "what did i write down on {month} {day}",
        "{Month} {day}{th} — what was going on that day?",
        "show me the entry for {iso}",
    ),
    "held out": (
        "remind me what went on {month} {day}{th}",
        "what was i up to on the {day}{th} of {month}?",
        "{mon} {day} — anything noted?",
        "did anything happen on {Month} {day}?",
        "journal for {month} {day}{th} please",
        "what's in my notes for {iso}",
    ),
}
# Questions about something else that name a day some note is filed under: silence is right.
# Written with the held-out phrasings, never changed after a run.
OFF_TOPIC = (
    "what's the weather forecast for {month} {day}{th}?",
    "convert {month} {day} to a unix timestamp in python",
    "is {Month} {day}{th} a public holiday in germany?",
    "book a table for two on {month} {day}",
    "how many days until {month} {day}{th}?",
    "what time is sunset on {mon} {day}?",
)


def ordinal(day: int) -> str:
    return "th" if 10 < day % 100 < 14 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def phrased(date: Date, n: int, phrasings: tuple[str, ...]) -> str:
    assert date.month is not None and date.day is not None
    month = MONTHS[date.month - 1]
    iso = f"{date.year or 2024}-{date.month:02d}-{date.day:02d}"
    return phrasings[n % len(phrasings)].format(
        Month=month.capitalize(),
        month=month,
        mon=month[:3],
        day=date.day,
        th=ordinal(date.day),
        iso=iso,
    )


def filed_days(corpus: Corpus) -> dict[Date, set[str]]:
    """Each day (month and day known) notes are filed under, and those notes."""
    days: dict[Date, set[str]] = {}
    rows = corpus.store.db.execute(
        "SELECT note_id, title, paths, calendar FROM notes WHERE skip_reason IS NULL"
    )
    for note_id, title, paths, calendar in rows:
        for date in note_dates(title, tuple(json.loads(paths)), calendar):
            if date.month and date.day:
                days.setdefault(date, set()).add(note_id)
    return days


def unfiled(date: Date, days: dict[Date, set[str]]) -> Date:
    """A day no note is filed under in any year: five months on (then later months, then
    later days), so that a daily journal of several years still has one."""
    assert date.month is not None and date.day is not None
    taken = {(d.month, d.day) for d in days}
    for step in range(5, 17):
        month = (date.month - 1 + step) % 12 + 1
        for day in [date.day, *range(1, 29)]:
            if (month, day) not in taken:
                return replace(date, month=month, day=day)
    raise ValueError("every day of the year has a note")


def measure(
    corpus: Corpus,
    days: dict[Date, set[str]],
    phrasings: tuple[str, ...],
    gate: GateThresholds,
    ranking: Ranking,
) -> tuple[float, float, float]:
    """(hit@3, silence on days with no note, silence on other questions naming a filed day)."""
    ordered = sorted(days, key=lambda d: (d.year or 0, d.month or 0, d.day or 0))
    corpus.answerable = [
        {"prompt": phrased(d, n, phrasings), "expected": sorted(days[d]), "lang": "en"}
        for n, d in enumerate(ordered)
    ]
    corpus.unrelated = [
        {"prompt": phrased(unfiled(d, days), n, phrasings), "kind": "unrelated"}
        for n, d in enumerate(ordered)
    ] + [{"prompt": phrased(d, n, OFF_TOPIC), "kind": "near-miss"} for n, d in enumerate(ordered)]
    corpus.gathered = {}
    row = score([corpus], product(gate, ranking))
    return (
        float(row["hit@3"] or 0.0),
        float(row["silence"] or 0.0),
        float(row["near-miss silence"] or 0.0),
    )


When = int | Literal["week", "month", "few", "weekdays", "span"]
# Days named from today, each asked with the engine's date set after a filed day: (column,
# prompt, when it is asked). "{weekday}" is the filed day's, "{following}" the next day's. An
# int: that many days after the filed day; "week": the Tuesday of the next week, "month": the
# 5th of the next month, and any note filed in that week or month is an answer; "few": three
# days after, any note filed two to five days before then; "weekdays": three days after, any
# note of the filed day or the next. "span" names the filed day's month and the days before and
# after it ("between sep 2 and 4"; any note filed on one of the three days, in any year).
FROM_TODAY: tuple[tuple[str, str, When], ...] = (
    ("'yesterday'", "what did i do yesterday?", 1),
    ("'last {weekday}'", "what did i do last {weekday}?", 3),
    ("'on {weekday}' (past tense)", "what did i do on {weekday}?", 3),
    ("'3 days ago'", "what did i do 3 days ago?", 3),
    ("'last week'", "what did i work on last week?", "week"),
    ("'last month'", "anything in my notes from last month?", "month"),
    ("'a few days ago'", "what did i do a few days ago?", "few"),
    ("'from {weekday} to {following}'", "what did i do from {weekday} to {following}?", "weekdays"),
    (
        "'between {mon} {first} and {last}'",
        "what did i do between {mon} {first} and {last}?",
        "span",
    ),
)


def from_today(
    corpus: Corpus,
    days: dict[Date, set[str]],
    gate: GateThresholds,
    ranking: Ranking,
    prompt: str,
    after: When,
) -> float:
    """hit@3 of `prompt` asked `after` each filed day (a day with a year: "yesterday" is always
    one); for a week or a month, any note filed in it is an answer."""
    found = []
    for day in (d for d in days if d.year and d.month and d.day):
        assert day.year and day.month and day.day
        filed = datetime.date(day.year, day.month, day.day)
        now, span = _asked(filed, after)
        expected = set().union(*(days[d] for d in days if span(d)))
        dates.today = lambda now=now: now  # type: ignore[misc]
        previous, following = (filed + datetime.timedelta(days=d) for d in (-1, 1))
        asked = prompt.format(
            weekday=filed.strftime("%A").lower(),
            following=following.strftime("%A").lower(),
            mon=previous.strftime("%b").lower(),
            first=previous.day,
            last=following.day,
        )
        corpus.answerable = [{"prompt": asked, "expected": sorted(expected), "lang": "en"}]
        corpus.unrelated, corpus.gathered = [], {}
        found.append(float(score([corpus], product(gate, ranking))["hit@3"] or 0.0))
    return statistics.fmean(found) if found else float("nan")


def _asked(filed: datetime.date, after: When) -> tuple[datetime.date, Callable[[Date], bool]]:
    """The engine's date for a prompt asked `after` the `filed` day, and which filed days answer."""
    if after == "week":
        week = filed.isocalendar()[:2]
        return filed + datetime.timedelta(days=8 - filed.weekday()), lambda d: _week_of(d) == week
    if after == "month":
        first_next = (filed.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
        month = (filed.year, filed.month)
        return first_next.replace(day=5), lambda d: (d.year, d.month) == month and bool(d.day)
    if after in ("few", "weekdays", "span"):
        now = filed + datetime.timedelta(days=3)
        back = {"few": range(2, 6), "weekdays": range(2, 4), "span": range(2, 5)}[after]
        days = {now - datetime.timedelta(days=n) for n in back}
        if after == "span":  # the days of the month named, in any year
            within = {(d.month, d.day) for d in days}
            return now, lambda d: (d.month, d.day) in within
        return now, lambda d: d.year is not None and _as_date(d) in days
    assert isinstance(after, int)
    day = Date(filed.year, filed.month, filed.day)
    return filed + datetime.timedelta(days=after), lambda d: d == day


def _as_date(day: Date) -> datetime.date | None:
    if not (day.year and day.month and day.day):
        return None
    return datetime.date(day.year, day.month, day.day)


def _week_of(day: Date) -> tuple[int, int] | None:
    date = _as_date(day)
    return date.isocalendar()[:2] if date else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--without-dates", action="store_true", help="the behaviour before")
    args = parser.parse_args()
    ranking, gate = RANKING, FITTED
    if args.without_dates:
        ranking = replace(RANKING, dates=False)
        gate = replace(FITTED, filed_coverage=2.0, day_only=2.0)
    heads = [f"{p}: hit@3 / silence (no note that day)" for p in PHRASINGS]
    relative = [f"hit@3 of {column}" for column, _, _ in FROM_TODAY]
    print(
        "| corpus | days | "
        + " | ".join(heads)
        + " | silence (off topic, a filed day) | "
        + " | ".join(relative)
        + " |"
    )
    print("|---|---|" + "---|" * (len(PHRASINGS) + 1 + len(FROM_TODAY)))
    for name, corpus in load_all().items():
        if days := filed_days(corpus):
            cells = [measure(corpus, days, p, gate, ranking) for p in PHRASINGS.values()]
            shown = " | ".join(f"{h:.3f} / {s:.3f}" for h, s, _ in cells)
            named = " | ".join(
                f"{from_today(corpus, days, gate, ranking, prompt, after):.3f}"
                for _, prompt, after in FROM_TODAY
            )
            print(f"| {name} | {len(days)} | {shown} | {cells[0][2]:.3f} | {named} |")


if __name__ == "__main__":
    main()
