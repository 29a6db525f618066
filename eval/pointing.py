"""Does saying where to look change the decision? Prompts wrapped in words pointing at the notes.

People ask an assistant about their notes by saying so: "according to my notes, …", "… (it's
in my notes somewhere)", "in trilium, …". None of the labelled sets is written that way, so
this script makes such prompts from them: every English answerable and unrelated prompt of
every set is wrapped in one of six phrasings (chosen by the prompt's place in its set) and
scored with the shipped gate (`gate.FITTED`, as shipped, not refitted: the question is whether
the words change a decision, not where the line falls). A product that reads the topic gives
the wrapped prompts what it gives the plain ones: the same hit@3 and the same silence.

Two groups of phrasings: `fitted`, the six the rules of `search/topic.py` were written
against, and `held out`, six more written after the rules were fixed and never changed
after a run. `--as-written` searches every prompt as typed (the behaviour before topic.py,
switched here, in the eval, by replacing `hybrid.topic_of`).

    python eval/pointing.py [--as-written]      # ~5 min over the cached indexes
"""

from __future__ import annotations

import argparse
import statistics
import sys

from evaluate import Corpus, load_all, product, score
from fit import Variant

from trilium_recall.search import hybrid
from trilium_recall.search.gate import FITTED
from trilium_recall.search.languages import prompt_language

PHRASINGS = {
    "fitted": (
        "what do my notes say about this: {p}",
        "check my trilium notes — {p}",
        "{p} (it's in my notes somewhere)",
        "in trilium, {p}",
        "according to my notes, {p}",
        "search my notes for this: {p}",
    ),
    "held out": (
        "anything in my notes about this? {p}",
        "{p} — i think i wrote this down in trilium",
        "look through my notebook: {p}",
        "from my trilium: {p}",
        "{p}, check my notes",
        "my notes should have this. {p}",
    ),
}


def english(items: list[dict]) -> list[dict]:
    return [item for item in items if prompt_language(item["prompt"]) in (None, "en")]


def wrapped(items: list[dict], phrasings: tuple[str, ...]) -> list[dict]:
    return [
        {**item, "prompt": phrasings[n % len(phrasings)].format(p=item["prompt"])}
        for n, item in enumerate(items)
    ]


def measure(corpus: Corpus, answerable: list[dict], unrelated: list[dict]) -> tuple[float, float]:
    """(hit@3, all silence) of the shipped gate on these prompts, searched afresh."""
    corpus.answerable, corpus.unrelated, corpus.gathered = answerable, unrelated, {}
    row = score([corpus], product(FITTED, Variant.NEW.ranking))
    return float(row["hit@3"] or 0.0), float(row["all silence"] or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as-written", action="store_true", help="search prompts as typed")
    args = parser.parse_args()
    if args.as_written:
        hybrid.topic_of = lambda prompt, application_is_topic: prompt  # type: ignore[assignment]
    columns = ["plain", *PHRASINGS]
    print("| corpus | " + " | ".join(f"{c}: hit@3 / silence" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    table: dict[str, list[tuple[float, float]]] = {c: [] for c in columns}
    for name, corpus in load_all().items():
        answerable, unrelated = english(corpus.answerable), english(corpus.unrelated)
        cells = [measure(corpus, answerable, unrelated)]
        for phrasings in PHRASINGS.values():
            cells.append(
                measure(corpus, wrapped(answerable, phrasings), wrapped(unrelated, phrasings))
            )
        for column, cell in zip(columns, cells, strict=True):
            table[column].append(cell)
        print(f"| {name} | " + " | ".join(f"{h:.3f} / {s:.3f}" for h, s in cells) + " |")
        sys.stdout.flush()
    means = [
        f"{statistics.fmean(h for h, _ in cells):.3f} / {statistics.fmean(s for _, s in cells):.3f}"
        for cells in table.values()
    ]
    print("| mean | " + " | ".join(means) + " |")


if __name__ == "__main__":
    main()
