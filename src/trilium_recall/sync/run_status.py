"""What a sync run reports: its progress while it runs (/health, the page, the build's bar) and
its counts when it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class SyncStatus:
    """What /health shows about one instance; updated in place by the syncer."""

    done: int = 0  # indexed notes of the run: those kept as stored, then those read
    total: int = 0
    kept: int = 0  # of done, those kept: a resumed build counts what the last run built
    error: str | None = None
    running: str | None = None  # "full" | "tick" while a run is under way
    embedded: int = 0  # passages sent to the embedder since start
    started: float = 0.0  # time.monotonic() when the current run began reading notes

    def eta_seconds(self) -> float | None:
        """Seconds left at this run's rate so far; None before its first round is written, and
        while runs fail (the rate of a stalled build tells nothing)."""
        if self.done == self.kept or self.error is not None:
            return None
        if self.done >= self.total:
            return 0.0
        elapsed = time.monotonic() - self.started
        return round(elapsed / (self.done - self.kept) * (self.total - self.done), 1)


@dataclass
class RunReport:
    listed: int = 0
    indexed: int = 0
    updated: int = 0
    deleted: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    full: bool = False  # a full comparison (also one a tick ran when recent changes overflowed)

    @property
    def changed(self) -> bool:
        """Whether the run changed the index (what the listeners of a full run describe)."""
        return bool(self.indexed or self.updated or self.deleted)
