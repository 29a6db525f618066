"""/authorize requests waiting for the login password, held in memory.

They live minutes, and a restart only means "connect again". Only the opaque id travels in the
login page's URL; the client's parameters stay here.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from mcp.server.auth.provider import AuthorizationParams

from .rate_limits import UNKNOWN_SOURCE

PENDING_SECONDS = 600.0  # time to type a password; the code itself lives 5 minutes after that
MAX_PENDING = 1000  # /authorize is unauthenticated; cap what strangers can make us hold
# One source's share: a new request past it replaces that source's oldest, so a stranger
# asking a thousand times pushes out only their own, never the owner's page waiting for the
# password. The owner opens one or two at a time.
MAX_PENDING_PER_SOURCE = 10
# The source of the /authorize request being answered (rate_limits.source_of), set around the
# SDK's handler (oauth_routes.guard_sdk_route): the provider it calls is not given the request.
ASKING_SOURCE: ContextVar[str] = ContextVar("asking_source", default=UNKNOWN_SOURCE)


@dataclass(frozen=True)
class Pending:
    """An /authorize request waiting for the password."""

    id: str
    csrf: str
    source: str
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
        """Hold a new request from ASKING_SOURCE, making room: its own oldest past its share,
        else the oldest of all past MAX_PENDING."""
        self._expire()
        source = ASKING_SOURCE.get()
        own = [key for key, pending in self._items.items() if pending.source == source]
        if len(own) >= MAX_PENDING_PER_SOURCE:
            del self._items[own[0]]
        while len(self._items) >= MAX_PENDING:
            self._items.popitem(last=False)
        pending = Pending(
            id=secrets.token_urlsafe(24),
            csrf=secrets.token_urlsafe(24),
            source=source,
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
