"""Rate limits for the doors strangers can knock on: password guesses and client registration.

Keys are client addresses as uvicorn reports them: the socket's peer, or the `X-Forwarded-For`
address only when the peer is a proxy named in `RECALL_TRUSTED_PROXIES` (`app.server_options`).
IPv6 sources count per /64, the block one machine usually holds, so rotating through one's own
addresses is not a new source each time.

Password guesses (the login password as a Bearer token, and the login page; one password, one
budget) are limited so that the owner still gets in:

- Only failures count, and only new ones: a password this source was refused before is refused
  again at once, uncounted. A client left with an old password (a Claude Code session started
  before the password changed, an MCP entry holding it) repeats it with every prompt; counted,
  it filled its address's bucket and locked out every other client there, the owner's included.
  A guesser gains nothing from a repeat, and each new guess counts. A correct password costs
  nothing, and an OAuth access token (256 random bits, unguessable) is checked before any
  limit, so a guesser never blocks a signed-in client. An expired token counts as a failure
  once.
- Per source: 10 failures at once, then one more a minute (the bucket drains by one each
  minute). The owner's typos never reach 10; a guesser gets at most ~1,440 tries a day.
- All sources together: 100 failures at once, then one a minute, so rotating sources guess no
  faster than one source does. A random 12-character password is out of reach at that rate; a
  dictionary word is not, which is why the README asks for a random one.
- A guesser can keep the shared ceiling full, and that would lock the owner out for as long as
  the guessing goes on. So a source that has given the correct password in the last 30 days is
  exempt from the shared ceiling (its own per-source limit still holds): the owner's usual
  addresses keep working whatever others do. The proofs are kept in the index file
  (`index/proven_sources.py`), so a restart while someone guesses does not lock them out; and
  this machine itself (a loopback peer no proxy speaks for: the hook) is always exempt. A
  success never forgives failures, though: on a shared address the owner's hook succeeding on
  every prompt would otherwise reset a guesser's count there.
- A refusal is logged once a minute per source and kind, at most 20 lines a minute in all
  (`LogLimit`): a client repeating an old password on every prompt, or a flood of guesses from
  rotating sources, must not fill the log.
- What no limit can fix: owner and guesser behind one address (a proxy that is not trusted, a
  NAT) are the same source, and only the credential tells them apart; accepting the correct
  password while throttled would let the guesser test passwords at full speed. Name the proxy.

Registration is open by design (RFC 7591, claude.ai registers itself), so it counts every
registration: 10 an hour per source, 30 an hour in all (this machine and proven sources are held
only by their own 10, though theirs count toward the 30), counted as each arrives (so requests sent
at once cannot all pass the check) and given back when it is refused: a refused registration
stores nothing, and someone fixing a bad redirect URI is not locked out for an hour.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limit:
    """Up to `burst` marks at once; one mark drains away every `drain_seconds`."""

    burst: int
    drain_seconds: float


PASSWORD_PER_SOURCE = Limit(burst=10, drain_seconds=60.0)
PASSWORD_OVERALL = Limit(burst=100, drain_seconds=60.0)
PROVEN_SOURCE_SECONDS = 30 * 24 * 3600.0  # one claude.ai login a month keeps an address proven
MAX_PROVEN_SOURCES = 64  # the owner's own addresses; only a correct password adds one
REMEMBERED_REFUSALS = 8  # per source: a stale client repeats one or two old passwords
PROOF_REWRITE_SECONDS = 24 * 3600.0  # a proof is written again at most once a day per source
LOG_WINDOW_SECONDS = 60.0
LOG_LINES_PER_WINDOW = 20  # over all sources: rotating ones must not fill the log either
REGISTER_PER_SOURCE = Limit(burst=10, drain_seconds=360.0)
REGISTER_OVERALL = Limit(burst=30, drain_seconds=120.0)
# Memory bound. Marks come only from failures (or registrations), which the overall limits cap,
# so far fewer keys than this are ever live; past it the longest-quiet keys are forgotten.
MAX_TRACKED_SOURCES = 10_000
IPV6_SOURCE_PREFIX = 64
UNKNOWN_SOURCE = "unknown"  # no address or not an IP: all such requests share one key
_ALL = ""


def source_of(scope: Mapping[str, Any]) -> str:
    """The rate-limit key of an ASGI request."""
    client = scope.get("client")
    return source_key(client[0] if client else None)


def source_key(host: str | None) -> str:
    """The rate-limit key for a client address."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return UNKNOWN_SOURCE
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/{IPV6_SOURCE_PREFIX}", strict=False))
    return str(address)


