"""How many prompts may wait for a search thread.

Searches run on SEARCH_THREADS threads; prompts beyond them wait in line. With no bound, 50
clients asking at once (more than twice what two cores answer in a second) each waited in the
line until just under its budget: the answers took 1.19 s at the median and 43 % of them came
after the hook's 1.4 s window (bench/RESULTS.md, "/recall past capacity"). Past the bound a
prompt is answered "late" at once, without a search: the hook adds nothing either way, the CPU
goes to the prompts that can still be answered in time, and the line stays short enough for
them to be (answer p50 0.58 s, p95 1.04 s, the same 20 answers a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from concurrent.futures import Future
from typing import Any

log = logging.getLogger(__name__)

TOLD_EVERY_S = 60.0  # one warning a minute while prompts are turned away, not one a prompt


class SearchLine:
    """The prompts searching or waiting to, at most `limit`; `leave` when a search ends."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.waiting = 0
        self._told_at = -TOLD_EVERY_S

    def admit(self) -> bool:
        if self.waiting < self.limit:
            self.waiting += 1
            return True
        if (now := time.monotonic()) - self._told_at >= TOLD_EVERY_S:
            self._told_at = now
            log.warning("%d prompts already searching or waiting: more answered late", self.limit)
        return False

    def leave(self) -> None:
        self.waiting -= 1

    def leave_when_done(self, task: Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        """`leave` once `task` has run on its thread (or was cancelled before it began): not
        when its caller stopped waiting at the budget, as the search goes on taking a thread."""

        def done(_: Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the line went with it
                loop.call_soon_threadsafe(self.leave)

        task.add_done_callback(done)
