"""Every kind of change a Trilium user makes, each with how to tell the index has taken it in.

Shared by test_sync_versions.py (which asserts after how many minute ticks each is searchable on
either stand-in version) and bench/bench_versions.py (which measures the same on 5,000 notes).
`seed()` adds the notes the changes work on beside whatever notebook the stand-in already holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from standin_edits import EditableTrilium
from trilium_recall.index.store import Store

OLD = datetime(2019, 5, 4, 8, 30, tzinfo=UTC)  # an imported note's dates, or a date set back
SEEDED = datetime(2025, 1, 1, tzinfo=UTC)  # the seeded notes were last edited long ago


def _page(word: str) -> str:
    return f"<h2>Notes</h2><p>The {word} procedure is written down here in full.</p>"


def seed(fake: EditableTrilium) -> None:
    add = fake.add_note
    add("chgFolderAAA", "Folder A")
    add("chgFolderBBB", "Folder B")
    for note_id, word in (
        ("chgEditAAAAA", "quillfeather"),
        ("chgTitleAAAA", "lanternfish"),
        ("chgLabelAAAA", "marmalade"),
        ("chgDeleteAAA", "driftwood"),
        ("chgUndelAAAA", "boomerang"),
        ("chgProtectAA", "stormglass"),
        ("chgBackAAAAA", "tidewater"),
    ):
        add(note_id, word.title(), content=_page(word))
    add("chgMoveAAAAA", "Moving note", parent_id="chgFolderAAA", content=_page("pendulum"))
    # Filed in two places, one of which is deleted; with a note below it.
    add("chgDoomedAAA", "Doomed folder")
    add("chgTwiceAAAA", "Filed twice", parent_id="chgFolderBBB", content=_page("starling"))
    add("chgBelowAAAA", "Below it", parent_id="chgTwiceAAAA", content=_page("wren"))
    fake.clone("chgTwiceAAAA", "chgDoomedAAA")
    # Long-standing notes: the minute query, which looks a little behind its watermark, does
    # not list them again just because they were added a moment ago.
    # The watermark is the newest listed date: a note edited now keeps it ahead of them.
    for note_id in fake.note_ids():
        if note_id.startswith("chg"):
            fake.backdate(note_id, SEEDED)
    add("recentAAAAAA", "Edited today", content=_page("today"))


def finds(store: Store, note_id: str, word: str) -> bool:
    """A keyword search for `word` finds a section of `note_id`."""
    row = store.db.execute(
        "SELECT count(*) FROM sections s JOIN sections_fts f ON f.rowid = s.id "
        "WHERE s.note_id = ? AND sections_fts MATCH ?",
        (note_id, word),
    ).fetchone()
    return bool(row[0])


def note_row(store: Store, note_id: str) -> dict[str, object] | None:
    names = ("title", "area", "paths", "skip_reason")
    query = f"SELECT {', '.join(names)} FROM notes WHERE note_id = ?"
    row = store.db.execute(query, (note_id,)).fetchone()
    return dict(zip(names, row, strict=True)) if row else None


def _protected(store: Store) -> bool:
    row = note_row(store, "chgProtectAA")
    return bool(row and row["skip_reason"] == "protected") and not finds(
        store, "chgProtectAA", "stormglass"
    )


def _filed_only_in_folder_b(store: Store, note_id: str) -> bool:
    """The note is still indexed, and its breadcrumbs no longer pass the deleted folder."""
    paths = str((note_row(store, note_id) or {}).get("paths"))
    return "Folder B" in paths and "Doomed folder" not in paths


def _backdated_edit(fake: EditableTrilium) -> None:
    fake.set_content("chgBackAAAAA", _page("riverstone"), revision=True)
    fake.backdate("chgBackAAAAA", OLD)


@dataclass(frozen=True)
class ChangeKind:
    name: str
    make: Callable[[EditableTrilium], None]
    seen: Callable[[Store], bool]
    before: Callable[[EditableTrilium], None] | None = None  # done and synced in full first


KINDS = (
    ChangeKind(
        "create",
        lambda f: f.add_note("chgCreateAAA", "Fresh", content=_page("kingfisher")),
        lambda s: finds(s, "chgCreateAAA", "kingfisher"),
    ),
    ChangeKind(
        "edit",
        lambda f: f.set_content("chgEditAAAAA", _page("hummingbird")),
        lambda s: finds(s, "chgEditAAAAA", "hummingbird"),
    ),
    ChangeKind(
        "title edit",
        lambda f: f.set_title("chgTitleAAAA", "Anglerfish"),
        lambda s: finds(s, "chgTitleAAAA", "anglerfish"),
    ),
    ChangeKind(
        "move",
        lambda f: f.move("chgMoveAAAAA", "chgFolderAAA", "chgFolderBBB"),
        lambda s: "Folder B" in str((note_row(s, "chgMoveAAAAA") or {}).get("paths")),
    ),
    ChangeKind(
        "label edit",
        lambda f: f.set_label("chgLabelAAAA", "recallArea", "wiki"),
        lambda s: (note_row(s, "chgLabelAAAA") or {}).get("area") == "wiki",
    ),
    ChangeKind(
        "delete",
        lambda f: f.delete("chgDeleteAAA"),
        lambda s: note_row(s, "chgDeleteAAA") is None,
    ),
    ChangeKind(
        "delete of a second parent",
        lambda f: f.delete("chgDoomedAAA"),
        lambda s: (
            _filed_only_in_folder_b(s, "chgTwiceAAAA")
            and _filed_only_in_folder_b(s, "chgBelowAAAA")
        ),
    ),
    ChangeKind(
        "undelete",
        lambda f: f.undelete("chgUndelAAAA"),
        lambda s: finds(s, "chgUndelAAAA", "boomerang"),
        before=lambda f: f.delete("chgUndelAAAA"),
    ),
    ChangeKind("protect", lambda f: f.protect("chgProtectAA"), _protected),
    ChangeKind(
        "import with old dates",
        lambda f: f.import_note(
            "chgImportAAA", "Imported", created=OLD, modified=OLD, content=_page("saxophone")
        ),
        lambda s: finds(s, "chgImportAAA", "saxophone"),
    ),
    ChangeKind(
        "content edit, date set back",
        _backdated_edit,
        lambda s: finds(s, "chgBackAAAAA", "riverstone"),
    ),
)
