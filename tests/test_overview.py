"""What the index covers: notes per area and top-level subjects, from a real SQLite index."""

from __future__ import annotations

from dataclasses import replace

from conftest import add_note, make_settings
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.server.overview import IndexOverview, InstanceOverview, Subject, overview


def note(store, embedder, note_id: str, title: str, path: str, area: str = "other") -> None:
    add_note(store, embedder, note_id, title, [(title, f"about {title}")], area=area, path=path)


def test_subjects_are_top_level_subtrees_and_a_dominant_folder_gives_way(store, embedder):
    note(store, embedder, "w", "LLM Wiki", "", "wiki")
    note(store, embedder, "wf", "Wiki", "LLM Wiki", "wiki")
    for i in range(3):
        note(store, embedder, f"s{i}", f"Summary {i}", "LLM Wiki › Wiki › Summaries", "wiki")
    note(store, embedder, "c0", "Concept", "LLM Wiki › Wiki › Concepts", "wiki")
    note(store, embedder, "r0", "Clipping", "LLM Wiki › Raw", "sources")
    note(store, embedder, "h", "Homelab", "")
    note(store, embedder, "h1", "Backups (restic)", "Homelab")
    note(store, embedder, "h2", "WireGuard VPN", "Homelab")
    note(store, embedder, "j1", "03 - Thursday", "Journal › 2026 › 09 - September", "journal")
    archived = replace(
        store.known_notes("default")["h2"], note_id="old", title="Old VPN", skip_reason="archived"
    )
    store.save_note(archived, [])
    [described] = overview(store, ["default"])
    assert described == InstanceOverview(
        "default",
        11,
        {"wiki": 6, "sources": 1, "journal": 1, "other": 3},
        (
            # "Wiki" holds 5 of the 7 and a tree of its own: its children say more.
            Subject("LLM Wiki", 7, "wiki", ("Summaries", "Concepts", "Raw")),
            Subject("Homelab", 3, "other", ("Backups (restic)", "WireGuard VPN")),
            Subject("Journal", 1, "journal", ("09 - September",)),
        ),
    )


async def test_index_overview_reads_on_its_own_connection_and_keeps_the_last(tmp_path, embedder):
    settings = make_settings(tmp_path)
    store = Store(settings.db_path, VectorIndex(embedder.dim, embedder.name))
    note(store, embedder, "h", "Homelab", "")
    store.close()
    described = IndexOverview(settings)
    [first] = await described.refresh()
    assert (first.notes, first.subjects[0].title) == (1, "Homelab")
    settings.db_path.unlink()
    settings.db_path.mkdir()  # unreadable now: the last overview stays
    assert await described.refresh() == [first] and described.current == [first]
