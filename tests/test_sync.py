"""Sync against the fake Trilium over real HTTP, into a real SQLite index (hash embedder)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import HashEmbedder, make_settings, undo_m014
from standin_edits import EditableTrilium
from standin_faults import FaultyTrilium
from trilium_recall.config import Instance
from trilium_recall.errors import TriliumError
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.notes.records import text_hash
from trilium_recall.notes.sections import Section
from trilium_recall.notes.snippets import split_snippets
from trilium_recall.search.dates.filed import filed_on
from trilium_recall.search.dates.prompt import prompt_dates
from trilium_recall.server.overview import failed_notes
from trilium_recall.sync.run_status import SyncStatus
from trilium_recall.sync.schedule import run_forever
from trilium_recall.sync.syncer import NOTES_PER_ROUND, Syncer
from trilium_recall.sync.watermark import moved_mark
from trilium_recall.trilium.client import TriliumClient

TOKEN = "syncTest_secret"


def _label(name: str, value: str = "", inheritable: bool = False) -> dict:
    return {"type": "label", "name": name, "value": value, "inheritable": inheritable}


def seed_extras(trilium: EditableTrilium) -> None:
    """A second small LLM wiki, excluded notes, an image: cases beside those of the export."""
    add = trilium.add_note
    add("wikiRootAAAA", "LLM Wiki")
    add(
        "rawRootAAAAA",
        "Raw",
        parent_id="wikiRootAAAA",
        attributes=[_label("wikiLayer", "raw", True)],
    )
    add(
        "rawNoteAAAAA",
        "Call with storage vendor",
        parent_id="rawRootAAAAA",
        content="<p>Storage vendor call: renewal at 40 TB, discount code ZX42.</p>",
    )
    add("wikiLayerAAA", "Wiki", parent_id="wikiRootAAAA")
    add(
        "summariesAAA",
        "Summaries",
        parent_id="wikiLayerAAA",
        attributes=[_label("wikiLayer", "summary", True)],
    )
    add(
        "summaryAAAAA",
        "Storage vendor summary",
        parent_id="summariesAAA",
        content="<h2>Outcome</h2><p>We renew the storage contract.</p>",
        attributes=[{"type": "relation", "name": "derivedFrom", "value": "rawNoteAAAAA"}],
    )
    add("locksAAAAAAA", "Locks", parent_id="wikiRootAAAA")
    add(
        "lockNoteAAAA",
        "ingest lock",
        parent_id="locksAAAAAAA",
        content="<p>storage vendor lock</p>",
    )
    add(
        "templNoteAAA",
        "Summary template",
        parent_id="wikiLayerAAA",
        attributes=[_label("template")],
        content="<p>template body</p>",
    )
    add("archiveAAAAA", "Archive", attributes=[_label("archived", inheritable=True)])
    add("oldNoteAAAAA", "Old storage plan", parent_id="archiveAAAAA", content="<p>old plan</p>")
    add("secretAAAAAA", "Bank", is_protected=True, content="<p>ciphertext</p>")
    add("techAAAAAAAA", "Tech notes", content="<p>Assorted notes.</p>")
    add(
        "resticAAAAAA",
        "Restic backups",
        parent_id="techAAAAAAAA",
        content="<h2>Restore</h2><p>restic restore latest --target /srv</p>"
        "<h2>Schedule</h2><p>nightly at 02:00</p>",
    )
    add("imageAAAAAAA", "Diagram", parent_id="techAAAAAAAA", type="image", mime="image/png")


@contextmanager
def served(export: Path) -> Iterator[EditableTrilium]:
    """A fake Trilium holding an export zip and the extras."""
    fake = EditableTrilium(token=TOKEN)
    fake.load_export_zip(export)
    seed_extras(fake)
    with fake:
        yield fake


@pytest.fixture
def trilium(notebook_zip: Path) -> Iterator[EditableTrilium]:
    """The built-in notebook, exported as Trilium would, plus the extras."""
    with served(notebook_zip) as fake:
        yield fake


class Harness:
    def __init__(self, trilium: EditableTrilium, tmp_path, embedder: HashEmbedder) -> None:
        self.settings = make_settings(tmp_path)
        self.instance = Instance("default", trilium.url(), self.settings.instances["default"].token)
        self.embedder = embedder
        self.store = Store(self.settings.db_path, VectorIndex(embedder.dim, embedder.name))
        self.client = TriliumClient(trilium.url(), TOKEN)
        self.syncer = Syncer(
            self.instance, self.client, self.store, embedder, Rules.from_settings(self.settings)
        )

    def notes(self) -> dict[str, tuple[str, str | None]]:
        rows = self.store.db.execute("SELECT note_id, area, skip_reason FROM notes")
        return {note_id: (area, reason) for note_id, area, reason in rows}

    def indexed(self) -> set[str]:
        return {n for n, (_, reason) in self.notes().items() if reason is None}

    def table_mentions(self, note_id: str) -> dict[str, int]:
        db = self.store.db
        ids = [r[0] for r in db.execute("SELECT id FROM sections WHERE note_id = ?", (note_id,))]
        marks = ",".join("?" * len(ids)) or "NULL"
        return {
            "notes": db.execute(
                "SELECT count(*) FROM notes WHERE note_id = ?", (note_id,)
            ).fetchone()[0],
            "sections": len(ids),
            "fts": db.execute(
                f"SELECT count(*) FROM sections_fts WHERE rowid IN ({marks})", ids
            ).fetchone()[0],
            "vectors": db.execute(
                "SELECT count(*) FROM snippet_vectors WHERE rowid IN "
                f"(SELECT id FROM snippets WHERE section_id IN ({marks}))",
                ids,
            ).fetchone()[0],
            "links": db.execute(
                "SELECT count(*) FROM links WHERE source_id = ? OR target_id = ?",
                (note_id, note_id),
            ).fetchone()[0],
        }

    async def close(self) -> None:
        await self.client.aclose()
        self.store.close()


@pytest.fixture
async def harness(trilium, tmp_path):
    h = Harness(trilium, tmp_path, HashEmbedder())
    yield h
    await h.close()


def _text_and_code_ids(export: Path) -> set[str]:
    """The export's text and code notes, templates left out."""
    meta = json.loads(zipfile.ZipFile(export).read("!!!meta.json"))
    found: set[str] = set()

    def walk(entry: dict) -> None:
        if (
            entry.get("type") in ("text", "code")
            and not entry.get("isClone")
            and entry.get("noteId") != "root"
        ):
            own = {a["name"] for a in entry.get("attributes", []) if a["type"] == "label"}
            if "template" not in own:
                found.add(entry["noteId"])
        for child in entry.get("children", []):
            walk(child)

    for entry in meta["files"]:
        walk(entry)
    return found


