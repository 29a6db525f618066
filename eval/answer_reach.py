"""Does the text that is sent hold the answer? Passage-level recall, held out.

The other figures count a prompt found when the right *note* is among the passages. But a
passage is a section or two of that note, each cut to EXCERPT_CHARS around its best snippet,
and the reader sees only that: a module page sent as its introduction, when the prompt asked
about one function further down, names the right note and answers nothing. Stop 50's audit
found exactly that, and the note-level labels cannot see it.

`sets/answers/<corpus>.json` labels where each answerable prompt's answer sits: for each prompt,
1–3 places (note, section ordinal, and a verbatim quote of 3–30 words stating the fact asked),
written by readers who saw the prompt and the expected notes' sections only, never the engine
or a result. A passage *holds the answer* when its text, exactly as `recall` sends it, contains
a labelled quote (case and runs of white space ignored). Prompts whose readers found no answer
in the expected notes are left out and counted.

Per corpus, held out (the gate fitted on the other corpora, as evaluate.py does):

- note hit@3: a note holding a labelled answer among the first three passages;
- answer@3: a passage among the first three holds a labelled quote;
- answer given note: of the note hits, the share whose passages' text holds the answer: how
  well the sections and the excerpts are chosen, apart from finding the note;
- the same gate open, and why a note hit lacked the answer: another section of the note was
  sent ("section"), or the answering section was sent but its excerpt cut the quote away
  ("cut");
- chars: the characters of passage text a prompt that got passages gets;
- the same figures for other shares of the second section's rule (`search/excerpts.py`).

    python eval/answer_reach.py [--misses]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evaluate import SETS, Corpus, fit, load_all, opened
from fit import Variant

from trilium_recall.notes.html_text import collapse_spaces
from trilium_recall.search import excerpts
from trilium_recall.search.answers import Passage
from trilium_recall.search.candidates import SearchResult, SecondSection
from trilium_recall.search.gate import GateThresholds
from trilium_recall.search.hybrid import decide
from trilium_recall.search.recall import passages_of

ANSWERS = SETS / "answers"
# What `recall.passages_of` returns: the passages, and the second sections they hold.
Sent = tuple[list[Passage], dict[tuple[str, str], SecondSection]]
# The sweep: never (one section a note, as before), every share below, always the best two.
SHARES = (math.inf, 0.9, 0.7, 0.5, 0.3, 0.0)


@dataclass(frozen=True)
class Place:
    note_id: str
    ordinal: int
    quote: str


@dataclass
class Reach:
    """One corpus's counts: prompts scored, note hits, answer hits (and those of them that
    are note hits), why note hits lacked the answer, and the characters of passage text each
    prompt that got passages got."""

    prompts: int = 0
    note_hits: int = 0
    answer_hits: int = 0
    held_given_note: int = 0
    why: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)

    def row(self) -> tuple[float, float, float]:
        n = max(self.prompts, 1)
        given = self.held_given_note / self.note_hits if self.note_hits else float("nan")
        return self.note_hits / n, self.answer_hits / n, given

    @property
    def mean_chars(self) -> float:
        return statistics.fmean(self.chars) if self.chars else 0.0


def labelled_places(name: str) -> dict[str, list[Place]]:
    """Each labelled prompt's answer places (prompts whose readers found none left out)."""
    path = ANSWERS / f"{name}.json"
    labels = json.loads(path.read_text())["labels"]
    return {
        label["prompt"]: [Place(a["note_id"], a["ordinal"], a["quote"]) for a in label["answers"]]
        for label in labels
        if label["answers"]
    }


def judge(result: SearchResult, sent: Sent, places: list[Place]) -> tuple[bool, bool, str]:
    """(note hit, answer held, why not) for the first three passages as `passages_of` sends
    them (`sent`)."""
    passages, seconds = sent[0][:3], sent[1]
    note_hit = any(p.note_id in {place.note_id for place in places} for p in passages)
    quotes = [collapse_spaces(place.quote).casefold() for place in places]
    if any(q in collapse_spaces(p.text).casefold() for q in quotes for p in passages):
        return note_hit, True, ""
    head = [c for c in result.passages if c.key in {(p.instance, p.note_id) for p in passages}]
    shown = head + [seconds[c.key].section for c in head if c.key in seconds]
    shown_at = {(c.hit.note_id, c.hit.ordinal) for c in shown}
    right_section = any((place.note_id, place.ordinal) in shown_at for place in places)
    return note_hit, False, "cut" if right_section else "section"


