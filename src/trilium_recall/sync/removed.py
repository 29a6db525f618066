"""Instances taken out of the configuration leave the index: their notes would take keyword
results that search then drops, and count in `status` and calibration."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from ..errors import StoreError
from ..index.store import Store

log = logging.getLogger(__name__)


async def drop_instances(store: Store, names: Iterable[str]) -> None:
    """Each instance's notes, one at a time on the event loop (~2 ms each, measured on the
    eval's Node.js index), which serves between them: the index keeps one writer, the syncers'
    connection. An interrupted drop goes on at the next start: the instance stays recorded
    until its last note is gone."""
    for name in names:
        try:
            notes = list(store.known_notes(name))
            for note_id in notes:
                store.delete_note(name, note_id)
                await asyncio.sleep(0)
            store.forget_instance(name)
        except StoreError as exc:  # a full disk, say: logged here, no one awaits a start's task
            log.warning("instance %s is no longer configured; dropping it failed: %s", name, exc)
            return
        log.warning(
            "instance %s is no longer configured: %d notes left the index", name, len(notes)
        )
