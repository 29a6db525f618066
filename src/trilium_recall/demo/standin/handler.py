"""The stand-in's HTTP side: the request handler and the three ETAPI auth header forms."""

from __future__ import annotations

import base64
import hmac
from http.server import BaseHTTPRequestHandler
from typing import Any


def authorized(header: str | None, expected: str) -> bool:
    """`<token>`, `Bearer <token>`, or Basic with user `etapi` and the token as password."""
    token = header or ""
    if token.startswith("Bearer "):
        token = token.removeprefix("Bearer ").strip()
    elif token.startswith("Basic "):
        try:
            decoded = base64.b64decode(token.removeprefix("Basic "), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return False
        user, _, token = decoded.partition(":")
        if user != "etapi":
            return False
    return bool(token) and hmac.compare_digest(token.encode(), expected.encode())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: stop() leaves no live keep-alive

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        fake = self.server.fake  # type: ignore[attr-defined]
        reply = fake.respond(self.command, self.path, self.headers.get("Authorization"))
        if reply is None:
            self.close_connection = True
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the stand-in serves tests and the demo, not an operator."""