def reach(corpus: Corpus, gate: GateThresholds, places: dict[str, list[Place]]) -> Reach:
    counts = Reach()
    gathered = corpus.gather(Variant.NEW.ranking)
    for item in corpus.answerable:
        if item["prompt"] not in places:
            continue
        counts.prompts += 1
        g = gathered.get(item["prompt"])
        if g is None:
            continue
        result = decide(corpus.store, corpus.settings, g, gate)
        sent = passages_of(result, corpus.settings)
        if sent[0]:
            counts.chars.append(sum(len(p.text) for p in sent[0][:3]))
        note_hit, held, why = judge(result, sent, places[item["prompt"]])
        counts.note_hits += note_hit
        counts.answer_hits += held
        counts.held_given_note += note_hit and held
        if note_hit and not held:
            counts.why[why] += 1
            counts.misses.append(f"{why}: {item['prompt'][:110]!r}")
    return counts


@contextmanager
def second_share(share: float) -> Iterator[None]:
    """The product's share for the length of a block (measurement only: no switch in it)."""
    shipped = excerpts.SECOND_SECTION_SHARE
    excerpts.SECOND_SECTION_SHARE = share
    try:
        yield
    finally:
        excerpts.SECOND_SECTION_SHARE = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list note hits lacking the answer")
    args = parser.parse_args()
    corpora = load_all()
    labelled = [name for name in corpora if (ANSWERS / f"{name}.json").is_file()]
    gates = {n: fit([c for m, c in corpora.items() if m != n], Variant.NEW) for n in labelled}
    print(
        "| held out | labelled | note hit@3 | answer@3 | answer given note | "
        "gate open: note | gate open: answer | answer given note | section / cut | chars |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in labelled:
        corpus, places = corpora[name], labelled_places(name)
        sent = reach(corpus, gates[name], places)
        open_ = reach(corpus, opened(gates[name]), places)
        left_out = len(corpus.answerable) - len(places)
        rows.append(sent.row() + open_.row() + (sent.mean_chars,))
        cells = " | ".join(f"{v:.3f}" for v in rows[-1][:-1])
        why = f"{open_.why['section']} / {open_.why['cut']}"
        labels = f"{sent.prompts} (of {sent.prompts + left_out})"
        print(f"| {name} | {labels} | {cells} | {why} | {sent.mean_chars:.0f} |")
        if args.misses:
            for line in open_.misses:
                print(f"  - {name} {line}", file=sys.stderr)
    mean = [statistics.fmean(column) for column in zip(*rows, strict=True)]
    cells = " | ".join(f"{v:.3f}" for v in mean[:-1])
    print(f"| mean of the corpora | | {cells} | | {mean[-1]:.0f} |\n")
    sweep(corpora, labelled, gates)


def sweep(
    corpora: dict[str, Corpus], labelled: list[str], gates: dict[str, GateThresholds]
) -> None:
    """Mean over the corpora of answer@3, answer given note and characters sent, by share."""
    print("| second section's share | answer@3 | answer given note | chars | gate open: answer |")
    print("|---|---|---|---|---|")
    for share in SHARES:
        rows = []
        with second_share(share):
            for name in labelled:
                places = labelled_places(name)
                sent = reach(corpora[name], gates[name], places)
                open_ = reach(corpora[name], opened(gates[name]), places)
                rows.append((sent.row()[1], sent.row()[2], sent.mean_chars, open_.row()[1]))
        mean = [statistics.fmean(column) for column in zip(*rows, strict=True)]
        told = "never" if share == math.inf else f"{share:.2f}"
        print(f"| {told} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.0f} | {mean[3]:.3f} |")


if __name__ == "__main__":
    main()
