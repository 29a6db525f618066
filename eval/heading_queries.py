"""Would one more ranking raise recall: sections by their heading path, embedded as a query?

Issue 23, Build 6 (vocabulary). A prompt and a heading are both short names of a topic, so each
section's "title: heading path" is embedded with the `query: ` prefix (the query–query pairing),
ranked by cosine to the prompt and fused as one more RRF ranking at weight w. The snippets
already carry the heading path in their `passage: ` text; this asks whether the symmetric
pairing adds to it. Everything else is evaluate.py's: for each corpus held out, w is chosen on
the other corpora (best mean gate-open hit@3), the gate refitted on them over the re-fused
searches, and the held-out corpus scored. Measurement only: the product has no such ranking
(eval/RESULTS.md says what it would cost). Sections only the heading ranking finds are not
added (their keyword evidence was never computed), so the gain is a lower bound.

    python eval/heading_queries.py
"""

from __future__ import annotations

import statistics
from dataclasses import replace

import evaluate
import numpy as np
from evaluate import Corpus, fit, load_all, opened, product, score
from fit import Variant

from trilium_recall.notes.records import SectionHit
from trilium_recall.search import hybrid
from trilium_recall.search.gate import FITTED
from trilium_recall.search.hybrid import Gathered, best_per_note
from trilium_recall.search.triage import triage

WEIGHTS = (0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
HEADING_K = 40  # as deep as the keyword and meaning rankings


def every_section(corpus: Corpus) -> dict[int, SectionHit]:
    with corpus.store.atomic() as db:
        ids = [row[0] for row in db.execute("SELECT id FROM sections")]
    return corpus.store.section_hits(ids)


def heading_text(hit: SectionHit) -> str:
    """What a person would call the section: its note's title and its heading path."""
    if not hit.heading or hit.heading == hit.title:
        return hit.title
    return f"{hit.title}: {hit.heading}"


def heading_rankings(corpus: Corpus) -> dict[str, list[int]]:
    """Per searched prompt: the HEADING_K section ids best by their heading's query–query
    cosine, best first."""
    hits = every_section(corpus)
    ids = list(hits)
    texts = [heading_text(hit) for hit in hits.values()]
    unique = sorted(set(texts))  # a heading path shared by several sections is embedded once
    row_of = {text: i for i, text in enumerate(unique)}
    matrix = evaluate.EMBEDDER.queries(unique)[[row_of[t] for t in texts]]
    rankings = {}
    for prompt in corpus.gather(Variant.NEW.ranking):
        cosines = matrix @ evaluate.EMBEDDER.query(triage(prompt).text)
        rankings[prompt] = [ids[i] for i in np.argsort(-cosines, kind="stable")[:HEADING_K]]
    return rankings


def with_heading_ranking(gathered: Gathered, ranked: list[int], weight: float) -> Gathered:
    """The same search with the heading ranking fused in at `weight` (the product's RRF)."""
    added = hybrid.rrf([(ranked, weight)])
    sections = []
    for c in gathered.sections:
        fused = c.fused + added.get(c.hit.section_id, 0.0)
        sections.append(replace(c, fused=fused, score=fused * c.weight))
    sections.sort(key=lambda c: -c.score)
    return replace(gathered, sections=sections, candidates=best_per_note(sections))


def main() -> None:
    corpora = load_all()
    ranking = Variant.NEW.ranking
    shipped = {name: dict(c.gather(ranking)) for name, c in corpora.items()}
    rankings = {name: heading_rankings(c) for name, c in corpora.items()}

    def use(weight: float) -> None:
        """Every corpus's searches re-fused at `weight`, put where evaluate.py's fitting and
        scoring read them (each corpus's searches by ranking)."""
        for name, c in corpora.items():
            c.gathered[ranking] = {
                p: with_heading_ranking(g, rankings[name][p], weight)
                for p, g in shipped[name].items()
            }

    ceiling: dict[float, dict[str, float]] = {}
    for weight in WEIGHTS:
        use(weight)
        ceiling[weight] = {
            name: score([c], product(opened(FITTED), ranking))["hit@3"] or 0.0
            for name, c in corpora.items()
        }
    print("gate-open hit@3 by heading weight (the shipped gate's candidate rule):\n")
    print("| w | " + " | ".join(corpora) + " | mean |")
    print("|---|" + "---|" * (len(corpora) + 1))
    for weight, row in ceiling.items():
        cells = " | ".join(f"{row[n]:.3f}" for n in corpora)
        print(f"| {weight} | {cells} | {statistics.fmean(row.values()):.3f} |")

    print("\nheld out (w chosen and the gate fitted on the other corpora):\n")
    print("| held out | w | hit@3 | silence | ceiling | hit@3 at w=0 | silence at w=0 |")
    print("|---|---|---|---|---|---|---|")
    for name, corpus in corpora.items():
        others = [n for n in corpora if n != name]
        chosen = max(WEIGHTS, key=lambda w: statistics.fmean(ceiling[w][n] for n in others))
        row = {}
        for weight in (chosen, 0.0):
            use(weight)
            train = [c for n, c in corpora.items() if n != name]
            gate = fit(train, Variant.NEW)
            row[weight] = score([corpus], product(gate, ranking))
        print(
            f"| {name} | {chosen} | {row[chosen]['hit@3']:.3f} | {row[chosen]['all silence']:.3f}"
            f" | {ceiling[chosen][name]:.3f} | {row[0.0]['hit@3']:.3f}"
            f" | {row[0.0]['all silence']:.3f} |"
        )


if __name__ == "__main__":
    main()
