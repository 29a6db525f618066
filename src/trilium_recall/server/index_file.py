"""The engine's index file and the vector mirror it fills, from the first start on.

A file the engine cannot use (damaged, or found damaged by a search of an earlier run; built
by another model) is moved aside, kept for a look, and a fresh one begun, which the first full
build fills while /health says "starting". A file from a newer schema is refused instead (a
downgrade by mistake must not cost the newer release's index), and a reading command (search,
explain) reports any such file and never moves it: it may be a newer `serve`'s.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import IndexDamaged, IndexTooNew, IndexUnusable
from ..index.embed import Embedder
from ..index.file import move_aside, record_damage, recorded_damage
from ..index.store import Store
from ..index.vectors import VectorIndex

log = logging.getLogger(__name__)


class IndexFile:
    def __init__(self, path: Path, embedder: Embedder, reading: bool) -> None:
        self.path = path
        self.embedder = embedder
        self.reading = reading
        self.vectors = VectorIndex(embedder.dim, embedder.name)
        # Set when the file found at start could not be used and was moved aside.
        self.moved_aside: tuple[Path, str] | None = None

    def connect(self, vectors: VectorIndex | None = None) -> Store:
        """A connection to the file; one that cannot write it for a reading command."""
        return Store(self.path, vectors, read_only=self.reading)

    def open(self) -> Store:
        """The engine's connection, the file's vectors loaded into the mirror."""
        try:
            if not self.reading and (damage := recorded_damage(self.path)):
                raise damage
            return self._load()
        except IndexUnusable as exc:
            if self.reading or isinstance(exc, IndexTooNew):
                raise
            return self.begin_again(exc)

    def begin_again(self, exc: IndexUnusable) -> Store:
        """Move the file aside (with its -wal, -shm and damage note) and open a fresh one."""
        moved = move_aside(self.path)
        log.warning("%s; moved it to %s (kept) and building a fresh index", exc, moved.name)
        self.moved_aside = (moved, str(exc))
        self.vectors = VectorIndex(self.embedder.dim, self.embedder.name)
        return self._load()

    def found_damage(self, exc: IndexDamaged) -> None:
        """A search found the file damaged: the next start moves it aside, even if the pages
        its warm-up reads are whole."""
        log.error("%s: restart trilium-recall to move it aside and rebuild", exc)
        record_damage(self.path, str(exc))

    def _load(self) -> Store:
        store = self.connect(self.vectors)
        try:
            store.load_vectors()
        except BaseException:
            store.close()
            raise
        return store
