"""The activity table: what each /recall, MCP and web call sent, or why it sent nothing.

Entries are made and queued by server/activity.py; this module stores and reads them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import apsw

from .store import Store


@dataclass(frozen=True)
class SentNote:
    instance: str
    note_id: str
    title: str
    score: float


@dataclass(frozen=True)
class Activity:
    """One call: when, which path, what was sent (or why nothing was), how long it took."""

    at: float  # unix time
    path: str  # hook | api | mcp | web
    session_id: str | None
    instance: str | None
    prompt_head: str | None
    passages: tuple[SentNote, ...]
    silence: str | None  # None when something was sent
    took_ms: float | None  # None when the answer came too late

    def to_json(self) -> dict[str, object]:
        return {
            "at": datetime.fromtimestamp(self.at, UTC).isoformat(timespec="seconds"),
            "path": self.path,
            "session_id": self.session_id,
            "instance": self.instance,
            "prompt": self.prompt_head,
            "passages": [
                {"instance": p.instance, "note_id": p.note_id, "title": p.title, "score": p.score}
                for p in self.passages
            ],
            "silence": self.silence,
            "took_ms": self.took_ms,
        }


def append(
    db: apsw.Connection, entries: Sequence[Activity], max_rows: int, max_days: float
) -> None:
    """Append `entries`, then drop what is beyond the bounds."""
    db.executemany(
        "INSERT INTO activity (at, path, session_id, instance, prompt_head, passages, silence, "
        "took_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                e.at,
                e.path,
                e.session_id,
                e.instance,
                e.prompt_head,
                json.dumps([[p.instance, p.note_id, p.title, p.score] for p in e.passages]),
                e.silence,
                e.took_ms,
            )
            for e in entries
        ],
    )
    newest = db.last_insert_rowid()
    db.execute("DELETE FROM activity WHERE id <= ?", (newest - max_rows,))
    db.execute("DELETE FROM activity WHERE at < ?", (time.time() - max_days * 86400,))


def recent(
    store: Store,
    *,
    limit: int = 50,
    session_id: str | None = None,
    since: float | None = None,
) -> list[Activity]:
    """The newest entries first, optionally of one session and from a time on."""
    where: list[str] = ["1"]
    params: list[object] = []
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    rows = store.db.execute(
        "SELECT at, path, session_id, instance, prompt_head, passages, silence, took_ms "
        f"FROM activity WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
        (*params, limit),
    )
    return [
        Activity(
            at,
            path,
            session,
            instance,
            head,
            tuple(SentNote(*p) for p in json.loads(passages)),
            silence,
            took,
        )
        for at, path, session, instance, head, passages, silence, took in rows
    ]