# The built-in notebook's notes that are not indexed, and why.
NOTEBOOK_SKIPPED = {
    "SWFuanMWmu8q": "archived",  # Archive (#archived, inheritable) and its children
    "gZZ1nZwuqEwI": "archived",
    "926URgysysPz": "archived",
    "OdikvkB2ZrB7": "archived",
    "kOAm0NqhckBu": "plumbing",  # LLM Wiki/Locks
    "8IUgBtdVgQWW": "plumbing",
    "kJzchC1GZAxW": "plumbing",  # LLM Wiki/Templates
    "Cot5rlkoHdGL": "plumbing",
    "g6eLoNRww7Ez": "plumbing",  # LLM Wiki/Views
    "7vF7dRdD9La0": "plumbing",
    "mLP0IgGSxH3Q": "protected",  # Personal/Recovery codes
}


@pytest.mark.parametrize(
    ("source", "day_note", "skipped"),
    [
        ("notebook", "KyGxfC5ueh8v", NOTEBOOK_SKIPPED),
        pytest.param("demo", "ZZz9RKYGLcK7", {}, marks=pytest.mark.shared),
    ],
)
async def test_full_build_indexes_what_it_should_and_nothing_else(
    request: pytest.FixtureRequest, tmp_path: Path, source: str, day_note: str, skipped: dict
) -> None:
    export = request.getfixturevalue(f"{source}_zip")  # Trilium's demo.zip: where present
    with served(export) as trilium:
        harness = Harness(trilium, tmp_path, HashEmbedder())
        try:
            report = await harness.syncer.full()
            notes, indexed = harness.notes(), harness.indexed()
            state = harness.store.instance_state("default")
            links = harness.store.linked_from("default", ["rawNoteAAAAA"], ("derivedFrom",))
        finally:
            await harness.close()
    assert _text_and_code_ids(export) - set(skipped) <= indexed
    assert {n: reason for n, (_, reason) in notes.items() if n in skipped} == skipped
    assert {"rawNoteAAAAA", "summaryAAAAA", "resticAAAAAA", "techAAAAAAAA"} <= indexed
    assert notes["oldNoteAAAAA"][1] == "archived" and notes["archiveAAAAA"][1] == "archived"
    assert notes["secretAAAAAA"][1] == "protected"
    assert notes["lockNoteAAAA"][1] == "plumbing" and notes["locksAAAAAAA"][1] == "plumbing"
    assert notes["templNoteAAA"][1] == "plumbing"
    assert notes["imageAAAAAAA"][1] == "type"
    assert not any(n.startswith("_") for n in indexed)
    assert notes["rawNoteAAAAA"][0] == "sources" and notes["summaryAAAAA"][0] == "wiki"
    assert notes["resticAAAAAA"][0] == "other"
    assert notes[day_note][0] == "journal"  # a day note under the #calendarRoot journal
    assert report.indexed == len(indexed)
    assert state["build_complete"] == 1
    assert links == {"rawNoteAAAAA": ["summaryAAAAA"]}


