"""Retrieval quality over the labelled query set, with keyword-only and meaning-only baselines.

Corpus: the real Trilium demo export (../shared/trilium/demo.zip) plus the built-in demo
notebook, served by the fake Trilium and indexed with the real e5 model (the index is kept in
eval/.index so re-runs only embed what changed).

    python eval/evaluate.py                  # print the table
    python eval/evaluate.py --dump out.json  # also write every query's candidates (calibration)
    python eval/evaluate.py --queries eval/heldout.json  # score another query set
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from trilium_recall.classify import Rules
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.demo import NOTEBOOK_DIR
from trilium_recall.embed import E5Embedder
from trilium_recall.fake_trilium import FakeTrilium
from trilium_recall.search import search
from trilium_recall.skip import skip_reason
from trilium_recall.store import Store
from trilium_recall.sync import Syncer
from trilium_recall.trilium import TriliumClient

HERE = Path(__file__).resolve().parent
DEMO_ZIP = HERE.parents[1] / "shared" / "trilium" / "demo.zip"
TOKEN = "eval_token"
MODES = ("hybrid", "keyword", "meaning")


@dataclass
class Scores:
    hits1: list[float] = field(default_factory=list)
    hits3: list[float] = field(default_factory=list)
    reciprocal: list[float] = field(default_factory=list)
    silent: list[float] = field(default_factory=list)

    def row(self) -> dict[str, float]:
        return {
            "hit@1": statistics.fmean(self.hits1),
            "hit@3": statistics.fmean(self.hits3),
            "MRR": statistics.fmean(self.reciprocal),
            "silence": statistics.fmean(self.silent),
        }


def build_index(settings: Settings, corpus_url: str) -> Store:
    async def run() -> None:
        store = Store(settings.db_path)
        instance = settings.instances["eval"]
        async with TriliumClient(corpus_url, TOKEN) as client:
            syncer = Syncer(instance, client, store, E5Embedder(), Rules.from_settings(settings))
            report = await syncer.full()
        print(f"index: {report.indexed} notes (re)indexed, {store.counts('eval')}", file=sys.stderr)
        store.close()

    asyncio.run(run())
    store = Store(settings.db_path)
    store.load_vectors()
    return store


def evaluate(store: Store, settings: Settings, queries: dict, dump: list | None) -> dict[str, dict]:
    embedder = E5Embedder()
    results = {}
    for mode in MODES:
        scores = Scores()
        for item in queries["answerable"]:
            found = _run(store, embedder, settings, item["prompt"], mode, dump)
            expected = set(item["expected"])
            ranks = [i for i, note_id in enumerate(found, start=1) if note_id in expected]
            scores.hits1.append(float(bool(ranks) and ranks[0] == 1))
            scores.hits3.append(float(bool(ranks)))
            scores.reciprocal.append(1 / ranks[0] if ranks else 0.0)
        for item in queries["unrelated"]:
            scores.silent.append(
                float(not _run(store, embedder, settings, item["prompt"], mode, dump))
            )
        results[mode] = scores.row()
    return results


def _run(
    store: Store,
    embedder: E5Embedder,
    settings: Settings,
    prompt: str,
    mode: str,
    dump: list | None,
) -> list[str]:
    if skip_reason(prompt):
        return []
    result = search(store, embedder, settings, prompt, limit=settings.max_passages, mode=mode)
    if dump is not None and mode == "hybrid":
        dump.append({"prompt": prompt, **result.trace.to_json(top=8)})
    return [c.hit.note_id for c in result.passages]


def skip_accuracy(queries: dict) -> dict[str, float]:
    skipped = [bool(skip_reason(item["prompt"])) for item in queries["skip"]]
    searched = [
        not skip_reason(item["prompt"]) for item in queries["answerable"] + queries["unrelated"]
    ]
    return {
        "skip recall": statistics.fmean(skipped),
        "not skipped when it should search": statistics.fmean(searched),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="write every query's candidates here")
    parser.add_argument("--data-dir", type=Path, default=HERE / ".index")
    parser.add_argument(
        "--queries", type=Path, default=HERE / "queries.json", help="labelled query set to score"
    )
    args = parser.parse_args()
    queries = json.loads(args.queries.read_text())
    corpus = FakeTrilium(token=TOKEN)
    corpus.load_export_zip(DEMO_ZIP)
    corpus.load_notebook_dir(NOTEBOOK_DIR)
    corpus.start()
    try:
        base = load_settings({"RECALL_DATA_DIR": str(args.data_dir)})
        instance = Instance("eval", corpus.url(), _token())
        settings = base.model_copy(update={"instances": {"eval": instance}})
        store = build_index(settings, corpus.url())
        dump: list | None = [] if args.dump else None
        results = evaluate(store, settings, queries, dump)
    finally:
        corpus.stop()
    counts = {k: len(v) for k, v in queries.items()}
    print(
        f"queries: {counts['answerable']} answerable, {counts['unrelated']} unrelated, "
        f"{counts['skip']} skip; gate: cosine ≥ {settings.gate_min_cosine}, "
        f"keyword terms ≥ {settings.gate_keyword_terms}"
    )
    print(f"{'mode':<10}{'hit@1':>8}{'hit@3':>8}{'MRR':>8}{'silence':>9}")
    for mode, row in results.items():
        print(
            f"{mode:<10}"
            + "".join(f"{row[k]:>8.3f}" for k in ("hit@1", "hit@3", "MRR"))
            + f"{row['silence']:>9.3f}"
        )
    for name, value in skip_accuracy(queries).items():
        print(f"{name}: {value:.3f}")
    if args.dump:
        args.dump.write_text(json.dumps(dump, indent=1, ensure_ascii=False))


def _token():
    from pydantic import SecretStr

    return SecretStr(TOKEN)


if __name__ == "__main__":
    main()
