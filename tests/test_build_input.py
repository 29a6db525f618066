"""A build over awkward notebooks embeds each text once and writes each section once (issue 26).

Against the stand-in over real HTTP, into a real SQLite file, with the counting hash embedder.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import HashEmbedder, make_settings
from standin_edits import EditableTrilium
from trilium_recall.config import Instance
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.sync.plan import plan
from trilium_recall.sync.syncer import Syncer
from trilium_recall.trilium.client import TriliumClient

TOKEN = "inputTest_secret"


@dataclass
class Build:
    trilium: EditableTrilium
    syncer: Syncer
    embedder: HashEmbedder
    store: Store

    def count(self, table: str) -> int:
        return self.store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
async def build(tmp_path: Path) -> AsyncIterator[Build]:
    trilium = EditableTrilium(token=TOKEN)
    trilium.start()
    settings = make_settings(tmp_path)
    embedder = HashEmbedder()
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    client = TriliumClient(trilium.url(), TOKEN)
    instance = Instance("default", trilium.url(), settings.instances["default"].token)
    syncer = Syncer(instance, client, store, embedder, Rules.from_settings(settings))
    try:
        yield Build(trilium, syncer, embedder, store)
    finally:
        await client.aclose()
        store.close()
        trilium.stop()


def assert_no_duplicates(build: Build) -> None:
    """One keyword row per section, one vector per snippet, no text embedded twice."""
    assert build.count("sections_fts") == build.count("sections")
    assert build.count("snippet_vectors") == build.count("snippets")
    twice = [t for t, n in Counter(build.embedder.passage_calls).items() if n > 1]
    assert twice == []


async def test_the_same_text_in_a_thousand_notes_is_embedded_once(build: Build) -> None:
    body = "<h2>Backups</h2><p>restic runs nightly to the NAS and keeps 30 days.</p>"
    for n in range(1000):
        build.trilium.add_note(f"copy{n:08d}", "Runbook", content=body)
    report = await build.syncer.full()
    assert report.indexed == 1000
    per_note = build.count("snippets") // 1000
    assert per_note >= 1 and build.count("snippets") == 1000 * per_note
    assert len(build.embedder.passage_calls) == per_note  # one note's snippets, once
    assert_no_duplicates(build)


async def test_a_moved_note_is_not_embedded_again(build: Build) -> None:
    build.trilium.add_note("shelfAAAAAAA", "Shelf", content="<p>a shelf</p>")
    build.trilium.add_note("boxBBBBBBBBB", "Box", content="<p>a box</p>")
    build.trilium.add_note(
        "paperCCCCCCC", "Paper", parent_id="shelfAAAAAAA", content="<p>taxes 2024</p>"
    )
    await build.syncer.full()
    build.embedder.passage_calls.clear()
    build.trilium.move("paperCCCCCCC", "shelfAAAAAAA", "boxBBBBBBBBB")
    await build.syncer.full()
    (paths,) = build.store.db.execute(
        "SELECT paths FROM notes WHERE note_id = 'paperCCCCCCC'"
    ).fetchone()
    assert "Box" in paths and "Shelf" not in paths
    assert build.embedder.passage_calls == []


async def test_a_five_megabyte_note_is_indexed_whole(build: Build) -> None:
    paragraph = "<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>"
    body = paragraph * (5_000_000 // len(paragraph)) + "<p>the last line mentions zanzibar</p>"
    assert len(body) >= 4_900_000
    build.trilium.add_note("hugeAAAAAAAA", "Huge", content=body)
    report = await build.syncer.full()
    assert report.indexed == 1 and report.failed == []
    (last,) = build.store.db.execute(
        "SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'zanzibar'"
    ).fetchone()
    assert last == 1  # the end of the note is there too
    assert_no_duplicates(build)


async def test_a_note_with_ten_thousand_headings_is_indexed_whole(build: Build) -> None:
    body = "".join(f"<h2>Step {n}</h2><p>turn knob {n}</p>" for n in range(10_000))
    build.trilium.add_note("stepsAAAAAAA", "Steps", content=body)
    report = await build.syncer.full()
    assert report.indexed == 1 and report.failed == []
    # Tiny sections are merged with their neighbours; every step's text is in one of them.
    text = " ".join(t for (t,) in build.store.db.execute("SELECT text FROM sections"))
    assert set(re.findall(r"turn knob (\d+)", text)) == {str(n) for n in range(10_000)}
    assert_no_duplicates(build)
    build.embedder.passage_calls.clear()
    assert (await build.syncer.full()).indexed == 0  # unchanged: read and embedded no more
    assert build.embedder.passage_calls == []


async def test_a_build_reads_wiki_notes_first_then_the_most_recently_edited(
    build: Build,
) -> None:
    add = build.trilium.add_note
    add("otherOldAAAA", "Old errand", content="<p>old</p>")  # each added note is newer
    add("wikiRootAAAA", "Wiki", content="<p>the wiki</p>")
    add("wikiPageAAAA", "Page", parent_id="wikiRootAAAA", content="<p>a page</p>")
    add("otherNewAAAA", "New errand", content="<p>new</p>")
    build.trilium.backdate("wikiPageAAAA", datetime(2020, 1, 1, tzinfo=UTC))  # old, still first
    notes = await build.syncer.client.all_notes()
    tree = {note.note_id: note for note in notes}
    decided = plan(notes, tree, {}, build.syncer.rules, "default", full=True)
    order = [note.note_id for note, _ in decided.to_read if note.note_id.endswith("AAAA")]
    assert order == ["wikiRootAAAA", "wikiPageAAAA", "otherNewAAAA", "otherOldAAAA"]
