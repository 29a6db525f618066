"""A fake Trilium: a real HTTP server on 127.0.0.1 speaking the ETAPI subset the engine reads.

It reproduces the behaviours of shared/trilium/TRILIUM-FACTS.md: the three auth header forms,
inherited attributes, hidden and archived filtering, protected notes, and which edits bump a
note's utcDateModified. Tests and the demo mode change it through this Python API while it serves
(the tests' fault switches live beside them, in a subclass that overrides `respond`).
`version="0.105"` makes it answer as the newest Trilium does (py): its app-info, recent
changes with deletions until they are erased, revisions, its note types, and imports that keep
the source's old dates. Run standalone: `python -m trilium_recall.demo.standin --port N [--zip P]
[--notebook D] [--trilium-version 0.105]`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

from ...trilium.client import NOTE_ID
from .etapi import AttributeRecord, NoteRecord, NoteTree, Reply, answer, error_reply
from .export import (
    SeedAttribute,
    SeedNote,
    read_export_zip,
    read_notebook_dir,
    seed_attribute,
)
from .handler import Handler, authorized
from .newest import (
    APP_INFO,
    ERASE_AFTER,
    GONE_TYPES,
    VERSIONS,
    Ledger,
)
from .newest import answer as newest_answer

SEED_BASE_TIME = datetime(2024, 1, 1, tzinfo=UTC)  # seeded notes get this + n seconds
_MS = timedelta(milliseconds=1)
_SYSTEM_NOTES = (  # (id, parent, title, type, content): the hidden subtree every fake holds
    ("_hidden", "root", "Hidden Notes", "doc", ""),
    ("_options", "_hidden", "Options", "book", ""),
    ("_help", "_hidden", "User Guide", "book", ""),
    ("_help_HI6GBBIduIgv", "_help", "Labels", "text", "<p>A label is a name and a value.</p>"),
    ("_help_Cq5X6iKQop6R", "_help", "Relations", "text", "<p>A relation links two notes.</p>"),
)


class FakeTrilium:
    """In-memory note tree with root and `_hidden`, served over real HTTP. Thread-safe."""

    def __init__(
        self, token: str = "fakeTokenId_fakeSecret", *, port: int = 0, version: str = "0.93"
    ) -> None:
        if version not in VERSIONS:
            raise ValueError(f"the stand-in speaks Trilium {VERSIONS}, not {version!r}")
        self.version = version
        self._ledger = Ledger()
        self._token = token
        self._port = port
        self._lock = threading.RLock()
        self._tree = NoteTree()
        self._last_stamp = SEED_BASE_TIME
        self._seeded = 0
        self._attribute_count = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._started_at = datetime.now(UTC)
        self._insert(SeedNote("root", "root"), self._seed_time())
        self._tree.add_branch("root", "none", None, 0, SEED_BASE_TIME)  # Trilium's root branch
        for position, (note_id, parent, title, kind, content) in enumerate(_SYSTEM_NOTES):
            mime = "text/html" if kind == "text" else ""
            position = 999_999_999 if note_id == "_hidden" else (position + 1) * 10
            seed = SeedNote(note_id, title, kind, mime, content, parents=[(parent, None, position)])
            self._insert(seed, self._seed_time())

    def __repr__(self) -> str:  # never shows the token
        return f"FakeTrilium(url={self.url()!r}, notes={len(self._tree.notes)})"

    # ------------------------------------------------------------ server lifecycle

    def start(self) -> str:
        """Listen on 127.0.0.1 (on the same port again after stop()); return the base URL."""
        with self._lock:
            if self._server is None:
                server = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
                server.daemon_threads = True
                server.fake = self  # type: ignore[attr-defined]
                self._port = server.server_address[1]
                thread = threading.Thread(
                    target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
                )
                thread.start()
                self._server, self._thread = server, thread
            return self.url()

    def stop(self) -> None:
        with self._lock:
            server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join()

    def url(self) -> str:
        """Base URL; the ETAPI lives under `<url>/etapi`."""
        return f"http://127.0.0.1:{self._port}"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------ seeding

    @classmethod
    def from_export_zip(cls, path: str | Path, **kwargs: Any) -> FakeTrilium:
        fake = cls(**kwargs)
        fake.load_export_zip(path)
        return fake

    def load_export_zip(self, path: str | Path, parent_id: str = "root") -> None:
        with self._lock:
            self._require(parent_id)
            self._insert_all(read_export_zip(path, parent_id, self._tree.note_path(parent_id)))

    def load_notebook_dir(self, path: str | Path, parent_id: str = "root") -> None:
        with self._lock:
            self._require(parent_id)
            self._insert_all(read_notebook_dir(path, parent_id))

    def add_note(
        self,
        note_id: str,
        title: str,
        *,
        parent_id: str = "root",
        type: str = "text",
        mime: str = "text/html",
        content: str = "",
        attributes: Iterable[dict[str, Any]] = (),
        is_protected: bool = False,
        prefix: str | None = None,
    ) -> None:
        if type in GONE_TYPES[self.version]:
            raise ValueError(f"Trilium {self.version} has no note type {type!r}")
        attrs = [seed_attribute(raw, (i + 1) * 10) for i, raw in enumerate(attributes)]
        with self._lock:
            self._require(parent_id)
            placement = (parent_id, prefix, self._tree.next_position(parent_id))
            seed = SeedNote(note_id, title, type, mime, content, attrs, is_protected, [placement])
            self._insert(seed, self._stamp())

    # ------------------------------------------------------------ edits

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
                self._ledger.snapshot(note, moment)
            note.content, note.modified = content, moment

    def note_ids(self) -> list[str]:
        with self._lock:
            return list(self._tree.notes)

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
            self._add_attribute(note, SeedAttribute("label", name, value, inheritable))

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
            self._add_attribute(note, SeedAttribute("relation", name, target_id, inheritable))

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
            self._ledger.record_deletion(self._tree.delete(note_id), self._stamp())

    def undelete(self, note_id: str) -> None:
        """Bring back a deleted note with everything deleted alongside it, dated now."""
        with self._lock:
            self._ledger.restore(note_id, self._tree, self._stamp())

    def erase_deleted(self, older_than: timedelta = ERASE_AFTER) -> None:
        with self._lock:  # as Trilium does 7 days after a deletion; stamps may run ahead
            self._ledger.erase(max(datetime.now(UTC), self._last_stamp), older_than)

    # ------------------------------------------------------------ internals

    def _require(self, note_id: str) -> NoteRecord:
        note = self._tree.notes.get(note_id)
        if note is None:
            raise KeyError(f"no note {note_id!r}")
        return note

    def _seed_time(self) -> datetime:
        """Deterministic dates for seeded notes, in load order."""
        self._seeded += 1
        return SEED_BASE_TIME + timedelta(seconds=self._seeded)

    def _stamp(self) -> datetime:
        """Now, in whole ms, strictly after every earlier stamp (each edit is visibly later)."""
        now = datetime.now(UTC)
        now = now.replace(microsecond=now.microsecond // 1000 * 1000)
        self._last_stamp = max(now, self._last_stamp + _MS)
        return self._last_stamp

    def _insert_all(self, seeds: list[SeedNote]) -> None:
        """Notes first, then branches: a clone's other parent may come later in the batch."""
        known = {s.note_id for s in seeds} | set(self._tree.notes)
        for seed in seeds:  # check everything first, so a bad batch inserts nothing
            missing = [p for p, _, _ in seed.parents if p not in known]
            if missing or seed.note_id in self._tree.notes or not NOTE_ID.fullmatch(seed.note_id):
                raise ValueError(f"cannot seed {seed.note_id!r}: bad or duplicate id, {missing=}")
        moments = [self._seed_time() for _ in seeds]
        for seed, moment in zip(seeds, moments, strict=True):
            self._insert(replace(seed, parents=[]), moment)
        for seed, moment in zip(seeds, moments, strict=True):
            for parent_id, prefix, position in seed.parents:
                self._tree.add_branch(seed.note_id, parent_id, prefix, position, moment)

    def _insert(self, seed: SeedNote, moment: datetime) -> None:
        if not NOTE_ID.fullmatch(seed.note_id) or seed.note_id in self._tree.notes:
            raise ValueError(f"invalid or duplicate note id {seed.note_id!r}")
        note = NoteRecord(
            seed.note_id, seed.title, seed.type, seed.mime, seed.content, seed.is_protected,
            moment, moment,
        )  # fmt: skip
        self._tree.notes[seed.note_id] = note
        for attr in seed.attributes:
            self._add_attribute(note, attr, moment)
        for parent_id, prefix, position in seed.parents:
            self._tree.add_branch(seed.note_id, parent_id, prefix, position, moment)

    def _add_attribute(
        self, note: NoteRecord, seed: SeedAttribute, moment: datetime | None = None
    ) -> None:
        self._attribute_count += 1  # ids depend on insertion order only: deterministic
        digest = hashlib.sha1(f"{note.note_id}:{self._attribute_count}".encode()).hexdigest()
        position = seed.position or 10 * (len(note.attributes) + 1)
        record = AttributeRecord(
            digest[:12], note.note_id, seed.type, seed.name, seed.value, position,
            seed.inheritable, moment or self._stamp(),
        )  # fmt: skip
        note.attributes.append(record)

    def _check_new_parent(self, note_id: str, parent_id: str) -> None:
        self._require(parent_id)
        if note_id == parent_id or note_id in self._tree.ancestors(parent_id):
            raise ValueError(f"placing {note_id!r} under {parent_id!r} would make a cycle")

    def respond(self, method: str, target: str, authorization: str | None) -> Reply | None:
        """The reply to one request; None drops the connection unanswered (a subclass that
        holds requests back answers None when the server stops meanwhile)."""
        parts = urlsplit(target)
        path, query = unquote(parts.path), parse_qs(parts.query, keep_blank_values=True)
        if not authorized(authorization, self._token):
            return error_reply(401, "NOT_AUTHENTICATED", "Not authenticated")
        with self._lock:
            if self.version != "0.93" and method == "GET":
                self._ledger.erase(datetime.now(UTC), ERASE_AFTER)
                reply = newest_answer(self._ledger, self._tree, path, query)
                if reply is not None:
                    return reply
            return answer(self._tree, method, path, query, self._app_info())

    def _app_info(self) -> dict[str, Any]:
        """utcDateTime is fixed at server start, as in Trilium."""
        started = self._started_at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return {**APP_INFO[self.version], "utcDateTime": started}
