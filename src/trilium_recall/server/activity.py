"""The activity log: what each /recall, MCP and web call sent, or why it sent nothing.

Written after the answer is computed, by one writer thread with its own connection: a request
only puts an entry on a queue (~12 µs; /recall p50 35.7 ms with the log, 35.3 ms without, on a
loaded 2-core machine: bench/bench_activity.py), and a failing write (disk full, read-only
file) is a warning and a dropped entry, never an error for the caller. Bounded both ways: each
batch written also deletes rows beyond `activity_max_rows` and older than `activity_max_days`
(two range deletes on indexed columns, next to nothing when there is nothing to delete). A
prompt is kept only as its first words (`PROMPT_HEAD_CHARS`), or not at all with
RECALL_LOG_PROMPTS=0.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Sequence
from datetime import datetime

import apsw

from ..config import Settings
from ..errors import StoreError
from ..index.activity_log import Activity, SentNote, append
from ..index.file import open_db
from ..index.transactions import write_transaction
from ..search.answers import RecallResult, silence_reason
from ..textclean import clip, one_line

log = logging.getLogger(__name__)

PROMPT_HEAD_CHARS = 80
SESSION_CHARS = 100  # Claude Code's ids are UUIDs; anything longer is cut
TITLE_CHARS = 200
QUEUE_LIMIT = 1_000  # entries waiting for the writer; past it new ones are dropped, counted
BATCH_LIMIT = 200  # entries written in one transaction
PATHS = ("hook", "api", "mcp", "web")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def prompt_head(prompt: str, limit: int = PROMPT_HEAD_CHARS) -> str:
    """The first `limit` characters on one line, control characters folded to spaces."""
    return clip(one_line(prompt[: limit * 4]), limit)


def describe(
    path: str,
    prompt: str,
    result: RecallResult,
    settings: Settings,
    *,
    session_id: str | None = None,
    instance: str | None = None,
    at: float | None = None,
    budget_ms: float | None = None,
) -> Activity:
    """The log entry for one call (no I/O); `budget_ms` when the call had less time than
    RECALL_TIME_BUDGET_MS (a hook's prompt)."""
    passages = result.passages
    return Activity(
        at=time.time() if at is None else at,
        path=path,
        session_id=session_id[:SESSION_CHARS] if session_id else None,
        instance=instance,
        prompt_head=prompt_head(prompt) if settings.log_prompts else None,
        passages=tuple(
            SentNote(p.instance, p.note_id, p.title[:TITLE_CHARS], p.score) for p in passages
        ),
        silence=silence_reason(result, budget_ms or settings.time_budget_ms),
        took_ms=round(result.took_ms, 1),
    )


class _Flush:
    """A marker in the queue: set once the writer has reached it."""

    def __init__(self) -> None:
        self.done = threading.Event()


class ActivityLog:
    """Takes entries from the request path and writes them on a thread of its own."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.enabled = settings.activity_max_rows > 0
        self.dropped = 0  # entries lost to a full queue or a failed write
        self._queue: queue.Queue[Activity | _Flush | None] = queue.Queue(QUEUE_LIMIT)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._failing = False
        self._closed = False

    def record(
        self,
        path: str,
        prompt: str,
        result: RecallResult,
        *,
        session_id: str | None = None,
        instance: str | None = None,
        budget_ms: float | None = None,
    ) -> None:
        """Queue what this call sent; never raises, never waits for the disk."""
        if not self.enabled or self._closed:  # a request finishing during shutdown: dropped
            return
        try:
            entry = describe(
                path,
                prompt,
                result,
                self.settings,
                session_id=session_id,
                instance=instance,
                budget_ms=budget_ms,
            )
            self._ensure_writer()
            self._queue.put_nowait(entry)
        except queue.Full:
            self.dropped += 1
        except Exception:  # the log must never break an answer
            log.exception("activity log: could not queue an entry")

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued so far is written (or given up on)."""
        if self._thread is None:
            return True
        marker = _Flush()
        try:
            self._queue.put(marker, timeout=timeout)
        except queue.Full:
            return False
        return marker.done.wait(timeout)

    def close(self) -> None:
        """Write what is queued, then stop the writer; later entries are dropped."""
        self._closed = True
        thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(10)
            self._thread = None

    def _ensure_writer(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_forever, name="activity-log", daemon=True
                )
                self._thread.start()

    def _write_forever(self) -> None:
        db: apsw.Connection | None = None
        try:
            while True:
                items = [self._queue.get()]
                while len(items) < BATCH_LIMIT:
                    try:
                        items.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                batch = [item for item in items if isinstance(item, Activity)]
                if batch:
                    db = self._write(db, batch)
                for item in items:
                    if isinstance(item, _Flush):
                        item.done.set()
                if None in items:
                    return
        finally:
            if db is not None:
                db.close()

    def _write(
        self, db: apsw.Connection | None, batch: Sequence[Activity]
    ) -> apsw.Connection | None:
        """Insert and prune in one transaction; on failure drop the batch and say so once."""
        try:
            db = db or open_db(self.settings.db_path)
            with write_transaction(db):
                append(db, batch, self.settings.activity_max_rows, self.settings.activity_max_days)
        except (apsw.Error, StoreError) as exc:
            self.dropped += len(batch)
            if not self._failing:
                log.warning("activity log: cannot write (%s); dropping entries until it can", exc)
            self._failing = True
            return db
        if self._failing:
            log.info("activity log: writing again (%d entries were dropped)", self.dropped)
        self._failing = False
        return db


def parse_since(text: str, now: float | None = None) -> float:
    """`30m`, `2h`, `1d`, `1w` ago, or an ISO time (local time unless it names a zone)."""
    now = time.time() if now is None else now
    duration = _DURATION.match(text)
    if duration:
        return now - float(duration[1]) * _UNIT_SECONDS[duration[2]]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since {text!r}: give a duration such as 30m, 2h or 1d, "
            "or an ISO time such as 2026-12-03T09:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # the reader's local time
    return moment.timestamp()
