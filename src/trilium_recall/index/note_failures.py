"""Notes a sync could not index, and why: those skipped for "error", and those whose new text
could not be read while their last version keeps serving. Each is tried again at the next full
comparison; a note written whole since has no failure left."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import apsw

# Starts the reason of a note whose last version keeps serving (its row does not say "error").
KEPT = "its last version is kept: "


def record(db: apsw.Connection, instance: str, note_id: str, reason: str) -> None:
    db.execute(
        "INSERT OR REPLACE INTO note_errors VALUES (?, ?, ?, ?)",
        (instance, note_id, reason, time.strftime("%FT%TZ", time.gmtime())),
    )


def clear(db: apsw.Connection, instance: str, note_id: str) -> None:
    db.execute("DELETE FROM note_errors WHERE instance = ? AND note_id = ?", (instance, note_id))


def clear_kept(db: apsw.Connection, instance: str, unread: Iterable[str]) -> None:
    """A full comparison found every note but the `unread` ones as stored: a kept last version
    whose note went back to it (an edit undone) has nothing left to read, so no failure."""
    db.execute(
        "DELETE FROM note_errors WHERE instance = ? AND substr(reason, 1, ?) = ? "
        "AND note_id NOT IN (SELECT value FROM json_each(?))",
        (instance, len(KEPT), KEPT, json.dumps(sorted(unread))),
    )


def failed(db: apsw.Connection, instance: str, limit: int) -> list[tuple[Any, ...]]:
    """(note_id, title, reason, at) of the notes that failed, by title; the reason is None when
    none was kept. A reason left by an older release for a note indexed since is not shown."""
    return db.execute(
        "SELECT n.note_id, n.title, e.reason, e.at FROM notes n LEFT JOIN note_errors e "
        "USING (instance, note_id) WHERE n.instance = ? "
        "AND (n.skip_reason = 'error' OR substr(e.reason, 1, ?) = ?) ORDER BY n.title LIMIT ?",
        (instance, len(KEPT), KEPT, limit),
    ).fetchall()