class Bucket:
    """A leaky bucket per key, holding at most `limit.burst` marks."""

    def __init__(self, limit: Limit, clock: Callable[[], float]) -> None:
        self.limit = limit
        self._clock = clock
        self._levels: dict[str, tuple[float, float]] = {}  # key -> (level, when), oldest first

    def wait(self, key: str) -> int:
        """Whole seconds until one more mark fits for `key`; 0 when it fits now."""
        over = self._level(key, self._clock()) + 1 - self.limit.burst
        # Rounded first: float drift must not turn 6 s into 7 (0.6 * 10 = 6.000000000000001).
        return math.ceil(round(over * self.limit.drain_seconds, 6)) if over > 0 else 0

    def add(self, key: str) -> None:
        now = self._clock()
        level = self._level(key, now) + 1
        self._levels.pop(key, None)  # re-inserted last: the dict stays in order of activity
        if len(self._levels) >= MAX_TRACKED_SOURCES:
            self._forget_drained(now)
        self._levels[key] = (level, now)

    def remove(self, key: str) -> None:
        """Take back one mark `add` made (a request that, refused, stored nothing)."""
        now = self._clock()
        if key in self._levels:
            self._levels[key] = (max(0.0, self._level(key, now) - 1), now)

    def _level(self, key: str, now: float) -> float:
        level, when = self._levels.get(key, (0.0, now))
        return max(0.0, level - (now - when) / self.limit.drain_seconds)

    def _forget_drained(self, now: float) -> None:
        for key in [k for k in self._levels if self._level(k, now) == 0]:
            del self._levels[key]
        while len(self._levels) >= MAX_TRACKED_SOURCES:
            del self._levels[next(iter(self._levels))]


class SourceLimit:
    """Marks counted per source and over all sources together."""

    def __init__(self, per_source: Limit, overall: Limit, clock: Callable[[], float]) -> None:
        self._per_source = Bucket(per_source, clock)
        self._overall = Bucket(overall, clock)

    def wait(self, source: str, *, overall: bool = True) -> int:
        own = self._per_source.wait(source)
        return max(own, self._overall.wait(_ALL)) if overall else own

    def add(self, source: str) -> None:
        self._per_source.add(source)
        self._overall.add(_ALL)

    def remove(self, source: str) -> None:
        self._per_source.remove(source)
        self._overall.remove(_ALL)


@dataclass(frozen=True)
class Attempt:
    """How a password attempt went; `retry_after` > 0: throttled, nothing was compared."""

    ok: bool
    retry_after: int = 0
    repeat: bool = False  # refused before: nothing was compared or counted

    @property
    def refusal(self) -> str:
        """Why a refused attempt was refused, for logs and doctor."""
        return "throttled: too many wrong passwords" if self.retry_after else "a wrong password"


