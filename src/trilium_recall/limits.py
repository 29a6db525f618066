"""Rate limits for the unauthenticated doors: password guesses and client registration."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

MAX_TRACKED_CLIENTS = 10_000


class RateLimiter:
    """At most `limit` failures per key in a sliding `window` of seconds."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float]) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._failures: dict[str, deque[float]] = {}

    def retry_after(self, key: str) -> int:
        """Seconds until `key` may try again; 0 when it may try now."""
        now = self._clock()
        recent = self._failures.get(key)
        while recent and recent[0] <= now - self.window:
            recent.popleft()
        if not recent:
            self._failures.pop(key, None)
            return 0
        if len(recent) < self.limit:
            return 0
        return max(1, int(recent[0] + self.window - now + 0.999))

    def fail(self, key: str) -> None:
        now = self._clock()
        if len(self._failures) >= MAX_TRACKED_CLIENTS:  # many addresses: forget the quiet ones
            for quiet in [k for k, d in self._failures.items() if d[-1] <= now - self.window]:
                del self._failures[quiet]
        self._failures.setdefault(key, deque()).append(now)
