"""The stand-in Trilium's edits, for tests and benchmarks: what a user does to a notebook after it
is seeded, and the history (revisions, deletions) those edits leave for Trilium 0.105's routes.

The product's stand-in (`trilium_recall.demo.standin`) only seeds and serves reads: the demo
needs nothing more. `EditableTrilium` adds the edits, each with the dates Trilium gives it
(../shared/trilium/TRILIUM-FACTS.md: which edits bump utcDateModified, which do not);
tests/standin_faults.py's `FaultyTrilium` adds fault switches on top of it.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.demo.standin.etapi import BranchRecord, NoteRecord, NoteTree, Reply, blob_id
from trilium_recall.demo.standin.export import SeedAttribute
from trilium_recall.demo.standin.newest import DeletedNote, Ledger, RevisionRecord

ERASE_AFTER = timedelta(days=7)  # eraseEntitiesAfterTimeInSeconds' default
Removed = list[tuple[NoteRecord, list[BranchRecord]]]


class EditableTrilium(FakeTrilium):
    """A FakeTrilium a test edits while it serves. Thread-safe, as the fake is."""

    def import_note(
        self, note_id: str, title: str, *, created: datetime, modified: datetime, **kwargs: Any
    ) -> None:
        """A note as the ENEX/Notion/Obsidian… importers write it: 0.104 and later keep the
        source's old dates (`setDateCreatedAndModified`), 0.93 dates it now."""
        with self._lock:
            self.add_note(note_id, title, **kwargs)
            if self.version != "0.93":
                note = self._tree.notes[note_id]
                note.created, note.modified = created, modified

    def set_content(self, note_id: str, content: str, *, revision: bool = False) -> None:
        """A content edit: new blobId, utcDateModified bumped; with `revision`, a snapshot of
        the old content is saved first (the history lists it; a plain edit is not there)."""
        with self._lock:
            note = self._require(note_id)
            moment = self._stamp()
            if revision:
                snapshot(self._ledger, note, moment)
            note.content, note.modified = content, moment

    def backdate(self, note_id: str, modified: datetime) -> None:
        """Set utcDateModified back, as any ETAPI client could if upstream PR #11434 merges."""
        with self._lock:
            self._require(note_id).modified = modified

    def protect(self, note_id: str) -> None:
        """Protect a note: its title turns to `[protected]`, its content unreadable; dated now."""
        with self._lock:
            note = self._require(note_id)
            note.is_protected, note.modified = True, self._stamp()

    def set_title(self, note_id: str, title: str) -> None:
        """A title edit bumps utcDateModified; blobId stays (it hashes the content only)."""
        with self._lock:
            note = self._require(note_id)
            note.title, note.modified = title, self._stamp()

    def set_label(
        self, note_id: str, name: str, value: str = "", *, inheritable: bool = False
    ) -> None:
        """Add or update a label. As in Trilium, the note's utcDateModified does not move."""
        with self._lock:
            note = self._require(note_id)
            for attr in note.attributes:
                if attr.type == "label" and attr.name == name:
                    attr.value, attr.inheritable, attr.modified = value, inheritable, self._stamp()
                    return
            self._add_attribute(
                note, SeedAttribute("label", name, value, inheritable), self._stamp()
            )

    def remove_label(self, note_id: str, name: str) -> None:
        with self._lock:
            note = self._require(note_id)
            note.attributes = [
                a for a in note.attributes if not (a.type == "label" and a.name == name)
            ]

    def add_relation(
        self, note_id: str, name: str, target_id: str, *, inheritable: bool = False
    ) -> None:
        with self._lock:
            note = self._require(note_id)
            self._require(target_id)
            attribute = SeedAttribute("relation", name, target_id, inheritable)
            self._add_attribute(note, attribute, self._stamp())

    def remove_relation(self, note_id: str, name: str) -> None:
        with self._lock:
            note = self._require(note_id)
            note.attributes = [
                a for a in note.attributes if not (a.type == "relation" and a.name == name)
            ]

    def set_type(self, note_id: str, note_type: str, mime: str) -> None:
        """A type or code language change: dated now, its blobId stays (the text is the same)."""
        with self._lock:
            note = self._require(note_id)
            note.type, note.mime, note.modified = note_type, mime, self._stamp()

    def move(self, note_id: str, old_parent_id: str, new_parent_id: str) -> None:
        """Re-parent one placement. Only the branch is stamped, not the note."""
        with self._lock:
            branch_id = f"{old_parent_id}_{note_id}"
            if branch_id not in self._tree.branches:
                raise KeyError(f"note {note_id!r} has no parent {old_parent_id!r}")
            self._check_new_parent(note_id, new_parent_id)
            prefix = self._tree.remove_branch(branch_id).prefix
            self._tree.add_branch(note_id, new_parent_id, prefix, None, self._stamp())

    def clone(self, note_id: str, parent_id: str) -> None:
        """Add a placement (a second parent). The note itself is not stamped."""
        with self._lock:
            self._require(note_id)
            self._check_new_parent(note_id, parent_id)
            self._tree.add_branch(note_id, parent_id, None, None, self._stamp())

    def delete(self, note_id: str) -> None:
        """Delete a note with the children that have no other parent, and relations to it."""
        with self._lock:
            self._require(note_id)
            if note_id in ("root", "_hidden"):
                raise ValueError(f"{note_id!r} cannot be deleted")
            record_deletion(self._ledger, delete_from(self._tree, note_id), self._stamp())

    def undelete(self, note_id: str) -> None:
        """Bring back a deleted note with everything deleted alongside it, dated now."""
        with self._lock:
            restore(self._ledger, note_id, self._tree, self._stamp())

    def erase_deleted(self, older_than: timedelta = ERASE_AFTER) -> None:
        with self._lock:  # as Trilium does 7 days after a deletion; stamps may run ahead
            erase(self._ledger, max(datetime.now(UTC), self._last_stamp), older_than)

    def respond(self, method: str, target: str, authorization: str | None) -> Reply | None:
        """As Trilium, the newest erases deletions older than a week (checked at each read)."""
        if self.version != "0.93" and method == "GET":
            with self._lock:
                erase(self._ledger, datetime.now(UTC), ERASE_AFTER)
        return super().respond(method, target, authorization)

    def _check_new_parent(self, note_id: str, parent_id: str) -> None:
        self._require(parent_id)
        if note_id == parent_id or note_id in self._tree.ancestors(parent_id):
            raise ValueError(f"placing {note_id!r} under {parent_id!r} would make a cycle")


