"""What the index covers, per instance: indexed notes per area and the largest top-level subjects.

Read by the MCP server instructions (mcp.py: what the notes are about, so the model knows when
calling `recall` is worth it) and by the status page (web.py). Counted in SQL over `notes`
(index/note_stats.py); the breadcrumbs the syncer stores (`paths`) say which top-level subtree
a note is in. Summarising 50k notes takes ~150 ms, so `IndexOverview` does it after each full
sync, in a thread on a connection of its own, and keeps the result.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..areas import AREAS
from ..config import Settings
from ..index import note_failures, note_stats
from ..index.file import index_errors
from ..index.store import Store

log = logging.getLogger(__name__)

BREADCRUMB = " › "


@dataclass(frozen=True)
class Subject:
    """A top-level subtree: its title, how many indexed notes it holds, and its main parts."""

    title: str
    notes: int
    area: str  # the area most of its notes are in
    parts: tuple[str, ...]  # titles of its largest children's subtrees, largest first

    def to_json(self) -> dict[str, object]:
        return {"title": self.title, "notes": self.notes, "area": self.area, "parts": self.parts}


@dataclass(frozen=True)
class InstanceOverview:
    name: str
    notes: int
    areas: dict[str, int]  # indexed notes per area, every area named
    subjects: tuple[Subject, ...]  # largest first

    def to_json(self) -> dict[str, object]:
        return {
            "notes": self.notes,
            "areas": self.areas,
            "subjects": [s.to_json() for s in self.subjects],
        }


FAILED_NOTES_SHOWN = 100


def failed_notes(store: Store, instance: str) -> list[dict[str, object]]:
    """Each note that failed to index, with the reason, by title: skipped for "error", or
    serving its last version (index/note_failures.py)."""
    with index_errors(store.path):
        rows = note_failures.failed(store.db, instance, FAILED_NOTES_SHOWN)
    return [
        {"note_id": row[0], "title": row[1], "reason": row[2] or "(no reason kept)", "at": row[3]}
        for row in rows
    ]


def area_counts(store: Store, instance: str) -> dict[str, int]:
    return {**dict.fromkeys(AREAS, 0), **note_stats.per_area(store.db, instance)}


def subjects(store: Store, instance: str, parts: int = 4) -> list[Subject]:
    """Top-level subtrees by indexed notes, largest first (ties by title).

    Counted per breadcrumb in SQL, not per note in Python (515 → ~150 ms at 50k notes): a
    note adds to every subtree on its path, and is a node of its own only near the top, where
    it can be a subject or a part; deeper, only its path counts."""
    root = _Node()
    for path, leaf, area, count in note_stats.per_breadcrumb(store.db, instance, BREADCRUMB):
        node = root
        for name in [*(path.split(BREADCRUMB) if path else []), *([leaf] if leaf else [])]:
            node = node.children.setdefault(name, _Node())
            node.notes += count
            node.areas[area] += count
    return [
        Subject(title, node.notes, node.areas.most_common(1)[0][0], node.parts(parts))
        for title, node in _largest(root.children)
    ]


class _Node:
    """A subtree's indexed notes (itself included), their areas, and its children by title."""

    def __init__(self) -> None:
        self.notes = 0
        self.areas: Counter[str] = Counter()
        self.children: dict[str, _Node] = {}

    def parts(self, n: int) -> tuple[str, ...]:
        """Its largest children; one holding most of the notes and a tree of its own (a wiki's
        "Wiki" folder, a journal's year) gives way to its children, which say more."""
        kids = _largest(self.children)
        while kids and kids[0][1].notes * 2 > self.notes and kids[0][1].children:
            kids = _largest({**kids[0][1].children, **dict(kids[1:])})
        return tuple(title for title, _ in kids[:n])


def _largest(nodes: dict[str, _Node]) -> list[tuple[str, _Node]]:
    return sorted(nodes.items(), key=lambda item: (-item[1].notes, item[0]))


def overview(store: Store, instances: Iterable[str], top: int = 8) -> list[InstanceOverview]:
    found = []
    for name in instances:
        counts = area_counts(store, name)
        found.append(
            InstanceOverview(name, sum(counts.values()), counts, tuple(subjects(store, name)[:top]))
        )
    return found


class IndexOverview:
    """The latest `overview` of the index, made off the event loop when asked to refresh."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.current: list[InstanceOverview] = []

    async def refresh(self) -> list[InstanceOverview]:
        """Read it again; on failure keep the last one (and say why in the log)."""
        try:
            self.current = await asyncio.to_thread(self._read)
        except Exception:
            log.exception("could not summarise the index")
        return self.current

    def _read(self) -> list[InstanceOverview]:
        store = Store(self._settings.db_path)
        try:
            return overview(store, self._settings.instances)
        finally:
            store.close()
