"""Would another ranking raise recall? Rankings the product does not compute, held out.

Issue 23, Build 6 asks to use what the notebook already knows against vocabulary mismatch
(titles and heading paths, links and relations, pseudo-relevance feedback) and Build 9 welcomes
a learned combination of the signals already computed; keep only what helps. Each trial below
but the last is one more ranking fused into the product's RRF at weight w, through the
product's own search, so a section only the new ranking finds becomes a full candidate:

- `heading`: sections by their "title: heading path" embedded as a query (the query–query
  pairing of two short names of a topic);
- `vector feedback`: the query vector moved toward the best snippets of the three best notes
  (Rocchio, β = 0.7) and searched again;
- `keyword feedback`: the prompt's distinctive terms OR-ed with ten expansion terms, the
  best by tf × idf in the three best fused sections (RM3-like);
- `pairs`: sections holding two neighbouring content words of the prompt within a few words of
  each other (FTS5 NEAR, any form of each stem): the sequential-dependence part of a keyword
  model ("retention policy", "query string", "working tree"), which bm25 over single words
  lacks;
- `links`: the sections of the notes linked to or from the two best notes (links, includes,
  relations), closest first; only the three Trilium corpora have links;
- `centroid`: sections by the mean of their snippet vectors (what the whole section is about,
  where the product reads each section by its best snippet), and `note centroid`: notes by the
  mean of all their snippet vectors, each given as its best section;
- `bridge` (Build 5, prompts in another language than the notes only): each word of the prompt
  mapped to the closest word of the notebook's own keyword vocabulary (single words embedded
  as e5 queries, cosine at least 0.90; a word the vocabulary holds is kept), the mapped words
  searched with FTS5 (a cross-language keyword side);
- `static`, `static-snippet`: sections by a second, static embedding (WordLlama's 256-dim
  token vectors, mean-pooled, its weights in its MIT wheel; `pip install 'wordllama>=0.4'`,
  eval only), by the section's whole text or by its best snippet: alone it ranks the
  developer's notebooks about as well as bm25, so it might add what e5 and bm25 miss.

For each held-out corpus w is chosen on the others (best mean gate-open hit@3), the gate is
refitted on them over the re-fused searches and the held-out corpus scored. One trial takes
away instead of adding, the one that was kept:

- `learned`: the shipped gate judging its candidates in fused order instead of its learned
  order (`hybrid.in_order`; fitted in each fold on the other corpora, `evaluate.fit_order`).

And one changes what meaning search is given (Build 8: pasted code should not dilute the
sentence around it):

- `prose`: a prompt carrying code lines (a stack trace, a pasted block: lines mostly of
  symbols and digits, or `at …` frames) is embedded without them, when at least three words
  are left; the whole search and the gate run on that vector.

Measurement only: the product has none of the rankings. It has no switch for them either, so a
trial wraps `hybrid.rrf` for the length of one search (`fused_with`).

    python eval/ranking_trials.py [--trial heading|vector|keyword|links|pairs|centroid|
                                           note-centroid|bridge|static|static-snippet|
                                           learned|prose ...]
"""

from __future__ import annotations

import argparse
import functools
import inspect
import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import evaluate
import numpy as np
from evaluate import Corpus, fit, load_all, opened, product, score
from fit import Variant

from trilium_recall.index.terms import STOP_WORDS, fts_query, idf, prompt_terms, words
from trilium_recall.notes.records import SectionHit
from trilium_recall.search import hybrid, rankings
from trilium_recall.search.gate import FITTED
from trilium_recall.search.hybrid import Gathered
from trilium_recall.search.languages import MARKERS
from trilium_recall.search.triage import triage

WEIGHTS = (0.0, 0.5, 1.0, 2.0)
PAIR_SPAN, PAIRS = 3, 12  # words allowed between a pair's two; pairs asked of FTS5 at most
BRIDGE_WEIGHTS = (0.0, 1.0, 2.0, 3.0)  # a foreign prompt's own keyword side finds ~nothing
BRIDGE_COSINE = 0.90  # word to word; e.g. "konto" → "account" 0.93, "chemin" → "path" 0.89
FUNCTION_WORDS = frozenset().union(*MARKERS.values())
DEPTH = 40  # as deep as the keyword and meaning rankings
FEEDBACK_NOTES = 3
ROCCHIO_BETA = 0.7
EXPANSION_TERMS = 10
LINKED_FROM = 2  # the best notes whose links are followed
CODE_SYMBOLS = frozenset("(){}[];=<>/\\:.,'\"`|&*+$#@%^~")
CODE_LINE_SYMBOLS = 0.2  # share of a line's characters

