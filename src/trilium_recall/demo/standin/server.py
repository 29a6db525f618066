"""A fake Trilium: a real HTTP server on 127.0.0.1 speaking the ETAPI subset the engine reads.

It reproduces the behaviours of shared/trilium/TRILIUM-FACTS.md: the three auth header forms,
inherited attributes, hidden and archived filtering, protected notes. The product's part only
seeds (an export zip, a notebook directory, single notes) and serves reads: what the demo and
the command line need. The edits a user makes after seeding (content, titles, labels, moves,
deletions and the history they leave) live with the tests, in tests/standin_edits.py, and the
fault switches in tests/standin_faults.py; both subclass this one.
`version="0.105"` makes it answer as the newest Trilium does (py): its app-info, recent
changes, revisions and note types. Run standalone: `python -m trilium_recall.demo.standin
--port N [--zip P] [--notebook D] [--trilium-version 0.105]`.
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

from ...trilium.records import NOTE_ID
from .etapi import AttributeRecord, NoteRecord, NoteTree, Reply, answer, error_reply
from .export import (
    SeedAttribute,
    SeedNote,
    read_export_zip,
    read_notebook_dir,
    seed_attribute,
)
from .handler import Handler, authorized
from .newest import APP_INFO, GONE_TYPES, VERSIONS, Ledger
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

    # ------------------------------------------------------------ reads

    def note_ids(self) -> list[str]:
        with self._lock:
            return list(self._tree.notes)

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

    def _add_attribute(self, note: NoteRecord, seed: SeedAttribute, moment: datetime) -> None:
        self._attribute_count += 1  # ids depend on insertion order only: deterministic
        digest = hashlib.sha1(f"{note.note_id}:{self._attribute_count}".encode()).hexdigest()
        position = seed.position or 10 * (len(note.attributes) + 1)
        record = AttributeRecord(
            digest[:12], note.note_id, seed.type, seed.name, seed.value, position,
            seed.inheritable, moment,
        )  # fmt: skip
        note.attributes.append(record)

    def respond(self, method: str, target: str, authorization: str | None) -> Reply | None:
        """The reply to one request; None drops the connection unanswered (a subclass that
        holds requests back answers None when the server stops meanwhile)."""
        parts = urlsplit(target)
        path, query = unquote(parts.path), parse_qs(parts.query, keep_blank_values=True)
        if not authorized(authorization, self._token):
            return error_reply(401, "NOT_AUTHENTICATED", "Not authenticated")
        with self._lock:
            if self.version != "0.93" and method == "GET":
                reply = newest_answer(self._ledger, self._tree, path, query)
                if reply is not None:
                    return reply
            return answer(self._tree, method, path, query, self._app_info())

    def _app_info(self) -> dict[str, Any]:
        """utcDateTime is fixed at server start, as in Trilium."""
        started = self._started_at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return {**APP_INFO[self.version], "utcDateTime": started}
