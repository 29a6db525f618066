"""What one Trilium offers a syncing client, detected at every full comparison and never assumed
from its version: recent changes (`GET /notes/history`, 0.102+) and blobId content hashes.

Recent changes are not a change feed: 500 rows at most, no "since", deletions only until they
are erased, revision snapshots rather than every edit, and imported notes sorted by their old
creation dates. The minute tick reads them for what they do tell (deletions, revisions); the
full comparison stays the authority.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import NoteNotFound, TriliumBadResponse, TriliumUnavailable
from .client import TriliumClient
from .records import Change

HISTORY_LIMIT = 500  # the server's `LIMIT 500`
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+ ].*)?")


@dataclass(frozen=True)
class Features:
    """The Trilium version as app-info tells it and the sync features it offers."""

    version: str | None  # None when app-info could not be read
    history: bool  # deletions and revision snapshots reach the minute tick
    content_hash: bool  # every listed note carries a blobId: content is read only when it moves

    @classmethod
    def from_state(cls, state: Mapping[str, object]) -> Features:
        """As the store's instance row records them (nothing before the first full run)."""
        names = json.loads(str(state.get("sync_features") or "[]"))
        version = state.get("trilium_version")
        return cls(str(version) if version else None, "history" in names, "blobId" in names)

    def to_json(self) -> dict[str, object]:
        """What /health and the status page show (the doctor reads the same)."""
        return {"version": self.version, "features": self.names()}

    def names(self) -> list[str]:
        offered = (("history", self.history), ("blobId", self.content_hash))
        return [name for name, on in offered if on]


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`0.105.0` → (0, 105, 0); None for what is not a version."""
    match = _VERSION.fullmatch(text.strip())
    return (int(match[1]), int(match[2]), int(match[3] or 0)) if match else None


class OnceLog:
    """Warns about each problem once (keyed), so a broken note does not flood the log."""

    def __init__(self, logger: logging.Logger) -> None:
        self._log, self._seen = logger, set[str]()

    def warn(self, key: str, message: str) -> None:
        if key not in self._seen:
            self._seen.add(key)
            self._log.warning("%s", message)


async def detect(
    client: TriliumClient, where: str, once: OnceLog
) -> tuple[str | None, list[Change] | None]:
    """(app version, recent changes or None when the server has none). A bad answer from either
    is logged once and read as "not offered" until the next full comparison asks again."""
    version = None
    try:
        version = (await client.app_info()).app_version
    except TriliumBadResponse as exc:
        once.warn(f"app-info:{exc}", f"{where}: cannot read app-info: {exc}")
    if version is not None and parse_version(version) is None:
        once.warn(f"version:{version}", f"{where}: app-info's version {version!r} is not a version")
    return version, await recent_changes(client, where, once)


async def recent_changes(client: TriliumClient, where: str, once: OnceLog) -> list[Change] | None:
    """The recent changes, or None when the server has none (0.93) or answered badly."""
    try:
        return await client.recent_changes()
    except NoteNotFound:
        return None  # before 0.102 `history` is read as a note id
    except (TriliumBadResponse, TriliumUnavailable) as exc:
        once.warn(f"history:{type(exc).__name__}", f"{where}: recent changes unreadable: {exc}")
        return None


@dataclass(frozen=True)
class News:
    """What recent changes newer than the last mark say."""

    deleted: frozenset[str]  # notes deleted now: drop them
    touched: frozenset[str]  # created or snapshotted notes that exist: look at them
    truncated: bool  # 500 rows that do not reach back to the mark: compare in full
    mark: str  # the newest row's date, the next tick's mark


def read_news(rows: list[Change], mark: str) -> News:
    newer = [row for row in rows if row.utc_date > mark]
    oldest = min((row.utc_date for row in rows), default=mark)
    deleted = frozenset(row.note_id for row in newer if row.is_deleted)
    # System notes (`_hidden`, `_options`…) are never indexed; the listing leaves them out too.
    touched = frozenset(r.note_id for r in newer if not r.note_id.startswith("_")) - deleted
    truncated = len(rows) >= HISTORY_LIMIT and oldest > mark
    return News(deleted, touched, truncated, max((r.utc_date for r in rows), default=mark))