async def test_minute_tick_reembeds_only_the_edited_note(harness, trilium) -> None:
    await harness.syncer.full()
    harness.embedder.passage_calls.clear()
    trilium.set_content(
        "resticAAAAAA",
        "<h2>Restore</h2><p>restic restore latest --target /mnt/restore</p>"
        "<h2>Schedule</h2><p>nightly at 02:00</p>",
    )
    report = await harness.syncer.tick()
    assert report.indexed == 1
    assert len(harness.embedder.passage_calls) == 1  # only the changed section; the other is cached
    assert "/mnt/restore" in harness.embedder.passage_calls[0]
    texts = [
        r[0]
        for r in harness.store.db.execute(
            "SELECT text FROM sections WHERE note_id = 'resticAAAAAA' ORDER BY ordinal"
        )
    ]
    assert any("/mnt/restore" in t for t in texts)
    harness.embedder.passage_calls.clear()
    assert (await harness.syncer.tick()).indexed == 0
    assert harness.embedder.passage_calls == []


async def test_full_comparison_catches_deletes_archives_moves_and_unarchives(
    harness, trilium
) -> None:
    await harness.syncer.full()
    assert harness.table_mentions("rawNoteAAAAA")["links"] == 1
    restic_before = harness.table_mentions("resticAAAAAA")
    trilium.delete("rawNoteAAAAA")
    trilium.set_label("techAAAAAAAA", "archived", inheritable=True)
    trilium.move("summaryAAAAA", "summariesAAA", "Nnl10TvQvQB5")  # under the journal root
    # Attribute and branch edits do not bump utcDateModified: only the full run sees them.
    await harness.syncer.full()
    assert harness.table_mentions("rawNoteAAAAA") == dict.fromkeys(
        ("notes", "sections", "fts", "vectors", "links"), 0
    )
    notes = harness.notes()
    assert notes["techAAAAAAAA"][1] == notes["resticAAAAAA"][1] == "archived"
    assert harness.table_mentions("resticAAAAAA")["sections"] == 0
    assert notes["summaryAAAAA"][0] == "journal"
    trilium.remove_label("techAAAAAAAA", "archived")
    harness.embedder.passage_calls.clear()
    await harness.syncer.full()
    assert harness.notes()["resticAAAAAA"] == ("other", None)
    assert harness.table_mentions("resticAAAAAA") == restic_before
    # Their snippets left the index while archived, and their vectors with them: the two notes
    # are embedded again, and nothing else is.
    back = [harness.table_mentions(n)["vectors"] for n in ("techAAAAAAAA", "resticAAAAAA")]
    assert len(harness.embedder.passage_calls) == sum(back)
    assert all(
        t.startswith(("Tech notes\n", "Restic backups")) for t in harness.embedder.passage_calls
    )


def calendars(harness: Harness) -> dict[str, str]:
    rows = harness.store.db.execute("SELECT note_id, calendar FROM notes WHERE calendar NOTNULL")
    return dict(rows)


async def test_journal_labels_date_notes_whatever_their_titles_say(harness, trilium) -> None:
    """A `#datePattern` can title day notes anything: the `#dateNote` and `#monthNote` labels
    (own or an ancestor's) say where the journal files a note, and a day finds them."""
    trilium.set_title("29dKRUxCrqvk", "Autumn")  # was "10 - October"
    trilium.set_title("KyGxfC5ueh8v", "Standup and planning")  # was "21 - Wednesday"
    trilium.clone("resticAAAAAA", "KyGxfC5ueh8v")  # kept under two day notes too
    trilium.clone("resticAAAAAA", "W5uBsye7b60B")  # "14 - Wednesday"
    trilium.set_label("techAAAAAAAA", "dateNote", "someday")  # no date: no place in time
    await harness.syncer.full()
    dated = calendars(harness)
    assert (dated["29dKRUxCrqvk"], dated["KyGxfC5ueh8v"]) == ("2026-10", "2026-10-21")
    assert dated["resticAAAAAA"] == "2026-10-14,2026-10-21"
    assert "techAAAAAAAA" not in dated
    day = prompt_dates("what did I do on october 21st?")
    filed = harness.store.section_hits(filed_on(harness.store, day, ["default"]))
    assert {hit.note_id for hit in filed.values()} == {"KyGxfC5ueh8v", "resticAAAAAA"}
    fortnight = harness.store.section_hits(
        filed_on(harness.store, prompt_dates("on october 14th?"), ["default"])
    )
    assert {hit.note_id for hit in fortnight.values()} == {"W5uBsye7b60B", "resticAAAAAA"}
    assert prompt_dates("what did I do on october 20th?")  # a day: nothing is filed on it
    other_day = filed_on(harness.store, prompt_dates("on october 20th?"), ["default"])
    assert other_day == []


