"""Shared fixtures: a deterministic fake embedder and a real SQLite index in tmp_path."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
import numpy as np
import pytest

from chromium import CHROMIUM, CHROMIUM_ARGS
from trilium_recall.config import Instance, Settings, load_settings
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.records import NoteRecord, SectionInput, SnippetInput, text_hash
from trilium_recall.notes.sections import Section
from trilium_recall.notes.snippets import split_snippets
from trilium_recall.search.gate import FITTED

if TYPE_CHECKING:  # the engine's imports are heavy; most tests never start one
    from trilium_recall.server.engine import Engine

# The `engine` and `client` fixtures of the auth tests (a served app, an OAuth client).
pytest_plugins = ["auth_flow"]

# Third-party files (Trilium's exports and specs, the other corpora) live in a `shared` folder
# that only some machines have. SHARED_DIR names it; by default it is `shared` beside the
# checkout. Tests that read it use `shared_file()` and so carry the `shared` marker: they skip,
# naming the file, where it is missing, unless SHARED_REQUIRED=1 (CI's second pass), which
# turns the skip into a failure so a missing file cannot hide there.
_SHARED_DIR: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _SHARED_DIR
    named = os.environ.get("SHARED_DIR", "").strip()
    _SHARED_DIR = Path(named) if named else config.rootpath.parent / "shared"


def shared_dir() -> Path:
    assert _SHARED_DIR is not None, "pytest_configure has not run"
    return _SHARED_DIR


def shared_file(relative: str) -> Path:
    """The shared file `relative` (e.g. "trilium/demo.zip"), or a skip that names it.

    A zip is opened and its directory read, so a truncated download is reported here, naming the
    file, and not as an unrelated error deep inside a fixture."""
    path = shared_dir() / relative
    problem = None
    if not path.is_file():
        problem = f"needs shared file {relative}: not found at {path}"
    elif path.suffix == ".zip":
        try:
            with zipfile.ZipFile(path) as archive:
                archive.namelist()
        except (zipfile.BadZipFile, OSError) as exc:
            problem = f"needs shared file {relative}: {path} is not a readable zip ({exc})"
    if problem is None:
        return path
    if os.environ.get("SHARED_REQUIRED") == "1":
        pytest.fail(problem, pytrace=False)
    pytest.skip(problem)


@pytest.fixture(scope="session")
def demo_zip() -> Path:
    """Trilium's own demo export (third-party: shared-marked, skips where it is absent)."""
    return shared_file("trilium/demo.zip")


@pytest.fixture(scope="session")
def etapi_spec() -> Path:
    """ETAPI's OpenAPI spec as of Trilium 0.93 (shared-marked)."""
    return shared_file("trilium/etapi.openapi.yaml")


@pytest.fixture(scope="session")
def newest_spec() -> Path:
    """ETAPI's OpenAPI spec of the newest Trilium (shared-marked)."""
    return shared_file("trilium/etapi-newest.openapi.yaml")


class HashEmbedder:
    """Bag-of-words vectors: texts sharing words get high cosine. Counts every passage."""

    name = "hash-test"
    dim = 384

    def __init__(self) -> None:
        self.passage_calls: list[str] = []
        self.fail_after: int | None = None  # raise after this many passages (crash tests)

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and len(self.passage_calls) + len(texts) > self.fail_after:
            raise RuntimeError("embedder failure injected by the test")
        self.passage_calls.extend(texts)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))


# Passes every prompt and every candidate: for tests of what happens around the gate.
OPEN = replace(FITTED, bias=100.0, neighbour_cosine_gap=1.0)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