def delete_from(tree: NoteTree, note_id: str) -> Removed:
    """Remove a note, relations pointing at it, and children left without a parent;
    return each removed note with the branches it lost."""
    children = [b.note_id for b in tree.child_branches(note_id)]
    branches = tree.parent_branches(note_id) + tree.child_branches(note_id)
    for branch in branches:
        tree.remove_branch(branch.branch_id)
    removed = [(tree.notes.pop(note_id), branches)]
    for note in tree.notes.values():
        note.attributes = [
            a for a in note.attributes if not (a.type == "relation" and a.value == note_id)
        ]
    for child in children:
        if child in tree.notes and not tree.parent_branches(child):
            removed += delete_from(tree, child)
    return removed


def snapshot(ledger: Ledger, note: NoteRecord, moment: datetime) -> None:
    """Save a revision of the note as it is, before an edit."""
    revision_id = hashlib.sha1(f"{note.note_id}:{moment}".encode()).hexdigest()[:12]
    ledger.revisions[revision_id] = RevisionRecord(
        revision_id, note.note_id, note.title, note.type, note.mime, note.content,
        note.is_protected, moment, blob_id(note.content),
    )  # fmt: skip


def record_deletion(ledger: Ledger, removed: Removed, moment: datetime) -> None:
    """Deletion dates each note now (then it 404s); one deleteId for the whole group."""
    delete_id = hashlib.sha1(f"{removed[0][0].note_id}:{moment}".encode()).hexdigest()[:12]
    for note, branches in removed:
        note.modified = moment
        ledger.deleted[note.note_id] = DeletedNote(note, branches, delete_id, moment)


def restore(ledger: Ledger, note_id: str, tree: NoteTree, moment: datetime) -> None:
    """Undelete a note with everything deleted alongside it, dated now."""
    gone = ledger.deleted.get(note_id)
    if gone is None:
        raise KeyError(f"no deleted note {note_id!r}")
    group = [d for d in ledger.deleted.values() if d.delete_id == gone.delete_id]
    for deleted in group:
        del ledger.deleted[deleted.note.note_id]
        deleted.note.modified = moment
        tree.notes[deleted.note.note_id] = deleted.note
    for branch in (b for d in group for b in d.branches):
        if {branch.note_id, branch.parent_id} <= tree.notes.keys():
            tree.add_branch(
                branch.note_id, branch.parent_id, branch.prefix, branch.position, moment
            )


def erase(ledger: Ledger, now: datetime, older_than: timedelta) -> None:
    """Erase deletions older than `older_than`: their rows leave the history for good."""
    gone = {n for n, d in ledger.deleted.items() if d.at <= now - older_than}
    for note_id in gone:
        del ledger.deleted[note_id]
    ledger.revisions = {r: v for r, v in ledger.revisions.items() if v.note_id not in gone}
