"""Retrieval quality per corpus and leave-one-corpus-out, with the baselines, in one run.

Three corpora (corpora.py), each with its own labelled set (sets/<corpus>.json: answerable
prompts with the notes that answer them, unrelated prompts that must get nothing) and one skip
set (sets/skip.json). The gate is fitted on two corpora and scored on the third; those figures
are the ones that count. "fitted on all" uses the shipped `gate.FITTED` (fitted on all three,
so in-sample). Baselines: keyword only and meaning only (plain hit functions with the same
fitted procedure on one signal), and the landed product before this gate (old_gate.py).

    python eval/evaluate.py                 # tables (markdown) on stdout
    python eval/evaluate.py --fit           # also print the FITTED block for gate.py
    python eval/evaluate.py --no-old        # skip the old product's run (needs git)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from corpora import CORPORA, HERE, corpus_settings, open_corpus
from fit import fit_gate, fit_keyword_only, fit_meaning_only
from old_gate import OLD_COMMIT, old_results

from trilium_recall.config import Settings
from trilium_recall.embed import E5Embedder
from trilium_recall.gate import FITTED, GateThresholds, PromptSignals, judge_prompt
from trilium_recall.generic import GenericPrompts
from trilium_recall.search import (
    fuse,
    keyword_hits,
    meaning_hits,
    prompt_signals,
    search,
)
from trilium_recall.skip import skip_reason, triage
from trilium_recall.store import Store

SETS = HERE / "sets"
NEIGHBOUR_GAPS = (0.01, 0.015, 0.02, 0.03)


class CachedEmbedder:
    """The real model, each query embedded once per run (gate variants re-run search)."""

    def __init__(self, model: E5Embedder) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        self._seen: dict[str, np.ndarray] = {}

    def query(self, text: str) -> np.ndarray:
        if text not in self._seen:
            self._seen[text] = self.model.query(text)
        return self._seen[text]

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.queries(texts)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.passages(texts)


@dataclass
class Corpus:
    name: str
    store: Store
    settings: Settings
    generic: GenericPrompts
    answerable: list[dict] = field(default_factory=list)
    unrelated: list[dict] = field(default_factory=list)


@dataclass
class Scores:
    hits1: list[float] = field(default_factory=list)
    hits3: list[float] = field(default_factory=list)
    reciprocal: list[float] = field(default_factory=list)
    silent: list[float] = field(default_factory=list)
    sent: list[float] = field(default_factory=list)  # passages per answered answerable prompt

    def add_answerable(self, found: list[str], expected: set[str]) -> None:
        ranks = [i for i, note_id in enumerate(found, start=1) if note_id in expected]
        self.hits1.append(float(bool(ranks) and ranks[0] == 1))
        self.hits3.append(float(bool(ranks)))
        self.reciprocal.append(1 / ranks[0] if ranks else 0.0)
        if found:
            self.sent.append(len(found))

    def row(self) -> dict[str, float]:
        return {
            "hit@1": statistics.fmean(self.hits1),
            "hit@3": statistics.fmean(self.hits3),
            "MRR": statistics.fmean(self.reciprocal),
            "silence": statistics.fmean(self.silent),
            "passages": statistics.fmean(self.sent) if self.sent else 0.0,
        }


Retriever = Callable[[Corpus, str], list[str]]


def product(gate: GateThresholds) -> Retriever:
    def run(corpus: Corpus, prompt: str) -> list[str]:
        decided = triage(prompt)
        if decided.skip:
            return []
        result = search(
            corpus.store, EMBEDDER, corpus.generic, corpus.settings, decided.text, gate=gate
        )
        return [c.hit.note_id for c in result.passages]

    return run


def one_side(side: str, gate: GateThresholds) -> Retriever:
    """Keyword only or meaning only: that side's hits, ranked alone, gated on its own signal."""

    def run(corpus: Corpus, prompt: str) -> list[str]:
        decided = triage(prompt)
        if decided.skip:
            return []
        signals, ranked = _one_side_candidates(corpus, decided.text, side)
        return ranked[:3] if judge_prompt(signals, gate).about_notes else []

    return run


