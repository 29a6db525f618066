"""The three evaluation corpora, each served by the fake Trilium and indexed with the real model.

- `demo_zip`: Trilium's own demo notebook, a real HTML export (../shared/trilium/demo.zip);
- `notebook`: the built-in demo notebook of this package (an LLM wiki, a journal, tech notes);
- `devdocs`: Trilium's developer guide and release notes, a real export (devdocs.zip).

Each index lives in `eval/.index/<corpus>/`, so a re-run only embeds text it has not seen.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from trilium_recall.classify import Rules
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.demo import NOTEBOOK_DIR
from trilium_recall.embed import Embedder
from trilium_recall.standin import FakeTrilium
from trilium_recall.store import Store
from trilium_recall.sync import Syncer
from trilium_recall.trilium import TriliumClient
from trilium_recall.vectors import VectorIndex

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "trilium"
TOKEN = "eval_token"
INSTANCE = "eval"

LOADERS: dict[str, Callable[[FakeTrilium], None]] = {
    "demo_zip": lambda fake: fake.load_export_zip(SHARED / "demo.zip"),
    "notebook": lambda fake: fake.load_notebook_dir(NOTEBOOK_DIR),
    "devdocs": lambda fake: fake.load_export_zip(SHARED / "devdocs.zip"),
}
CORPORA = tuple(LOADERS)


def corpus_settings(data_dir: Path, url: str = "http://eval.invalid") -> Settings:
    """Default settings (the shipped gate) pointed at one corpus's index directory."""
    base = load_settings({"RECALL_DATA_DIR": str(data_dir)})
    instance = Instance(INSTANCE, url, SecretStr(TOKEN))
    return base.model_copy(update={"instances": {INSTANCE: instance}})


def open_corpus(name: str, embedder: Embedder, index_dir: Path = HERE / ".index") -> Store:
    """Sync the corpus into its index (embedding only new text) and open it for search."""
    fake = FakeTrilium(token=TOKEN)
    LOADERS[name](fake)
    fake.start()
    settings = corpus_settings(index_dir / name, fake.url())
    try:
        asyncio.run(_sync(settings, fake.url(), embedder))
    finally:
        fake.stop()
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    store.load_vectors()
    return store


async def _sync(settings: Settings, url: str, embedder: Embedder) -> None:
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    try:
        async with TriliumClient(url, TOKEN) as client:
            syncer = Syncer(
                settings.instances[INSTANCE], client, store, embedder, Rules.from_settings(settings)
            )
            report = await syncer.full()
        counts = store.counts(INSTANCE)
        print(
            f"{Path(settings.data_dir).name}: {report.indexed} notes (re)indexed, {counts}",
            file=sys.stderr,
        )
    finally:
        store.close()
