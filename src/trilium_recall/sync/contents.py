"""Reading a round of notes' contents: which failures are one note's and which are Trilium's.

A note that is gone, protected or answered with something that is not its content is that
note's failure. So is a note whose content keeps failing with a server error while Trilium
answers otherwise: one such note had stopped every other note of its instance from staying
fresh, and named itself nowhere. It is listed with its reason and tried again at the next
full comparison. When Trilium does not answer its app info either, Trilium is unavailable
(stopped partway through the round, say): that ends the run, and no note is blamed or loses
its sections (the last index keeps serving).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..errors import NoteNotFound, NoteProtected, TriliumBadResponse, TriliumUnavailable
from ..trilium.client import TriliumClient

FETCH_CONCURRENCY = 6
NoteFailure = NoteNotFound | NoteProtected | TriliumBadResponse | TriliumUnavailable


async def read_contents(client: TriliumClient, note_ids: Sequence[str]) -> list[str | NoteFailure]:
    """Each note's content, or why it could not be read; raises TriliumUnavailable (or another
    TriliumError) when Trilium itself cannot be read."""
    limit = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def read(note_id: str) -> str | NoteFailure:
        async with limit:
            try:
                return await client.content(note_id)
            except (NoteNotFound, NoteProtected, TriliumBadResponse, TriliumUnavailable) as exc:
                return exc

    contents = await asyncio.gather(*(read(note_id) for note_id in note_ids))
    failed = [c for c in contents if isinstance(c, TriliumUnavailable)]
    if failed:  # Trilium may have stopped partway through the round: ask it
        try:
            await client.app_info()
        except TriliumUnavailable:
            raise failed[0] from None
    return contents