async def test_an_index_older_than_the_journal_labels_learns_them_without_embedding(
    harness, trilium
) -> None:
    await harness.syncer.full()
    with harness.store.atomic() as db:  # as migration m017 leaves an index: no labels read yet
        db.execute("UPDATE notes SET calendar = NULL")
    harness.embedder.passage_calls.clear()
    await harness.syncer.full()
    assert calendars(harness)["KyGxfC5ueh8v"] == "2026-10-21"
    assert harness.embedder.passage_calls == []  # only the notes' rows are written again


async def test_a_recall_area_label_overrides_every_other_rule(harness, trilium) -> None:
    await harness.syncer.full()
    assert harness.notes()["rawNoteAAAAA"][0] == "sources"  # under Raw (#wikiLayer=raw)
    assert harness.notes()["KyGxfC5ueh8v"][0] == "journal"  # a day note under the journal
    trilium.set_label("rawNoteAAAAA", "recallArea", "wiki")
    trilium.set_label("techAAAAAAAA", "recallArea", "journal", inheritable=True)
    trilium.set_label("KyGxfC5ueh8v", "recallArea", "other")
    await harness.syncer.full()  # a label edit: only the full comparison sees it
    notes = harness.notes()
    assert (notes["rawNoteAAAAA"][0], notes["KyGxfC5ueh8v"][0]) == ("wiki", "other")
    # On a parent it covers the subtree, whatever the child's own place would say.
    assert (notes["techAAAAAAAA"][0], notes["resticAAAAAA"][0]) == ("journal", "journal")
    trilium.remove_label("rawNoteAAAAA", "recallArea")
    await harness.syncer.full()
    assert harness.notes()["rawNoteAAAAA"][0] == "sources"


async def test_a_cloned_note_shows_the_path_of_the_area_it_is_weighted_as(harness, trilium) -> None:
    """A passage shows its note's first path: for a clone, the one in the note's area, then the
    shortest; "Journal › …" sorts before "LLM Wiki › …" by name but a wiki summary filed
    under a day is still a wiki page."""
    trilium.clone("summaryAAAAA", "KyGxfC5ueh8v")  # a day note of the journal
    trilium.clone("resticAAAAAA", "rawNoteAAAAA")  # deeper, and in the sources
    trilium.add_note("atticAAAAAAA", "Attic")
    trilium.add_note("boxAAAAAAAAA", "Box", parent_id="atticAAAAAAA")
    trilium.clone("resticAAAAAA", "boxAAAAAAAAA")  # "other" as "Tech notes" is, and deeper
    await harness.syncer.full()
    summary, restic = (
        harness.store.known_notes("default")[n] for n in ("summaryAAAAA", "resticAAAAAA")
    )
    assert summary.paths[0] == "LLM Wiki › Wiki › Summaries"
    assert len(summary.paths) == 2 and summary.paths[1].startswith("Journal › ")
    assert harness.notes()["resticAAAAAA"][0] == "sources"
    assert restic.paths == (
        "LLM Wiki › Raw › Call with storage vendor",
        "Tech notes",
        "Attic › Box",
    )


async def test_a_renamed_note_renames_the_breadcrumbs_of_its_whole_subtree(
    harness, trilium
) -> None:
    await harness.syncer.full()
    harness.embedder.passage_calls.clear()

    def paths(note_id: str) -> list[str]:
        (raw,) = harness.store.db.execute(
            "SELECT paths FROM notes WHERE note_id = ?", (note_id,)
        ).fetchone()
        return json.loads(raw)

    assert paths("resticAAAAAA") == ["Tech notes"]
    trilium.set_title("techAAAAAAAA", "Homelab notes")
    report = await harness.syncer.tick()  # a title edit bumps the date: the tick sees it
    assert paths("resticAAAAAA") == ["Homelab notes"]
    assert paths("imageAAAAAAA") == ["Homelab notes"]  # skipped notes keep true paths too
    hits = harness.store.section_hits(
        [
            row[0]
            for row in harness.store.db.execute(
                "SELECT id FROM sections WHERE note_id = 'resticAAAAAA'"
            )
        ]
    )
    assert {hit.path for hit in hits.values()} == {"Homelab notes"}
    # The child's own text did not change: its snippets come from the cache.
    assert report.indexed == 1 and all("Homelab notes" in t for t in harness.embedder.passage_calls)


async def test_restart_on_existing_index_embeds_nothing(harness, trilium, tmp_path) -> None:
    await harness.syncer.full()
    counts = harness.store.counts("default")
    await harness.close()
    again = Harness(trilium, tmp_path, HashEmbedder())
    try:
        assert again.syncer.build_complete
        await again.syncer.full()
        assert again.embedder.passage_calls == []
        assert again.store.counts("default") == counts
    finally:
        await again.close()


def _snippet_spans(store: Store) -> list[tuple]:
    return store.db.execute(
        "SELECT s.note_id, s.ordinal, p.start, p.end FROM snippets p "
        "JOIN sections s ON s.id = p.section_id ORDER BY 1, 2, 3"
    ).fetchall()