Searches = dict[str, dict[str, Gathered]]  # corpus → prompt → search
Measured = tuple[float, dict[str, float | None]]  # gate-open hit@3, held-out row
ExtraRanking = Callable[[Corpus, str, Gathered], list[int]]


def every_section(corpus: Corpus) -> dict[int, SectionHit]:
    with corpus.store.atomic() as db:
        ids = [row[0] for row in db.execute("SELECT id FROM sections")]
    return corpus.store.section_hits(ids)


def heading_text(hit: SectionHit) -> str:
    """What a person would call the section: its note's title and its heading path."""
    if not hit.heading or hit.heading == hit.title:
        return hit.title
    return f"{hit.title}: {hit.heading}"


def word_pairs(corpus: Corpus, text: str, _: Gathered) -> list[int]:
    content = [w for w in words(text) if len(w) > 1 and w not in STOP_WORDS]
    near = dict.fromkeys(f'NEAR("{a}" "{b}", {PAIR_SPAN})' for a, b in itertools.pairwise(content))
    if not near:
        return []
    query = " OR ".join(list(near)[:PAIRS])
    return [section_id for section_id, _ in corpus.store.keyword_search(query, DEPTH)]


def heading_ranking(corpus: Corpus) -> ExtraRanking:
    hits = every_section(corpus)
    ids = list(hits)
    texts = [heading_text(hit) for hit in hits.values()]
    unique = sorted(set(texts))  # a heading path shared by several sections is embedded once
    row_of = {text: i for i, text in enumerate(unique)}
    matrix = evaluate.EMBEDDER.queries(unique)[[row_of[t] for t in texts]]

    def ranked(_: Corpus, text: str, __: Gathered) -> list[int]:
        cosines = matrix @ evaluate.EMBEDDER.query(text)
        return [ids[i] for i in np.argsort(-cosines, kind="stable")[:DEPTH]]

    return ranked


def vector_feedback(corpus: Corpus, _: str, gathered: Gathered) -> list[int]:
    best = [c.snippet_id for c in gathered.candidates[:FEEDBACK_NOTES] if c.snippet_id]
    vectors = corpus.store.exact_vectors(best)
    if not vectors:
        return []
    moved = gathered.query_vector + ROCCHIO_BETA * np.mean(list(vectors.values()), axis=0)
    moved = (moved / np.linalg.norm(moved)).astype(np.float32)
    found = corpus.store.vectors.search(moved, DEPTH, corpus.store.exact_vectors)
    return [match.section_id for match in found.hits]


def keyword_feedback(corpus: Corpus, text: str, gathered: Gathered) -> list[int]:
    terms = prompt_terms(text)
    weight: Counter[str] = Counter()
    for c in gathered.sections[:FEEDBACK_NOTES]:
        found = words(f"{c.hit.title} {c.hit.heading} {c.hit.text}")
        counts = Counter(w for w in found if len(w) > 2 and not w.isdigit() and w not in STOP_WORDS)
        for word, n in counts.items():
            weight[word] += 1 + np.log(n)
    new = [w for w in weight if w not in terms]
    if not new:
        return []
    total, counts = corpus.store.term_document_counts(new + terms)
    weight_of = {w: idf(total, counts[w]) for w in new}
    expansion = sorted(new, key=lambda w: -weight[w] * weight_of[w])[:EXPANSION_TERMS]
    distinctive = rankings.distinctive_terms(terms, counts, total) if terms else []
    query = fts_query(distinctive + expansion)
    return [section_id for section_id, _ in corpus.store.keyword_search(query, DEPTH)]


def linked_notes(corpus: Corpus, _: str, gathered: Gathered) -> list[int]:
    best = {c.key for c in gathered.candidates[:LINKED_FROM]}
    linked: set[tuple[str, str]] = set()
    with corpus.store.atomic() as db:
        for instance, note_id in best:
            for (other,) in db.execute(
                "SELECT target_id FROM links WHERE instance = ? AND source_id = ? UNION "
                "SELECT source_id FROM links WHERE instance = ? AND target_id = ?",
                (instance, note_id, instance, note_id),
            ):
                linked.add((instance, other))
    sections = []
    for instance in {i for i, _ in linked - best}:
        notes = [n for i, n in linked - best if i == instance]
        sections += corpus.store.section_ids_of(instance, notes)
    matches = corpus.store.best_snippets(sections, gathered.query_vector) if sections else {}
    return sorted(matches, key=lambda i: -matches[i].cosine)[:DEPTH]


