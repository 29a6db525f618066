"""What each session has been sent: a note goes to a session once, until its text changes (the
store then drops its marks: `Store.save_note`) or the mark is older than the session's time to
live (RECALL_SESSION_TTL_HOURS)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from .store import Store

Note = tuple[str, str]  # (instance, note id)


def already_sent(store: Store, session_id: str, ttl_seconds: float) -> set[Note]:
    cutoff = time.time() - ttl_seconds
    rows = store.db.execute(
        "SELECT instance, note_id FROM sent WHERE session_id = ? AND sent_at >= ?",
        (session_id, cutoff),
    )
    return {(instance, note_id) for instance, note_id in rows}


def claim(
    store: Store, session_id: str, notes: Iterable[Note], ttl_seconds: float, wait_s: float
) -> list[Note]:
    """Mark `notes` sent in this session and return those no request of it had claimed: two
    requests of one session at once (our hook installed in two forms) found the same notes
    unsent, and each sent them. One write transaction decides."""
    now = time.time()
    with store.atomic(wait_s) as db:
        db.execute("DELETE FROM sent WHERE sent_at < ?", (now - ttl_seconds,))
        taken = {
            (instance, note_id)
            for instance, note_id in db.execute(
                "SELECT instance, note_id FROM sent WHERE session_id = ?", (session_id,)
            )
        }
        fresh = [note for note in dict.fromkeys(notes) if note not in taken]
        db.executemany(
            "INSERT INTO sent VALUES (?, ?, ?, ?)",
            [(session_id, instance, note_id, now) for instance, note_id in fresh],
        )
    return fresh