async def test_snippets_cut_by_an_older_release_are_cut_again_at_the_next_full_run(
    harness, trilium, tmp_path
) -> None:
    """Migration m013: an index whose snippets an older release cut (here: every span one
    character short) is split again by the start's full comparison, every note of it."""
    await harness.syncer.full()
    wanted = _snippet_spans(harness.store)
    with harness.store.atomic() as db:
        db.execute("UPDATE snippets SET end = end - 1 WHERE end > start")
        undo_m014(db)
        db.execute("PRAGMA user_version = 12")
    assert _snippet_spans(harness.store) != wanted
    await harness.close()
    again = Harness(trilium, tmp_path, HashEmbedder())
    try:
        assert again.syncer.build_complete  # it keeps answering from the old snippets meanwhile
        report = await again.syncer.full()
        assert report.indexed == again.store.counts("default")["notes"]
        assert _snippet_spans(again.store) == wanted
    finally:
        await again.close()


async def test_an_index_of_schema_13_gets_each_snippets_hash_from_its_text(
    harness, trilium, tmp_path
) -> None:
    """Migration m014: each stored snippet's text is rebuilt from its section and note title and
    hashed as the sync hashes it, and the old embedding cache goes."""
    await harness.syncer.full()
    written = dict(harness.store.db.execute("SELECT id, hash FROM snippets"))
    with harness.store.atomic() as db:  # back to schema 13: no hashes, an embedding cache
        undo_m014(db)
        db.execute("PRAGMA user_version = 13")
    await harness.close()
    again = Harness(trilium, tmp_path, HashEmbedder())
    try:
        db = again.store.db
        rows = db.execute(
            "SELECT p.id, p.hash, p.start, p.end, n.title, s.ordinal, s.heading, s.text "
            "FROM snippets p JOIN sections s ON s.id = p.section_id "
            "JOIN notes n USING (instance, note_id)"
        ).fetchall()
        assert len(rows) == len(written) > 100
        for snippet_id, found, start, end, title, ordinal, heading, text in rows:
            now = split_snippets(title, Section(ordinal, heading, text))
            wanted = {(s.start, s.end): text_hash(s.text) for s in now}
            assert found == wanted[(start, end)] == written[snippet_id]
        assert not db.execute(
            "SELECT 1 FROM sqlite_schema WHERE name = 'embedding_cache'"
        ).fetchall()
        await again.syncer.full()
        assert again.embedder.passage_calls == []
    finally:
        await again.close()


PUMP_SENTENCES = [
    f"Pump station {word} checks the {part} before the morning shift starts at six."
    for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
    for part in ("valves", "filters")
]


def _all_blobs(db) -> set[bytes]:
    """Every BLOB value in every ordinary table of the index file."""
    found: set[bytes] = set()
    tables = db.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    for (table,) in tables:
        for column in [row[1] for row in db.execute(f"PRAGMA table_info('{table}')")]:
            found.update(
                row[0]
                for row in db.execute(
                    f'SELECT "{column}" FROM "{table}" WHERE typeof("{column}") = \'blob\''
                )
            )
    return found


async def test_vectors_are_found_again_only_among_the_live_snippets(harness, trilium) -> None:
    """An edit embeds only the snippets whose text changed, a move embeds nothing, and a
    deleted note's vectors leave the file with its snippets."""
    pump = "pumpNoteAAAA"
    trilium.add_note(
        pump, "Pump station", parent_id="techAAAAAAAA", content=f"<p>{' '.join(PUMP_SENTENCES)}</p>"
    )
    await harness.syncer.full()
    snippets = harness.table_mentions(pump)["vectors"]
    assert snippets >= 3
    harness.embedder.passage_calls.clear()
    edited = " ".join(PUMP_SENTENCES).replace("hotel checks the filters", "hotel checks the pumps")
    trilium.set_content(pump, f"<p>{edited}</p>")
    assert (await harness.syncer.tick()).indexed == 1
    assert len(harness.embedder.passage_calls) == 1  # the last snippet; the others are stored
    assert "hotel checks the pumps" in harness.embedder.passage_calls[0]
    assert harness.table_mentions(pump)["vectors"] == snippets

    harness.embedder.passage_calls.clear()
    paths = harness.store.known_notes("default")[pump].paths
    trilium.move(pump, "techAAAAAAAA", "root")
    await harness.syncer.full()
    assert harness.store.known_notes("default")[pump].paths != paths
    assert harness.embedder.passage_calls == []

    db = harness.store.db
    vectors = [
        row[0]
        for row in db.execute(
            "SELECT v.embedding FROM snippet_vectors v JOIN snippets p ON p.id = v.id "
            "JOIN sections s ON s.id = p.section_id WHERE s.note_id = ?",
            (pump,),
        )
    ]
    assert len(vectors) == snippets and set(vectors) <= _all_blobs(db)
    trilium.delete(pump)
    await harness.syncer.full()
    assert harness.table_mentions(pump)["notes"] == 0
    assert not set(vectors) & _all_blobs(db)  # nothing keeps them, as a cache of texts did


