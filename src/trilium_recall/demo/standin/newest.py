"""What the stand-in keeps and answers beyond the 0.93 note tree: the newest Trilium's recent
changes (`GET /notes/history`, 0.102+) and revisions, per ../shared/trilium/ETAPI-NEWEST.md.

Revisions and deleted-but-not-erased notes are kept in every version (Trilium 0.93 has them
too, in its tables); only a server speaking 0.105 answers the routes that show them. This module
reads the ledger; the edits that write it (revision snapshots, deletions, undeletes, erasure)
live with the tests, in tests/standin_edits.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .etapi import (
    BranchRecord,
    NoteRecord,
    NoteTree,
    Reply,
    error_reply,
    local_text,
    utc_text,
)

VERSIONS = ("0.93", "0.105")
APP_INFO = {  # what `GET /app-info` says besides utcDateTime, per version
    "0.93": {
        "appVersion": "0.93.0",
        "dbVersion": 229,
        "syncVersion": 35,
        "buildDate": "2025-04-04T22:24:00Z",
        "buildRevision": "0000000000000000000000000000000000000000",
        "dataDirectory": "/home/node/trilium-data",
        "clipperProtocolVersion": "1.0",
    },
    "0.105": {  # db and sync versions are the stand-in's guesses: nothing reads them
        "appVersion": "0.105.0",
        "dbVersion": 236,
        "syncVersion": 37,
        "buildDate": "2026-08-19T10:00:00Z",
        "buildRevision": "86a9715b00000000000000000000000000000000",
        "dataDirectory": "/home/node/trilium-data",
        "clipperProtocolVersion": "1.0",
    },
}
# Note types a version no longer (or does not yet) know: the stand-in refuses to create them.
GONE_TYPES = {"0.93": frozenset({"spreadsheet", "llmChat"}), "0.105": frozenset({"geoMap"})}
HISTORY_LIMIT = 500  # `LIMIT 500` in the server's SQL; no "since", no pagination
_REVISIONS = re.compile(r"/etapi/notes/(?P<id>[^/]+)/revisions")
_REVISION = re.compile(r"/etapi/revisions/(?P<id>[^/]+)(?P<content>/content)?")


@dataclass
class RevisionRecord:
    """A snapshot of a note's title and content, taken before an edit."""

    revision_id: str
    note_id: str
    title: str
    type: str
    mime: str
    content: str | bytes
    is_protected: bool
    created: datetime
    blob: str


@dataclass
class DeletedNote:
    """A deleted note Trilium still holds (isDeleted = 1) until it erases it."""

    note: NoteRecord
    branches: list[BranchRecord]
    delete_id: str
    at: datetime


@dataclass
class Ledger:
    """What the history and revision routes show. Only edits fill it (tests/standin_edits.py
    records them); a notebook just seeded has no revisions and no deletions."""

    revisions: dict[str, RevisionRecord] = field(default_factory=dict)
    deleted: dict[str, DeletedNote] = field(default_factory=dict)

    def history(self, tree: NoteTree, ancestor: str) -> list[dict[str, Any]]:
        """Creations, revision snapshots and deletions, newest first, at most 500 rows."""
        notes = {n: (note, False, "") for n, note in tree.notes.items()}
        notes |= {n: (d.note, True, d.delete_id) for n, d in self.deleted.items()}
        if ancestor != "root":  # deleted branches count: a deletion inside shows up
            notes = {n: v for n, v in notes.items() if ancestor in self._ancestors(tree, n)}

        def row(note_id: str, title: str, moment: datetime) -> dict[str, Any]:
            note, deleted, delete_id = notes[note_id]
            fields = {
                "noteId": note_id,
                "title": "[protected]" if note.is_protected else title,
                "current_title": "[protected]" if note.is_protected else note.title,
                "current_isDeleted": int(deleted),  # straight from SQLite: 0/1, not a boolean
                "current_deleteId": delete_id or None,
                "current_isProtected": int(note.is_protected),
                "utcDate": utc_text(moment),
                "date": local_text(moment),
            }
            return fields | ({"canBeUndeleted": True} if deleted else {})

        rows = [row(n, note.title, note.created) for n, (note, _, _) in notes.items()]
        revisions = [r for r in self.revisions.values() if r.note_id in notes]
        rows += [row(r.note_id, r.title, r.created) for r in revisions]
        rows += [row(n, d.note.title, d.at) for n, d in self.deleted.items() if n in notes]
        rows.sort(key=lambda r: r["utcDate"], reverse=True)
        return rows[:HISTORY_LIMIT]

    def _ancestors(self, tree: NoteTree, note_id: str) -> set[str]:
        seen: set[str] = set()
        stack = [note_id]
        while stack:
            current = stack.pop()
            parents = [b.parent_id for b in tree.parent_branches(current)]
            if current in self.deleted:
                parents += [b.parent_id for b in self.deleted[current].branches]
            for parent in parents:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return seen


def answer(ledger: Ledger, tree: NoteTree, path: str, query: dict[str, list[str]]) -> Reply | None:
    """A GET only 0.102+ answers, or None to let the 0.93 routes answer it."""

    def ok(payload: Any) -> Reply:
        return Reply(200, json.dumps(payload, ensure_ascii=False).encode())

    if path == "/etapi/notes/history":
        ancestor = (query.get("ancestorNoteId") or ["root"])[0] or "root"
        return ok(ledger.history(tree, ancestor))
    if match := _REVISIONS.fullmatch(path):
        note_id = match["id"]
        if note_id not in tree.notes:
            return error_reply(404, "NOTE_NOT_FOUND", f"Note '{note_id}' not found.")
        mine = [r for r in ledger.revisions.values() if r.note_id == note_id and not r.is_protected]
        return ok([_revision_json(r) for r in sorted(mine, key=lambda r: r.created, reverse=True)])
    if match := _REVISION.fullmatch(path):
        revision = ledger.revisions.get(match["id"])
        if revision is None:
            return error_reply(404, "REVISION_NOT_FOUND", f"Revision '{match['id']}' not found.")
        if revision.is_protected:
            return error_reply(400, "REVISION_IS_PROTECTED", "Revision is protected.")
        if not match["content"]:
            return ok(_revision_json(revision))
        body = revision.content
        return Reply(200, body.encode("utf-8") if isinstance(body, str) else body, revision.mime)
    return None


def _revision_json(revision: RevisionRecord) -> dict[str, Any]:
    size = len(revision.content.encode() if isinstance(revision.content, str) else revision.content)
    return {
        "revisionId": revision.revision_id,
        "noteId": revision.note_id,
        "type": revision.type,
        "mime": revision.mime,
        "isProtected": revision.is_protected,
        "title": revision.title,
        "blobId": revision.blob,
        "dateLastEdited": local_text(revision.created),
        "dateCreated": local_text(revision.created),
        "utcDateLastEdited": utc_text(revision.created),
        "utcDateCreated": utc_text(revision.created),
        "utcDateModified": utc_text(revision.created),
        "contentLength": size,
    }