def centroid_ranking(corpus: Corpus, by_note: bool = False) -> ExtraRanking:
    """Sections (or notes, each as its best section) by the mean of their snippet vectors."""
    with corpus.store.atomic() as db:
        rows = db.execute(
            "SELECT snippets.id, sections.id, sections.instance || '/' || sections.note_id"
            " FROM snippets JOIN sections ON sections.id = snippets.section_id"
        ).fetchall()
    vectors = corpus.store.exact_vectors([snippet for snippet, _, _ in rows])
    group = {snippet: (note if by_note else section) for snippet, section, note in rows}
    keys = sorted(set(group.values()), key=str)
    row_of = {key: i for i, key in enumerate(keys)}
    means = np.zeros((len(keys), len(next(iter(vectors.values())))), np.float32)
    for snippet, vector in vectors.items():
        means[row_of[group[snippet]]] += vector
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    sections_of: dict[object, list[int]] = {}
    for _, section, note in rows:
        sections_of.setdefault(note, []).append(section)

    def ranked(_: Corpus, __: str, gathered: Gathered) -> list[int]:
        best = np.argsort(-(means @ gathered.query_vector), kind="stable")[:DEPTH]
        if not by_note:
            return [int(keys[i]) for i in best]
        found = []
        for i in best:
            matches = corpus.store.best_snippets(
                sorted(set(sections_of[keys[i]])), gathered.query_vector
            )
            found.append(max(matches, key=lambda section: matches[section].cosine))
        return found

    return ranked


@functools.cache
def static_model() -> Any:
    """WordLlama's static token vectors (256 dimensions, pooled by mean), from its wheel: eval
    only, not a dependency of the product. Its own loader looks for the tokenizer in a folder
    the wheel names differently and would download it, so the two files are opened here."""
    try:
        from safetensors import safe_open
        from wordllama import WordLlama
        from wordllama.inference import WordLlamaInference
    except ImportError:
        raise SystemExit("the static trials need WordLlama: pip install 'wordllama>=0.4'") from None
    root = Path(inspect.getfile(WordLlama)).parent
    tokenizer = WordLlama.load_tokenizer(root / "tokenizers" / "l2_supercat_tokenizer_config.json")
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), "np") as weights:
        return WordLlamaInference(weights.get_tensor(next(iter(weights.keys()))), tokenizer)


def static_ranking(corpus: Corpus, by_snippet: bool = False) -> ExtraRanking:
    """Sections by a second, static embedding (`static_model`): what a prompt's words and a
    section's share by meaning with no model run, a third opinion beside bm25 and e5. By the
    section's whole text, or by its best snippet."""
    model = static_model()
    hits = every_section(corpus)
    if by_snippet:
        with corpus.store.atomic() as db:
            rows = db.execute("SELECT section_id, start, end FROM snippets").fetchall()
        owners = [section for section, _, _ in rows]
        texts = [hits[s].text[start:end] for s, start, end in rows]
    else:
        owners = list(hits)
        texts = [f"{heading_text(hit)}\n{hit.text}" for hit in hits.values()]
    matrix = model.embed(texts, norm=True).astype(np.float32)

    def ranked(_: Corpus, text: str, __: Gathered) -> list[int]:
        cosines = matrix @ model.embed([text], norm=True)[0].astype(np.float32)
        found: list[int] = []
        for i in np.argsort(-cosines, kind="stable"):
            if owners[i] not in found:
                found.append(owners[i])
                if len(found) == DEPTH:
                    break
        return found

    return ranked


def bridge_ranking(corpus: Corpus) -> ExtraRanking:
    """Sections by the prompt's words carried into the notebook's vocabulary (a prompt in
    another language than the notes only). Measured at stop 35, before the index stemmed: its
    vocabulary is now stems, which embed less well and are stemmed again when queried."""
    with corpus.store.atomic() as db:
        rows = db.execute(
            "SELECT term FROM sections_vocab WHERE doc >= 2 AND length(term) >= 3"
            " AND term GLOB '[a-z]*' AND NOT term GLOB '*[0-9]*'"
        ).fetchall()
    vocabulary = sorted(term for (term,) in rows if term not in STOP_WORDS)
    known = set(vocabulary)
    matrix = evaluate.EMBEDDER.queries(vocabulary)

    def carried(word: str) -> str | None:
        if word in known:
            return word
        cosines = matrix @ evaluate.EMBEDDER.query(word)
        best = int(np.argmax(cosines))
        return vocabulary[best] if cosines[best] >= BRIDGE_COSINE else None

    def ranked(_: Corpus, text: str, gathered: Gathered) -> list[int]:
        if not gathered.trace.foreign:
            return []
        prompt = [
            w
            for w in dict.fromkeys(words(text))
            if len(w) >= 3 and not w.isdigit() and w not in STOP_WORDS | FUNCTION_WORDS
        ]
        terms = [term for w in prompt if (term := carried(w)) is not None]
        if not terms:
            return []
        return [
            section_id for section_id, _ in corpus.store.keyword_search(fts_query(terms), DEPTH)
        ]

    return ranked