async def test_crash_mid_build_resumes_and_matches_a_clean_build(trilium, tmp_path) -> None:
    clean_embedder = HashEmbedder()
    clean = Harness(trilium, tmp_path / "clean", clean_embedder)
    await clean.syncer.full()
    expected = clean.store.counts("default")
    await clean.close()

    crashing = HashEmbedder()
    crashing.fail_after = len(clean_embedder.passage_calls) // 2  # some rounds in, not all
    first = Harness(trilium, tmp_path / "crash", crashing)
    with pytest.raises(RuntimeError, match="injected"):
        await first.syncer.full()
    assert not first.syncer.build_complete
    partial = first.store.counts("default")["sections"]
    assert 0 < partial < expected["sections"]
    await first.close()

    resumed = Harness(trilium, tmp_path / "crash", HashEmbedder())
    assert not resumed.syncer.build_complete
    await resumed.syncer.full()
    assert resumed.syncer.build_complete
    assert resumed.store.counts("default") == expected
    # The rounds the crashed build wrote keep their vectors: only the rest is embedded again.
    assert len(resumed.embedder.passage_calls) < len(clean_embedder.passage_calls)
    await resumed.close()


async def test_a_note_deleted_between_listing_and_fetch_is_dropped(harness, trilium) -> None:
    await harness.syncer.full()
    trilium.set_content("resticAAAAAA", "<p>changed</p>")
    real_content = harness.client.content

    async def deleted_meanwhile(note_id: str) -> str:
        if note_id == "resticAAAAAA":
            trilium.delete("resticAAAAAA")  # gone after the listing saw it
        return await real_content(note_id)

    harness.client.content = deleted_meanwhile  # type: ignore[method-assign]
    report = await harness.syncer.tick()
    assert report.deleted == 1
    assert harness.table_mentions("resticAAAAAA")["notes"] == 0


async def test_a_note_with_a_broken_answer_is_skipped_counted_and_retried(
    harness, monkeypatch
) -> None:
    real_content = _restic_unreadable(harness, monkeypatch, "garbage from the server")
    report = await harness.syncer.full()
    assert harness.notes()["resticAAAAAA"] == ("other", "error")
    assert report.failed == ["resticAAAAAA: garbage from the server"]
    assert harness.store.instance_state("default")["build_complete"] == 1
    monkeypatch.setattr(harness.client, "content", real_content)
    await harness.syncer.full()
    assert harness.notes()["resticAAAAAA"] == ("other", None)


async def test_a_failed_run_s_error_clears_once_the_next_run_writes_a_round(tmp_path) -> None:
    """/health said "degraded" with the old reason through a whole first build after Trilium
    came back (minutes): the failure is over once a round is read and written."""
    fake = FaultyTrilium(token=TOKEN)
    for n in range(3 * NOTES_PER_ROUND):
        fake.add_note(f"note{n:08d}", f"Note {n}", content=f"<p>Body of note {n}.</p>")
    with fake:
        harness = Harness(fake, tmp_path, HashEmbedder())
        fake.fail_status = 401
        with pytest.raises(TriliumError):
            await harness.syncer.full()
        failed = harness.syncer.status.error
        fake.fail_status = None
        seen: list[tuple[int, str | None]] = []
        harness.syncer.on_progress = lambda status: seen.append((status.done, status.error))
        await harness.syncer.full()
    assert failed and seen[0] == (0, failed)  # listed, nothing written yet: still the reason
    assert [error for done, error in seen if done] == [None, None, None]


async def test_a_tree_thousands_of_levels_deep_is_indexed(tmp_path) -> None:
    """Classifying its notes passed Python's recursion limit: the whole instance stayed
    unindexed ("internal error during sync"), tried again every minute."""
    depth = 2_000
    fake = FaultyTrilium(token=TOKEN)
    parent = "root"
    for n in range(depth):
        title = "Deep " + str(n) + ("x" * 100_000 if n == 5 else "")  # one title a page long
        fake.add_note(f"deep{n:08d}", title, parent_id=parent, content=f"<p>level {n}</p>")
        parent = f"deep{n:08d}"
    with fake:
        harness = Harness(fake, tmp_path, HashEmbedder())
        try:
            report = await harness.syncer.full()
            deepest = harness.store.known_notes("default")[f"deep{depth - 1:08d}"]
        finally:
            await harness.close()
    assert report.failed == [] and report.indexed == depth
    [path] = deepest.paths
    crumbs = path.split(" › ")
    assert crumbs[:3] == ["Deep 0", "Deep 1", "…"] and crumbs[-1] == f"Deep {depth - 2}"
    assert len(crumbs) == 16 and len(path) < 16 * 210


