"""Rate limits: who is throttled, by what key, and that the owner still gets in.

The limiter alone with a hand-driven clock, then the real app under uvicorn on 127.0.0.1, run
with the options `serve` uses (`app.server_options`), so uvicorn's own proxy-header handling is
part of what is tested.
"""

from __future__ import annotations

import hmac
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from auth_flow import (
    PASSWORD,
    Engine,
    OAuthClient,
    mcp_tools,
    recall,
    registered_client,
    running_engine,
)
from trilium_recall.access.rate_limits import (
    LOG_LINES_PER_WINDOW,
    PASSWORD_OVERALL,
    PASSWORD_PER_SOURCE,
    PROVEN_SOURCE_SECONDS,
    Attempt,
    Bucket,
    Limit,
    LogLimit,
    PasswordGuard,
    source_key,
)
from trilium_recall.index.store import Store

PER_SOURCE = PASSWORD_PER_SOURCE.burst
OVERALL = PASSWORD_OVERALL.burst


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def right() -> bool:
    return True


def wrong() -> bool:
    return False


_guesses = itertools.count()


def guess() -> str:
    """A wrong password never tried before: only new guesses count."""
    return f"guess-{next(_guesses)}"


def guesser(n: int) -> str:
    """The n-th of the rotating sources, each used up to its own limit."""
    return f"10.0.{n // PER_SOURCE}.{n % PER_SOURCE}"


def fill_the_ceiling(guard: PasswordGuard) -> None:
    for n in range(OVERALL):
        assert guard.attempt(guesser(n), guess(), wrong).retry_after == 0


# -- the limiter alone ---------------------------------------------------------------------


def test_a_bucket_takes_a_burst_then_one_mark_per_drain_period() -> None:
    clock = FakeClock()
    bucket = Bucket(Limit(burst=3, drain_seconds=10.0), clock)
    for _ in range(3):
        assert bucket.wait("a") == 0
        bucket.add("a")
    assert (bucket.wait("a"), bucket.wait("b")) == (10, 0)  # other keys are untouched
    clock.now += 4
    assert bucket.wait("a") == 6
    clock.now += 6
    assert bucket.wait("a") == 0
    bucket.add("a")
    assert bucket.wait("a") == 10


def test_only_failures_count_and_a_success_forgives_none() -> None:
    clock = FakeClock()
    guard = PasswordGuard(clock)
    for _ in range(PER_SOURCE - 1):
        assert guard.attempt("10.0.0.1", guess(), wrong).ok is False
    for _ in range(50):  # the owner's hook on a shared address, every prompt
        assert guard.attempt("10.0.0.1", PASSWORD, right).ok is True
    assert guard.attempt("10.0.0.1", guess(), wrong).retry_after == 0  # the 10th is answered
    throttled = guard.attempt("10.0.0.1", PASSWORD, right)
    assert (throttled.ok, throttled.retry_after) == (False, 60)


def test_throttled_attempts_are_not_compared() -> None:
    guard = PasswordGuard(FakeClock())
    compared: list[str] = []

    def check() -> bool:
        compared.append("x")
        return False

    for _ in range(PER_SOURCE + 5):
        guard.attempt("10.0.0.1", guess(), check)
    assert len(compared) == PER_SOURCE


def test_a_password_refused_before_is_refused_again_uncounted() -> None:
    """A client left with an old password repeats it every prompt: counted, it filled its
    address's bucket, and the owner's right password from there waited (HTTP 429)."""
    guard = PasswordGuard(FakeClock())
    compared: list[str] = []

    def stale() -> bool:
        compared.append("x")
        return False

    assert guard.attempt("127.0.0.1", "the-old-password", stale) == Attempt(ok=False)
    for _ in range(5 * PER_SOURCE):
        again = guard.attempt("127.0.0.1", "the-old-password", stale)
        assert again == Attempt(ok=False, repeat=True)
    assert len(compared) == 1  # known wrong: not even compared again
    assert guard.attempt("127.0.0.1", PASSWORD, right).ok  # the owner, same address
    for _ in range(PER_SOURCE - 1):  # new guesses count as before (the old one counted once)
        assert guard.attempt("127.0.0.1", guess(), wrong).retry_after == 0
    assert guard.attempt("127.0.0.1", guess(), wrong).retry_after == 60


def test_rotating_sources_share_one_ceiling_but_a_proven_source_is_exempt() -> None:
    clock = FakeClock()
    guard = PasswordGuard(clock)
    assert guard.attempt("192.0.2.1", PASSWORD, right).ok  # the owner, before the attack
    fill_the_ceiling(guard)
    fresh = guard.attempt("10.9.9.9", PASSWORD, right)
    assert (fresh.ok, fresh.retry_after) == (False, 60)  # the ceiling holds for new sources...
    assert guard.attempt("192.0.2.1", PASSWORD, right).ok  # ...never for the owner's proven address
    clock.now += 60
    assert guard.attempt("10.9.9.9", PASSWORD, right).ok


