"""A foreground build's progress on stderr: a bar with the time left on a terminal, plain lines
now and then otherwise (a log file or CI gets a readable record, not cursor codes)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress

from .sync.run_status import SyncStatus

PLAIN_EVERY_S = 10.0  # a line at most this often when stderr is not a terminal

Show = Callable[[str, SyncStatus], None]


@contextmanager
def build_progress(names: list[str]) -> Iterator[Show]:
    """Yields what the engine's build calls with each instance's status."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield PlainLines(console).show
        return
    with Progress(console=console, transient=False) as progress:  # its columns end with the ETA
        tasks = {name: progress.add_task(f"indexing {name}", total=None) for name in names}

        def show(name: str, status: SyncStatus) -> None:
            progress.update(tasks[name], completed=status.done, total=status.total or None)

        yield show


class PlainLines:
    """`indexing NAME: DONE/TOTAL notes, about N s left`: the first, the last, and one a period."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._last: dict[str, float] = {}

    def show(self, name: str, status: SyncStatus) -> None:
        now = time.monotonic()
        ends = status.done in (0, status.total)
        if not ends and now - self._last.get(name, 0.0) < PLAIN_EVERY_S:
            return
        self._last[name] = now
        eta = status.eta_seconds()
        left = f", about {eta:.0f} s left" if eta else ""
        line = f"indexing {name}: {status.done}/{status.total} notes{left}"
        self._console.print(line, markup=False, highlight=False, soft_wrap=True)