async def test_a_round_the_disk_could_not_take_is_not_embedded_again(tmp_path, monkeypatch) -> None:
    """A full disk failed each retry after the round was embedded: every minute the same
    passages went through the model again. Kept until written, they are embedded once."""
    import apsw

    fake = FaultyTrilium(token=TOKEN)
    for n in range(2 * NOTES_PER_ROUND):
        fake.add_note(f"note{n:08d}", f"Note {n}", content=f"<p>Body {n} of a note.</p>")
    with fake:
        harness = Harness(fake, tmp_path, HashEmbedder())
        real_save = harness.store.save_note
        full_disk = {"note00000020"}  # in the second round: the first is written

        def save_unless_full(record, *args, **kwargs):
            if record.note_id in full_disk:
                raise apsw.FullError("database or disk is full")
            return real_save(record, *args, **kwargs)

        monkeypatch.setattr(harness.store, "save_note", save_unless_full)
        try:
            with pytest.raises(apsw.FullError):
                await harness.syncer.full()
            # as /health shows it: what failed, and the file
            assert str(harness.syncer.status.error).startswith("disk full while writing ")
            embedded_once = list(harness.embedder.passage_calls)
            full_disk.clear()
            await harness.syncer.full()
            counts = harness.store.counts("default")
        finally:
            await harness.close()
    calls = harness.embedder.passage_calls
    assert embedded_once and calls[: len(embedded_once)] == embedded_once
    assert len(set(calls)) == len(calls)  # the retry embedded only what was never embedded
    assert counts["notes"] == 2 * NOTES_PER_ROUND and not harness.syncer._unwritten


def _links_from(harness: Harness, note_id: str) -> set[tuple[str, str]]:
    rows = harness.store.db.execute(
        "SELECT target_id, kind FROM links WHERE source_id = ?", (note_id,)
    )
    return {(target, kind) for target, kind in rows}


async def test_a_relation_added_or_removed_alone_reaches_the_links(harness, trilium) -> None:
    """A summary tied to its source after it was written never stood in for it: the relation
    changed the note's attributes, not its text, and only a text change rewrote the links."""
    await harness.syncer.full()
    relation = ("resticAAAAAA", "derivedFrom")
    assert relation not in _links_from(harness, "summaryAAAAA")
    text_links = _links_from(harness, "summaryAAAAA") - {("rawNoteAAAAA", "derivedFrom")}
    trilium.add_relation("summaryAAAAA", "derivedFrom", "resticAAAAAA")
    await harness.syncer.full()
    assert relation in _links_from(harness, "summaryAAAAA")
    assert text_links <= _links_from(harness, "summaryAAAAA")  # the text's links stay
    trilium.remove_relation("summaryAAAAA", "derivedFrom")
    await harness.syncer.full()
    assert not {k for _, k in _links_from(harness, "summaryAAAAA")} & {"derivedFrom"}


async def test_a_note_s_new_type_or_language_splits_it_again(harness, trilium) -> None:
    trilium.add_note(
        "codeNoteAAAA", "Setup notes", type="code", mime="text/plain",
        content="# Setup\nInstall the agent.\n# Usage\nRun it nightly.",
    )  # fmt: skip
    await harness.syncer.full()
    texts = "SELECT text FROM sections WHERE note_id = 'codeNoteAAAA' ORDER BY ordinal"
    [(plain,)] = harness.store.db.execute(texts).fetchall()
    assert "# Setup" in plain  # plain text: the marks are words of it
    trilium.set_type("codeNoteAAAA", "code", "text/x-markdown")
    await harness.syncer.tick()
    markdown = " ".join(text for (text,) in harness.store.db.execute(texts))
    assert "#" not in markdown and "Setup" in markdown  # read as markdown: headings now


async def test_a_note_dated_ahead_does_not_hold_back_the_minute_tick(harness, trilium) -> None:
    """One note dated hours ahead (a device's fast clock) set the tick's mark there: every
    edit waited for the full comparison, and after the date was set right, for ever."""
    await harness.syncer.full()
    ahead = datetime.now(UTC) + timedelta(hours=3)
    trilium.backdate("rawNoteAAAAA", ahead)
    await harness.syncer.tick()
    mark = str(harness.store.instance_state("default")["watermark"])
    assert mark <= datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    trilium.set_content("resticAAAAAA", "<p>restic now runs hourly</p>")
    report = await harness.syncer.tick()
    assert report.indexed == 1 and "hourly" in _section_text(harness, "resticAAAAAA")
    trilium.backdate("rawNoteAAAAA", datetime.now(UTC) - timedelta(days=1))  # set right
    harness.store.update_instance("default", watermark="2099-01-01 00:00:00.000Z")  # old files
    await harness.syncer.full()
    assert str(harness.store.instance_state("default")["watermark"]) < "2099"  # back down


def _section_text(harness: Harness, note_id: str) -> str:
    rows = harness.store.db.execute("SELECT text FROM sections WHERE note_id = ?", (note_id,))
    return " ".join(text for (text,) in rows)


