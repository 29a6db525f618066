"""When one instance syncs: a full run at start (a fresh or resumed build), a tick every
minute, a full comparison every half hour; failures are kept for /health, never raised."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import apsw

from ..errors import IndexDamaged, StoreError, TriliumError
from ..index.file import store_error
from .run_status import RunReport
from .syncer import Syncer

log = logging.getLogger(__name__)


async def run_forever(
    syncer: Syncer,
    tick_seconds: float,
    full_seconds: float,
    after_full: Callable[[], Awaitable[None]] | None = None,
    on_damage: Callable[[IndexDamaged], None] | None = None,
) -> None:
    """Full run now (a resumed or fresh build), then ticks; a full comparison every period, and
    `after_full` after each that changed the index or ended the first build (not after a
    restart's unchanged first run: it would only compete with the first prompts).

    Failures (Trilium down, bad answers) are logged and shown in /health; the last good index
    keeps serving and the next tick tries again. A damaged index file is also told to
    `on_damage`, as a search's is: no tick can mend it, the next start does."""
    next_full = 0.0
    while True:
        started = time.monotonic()
        try:
            was_complete = syncer.build_complete
            full = started >= next_full or not was_complete
            report = await (syncer.full() if full else syncer.tick())
            if report.changed or report.failed:  # README: the log has the sync's results
                log.info("%s", _described(syncer.instance.name, report))
            if report.full:  # also a tick that compared in full (over 500 recent changes)
                next_full = started + full_seconds
                ended = syncer.build_complete and not was_complete
                if after_full is not None and (report.changed or ended):
                    await after_full()
        except (TriliumError, StoreError, apsw.Error) as exc:
            # already recorded in status; retry on the next tick
            if on_damage is not None and (damage := _damage(exc, syncer.store.path)):
                on_damage(damage)
        except Exception:  # a bug must not stop syncing for good
            log.exception("sync of %s crashed; retrying next tick", syncer.instance.name)
            syncer.status.error = "internal error during sync (see log)"
        await asyncio.sleep(max(0.0, tick_seconds - (time.monotonic() - started)))


def _described(instance: str, report: RunReport) -> str:
    run = "full comparison" if report.full else "tick"
    counts = f"{report.indexed} read, {report.updated} updated, {report.deleted} deleted"
    failed = f", {len(report.failed)} failed (trilium-recall status)" if report.failed else ""
    return f"{instance}: {run}: {counts}{failed}"


def _damage(exc: Exception, path: Path) -> IndexDamaged | None:
    if isinstance(exc, apsw.Error):  # raised outside the store's own translation
        exc = store_error(exc, path)
    return exc if isinstance(exc, IndexDamaged) else None
