"""Signed-in browsers of the status page: session cookies and the CSRF tokens that go with them.

A session is 256 random bits in an HttpOnly, SameSite=Strict cookie (Secure over https); the
engine keeps only its SHA-256 digest, in memory, so neither the index file nor a memory dump of
the map holds a usable cookie, and a restart (also the one a new password needs) signs every
browser out. Sessions end after `SESSION_SECONDS` whatever happens; at most `MAX_SESSIONS` live
at once (the oldest goes first).

A page's POSTs carry a CSRF token: an HMAC of the session cookie under a key made at start, so a
page on another site, which can neither read the cookie nor our pages, cannot produce it.
Without a password there is no session, and the token is the same HMAC of a fixed label.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from .oauth import digest

COOKIE = "recall_session"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 64
_NO_SESSION = "no password: loopback only"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class WebSessions:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._expires: dict[str, float] = {}  # digest -> expiry, oldest first
        self._key = secrets.token_bytes(32)

    def create(self) -> str:
        """A new session's cookie value."""
        now = self._clock()
        for expired in [d for d, expiry in self._expires.items() if expiry <= now]:
            del self._expires[expired]
        while len(self._expires) >= MAX_SESSIONS:
            del self._expires[next(iter(self._expires))]
        token = secrets.token_urlsafe(32)
        self._expires[digest(token)] = now + SESSION_SECONDS
        return token

    def valid(self, token: str | None) -> bool:
        if not token:
            return False
        expiry = self._expires.get(digest(token))
        return expiry is not None and expiry > self._clock()

    def end(self, token: str | None) -> None:
        if token:
            self._expires.pop(digest(token), None)

    def csrf(self, token: str | None) -> str:
        """The CSRF token for the page of this session (or of no session)."""
        message = (token or _NO_SESSION).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def csrf_ok(self, token: str | None, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(
            self.csrf(token).encode(), (presented or "").encode()
        )


def same_origin(origin: str, scheme: str, host: str, base_origin: str | None) -> bool:
    """Whether a POST's Origin is the page's own: the engine's as it is reached (`scheme`, the
    Host header), or `base_origin`. Behind a proxy that ends TLS the engine hears http while the
    browser's page is https on the same host, which is as much ours."""
    ours = (f"{scheme}://{host}", f"https://{host}", base_origin or "")
    return _normal_origin(origin) in {_normal_origin(own) for own in ours} - {None}


def _normal_origin(origin: str) -> str | None:
    """scheme://host:port with the scheme's default port spelled out ("https://notes" and
    "https://notes:443" are one origin), or None for what is no http(s) origin."""
    try:
        parts = urlsplit(origin)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    if port is None or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.hostname}:{port}"