def test_a_proof_lasts_thirty_days() -> None:
    clock = FakeClock()
    guard = PasswordGuard(clock)
    assert guard.attempt("192.0.2.1", PASSWORD, right).ok
    clock.now += PROVEN_SOURCE_SECONDS + 1
    fill_the_ceiling(guard)
    assert PROVEN_SOURCE_SECONDS == 30 * 24 * 3600
    assert guard.attempt("192.0.2.1", PASSWORD, right).retry_after == 60


def test_proofs_are_handed_on_to_be_kept_at_most_once_a_day_and_read_back() -> None:
    clock = FakeClock()
    kept: list[tuple[str, float]] = []
    guard = PasswordGuard(clock, on_proof=lambda source, until: kept.append((source, until)))
    for _ in range(5):
        assert guard.attempt("192.0.2.1", PASSWORD, right).ok
    assert kept == [("192.0.2.1", clock.now + PROVEN_SOURCE_SECONDS)]  # once, not per prompt
    clock.now += 24 * 3600 + 1
    assert guard.attempt("192.0.2.1", PASSWORD, right).ok
    assert len(kept) == 2  # renewed a day later
    restarted = PasswordGuard(clock, proven=dict(kept))
    fill_the_ceiling(restarted)
    assert restarted.attempt("192.0.2.1", PASSWORD, right).ok
    assert restarted.attempt("192.0.2.2", PASSWORD, right).retry_after == 60


def test_this_machine_is_held_by_its_own_limit_only() -> None:
    guard = PasswordGuard(FakeClock())
    fill_the_ceiling(guard)
    assert guard.attempt("127.0.0.1", PASSWORD, right, local=True).ok
    for _ in range(PER_SOURCE):
        assert guard.attempt("127.0.0.1", guess(), wrong, local=True).retry_after == 0
    assert guard.attempt("127.0.0.1", guess(), wrong, local=True).retry_after == 60


def test_a_refusal_is_logged_once_a_minute_per_source_and_kind() -> None:
    clock = FakeClock()
    limit = LogLimit(60.0, clock)
    assert [limit.allow("10.0.0.1", "a wrong password") for _ in range(3)] == [True, False, False]
    assert limit.allow("10.0.0.1", "throttled")  # another kind of refusal
    assert limit.allow("10.0.0.2", "a wrong password")  # another source
    clock.now += 60
    assert limit.allow("10.0.0.1", "a wrong password")


def test_rotating_sources_get_a_few_log_lines_a_minute_in_all() -> None:
    clock = FakeClock()
    limit = LogLimit(60.0, clock)
    logged = [limit.allow(f"10.0.{n // 250}.{n % 250}", "throttled") for n in range(500)]
    assert sum(logged) == LOG_LINES_PER_WINDOW
    clock.now += 60
    assert limit.allow("10.9.9.9", "throttled")


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::/64"),  # same /64: same source
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("not-an-address", "unknown"),
        (None, "unknown"),
    ],
)
def test_source_keys(host: str | None, key: str) -> None:
    assert source_key(host) == key


# -- the real server -----------------------------------------------------------------------


