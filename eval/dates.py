"""Is a journal found by date? Prompts naming the days its notes are filed under.

A journal is asked by date: "what did I do on october 21st", "what happened on the 22nd of
december". The labelled sets hold a handful of such prompts, all with a topic beside the date;
this script makes prompts that name only the day, from the notes themselves: every day some
note of a corpus is filed under (its breadcrumbs or title give a day and a month,
`search/dates.py`), asked in one of six phrasings chosen by the day's place in the list. The
answer is any note filed on that day. The same phrasings with a day no note is filed under (the
month moved on by five) should get silence. Scored with the shipped gate (`gate.FITTED`, not
refitted) and the shipped ranking, and with dates switched off (`--without-dates`: no dated
words, no ranking of filed notes, no rule for them: the behaviour before). Two groups of
phrasings: "fitted", the six the rules were checked against, and "held out", six written after
the rules and never changed after a run.

    python eval/dates.py [--without-dates]      # ~1 min over the cached indexes
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from evaluate import Corpus, load_all, product, score

from trilium_recall.search.dates import Date, note_dates
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
        "SELECT note_id, title, paths FROM notes WHERE skip_reason IS NULL"
    )
    for note_id, title, paths in rows:
        for date in note_dates(title, tuple(json.loads(paths))):
            if date.month and date.day:
                days.setdefault(date, set()).add(note_id)
    return days


def unfiled(date: Date, days: dict[Date, set[str]]) -> Date:
    """The same day five months on (or later), so that no note is filed under its day and
    month in any year."""
    assert date.month is not None
    for step in range(5, 17):
        moved = replace(date, month=(date.month - 1 + step) % 12 + 1)
        if not any(replace(moved, year=None).agrees(filed) for filed in days):
            return moved
    return moved


def measure(
    corpus: Corpus,
    days: dict[Date, set[str]],
    phrasings: tuple[str, ...],
    gate: GateThresholds,
    ranking: Ranking,
) -> tuple[float, float]:
    """(hit@3, silence) of prompts naming each filed day, and days with no note."""
    ordered = sorted(days, key=lambda d: (d.year or 0, d.month or 0, d.day or 0))
    corpus.answerable = [
        {"prompt": phrased(d, n, phrasings), "expected": sorted(days[d]), "lang": "en"}
        for n, d in enumerate(ordered)
    ]
    corpus.unrelated = [
        {"prompt": phrased(unfiled(d, days), n, phrasings), "kind": "unrelated"}
        for n, d in enumerate(ordered)
    ]
    corpus.gathered = {}
    row = score([corpus], product(gate, ranking))
    return float(row["hit@3"] or 0.0), float(row["all silence"] or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--without-dates", action="store_true", help="the behaviour before")
    args = parser.parse_args()
    ranking, gate = RANKING, FITTED
    if args.without_dates:
        ranking = replace(RANKING, date_weight=0.0)
        gate = replace(FITTED, filed_coverage=2.0, day_only=2.0)
    print("| corpus | days | " + " | ".join(f"{p}: hit@3 / silence" for p in PHRASINGS) + " |")
    print("|---|---|" + "---|" * len(PHRASINGS))
    for name, corpus in load_all().items():
        if days := filed_days(corpus):
            cells = [measure(corpus, days, p, gate, ranking) for p in PHRASINGS.values()]
            shown = " | ".join(f"{h:.3f} / {s:.3f}" for h, s in cells)
            print(f"| {name} | {len(days)} | {shown} |")


if __name__ == "__main__":
    main()
