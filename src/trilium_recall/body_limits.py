"""Every cap on the bytes a caller may send, in one place, and the one reader that enforces it.

A cap differs from another only where its reason does (said beside each). A body over its cap
is refused before it is parsed, and before it is read when its Content-Length says so. Each
route answers as it always has: the JSON routes 413 `{"error": "body larger than N bytes"}`
(`server/request_body.py`), the forms and the SDK's routes the SDK's 413, /register RFC 7591's
400 `invalid_client_metadata`. Stdlib only: the hook imports this module too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

# POST /recall and /mcp carry one prompt in JSON: a 1 MB prompt is accepted (search reads only
# its start) and escaping may double it in JSON.
PROMPT_BODY_BYTES = 2 * 1024 * 1024
# The hook's stdin, Claude Code's event JSON: about half the engine's cap. The body the hook
# sends on is never longer than its input plus a few short fields: it writes UTF-8 as Claude
# Code does, and JSON had to escape anything it escapes (hook._request_body).
HOOK_INPUT_BYTES = 1_000_000
# A session id: Claude Code's are UUIDs. The hook passes no longer one on, and /recall refuses
# one: each note sent stores it, and a megabyte's id grew the index by megabytes a prompt.
SESSION_ID_CHARS = 200
# POST /ui/explain: the page's prompt box holds at most 100,000 characters (index.html), which
# JSON.stringify writes in up to 6 bytes each (3 in UTF-8 for CJK, 6 for an escaped control
# character).
EXPLAIN_BOX_CHARS = 100_000
EXPLAIN_BODY_BYTES = 6 * EXPLAIN_BOX_CHARS + 4096
# Forms of a few short fields: sign-in and sign-out, the OAuth login, /token and /revoke.
FORM_BODY_BYTES = 16 * 1024
# POST /register: room for 10 redirect URIs of 2,000 characters; claude.ai sends ~400 bytes.
REGISTRATION_BODY_BYTES = 32 * 1024

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


async def read_at_most(headers: Mapping[str, str], receive: Receive, limit: int) -> bytes | None:
    """The ASGI request body, or None when it is over `limit`: at once if Content-Length (in
    `headers`, lower-case names) says so, else as soon as the bytes read pass it."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return bytes(body)
