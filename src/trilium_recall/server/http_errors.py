"""The HTTP surface's one mapping from an exception to an answer: always JSON with a reason.

4xx for the caller's mistakes (413 for a body over its limit; routing's 404 and 405 too), 503
with Retry-After while the engine starts or its index is unavailable (busy, being rebuilt, disk
full), 500 only for bugs, whose traceback goes to the log (uvicorn logs it) and never to the
client.
"""

from __future__ import annotations

import math

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import (
    BadRequest,
    BodyTooLarge,
    EngineStarting,
    IndexUnusable,
    RecallError,
    StoreError,
)

RETRY_AFTER_S = 5  # a build's first notes, a lock released: seconds, not minutes
BUG = "internal error in trilium-recall: the engine log has the details"
NO_STORE = {"Cache-Control": "no-store"}


def error_answer(exc: BaseException) -> JSONResponse:
    if isinstance(exc, BadRequest):
        status = 413 if isinstance(exc, BodyTooLarge) else 400
        return JSONResponse({"error": str(exc)}, status, headers=NO_STORE)
    if isinstance(exc, HTTPException):  # routing's own: no such path, or not this method
        headers = {**NO_STORE, **(exc.headers or {})}  # a 405 keeps its Allow
        return JSONResponse({"error": exc.detail}, exc.status_code, headers=headers)
    if isinstance(exc, EngineStarting | StoreError):
        reason = f"{exc}: {exc.FIX}" if isinstance(exc, IndexUnusable) else str(exc)
        known = exc.retry_after if isinstance(exc, EngineStarting) else None
        wait = RETRY_AFTER_S if known is None else max(1, math.ceil(known))
        return JSONResponse(
            {"error": reason, "retry_after": wait},
            503,
            headers=NO_STORE | {"Retry-After": str(wait)},
        )
    # Our own messages name no secret; anything else may quote a value, so only the type shows.
    reason = str(exc) if isinstance(exc, RecallError) else BUG
    return JSONResponse({"error": reason}, 500, headers=NO_STORE)


async def handle(_: Request, exc: Exception) -> Response:
    """Starlette's handler for RecallError, for its own HTTPException (a JSON reason, as every
    other answer here) and for Exception (which uvicorn then logs with its traceback)."""
    return error_answer(exc)


HANDLERS = {RecallError: handle, HTTPException: handle, Exception: handle}