def code_line(line: str) -> bool:
    """A line of a stack trace or of pasted code rather than of the sentence around it."""
    text = line.strip()
    if not text:
        return True
    if re.match(r"at\s|File \"|Traceback", text) or "node:internal" in text:
        return True
    symbols = sum(ch in CODE_SYMBOLS or ch.isdigit() for ch in text)
    return symbols / len(text) > CODE_LINE_SYMBOLS


def prose(prompt: str) -> str:
    """The prompt without its code lines, unless fewer than three words would be left."""
    kept = [line for line in prompt.split("\n") if not code_line(line)]
    text = " ".join(kept)
    return text if kept and len(text.split()) >= 3 else prompt


class ProseEmbedder:
    """The eval's embedder, given each prompt without its code lines."""

    def __init__(self, inner: evaluate.CachedEmbedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.changed = 0

    def query(self, text: str) -> np.ndarray:
        shorter = prose(text)
        self.changed += shorter != text
        return self.inner.query(shorter)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.queries(texts)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.passages(texts)


def prose_trial(
    corpora: dict[str, Corpus], shipped: Searches, baseline: dict[str, Measured]
) -> None:
    embedder = ProseEmbedder(evaluate.EMBEDDER)
    ranking = Variant.NEW.ranking
    searches = {
        name: {prompt: c.search(triage(prompt).text, ranking, embedder) for prompt in shipped[name]}
        for name, c in corpora.items()
    }
    print(f"\nprose: {embedder.changed} prompts searched without their code lines")
    use(corpora, searches)
    print_held_out("prose", {name: (measured(corpora, name), baseline[name]) for name in corpora})
    use(corpora, shipped)


@contextmanager
def fused_with(ranked: Sequence[int], weight: float) -> Iterator[None]:
    """The product's RRF with one more ranking, for the searches inside the block."""
    plain = hybrid.rrf

    def rrf(
        rankings: Iterable[tuple[Sequence[int], float]], k: int = rankings.RRF_K
    ) -> dict[int, float]:
        return plain([*rankings, (ranked, weight)], k)

    hybrid.rrf = rrf
    try:
        yield
    finally:
        hybrid.rrf = plain


def searched_with(
    corpus: Corpus, shipped: dict[str, Gathered], extra: ExtraRanking, weight: float
) -> dict[str, Gathered]:
    """Every prompt searched again with `extra` fused in at `weight`."""
    ranking = Variant.NEW.ranking
    searches = {}
    for prompt, gathered in shipped.items():
        text = triage(prompt).text
        with fused_with(extra(corpus, text, gathered), weight):
            searches[prompt] = corpus.search(text, ranking)
    return searches


def use(corpora: dict[str, Corpus], searches: Searches) -> None:
    """Put `searches` where evaluate.py's fitting and scoring read them."""
    for name, corpus in corpora.items():
        corpus.gathered[Variant.NEW.ranking] = searches[name]


def ceiling(corpora: dict[str, Corpus], name: str) -> float:
    """Gate-open hit@3 with the shipped candidate rule in fused order: what w is chosen by (the
    shipped learned order was fitted on every corpus, the held-out one too)."""
    gate = opened(replace(FITTED, order=None))
    return score([corpora[name]], product(gate, Variant.NEW.ranking))["hit@3"] or 0.0


def measured(corpora: dict[str, Corpus], name: str, learned_order: bool = True) -> Measured:
    """With the gate fitted on the other corpora: `name`'s gate-open hit@3 and its scores."""
    train = [c for n, c in corpora.items() if n != name]
    gate = fit(train, Variant.NEW, learned_order=learned_order)
    ranking = Variant.NEW.ranking
    held_out = corpora[name]
    return (
        score([held_out], product(opened(gate), ranking))["hit@3"] or 0.0,
        score([held_out], product(gate, ranking)),
    )


def added_ranking_trial(
    corpora: dict[str, Corpus],
    shipped: Searches,
    baseline: dict[str, Measured],
    title: str,
    extras: dict[str, ExtraRanking],
    weights: Sequence[float] = WEIGHTS,
) -> None:
    by_weight: dict[float, Searches] = {0.0: shipped}
    for weight in weights[1:]:
        by_weight[weight] = {
            name: searched_with(c, shipped[name], extras[name], weight)
            for name, c in corpora.items()
        }
    ceilings = {}
    for weight, searches in by_weight.items():
        use(corpora, searches)
        ceilings[weight] = {name: ceiling(corpora, name) for name in corpora}
    print(f"\n### {title}: gate-open hit@3 by weight\n")
    print("| w | " + " | ".join(corpora) + " | mean |")
    print("|---|" + "---|" * (len(corpora) + 1))
    for weight, row in ceilings.items():
        cells = " | ".join(f"{row[n]:.3f}" for n in corpora)
        print(f"| {weight} | {cells} | {statistics.fmean(row.values()):.3f} |")

    def chosen(name: str) -> float:
        others = [n for n in corpora if n != name]
        return max(weights, key=lambda w: statistics.fmean(ceilings[w][n] for n in others))

    rows = {}
    for name in corpora:
        weight = chosen(name)
        use(corpora, by_weight[weight])
        rows[name] = (measured(corpora, name) if weight else baseline[name], baseline[name])
        print(f"{name}: w = {weight} chosen on the others")
    print_held_out(title, rows)
    use(corpora, shipped)


def learned_order_trial(corpora: dict[str, Corpus], baseline: dict[str, Measured]) -> None:
    """The shipped procedure against the same gate judging in fused order."""
    rows = {
        name: (baseline[name], measured(corpora, name, learned_order=False)) for name in corpora
    }
    print_held_out("learned order", rows)


def print_held_out(title: str, rows: dict[str, tuple[Measured, Measured]]) -> None:
    """(ceiling, held-out row) with the trial and without it, per held-out corpus; the means
    of cross-language hit@3 are over the corpora that label languages."""
    keys = ("hit@3", "MRR", "all silence", "xlang hit@3")
    print(f"\n### {title}: held out (without → with)\n")
    print("| held out | ceiling | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * (len(keys) + 1))
    means: list[list[tuple[float, float]]] = []
    for name, ((ceil_with, with_), (ceil_without, without)) in rows.items():
        cells = [(ceil_without, ceil_with)] + [_pair(without[k], with_[k]) for k in keys]
        means.append(cells)
        print(f"| {name} | " + " | ".join(_cell(a, b) for a, b in cells) + " |")
    mean = np.nanmean(np.array(means), axis=0)
    print("| mean | " + " | ".join(_cell(a, b) for a, b in mean) + " |")


def _pair(without: float | None, with_: float | None) -> tuple[float, float]:
    return (math.nan if without is None else without, math.nan if with_ is None else with_)


def _cell(without: float, with_: float) -> str:
    return "–" if math.isnan(without) else f"{without:.3f} → {with_:.3f}"


TRIALS = (
    "heading",
    "vector",
    "keyword",
    "links",
    "pairs",
    "centroid",
    "note-centroid",
    "bridge",
    "static",
    "static-snippet",
    "learned",
    "prose",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trial", choices=TRIALS, action="append", help="default: all")
    args = parser.parse_args()
    corpora = load_all()
    shipped = {name: dict(c.gather(Variant.NEW.ranking)) for name, c in corpora.items()}
    baseline = {name: measured(corpora, name) for name in corpora}
    fixed: dict[str, ExtraRanking] = {
        "vector": vector_feedback,
        "keyword": keyword_feedback,
        "links": linked_notes,
        "pairs": word_pairs,
    }
    made: dict[str, Callable[[Corpus], ExtraRanking]] = {
        "heading": heading_ranking,
        "centroid": centroid_ranking,
        "note-centroid": lambda corpus: centroid_ranking(corpus, by_note=True),
        "bridge": bridge_ranking,
        "static": static_ranking,
        "static-snippet": lambda corpus: static_ranking(corpus, by_snippet=True),
    }
    for trial in args.trial or TRIALS:
        if trial == "learned":
            learned_order_trial(corpora, baseline)
        elif trial == "prose":
            prose_trial(corpora, shipped, baseline)
        elif trial in made:
            extras = {name: made[trial](c) for name, c in corpora.items()}
            weights = BRIDGE_WEIGHTS if trial == "bridge" else WEIGHTS
            added_ranking_trial(corpora, shipped, baseline, trial, extras, weights)
        else:
            extras = dict.fromkeys(corpora, fixed[trial])
            added_ranking_trial(corpora, shipped, baseline, trial, extras)


if __name__ == "__main__":
    main()
