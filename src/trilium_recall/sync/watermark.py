"""The minute tick's mark: the newest `utcDateModified` the index has seen. A tick lists the
notes modified since a little before it (ETAPI's search `note.utcDateModified >= …`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from ..trilium.records import Note

TICK_OVERLAP = timedelta(seconds=10)  # re-list a little before the mark: late commits
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f"


def moved_mark(
    notes: Iterable[Note], current: str, listed_at: datetime, *, full: bool = False
) -> str | None:
    """The mark after listing `notes` at `listed_at`, None when it stays: the newest date
    listed, never past the listing's moment. One note dated ahead (a device's fast clock, an
    import keeping its dates) held the mark there, and every edit waited for the full
    comparison; capped at the run's end, edits made while a long run went on were passed over.
    A full comparison sets it as it finds it, so a date set right brings it back down."""
    newest = min(max((n.utc_date_modified for n in notes), default=""), _written(listed_at))
    return newest if newest > current or (full and newest != current) else None


def listed_since(mark: str) -> str | None:
    """What a tick asks for: the mark less the overlap; None before any mark (list all)."""
    if not mark:
        return None
    return _written(datetime.strptime(mark.rstrip("Z"), TIMESTAMP) - TICK_OVERLAP)


def _written(moment: datetime) -> str:
    """As Trilium writes its dates: milliseconds, a Z."""
    return moment.strftime(TIMESTAMP)[:-3] + "Z"
