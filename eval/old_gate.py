"""The landed product before this gate (commit 15ec4b2: section vectors, per-candidate cosine and
z-score gate, RRF k = 60, area weights 0.7) over the same corpora and prompts, in the same run.

Its source is taken from git (`git archive`) into eval/.old/, its indexes live in
eval/.index-old/, and it runs in a subprocess with that source first on the path, so the two
versions never share a module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

OLD_COMMIT = "15ec4b2"
HERE = Path(__file__).resolve().parent
OLD_SRC = HERE / ".old" / OLD_COMMIT

# Runs inside the subprocess, against the old package.
_RUNNER = r"""
import asyncio, json, sys
from pathlib import Path
from pydantic import SecretStr
from trilium_recall.classify import Rules
from trilium_recall.config import Instance, load_settings
from trilium_recall.embed import E5Embedder
from trilium_recall.fake_trilium import FakeTrilium
from trilium_recall.search import search
from trilium_recall.skip import skip_reason
from trilium_recall.store import Store
from trilium_recall.sync import Syncer
from trilium_recall.trilium import TriliumClient
from trilium_recall.demo import NOTEBOOK_DIR

SHARED = Path(sys.argv[1]).parents[1] / "shared" / "trilium"
LOADERS = {  # as corpora.py, against the old package's fake Trilium
    "demo_zip": lambda fake: fake.load_export_zip(SHARED / "demo.zip"),
    "notebook": lambda fake: fake.load_notebook_dir(NOTEBOOK_DIR),
    "devdocs": lambda fake: fake.load_export_zip(SHARED / "devdocs.zip"),
}
jobs = json.loads(sys.stdin.read())
embedder = E5Embedder()
found = {}
for name, prompts in jobs.items():
    fake = FakeTrilium(token="old_token")
    LOADERS[name](fake)
    fake.start()
    base = load_settings({"RECALL_DATA_DIR": str(Path(sys.argv[2]) / name)})
    instance = Instance("eval", fake.url(), SecretStr("old_token"))
    settings = base.model_copy(update={"instances": {"eval": instance}})

    async def build():
        store = Store(settings.db_path)
        async with TriliumClient(fake.url(), "old_token") as client:
            await Syncer(instance, client, store, embedder, Rules.from_settings(settings)).full()
        store.close()

    asyncio.run(build())
    fake.stop()
    store = Store(settings.db_path)
    store.load_vectors()
    found[name] = {
        p: [] if skip_reason(p) else
        [c.hit.note_id for c in search(store, embedder, settings, p, limit=3).passages]
        for p in prompts
    }
print(json.dumps(found))
"""


def old_source() -> Path:
    """The old commit's `src/`, extracted once."""
    if not (OLD_SRC / "trilium_recall").exists():
        OLD_SRC.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent), "archive", OLD_COMMIT, "src"],
            check=True,
            capture_output=True,
        ).stdout
        with tempfile.TemporaryFile() as handle:
            handle.write(archive)
            handle.seek(0)
            with tarfile.open(fileobj=handle) as tar:
                tar.extractall(OLD_SRC.parent / "tmp", filter="data")
        (OLD_SRC.parent / "tmp" / "src" / "trilium_recall").rename(OLD_SRC / "trilium_recall")
    return OLD_SRC


def old_results(prompts: Mapping[str, list[str]]) -> dict[str, dict[str, list[str]]]:
    """{corpus: {prompt: note ids the old product sent}}."""
    env = {**os.environ, "PYTHONPATH": str(old_source())}
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(HERE), str(HERE / ".index-old")],
        input=json.dumps(prompts),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
