"""Only harmless GETs reach Trilium: refused in the transport, before any byte leaves.

An ETAPI token can write (tokens cannot be made read-only), so the engine's client sends every
request through `ReadOnlyTransport`: any method but GET is refused, and so are the GETs that
create notes (`/etapi/calendar/…`, `/etapi/inbox/…`), however the path is spelled.
"""

from __future__ import annotations

import itertools
from urllib.parse import unquote

import httpx

from ..errors import ForbiddenRequest

_WRITING_GETS = frozenset({"calendar", "inbox"})  # GET /etapi/calendar/*, /inbox/* create notes


class ReadOnlyTransport(httpx.AsyncBaseTransport):
    """Sends only GETs, and never the GETs that create notes; refuses before any byte leaves."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        refusal = read_only_refusal(request.method, request.url.raw_path.decode("ascii"))
        if refusal:
            origin = f"{request.url.scheme}://{request.url.netloc.decode('ascii')}"
            raise ForbiddenRequest(f"{refusal} (Trilium at {origin})")
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def read_only_refusal(method: str, raw_path: str) -> str | None:
    """Why a request must not reach Trilium, or None when it is a harmless GET."""
    path = raw_path.split("?", 1)[0]
    if method != "GET":
        return f"refused {method} {path}: only GET requests may reach Trilium"
    decoded = path
    while (once := unquote(decoded)) != decoded:  # %2563alendar must not slip through
        decoded = once
    # Empty segments and ";params" dropped: a proxy that merges "//" or ignores ";x" would
    # otherwise see /etapi/calendar/… where we saw something else.
    segments = [s.split(";")[0].lower() for s in decoded.replace("\\", "/").split("/") if s]
    if "." in segments or ".." in segments:
        return f"refused GET {path}: dot segments in the path"
    for before, after in itertools.pairwise(segments):
        if before == "etapi" and after in _WRITING_GETS:
            return f"refused GET {path}: this ETAPI GET creates notes"
    return None