class PasswordGuard:
    """Who may try the login password now (see the module doc for the reasoning)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        proven: Mapping[str, float] | None = None,
        on_proof: Callable[[str, float], None] | None = None,
        proof_key: Callable[[str], str] = str,
    ) -> None:
        """`proof_key(source)`: what a proof is kept under (the index file keeps a keyed digest
        of the password and the source, so a new password voids every proof); `proven`: proof
        key -> when it expires, as kept; `on_proof(key, until)` keeps a new or renewed one (at
        most once a day per source)."""
        self._clock = clock
        self._proof_key = proof_key
        self._failures = SourceLimit(PASSWORD_PER_SOURCE, PASSWORD_OVERALL, clock)
        self._proven: dict[str, float] = {}  # proof key -> when it expires, oldest first
        for key, until in sorted((proven or {}).items(), key=lambda item: item[1]):
            self._add_proof(key, until)
        self._on_proof = on_proof
        # source -> keyed digests of the passwords it was refused, least recent source first
        self._refused: dict[str, tuple[bytes, ...]] = {}
        self._key = secrets.token_bytes(32)  # the digests mean nothing outside this process

    def attempt(
        self, source: str, presented: str, check: Callable[[], bool], *, local: bool = False
    ) -> Attempt:
        """Run `check` (the comparison of the `presented` password) unless `source` must wait;
        count a failure, unless `source` was refused this same password before. `local`: this
        machine, never held by the shared ceiling."""
        digest = hmac.new(self._key, presented.encode("utf-8", "surrogatepass"), hashlib.sha256)
        mark = digest.digest()
        if mark in self._refused.get(source, ()):
            return Attempt(ok=False, repeat=True)  # not a guess: nothing new to learn from it
        wait = self._failures.wait(source, overall=not (local or self.is_proven(source)))
        if wait:
            return Attempt(ok=False, retry_after=wait)
        if not check():
            self._failures.add(source)
            self._remember_refusal(source, mark)
            return Attempt(ok=False)
        self._prove(source)
        return Attempt(ok=True)

    def is_proven(self, source: str) -> bool:
        return self._proven.get(self._proof_key(source), 0.0) > self._clock()

    def _remember_refusal(self, source: str, mark: bytes) -> None:
        marks = self._refused.pop(source, ())
        while len(self._refused) >= MAX_TRACKED_SOURCES:
            del self._refused[next(iter(self._refused))]
        self._refused[source] = (*marks, mark)[-REMEMBERED_REFUSALS:]

    def _prove(self, source: str) -> None:
        key, until = self._proof_key(source), self._clock() + PROVEN_SOURCE_SECONDS
        renewed = until - self._proven.get(key, 0.0) > PROOF_REWRITE_SECONDS
        self._add_proof(key, until)
        if renewed and self._on_proof is not None:
            self._on_proof(key, until)

    def _add_proof(self, key: str, until: float) -> None:
        self._proven.pop(key, None)
        while len(self._proven) >= MAX_PROVEN_SOURCES:
            del self._proven[next(iter(self._proven))]
        self._proven[key] = until


class LogLimit:
    """Whether a refusal is logged now: once a window per source and kind of refusal, and at
    most LOG_LINES_PER_WINDOW in all, so a flood writes a few lines a minute, not a line a
    request, even from rotating sources."""

    def __init__(
        self, window_s: float = LOG_WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._window_s = window_s
        self._clock = clock
        self._logged: dict[tuple[str, str], float] = {}  # -> when last logged, oldest first
        self._recent: list[float] = []  # when each line of the last window was logged

    def allow(self, source: str, refusal: str) -> bool:
        now, key = self._clock(), (source, refusal)
        if now - self._logged.get(key, -math.inf) < self._window_s:
            return False
        self._recent = [at for at in self._recent if now - at < self._window_s]
        if len(self._recent) >= LOG_LINES_PER_WINDOW:
            return False
        self._recent.append(now)
        self._logged.pop(key, None)
        while len(self._logged) >= MAX_TRACKED_SOURCES:
            del self._logged[next(iter(self._logged))]
        self._logged[key] = now
        return True


def registration_limit(clock: Callable[[], float] = time.time) -> SourceLimit:
    return SourceLimit(REGISTER_PER_SOURCE, REGISTER_OVERALL, clock)
