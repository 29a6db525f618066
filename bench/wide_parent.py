"""Issue 26, bad input too big for a test: 50,000 notes under one parent, a tenth of them with
the same text. A first build through the stand-in with a cheap word-hash embedder (the model's
cost is build_bench's; this measures the syncer): wall time, peak RSS, texts embedded, and that
no section or vector is written twice. `python bench/wide_parent.py [notes]`."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from build_bench import INSTANCE, bench_settings

from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.sync.syncer import Syncer
from trilium_recall.trilium.client import TriliumClient

TOKEN = "wideParent_bench"


class WordHashEmbedder:
    name, dim = "bench-word-hash", 384

    def __init__(self) -> None:
        self.texts = 0

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        return vector / max(float(np.linalg.norm(vector)), 1e-9)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return np.stack([self._vector(t) for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._vector(text)


async def build(work: Path, fake: FakeTrilium) -> None:
    settings = bench_settings(work, fake.url(), TOKEN)
    embedder = WordHashEmbedder()
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    client = TriliumClient(fake.url(), TOKEN)
    syncer = Syncer(
        settings.instances[INSTANCE], client, store, embedder, Rules.from_settings(settings)
    )
    try:
        started = time.perf_counter()
        report = await syncer.full()
        took = time.perf_counter() - started
        one = store.db.execute
        sections, fts = (
            one(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("sections", "sections_fts")
        )
        snippets = one("SELECT count(*) FROM snippets").fetchone()[0]
        vectors = one("SELECT count(*) FROM snippet_vectors").fetchone()[0]
        print(f"first build: {report.indexed} notes indexed in {took:.1f} s")
        print(f"sections {sections} (keyword rows {fts}), snippets {snippets} (vectors {vectors})")
        print(f"texts embedded: {embedder.texts}")
    finally:
        await client.aclose()
        store.close()


def main(count: int) -> None:
    fake = FakeTrilium(token=TOKEN)
    fake.add_note("parentAAAAAA", "Inbox", content="<p>everything lands here</p>")
    for n in range(count):
        text = "<p>the same clipped page</p>" if n % 10 == 0 else f"<p>note {n} about item {n}</p>"
        fake.add_note(f"n{n:011d}", f"Clip {n}", parent_id="parentAAAAAA", content=text)
    fake.start()
    try:
        with tempfile.TemporaryDirectory() as work:
            asyncio.run(build(Path(work), fake))
    finally:
        fake.stop()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS (stand-in included, same process): {peak_mb:.0f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notes", nargs="?", type=int, default=50_000, help="notes under the parent")
    main(parser.parse_args().notes)