async def health_when(
    engine: Engine, predicate: Callable[[dict], bool], timeout: float = 30
) -> dict:
    """An in-process engine's health once `predicate` holds for it (polled; TimeoutError with
    the last health after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        health = engine.health()
        if predicate(health):
            return health
        await asyncio.sleep(0.05)
    raise TimeoutError(engine.health())


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    instance = Instance("default", "http://trilium.test", token=_secret("tok_secret"))
    overrides.setdefault("instances", {"default": instance})
    # A generous budget: see engine_process.TEST_BUDGET_MS.
    overrides.setdefault("time_budget_ms", 60_000.0)
    return load_settings({"RECALL_DATA_DIR": str(data_dir)}, **overrides)


def _secret(value: str):
    from pydantic import SecretStr

    return SecretStr(value)


def add_note(
    store: Store,
    embedder: HashEmbedder,
    note_id: str,
    title: str,
    sections: Sequence[tuple[str, str]],
    *,
    area: str = "other",
    path: str = "Notes",
    links: Sequence[tuple[str, str]] = (),
    instance: str = "default",
    parents: tuple[str, ...] = ("root",),
) -> None:
    """Write a note straight into the index, as the syncer would."""
    record = NoteRecord(
        instance,
        note_id,
        title,
        "text",
        "text/html",
        area,
        (path,),
        parents,
        "blob-" + note_id,
        text_hash(json.dumps(list(sections))),  # as the syncer hashes the content it read
        "2026-01-01 00:00:00.000Z",
        "fp",
    )
    rows = []
    for ordinal, (heading, text) in enumerate(sections):
        snippets = [
            SnippetInput(
                snippet.start,
                snippet.end,
                text_hash(snippet.text),
                embedder.passages([snippet.text])[0],
            )
            for snippet in split_snippets(title, Section(ordinal, heading, text))
        ]
        rows.append(SectionInput(ordinal, heading, text, f"{note_id}-{ordinal}", snippets))
    store.save_note(record, rows, links)


def undo_m019(db: apsw.Connection) -> None:
    """Take migration m019 back (in a write transaction): no hubness beside the codes (where
    the codes are still there)."""
    columns = [row[1] for row in db.execute("PRAGMA table_info(snippet_codes)")]
    if "hubness" in columns:
        db.execute("ALTER TABLE snippet_codes DROP COLUMN hubness")


def reopened_at_schema(store: Store, version: int) -> Store:
    """Close `store` as a file of schema `version` was (m019 taken back below 19: every test of
    an older schema starts after m014) and open it again, so the migrations since run."""
    with store.atomic() as db:
        if version < 19:
            undo_m019(db)
        db.execute(f"PRAGMA user_version = {version}")
    store.close()
    return Store(store.path, VectorIndex(store.vectors.dim, store.vectors.model))


def undo_m014(db: apsw.Connection) -> None:
    """Take migrations m019 and m014 back (in a write transaction): no snippet hashes, the
    embedding cache (empty) and no query cache, as a file of schema 13 was. Tests of older
    schemas start here."""
    undo_m019(db)
    db.execute("DROP INDEX snippets_by_hash")
    db.execute("ALTER TABLE snippets DROP COLUMN hash")
    db.execute("DROP TABLE query_cache")
    db.execute(
        "CREATE TABLE embedding_cache (hash TEXT NOT NULL, model TEXT NOT NULL, "
        "vector BLOB NOT NULL, PRIMARY KEY (hash, model))"
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(tmp_path / "recall.sqlite3", VectorIndex(HashEmbedder.dim))
    yield opened
    opened.close()


PASSWORD = "test-password-Quokka-42"

# The built-in demo notebook's answer to one prompt, as the shipped gate gives it: the note and
# its child script (an equally good answer). The journal day that restored from it stays out:
# since the keyword index stems, the note matches every word of the prompt ("backups") and the
# day only two of three. Sorted: which of the note and its script comes first is the ranking's
# call (it changed with the snippets).
RESTIC = "EHNWLmkEi2qa"  # "Backups (restic)"
RESTIC_SCRIPT = "3KuZbB1SI2Nr"  # "restic-backup.sh"
RESTIC_PROMPT = "how do I restore my restic backup?"
RESTIC_ANSWER = sorted([RESTIC, RESTIC_SCRIPT])


class DemoEngine:
    """The real engine (real e5 model) over the built-in demo notebook, shared per session."""

    def __init__(self, trilium, process) -> None:
        self.trilium = trilium
        self.process = process
        self.url = process.url
        self.password = PASSWORD
        self.headers = {"Authorization": f"Bearer {PASSWORD}"}
        self.data_dir = Path(process.env["RECALL_DATA_DIR"])


# Fixtures that read the shared folder: a test using any of them is marked `shared`.
SHARED_FIXTURES = {"demo_zip", "devdocs_zip", "etapi_spec", "newest_spec"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the real engine (and so the real model) is `slow`; the rest run
    in the fast loop, `pytest -m "not slow"`. Every test that reads the shared folder through a
    fixture is `shared` (`pytest -m shared` runs just those)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "demo_engine" in fixtures:
            item.add_marker(pytest.mark.slow)
        if fixtures & SHARED_FIXTURES:
            item.add_marker(pytest.mark.shared)


@pytest.fixture(scope="session")
def demo_engine(tmp_path_factory):
    """Built once: ~15 s of embedding on 2 cores. Tests must not mutate its notebook."""
    from engine_process import EngineProcess
    from trilium_recall.demo.mode import NOTEBOOK_DIR
    from trilium_recall.demo.standin import FakeTrilium

    trilium = FakeTrilium(token="demoEngine_token")
    trilium.load_notebook_dir(NOTEBOOK_DIR)
    trilium.start()
    data_dir = tmp_path_factory.mktemp("demo-engine")
    process = EngineProcess(
        data_dir,
        {
            "TRILIUM_URL": trilium.url(),
            "TRILIUM_ETAPI_TOKEN": "demoEngine_token",
            "RECALL_LOGIN_PASSWORD": PASSWORD,
        },
    ).start()
    try:
        process.wait_for("ok")
        yield DemoEngine(trilium, process)
    finally:
        process.stop()
        trilium.stop()


@pytest.fixture
def browser():
    """Headless Debian Chromium (tests/chromium.py); the browser tests skip without it."""
    from playwright.sync_api import sync_playwright  # only the browser tests pay for it

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def notebook_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in demo notebook exported as Trilium would: the project's own demo.zip."""
    from export_zip import write_notebook_zip
    from trilium_recall.demo.mode import NOTEBOOK_DIR

    folder = tmp_path_factory.mktemp("notebook-zip")
    return write_notebook_zip(NOTEBOOK_DIR, folder / "notebook.zip")
