"""/authorize requests waiting for the login password, held in memory.

They live minutes, and a restart only means "connect again". Only the opaque id travels in the
login page's URL; the client's parameters stay here.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.auth.provider import AuthorizationParams

PENDING_SECONDS = 600.0  # time to type a password; the code itself lives 5 minutes after that
MAX_PENDING = 1000  # /authorize is unauthenticated; cap what strangers can make us hold


@dataclass(frozen=True)
class Pending:
    """An /authorize request waiting for the password."""

    id: str
    csrf: str
    client_id: str
    client_name: str
    params: AuthorizationParams
    expires_at: float


class PendingAuthorizations:
    """Pending requests in memory: they live minutes, and a restart only means 'connect again'."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._items: OrderedDict[str, Pending] = OrderedDict()

    def add(self, client_id: str, client_name: str, params: AuthorizationParams) -> Pending:
        self._expire()
        while len(self._items) >= MAX_PENDING:
            self._items.popitem(last=False)
        pending = Pending(
            id=secrets.token_urlsafe(24),
            csrf=secrets.token_urlsafe(24),
            client_id=client_id,
            client_name=client_name,
            params=params,
            expires_at=self._clock() + PENDING_SECONDS,
        )
        self._items[pending.id] = pending
        return pending

    def get(self, pending_id: str) -> Pending | None:
        self._expire()
        return self._items.get(pending_id)

    def pop(self, pending_id: str) -> Pending | None:
        return self._items.pop(pending_id, None)

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, p in self._items.items() if p.expires_at <= now]:
            del self._items[key]