async def test_each_run_that_changed_the_index_is_logged(harness, trilium, caplog) -> None:
    """The README says `serve` logs the sync's results; only the foreground build printed them."""
    caplog.set_level(logging.INFO, logger="trilium_recall.sync.schedule")
    running = asyncio.ensure_future(run_forever(harness.syncer, 0.05, 3600.0))
    try:
        deadline = time.monotonic() + 60
        while not any("full comparison" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, "no run was logged"
            await asyncio.sleep(0.05)
        trilium.set_content("resticAAAAAA", "<p>restic now runs hourly</p>")
        while not any(": tick: 1 read" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            await asyncio.sleep(0.05)
    finally:
        running.cancel()
    [first] = [r.getMessage() for r in caplog.records if "full comparison" in r.getMessage()]
    assert first.startswith("default: full comparison: ") and " read, " in first
    assert len([r for r in caplog.records if ": tick:" in r.getMessage()]) == 1  # quiet ones: no


def test_no_time_left_is_told_while_the_build_fails() -> None:
    """Trilium down mid-build: the page said "48 of 79 · about 50 s left", the time growing
    while nothing happened."""
    status = SyncStatus(done=48, total=79, kept=0, started=time.monotonic() - 30)
    assert status.eta_seconds() is not None
    status.error = "Trilium at http://127.0.0.1:9 does not answer"
    assert status.eta_seconds() is None


async def test_a_failed_read_of_an_edited_note_keeps_its_last_version(
    harness, trilium, monkeypatch
) -> None:
    """One bad answer for an edited note's content took it out of search until it was read
    again; now the last version keeps serving, listed as failed, and is read at the next
    full comparison."""
    real_content = await _edit_restic_unreadable(harness, trilium, monkeypatch)
    report = await harness.syncer.tick()
    assert report.failed == ["resticAAAAAA: Trilium answers HTTP 500 for its content"]
    assert "nightly at 02:00" in _section_text(harness, "resticAAAAAA")  # still searchable
    assert harness.notes()["resticAAAAAA"] == ("other", None)
    [failed] = failed_notes(harness.store, "default")
    assert failed["reason"] == "its last version is kept: Trilium answers HTTP 500 for its content"
    monkeypatch.setattr(harness.client, "content", real_content)
    await harness.syncer.full()
    assert "hourly" in _section_text(harness, "resticAAAAAA")
    assert failed_notes(harness.store, "default") == []


def test_the_mark_never_passes_the_moment_the_notes_were_listed() -> None:
    """Capped at the end of a long run, the mark passed over the edits made during it."""
    ahead = SimpleNamespace(utc_date_modified="2099-01-01 00:00:00.000Z")
    listed_at = datetime(2026, 12, 7, 20, 0, 0, 123000, tzinfo=UTC)
    assert moved_mark([ahead], "", listed_at) == "2026-12-07 20:00:00.123Z"
    assert moved_mark([ahead], "2026-12-07 20:00:00.123Z", listed_at) is None  # it stays
    older = SimpleNamespace(utc_date_modified="2026-12-01 00:00:00.000Z")
    assert moved_mark([older], "2099-01-01 00:00:00.000Z", listed_at) is None  # a tick keeps it
    assert moved_mark([older], "2099-01-01 00:00:00.000Z", listed_at, full=True) == (
        "2026-12-01 00:00:00.000Z"  # a full comparison sets it as found
    )


async def test_a_kept_version_the_note_went_back_to_is_no_failure(
    harness, trilium, monkeypatch
) -> None:
    """An edit whose read failed, then undone: the note is never read again (its blobId is
    the stored one), and the failure stayed listed for ever."""
    original = trilium._require("resticAAAAAA").content
    await _edit_restic_unreadable(harness, trilium, monkeypatch)
    await harness.syncer.tick()
    assert len(failed_notes(harness.store, "default")) == 1
    trilium.set_content("resticAAAAAA", original)  # undone: the stored blobId again
    await harness.syncer.full()
    assert failed_notes(harness.store, "default") == []


def _restic_unreadable(harness, monkeypatch, why: str):
    """The restic note's content read fails with `why`; return the client's real reader."""
    from trilium_recall.errors import TriliumBadResponse

    real_content = harness.client.content

    async def broken_for_restic(note_id: str) -> str:
        if note_id == "resticAAAAAA":
            raise TriliumBadResponse(why)
        return await real_content(note_id)

    monkeypatch.setattr(harness.client, "content", broken_for_restic)
    return real_content


async def _edit_restic_unreadable(harness, trilium, monkeypatch):
    """Index, then edit the restic note and make its content unreadable (HTTP 500)."""
    await harness.syncer.full()
    trilium.set_content("resticAAAAAA", "<p>restic now runs hourly</p>")
    return _restic_unreadable(harness, monkeypatch, "Trilium answers HTTP 500 for its content")
