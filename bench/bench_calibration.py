"""What the per-notebook calibration (search/calibration.py) costs: the bank's offset, the
notebook's languages and its pseudo-prompts embedded fresh (no cache), on each eval index.

    python bench/bench_calibration.py [corpus ...]     # default: every built eval index

Compare with the time of that index's first build (eval's build log): issue 23 asks that
calibration add at most 10 % to a first build.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from trilium_recall.index.embed import E5Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.search.calibration import pseudo_prompts
from trilium_recall.search.languages import notebook_languages
from trilium_recall.search.null_bank import GenericPrompts

INDEXES = Path(__file__).resolve().parents[1] / "eval" / ".index"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="*", help="eval indexes (default: every one built)")
    built = sorted(p.name for p in INDEXES.glob("*") if (p / "recall.sqlite3").exists())
    names = parser.parse_args().corpora or built
    absent = [n for n in names if n not in built] or ([] if names else ["(none)"])
    if absent:
        sys.exit(f"bench: no eval index {absent[0]} in {INDEXES}: run python eval/evaluate.py")
    model = E5Embedder()
    print("| index | snippets | bank offset s | languages ms | pseudo-prompts | embed + match s |")
    print("|---|---|---|---|---|---|")
    for name in names:
        store = Store(INDEXES / name / "recall.sqlite3", VectorIndex(model.dim, model.name))
        store.load_vectors()
        generic = GenericPrompts.load(model, store)
        started = time.perf_counter()
        generic.calibrated(store.vectors)  # the bank's offset alone, as before issue 23
        offset_s = time.perf_counter() - started
        started = time.perf_counter()
        notebook_languages(store.term_document_counts)
        languages_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        prompts, _ = pseudo_prompts(store)
        queries = model.queries(prompts)  # fresh: the index's cache is not read
        store.vectors.best_cosines(queries, store.exact_vectors)
        pseudo_s = time.perf_counter() - started
        print(
            f"| {name} | {len(store.vectors)} | {offset_s:.2f} | {languages_ms:.1f} "
            f"| {len(prompts)} | {pseudo_s:.2f} |"
        )
        store.close()
    model.close()


if __name__ == "__main__":
    main()