def _one_side_candidates(corpus: Corpus, prompt: str, side: str) -> tuple[PromptSignals, list]:
    store = corpus.store
    vector = EMBEDDER.query(prompt)
    keyword = keyword_hits(store, prompt)
    neighbours = meaning_hits(store, vector)
    if side == "keyword":
        neighbours = type(neighbours)([], neighbours.mean, neighbours.std)
    else:
        keyword = type(keyword)(keyword.terms, keyword.idf, keyword.fts_query, [])
    candidates = fuse(store, corpus.settings, keyword, neighbours, vector)
    signals = prompt_signals(
        candidates, neighbours, corpus.generic.closest(vector), corpus.generic.offset
    )
    return signals, [c.hit.note_id for c in candidates]


def collect_signals(corpus: Corpus) -> tuple[list[PromptSignals], list[PromptSignals]]:
    """Every prompt's prompt-level signals (gate independent), answerable then unrelated."""

    def signals(prompt: str) -> PromptSignals:
        decided = triage(prompt)
        result = search(corpus.store, EMBEDDER, corpus.generic, corpus.settings, decided.text)
        assert result.trace.signals is not None
        return result.trace.signals

    return (
        [signals(item["prompt"]) for item in corpus.answerable],
        [signals(item["prompt"]) for item in corpus.unrelated],
    )


def score(corpora: Sequence[Corpus], retriever: Retriever) -> dict[str, float]:
    scores = Scores()
    for corpus in corpora:
        for item in corpus.answerable:
            scores.add_answerable(retriever(corpus, item["prompt"]), set(item["expected"]))
        for item in corpus.unrelated:
            scores.silent.append(float(not retriever(corpus, item["prompt"])))
    return scores.row()


Signals = dict[str, tuple[list[PromptSignals], list[PromptSignals]]]


def pooled(corpora: Sequence[Corpus], signals: Signals) -> tuple[list, list]:
    return (
        [s for c in corpora for s in signals[c.name][0]],
        [s for c in corpora for s in signals[c.name][1]],
    )


def fit(corpora: Sequence[Corpus], signals: Signals, base: GateThresholds) -> GateThresholds:
    """Prompt weights by logistic fit, then the neighbour gap with the best hit@3 and MRR."""
    gate = fit_gate(*pooled(corpora, signals), base)
    best = max(
        NEIGHBOUR_GAPS,
        key=lambda gap: _objective(score(corpora, product(_gap(gate, gap)))),
    )
    return _gap(gate, best)


def _gap(gate: GateThresholds, gap: float) -> GateThresholds:
    return GateThresholds(**{**asdict(gate), "neighbour_cosine_gap": gap})


def _objective(row: dict[str, float]) -> float:
    return row["hit@3"] + row["MRR"] - 0.01 * row["passages"]


def old_product(corpora: dict[str, Corpus]) -> dict[str, dict[str, float]]:
    """Each corpus scored with what the old product sent for its prompts."""
    prompts = {n: [i["prompt"] for i in c.answerable + c.unrelated] for n, c in corpora.items()}
    sent = old_results(prompts)
    return {n: score([c], lambda corpus, p: sent[corpus.name][p]) for n, c in corpora.items()}


def print_misses(corpus: Corpus, gate: GateThresholds) -> None:
    """Every answerable prompt the held-out fold missed, and why; every unrelated one that spoke."""
    print(f"#### {corpus.name}: misses (held out)\n")
    for item in corpus.answerable + corpus.unrelated:
        result = search(
            corpus.store,
            EMBEDDER,
            corpus.generic,
            corpus.settings,
            triage(item["prompt"]).text,
            gate=gate,
        )
        verdict, found = result.trace.verdict, [c.hit.note_id for c in result.passages]
        assert verdict is not None
        expected = item.get("expected")
        if expected is not None and not set(found) & set(expected):
            ranked = [c.hit.note_id for c in result.trace.candidates]
            why = "gate" if not verdict.about_notes else "ranking"
            place = ranked.index(expected[0]) + 1 if expected[0] in ranked else None
            print(f"- missed ({why}, {verdict.score:+.2f}, expected #{place}): {item['prompt']!r}")
        elif expected is None and found:
            titles = ", ".join(c.hit.title for c in result.passages)
            print(f"- spoke ({item['kind']}, {verdict.score:+.2f}): {item['prompt']!r} → {titles}")
    print()


