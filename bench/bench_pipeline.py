"""Issue 23's search pipeline against the landed one, in-process, same run: gather + decide for
every labelled prompt of an eval index, query vectors read from eval's cache (the model's time
is the same for both), the two alternating prompt by prompt.

    python bench/bench_pipeline.py notebook handbook

"landed" is eval/fit.py's `LANDED_RANKING` with its landed gate `LANDED`: no code-phrase
query, no evidence windows, no fusion-order rule. The language check runs in both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
from corpora import HERE, corpus_settings, labelled_set
from fit import LANDED, LANDED_RANKING

from trilium_recall.index.embed import E5Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.search.gate import FITTED
from trilium_recall.search.hybrid import RANKING, decide, gather
from trilium_recall.search.null_bank import GenericPrompts


class Cached:
    name, dim = E5Embedder.name, 384  # the bank's shipped vectors are keyed on it

    def __init__(self) -> None:
        with np.load(HERE / ".index" / "queries.npz") as data:
            self.seen = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def query(self, text: str) -> np.ndarray:
        return self.seen[text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", help="eval indexes in eval/.index/ (e.g. notebook)")
    names = parser.parse_args().corpora
    absent = [n for n in ("queries.npz", *names) if not (HERE / ".index" / n).exists()]
    if absent:
        sys.exit(f"bench: eval/.index/{absent[0]} not found: run python eval/evaluate.py first")
    embedder = Cached()
    print("| index | prompts | landed p50 / p95 ms | new p50 / p95 ms | p50 difference ms |")
    print("|---|---|---|---|---|")
    for name in names:
        store = Store(HERE / ".index" / name / "recall.sqlite3", VectorIndex(384))
        store.load_vectors()
        settings = corpus_settings(HERE / ".index" / name)
        generic = GenericPrompts.load(embedder, store).calibrated(store.vectors)  # type: ignore[arg-type]
        answerable, unrelated = labelled_set(name, HERE / "sets")
        prompts = [i["prompt"] for i in answerable + unrelated if i["prompt"] in embedder.seen]
        times: dict[str, list[float]] = {"landed": [], "new": []}
        for _ in range(3):
            for prompt in prompts:
                for label, ranking, gate in (
                    ("landed", LANDED_RANKING, LANDED),
                    ("new", RANKING, FITTED),
                ):
                    started = time.perf_counter()
                    decide(
                        store,
                        settings,
                        gather(store, embedder, generic, settings, prompt, None, ranking),
                        gate,
                    )  # type: ignore[arg-type]
                    times[label].append((time.perf_counter() - started) * 1000)
        p50 = {k: statistics.median(v) for k, v in times.items()}
        p95 = {k: float(np.percentile(v, 95)) for k, v in times.items()}
        print(
            f"| {name} | {len(prompts)} × 3 | {p50['landed']:.2f} / {p95['landed']:.2f} "
            f"| {p50['new']:.2f} / {p95['new']:.2f} | {p50['new'] - p50['landed']:+.2f} |"
        )
        store.close()


if __name__ == "__main__":
    main()
