"""Reading a round of notes' contents: which failures are one note's and which are Trilium's.

A note that is gone, protected or answered with something that is not its content is that
note's failure. So is a note whose content Trilium keeps answering with a server error (5xx)
while it answers its app info: one such note had stopped every other note of its instance from
staying fresh, and named itself nowhere. It is listed with its reason and tried again at the
next full comparison. A read that found no server (refused, timed out) or was told to slow down
(429), or a server error while the app info fails too, is Trilium's: that ends the run, no note
is blamed or loses its sections, and the next tick reads again (the last index keeps serving).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..errors import NoteNotFound, NoteProtected, TriliumBadResponse, TriliumUnavailable
from ..trilium.client import TriliumClient

FETCH_CONCURRENCY = 6
NoteFailure = NoteNotFound | NoteProtected | TriliumBadResponse


async def read_contents(client: TriliumClient, note_ids: Sequence[str]) -> list[str | NoteFailure]:
    """Each note's content, or why it could not be read (a server error of the note's own as a
    TriliumBadResponse); raises TriliumUnavailable (or another TriliumError) when Trilium itself
    cannot be read."""
    limit = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def read(note_id: str) -> str | NoteFailure | TriliumUnavailable:
        async with limit:
            try:
                return await client.content(note_id)
            except (NoteNotFound, NoteProtected, TriliumBadResponse, TriliumUnavailable) as exc:
                return exc

    contents = await asyncio.gather(*(read(note_id) for note_id in note_ids))
    if failed := [c for c in contents if isinstance(c, TriliumUnavailable)]:
        if not all(_server_error(c) for c in failed):
            raise failed[0]
        try:  # Trilium may have stopped partway through the round: ask it
            await client.app_info()
        except TriliumUnavailable:
            raise failed[0] from None
        except TriliumBadResponse:
            pass  # an app info it answers oddly is still an answer (features.detect reads it so)
    return [
        TriliumBadResponse(f"Trilium answers HTTP {c.status} for its content")
        if isinstance(c, TriliumUnavailable)
        else c
        for c in contents
    ]


def _server_error(failure: TriliumUnavailable) -> bool:
    return failure.status is not None and 500 <= failure.status < 600