def skip_accuracy() -> dict[str, float]:
    data = json.loads((SETS / "skip.json").read_text())
    prompts = [
        item["prompt"]
        for c in CORPORA
        for k in ("answerable", "unrelated")
        for item in json.loads((SETS / f"{c}.json").read_text())[k]
    ]
    return {
        "skip prompts skipped": statistics.fmean(
            bool(skip_reason(i["prompt"])) for i in data["skip"]
        ),
        "prompts to search not skipped": statistics.fmean(
            not skip_reason(p) for p in prompts + [i["prompt"] for i in data["search"]]
        ),
    }


def table(title: str, rows: dict[str, dict[str, float]]) -> str:
    head = "| | hit@1 | hit@3 | MRR | silence | passages/answer |\n|---|---|---|---|---|---|"
    lines = [f"### {title}", "", head]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['hit@1']:.3f} | {r['hit@3']:.3f} | {r['MRR']:.3f} "
            f"| {r['silence']:.3f} | {r['passages']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def load(name: str, model: E5Embedder) -> Corpus:
    store = open_corpus(name, model)
    data = json.loads((SETS / f"{name}.json").read_text())
    corpus = Corpus(
        name,
        store,
        corpus_settings(HERE / ".index" / name),
        GenericPrompts.load(EMBEDDER, store).calibrated(store.vectors),
    )
    corpus.answerable, corpus.unrelated = data["answerable"], data["unrelated"]
    return corpus


EMBEDDER: CachedEmbedder


def load_all() -> tuple[dict[str, Corpus], Signals]:
    """The real model (once per run), every corpus's index and every prompt's signals."""
    global EMBEDDER
    model = E5Embedder()
    EMBEDDER = CachedEmbedder(model)
    corpora = {name: load(name, model) for name in CORPORA}
    return corpora, {name: collect_signals(c) for name, c in corpora.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="print the FITTED block")
    parser.add_argument("--no-old", action="store_true", help="skip the old product's run")
    parser.add_argument("--misses", action="store_true", help="list each held-out fold's misses")
    args = parser.parse_args()
    corpora, signals = load_all()
    full = fit(list(corpora.values()), signals, FITTED)
    if args.fit:
        print(f"FITTED = {full!r}\n")
    held_out: dict[str, dict[str, dict[str, float]]] = {}
    for name, corpus in corpora.items():
        train = [c for n, c in corpora.items() if n != name]
        gate = fit(train, signals, FITTED)
        answerable, unrelated = pooled(train, signals)
        print(f"fold {name}: {gate}", file=sys.stderr)
        if args.misses:
            print_misses(corpus, gate)
        held_out[name] = {
            "**new gate**": score([corpus], product(gate)),
            "keyword only": score([corpus], one_side("keyword", fit_keyword_only(unrelated, gate))),
            "meaning only": score(
                [corpus], one_side("meaning", fit_meaning_only(answerable, unrelated, gate))
            ),
            "new gate, fitted on all three (in-sample)": score([corpus], product(full)),
        }
    if not args.no_old:
        for name, row in old_product(corpora).items():
            held_out[name][f"old product ({OLD_COMMIT}, its own fitted gate)"] = row
    for name, rows in held_out.items():
        print(table(f"{name} (held out: gate fitted on the other two)", rows))
    for name, value in skip_accuracy().items():
        print(f"- {name}: {value:.3f}")


if __name__ == "__main__":
    main()
