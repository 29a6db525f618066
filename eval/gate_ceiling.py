"""How far any threshold could take the gate's signals, and a learned gate tried beside them.

For each corpus held out, three prompt scores, each at two biases:

- *shipped*: the gate's own signals, fitted on the other two corpora (`evaluate.fit`, the
  fold of eval/RESULTS.md's tables).
- *learned*: a ridge logistic over the 384 products of the prompt's vector and its best
  snippet's vector, a learned weighting of their cosine. It is trained on the other two
  corpora's labelled prompts, plus every bank prompt (with its best snippet on that corpus) as
  an unrelated one at 0.2 weight.
- *both*: the two standardised scores averaged, 0.7 learned.

The first bias is the fold's: 97 % of the training corpora's unrelated prompts stay silent.
That is what a product could ship. The second is the bias that suits the held-out corpus best:
the loosest one keeping 96 % of its own unrelated prompts silent. It is chosen on the labels
being scored, so it is no result; it bounds what any calibration of that score could reach.
Every score also passes on the fold's strong-keyword rule. hit@3 counts the product's own
passages (the candidate decision as shipped) for the prompts that pass. "open" passes every
prompt: the ranking's ceiling; once more counting a wiki summary shown for an expected source
as a hit (the summary-for-source rule at work; the sets name the source).

    python eval/gate_ceiling.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import evaluate
import numpy as np
from evaluate import Corpus, Signals, fit, load_all
from fit import TRAIN_SILENCE, logistic

from trilium_recall.gate import FITTED, GateThresholds, PromptSignals, judge_prompt
from trilium_recall.search import search
from trilium_recall.skip import triage

HELD_OUT_SILENCE = 0.96  # the target
BANK_WEIGHT = 0.2  # a bank prompt counts this much of a labelled unrelated one
LEARNED_L2 = 100.0  # ridge for 384 weights on ~3,000 rows
LEARNED_SHARE = 0.7
Scorer = Callable[[Sequence["Prompt"]], np.ndarray]
Rates = tuple[float, float]


@dataclass(frozen=True)
class Prompt:
    answerable: bool
    hit: bool  # an expected note among the product's first three passages, gate open
    stand_in: bool  # or a wiki summary standing in for an expected source among them
    signals: PromptSignals
    pair: np.ndarray  # prompt vector × its best snippet's vector, elementwise


def labelled_prompts(corpus: Corpus, gate: GateThresholds) -> list[Prompt]:
    """Every labelled prompt, searched with the prompt decision open and `gate`'s candidate
    decision."""
    opened = replace(gate, bias=1e6)
    items = [(True, i) for i in corpus.answerable] + [(False, i) for i in corpus.unrelated]
    out = []
    for answerable, item in items:
        text = triage(item["prompt"]).text
        result = search(
            corpus.store, evaluate.EMBEDDER, corpus.generic, corpus.settings, text, gate=opened
        )
        assert result.trace.signals is not None
        shown = result.passages[:3]
        expected = set(item.get("expected", []))
        hit = bool(expected & {p.hit.note_id for p in shown})
        stand_in = hit or bool(expected & {p.stands_for for p in shown})
        best = max(result.trace.candidates, key=lambda c: c.cosine)
        pair = evaluate.EMBEDDER.query(text) * _snippet(corpus, best.snippet_id)
        out.append(Prompt(answerable, hit, stand_in, result.trace.signals, pair))
    return out


def bank_pairs(corpus: Corpus) -> np.ndarray:
    """Each generic prompt's vector × its best snippet's on this corpus."""
    rows = []
    for vector in corpus.generic.vectors:
        match = corpus.store.vectors.search(vector, 1).hits[0]
        rows.append(vector * _snippet(corpus, match.snippet_id))
    return np.array(rows)


def _snippet(corpus: Corpus, snippet_id: int | None) -> np.ndarray:
    if snippet_id is None:
        return np.zeros(corpus.store.vectors.dim, dtype=np.float32)
    return corpus.store.vectors.snippet_vector(snippet_id)


def shipped_scores(gate: GateThresholds, prompts: Sequence[Prompt]) -> np.ndarray:
    return np.array([judge_prompt(p.signals, gate).score for p in prompts])


def learned_model(train: Sequence[Prompt], bank: np.ndarray) -> Scorer:
    x = np.r_[np.array([p.pair for p in train]), bank]
    y = np.r_[[float(p.answerable) for p in train], np.zeros(len(bank))]
    counts = np.r_[np.ones(len(train)), np.full(len(bank), BANK_WEIGHT)]
    weights, bias = logistic(x, y, LEARNED_L2, counts)
    return lambda prompts: np.array([p.pair for p in prompts]) @ weights + bias


def rates(prompts: Sequence[Prompt], passing: np.ndarray) -> Rates:
    """hit@3 over the answerable prompts, silence over the unrelated ones."""
    answerable = np.array([p.answerable for p in prompts])
    hits = np.array([p.hit for p in prompts])
    return float((passing & hits)[answerable].mean()), float((~passing)[~answerable].mean())


def loosest_bias(prompts: Sequence[Prompt], score: np.ndarray, keyword: np.ndarray) -> float:
    """The lowest threshold at which the held-out corpus keeps its silence target."""
    for threshold in np.sort(score[[not p.answerable for p in prompts]]):
        if rates(prompts, (score > threshold) | keyword)[1] >= HELD_OUT_SILENCE:
            return float(threshold)
    return float("inf")


def fold_gate(held: str, corpora: dict[str, Corpus], signals: Signals) -> GateThresholds:
    """The gate fitted on every corpus but `held` (evaluate.py's fold)."""
    return fit([c for name, c in corpora.items() if name != held], signals, FITTED)


def fold(
    held: str,
    gate: GateThresholds,
    prompts: dict[str, list[Prompt]],
    banks: dict[str, np.ndarray],
) -> dict[str, tuple[Rates, Rates]]:
    """Each score's (hit@3, silence) on the held-out corpus: at the fold's bias, at the best."""
    train_names = [n for n in prompts if n != held]
    keyword_gate = replace(gate, bias=-1e9)  # judge_prompt then passes on keywords alone
    train = [p for n in train_names for p in prompts[n]]
    test = prompts[held]
    keyword = np.array([judge_prompt(p.signals, keyword_gate).about_notes for p in test])
    learned = learned_model(train, np.concatenate([banks[n] for n in train_names]))
    train_unrelated = [p for p in train if not p.answerable]
    shipped_train, learned_train = shipped_scores(gate, train), learned(train)
    spread = shipped_train.std(), learned_train.std()

    def both(ps: Sequence[Prompt]) -> np.ndarray:
        return (
            LEARNED_SHARE * learned(ps) / spread[1]
            + (1 - LEARNED_SHARE) * shipped_scores(gate, ps) / spread[0]
        )

    rows: dict[str, tuple[Rates, Rates]] = {}
    scorers: tuple[tuple[str, Scorer], ...] = (
        ("shipped", lambda ps: shipped_scores(gate, ps)),
        ("learned", learned),
        ("both", both),
    )
    for name, scorer in scorers:
        trained_at = float(np.quantile(scorer(train_unrelated), TRAIN_SILENCE))
        score = scorer(test)
        best = loosest_bias(test, score, keyword)
        rows[name] = (
            rates(test, (score >= trained_at) | keyword),
            rates(test, (score > best) | keyword),
        )
    everyone = np.ones(len(test), bool)
    rows["open"] = (rates(test, everyone),) * 2
    stand_ins = [replace(p, hit=p.stand_in) for p in test]
    rows["open, a summary standing in counts"] = (rates(stand_ins, everyone),) * 2
    return rows


def main() -> None:
    corpora, signals = load_all()
    gates = {held: fold_gate(held, corpora, signals) for held in corpora}
    # Searched once, with its own fold's candidate decision; as training rows only the
    # gate-independent fields (signals, pair) are read.
    prompts = {name: labelled_prompts(c, gates[name]) for name, c in corpora.items()}
    banks = {name: bank_pairs(c) for name, c in corpora.items()}
    print("| held out | score | fold's bias: hit@3 / silence | best bias for this corpus |")
    print("|---|---|---|---|")
    for held in corpora:
        for name, (trained, best) in fold(held, gates[held], prompts, banks).items():
            print(
                f"| {held} | {name} | {trained[0]:.3f} / {trained[1]:.3f} "
                f"| {best[0]:.3f} / {best[1]:.3f} |"
            )


if __name__ == "__main__":
    main()