def forwarded(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def bearer(url: str, token: str, address: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}", **(forwarded(address) if address else {})}
    return httpx.post(f"{url}/recall", json={"prompt": "hi"}, headers=headers).status_code


@pytest.fixture
def behind_proxy(tmp_path: Path) -> Iterator[Engine]:
    """The engine with this machine named as its reverse proxy."""
    with running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as running:
        yield running


def test_a_rotating_forwarded_for_is_ignored_without_a_trusted_proxy(engine: Engine):
    statuses = [bearer(engine.url, guess(), f"10.0.0.{n}") for n in range(40)]
    assert statuses == [401] * PER_SOURCE + [429] * (40 - PER_SOURCE)


def test_a_rotating_forwarded_for_does_not_open_the_login_page(client: OAuthClient):
    _, fields = client.login_form()
    statuses = []
    for n in range(28):
        data = {**fields, "password": guess()}
        response = client.http.post(
            f"{client.url}/login", data=data, headers=forwarded(f"10.{n}.0.1")
        )
        statuses.append(response.status_code)
    assert statuses == [403] * PER_SOURCE + [429] * (28 - PER_SOURCE)
    right_one = client.http.post(
        f"{client.url}/login", data={**fields, "password": PASSWORD}, headers=forwarded("10.99.0.1")
    )
    assert right_one.status_code == 429 and "location" not in right_one.headers


def test_the_forwarded_address_counts_when_the_proxy_is_trusted(behind_proxy: Engine):
    url = behind_proxy.url
    assert [bearer(url, guess(), "203.0.113.7") for _ in range(PER_SOURCE + 1)][-2:] == [401, 429]
    # A client cannot prepend its way out: the proxy appends the address it saw, and uvicorn
    # takes the last address that is not a trusted proxy.
    assert bearer(url, guess(), "198.51.100.1, 203.0.113.7") == 429
    assert bearer(url, PASSWORD, "198.51.100.2") == 200  # another client behind the proxy
    assert bearer(url, PASSWORD) == 200  # the proxy itself, no header: its own address


def test_a_client_stuck_on_an_old_password_does_not_lock_out_the_owner(engine: Engine):
    """Claude Code sessions started before the password changed send the old one with every
    prompt, from this same machine: refused each time, never throttling the right one."""
    for _ in range(3 * PER_SOURCE):
        assert bearer(engine.url, "the-password-before-the-change") == 401
    assert bearer(engine.url, PASSWORD) == 200


def test_the_owners_oauth_token_works_while_a_guesser_is_throttled(
    engine: Engine, client: OAuthClient
):
    access = client.tokens()["access_token"]
    for _ in range(PER_SOURCE):
        assert bearer(engine.url, guess()) == 401
    assert bearer(engine.url, guess()) == 429
    assert bearer(engine.url, access) == 200  # same address as the guesser, still 200
    assert recall(engine.url, access).status_code == 200
    # The password from the guesser's own address waits: there, only the credential tells
    # owner and guesser apart, and comparing it while throttled would be an oracle.
    assert bearer(engine.url, PASSWORD) == 429
    engine.clock.offset += PASSWORD_PER_SOURCE.drain_seconds
    assert bearer(engine.url, PASSWORD) == 200


async def test_the_owners_oauth_token_opens_mcp_while_the_ceiling_is_full(
    behind_proxy: Engine,
):
    with registered_client(behind_proxy.url) as oauth:
        access = oauth.tokens()["access_token"]
    for n in range(OVERALL):
        assert bearer(behind_proxy.url, guess(), guesser(n)) == 401
    assert bearer(behind_proxy.url, PASSWORD, "10.200.0.1") == 429  # the ceiling is full
    assert await mcp_tools(behind_proxy.url, access) == ["recall"]


def test_rotating_sources_cannot_lock_out_the_owners_usual_address(behind_proxy: Engine):
    url = behind_proxy.url
    owner = "192.0.2.10"
    assert bearer(url, PASSWORD, owner) == 200  # the owner's hook, before the attack
    for n in range(OVERALL + 20):
        status = bearer(url, guess(), guesser(n))
        assert status == (401 if n < OVERALL else 429), n
    assert bearer(url, PASSWORD, "10.77.0.1") == 429  # an unproven source waits for the ceiling
    for _ in range(5):
        assert bearer(url, PASSWORD, owner) == 200  # the owner's usual address does not


def test_a_new_password_voids_every_kept_proof(tmp_path: Path):
    """Whoever knew the old password must keep no address past the shared limit."""
    with running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as before:
        assert bearer(before.url, PASSWORD, "192.0.2.10") == 200
    new = "a-new-login-password-0123"
    with running_engine(tmp_path, password=new, trusted_proxies=("127.0.0.1",)) as after:
        for n in range(OVERALL):
            assert bearer(after.url, guess(), guesser(n)) == 401
        assert bearer(after.url, new, "192.0.2.10") == 429  # proven under the old one only
    kept = Store(tmp_path / "recall.sqlite3").db.execute("SELECT source FROM proven_sources")
    keys = {row[0] for row in kept}
    assert keys and "192.0.2.10" not in keys  # digests, never the address
    # ...and not keyed by the password itself: a fast offline oracle for it
    fast = {hmac.new(pw.encode(), b"192.0.2.10", "sha256").hexdigest() for pw in (PASSWORD, new)}
    assert not keys & fast


def test_proven_addresses_outlive_a_restart(tmp_path: Path):
    """Kept only in memory, the proofs went with a restart: guessers then filled the ceiling
    and the owner's usual address got 429 with the right password."""
    with running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as before:
        assert bearer(before.url, PASSWORD, "192.0.2.10") == 200
    with running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as after:
        for n in range(OVERALL):
            assert bearer(after.url, guess(), guesser(n)) == 401
        assert bearer(after.url, PASSWORD, "10.77.0.1") == 429  # the ceiling is full
        assert bearer(after.url, PASSWORD, "192.0.2.10") == 200


def test_this_machine_gets_in_while_the_ceiling_is_full(behind_proxy: Engine):
    """The hook runs here: a loopback peer with no proxy's header is never held by strangers."""
    for n in range(OVERALL):
        assert bearer(behind_proxy.url, guess(), guesser(n)) == 401
    assert bearer(behind_proxy.url, PASSWORD, "10.77.0.1") == 429
    assert bearer(behind_proxy.url, PASSWORD) == 200  # never proven, yet this machine


def test_a_repeated_refusal_does_not_fill_the_log(engine: Engine, caplog):
    caplog.set_level(logging.WARNING)
    for _ in range(3 * PER_SOURCE):
        assert bearer(engine.url, "the-password-before-the-change") == 401
    for _ in range(3):
        assert bearer(engine.url, guess()) == 401
    lines = [r.getMessage() for r in caplog.records if "rejected a bearer token" in r.getMessage()]
    assert len(lines) == 1, lines
