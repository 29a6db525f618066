"""OAuth hygiene on the real app under uvicorn: bounded open registration, and grants that end
when a code or refresh token is misused."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from auth_flow import (
    CALLBACK,
    PASSWORD,
    Engine,
    OAuthClient,
    query,
    recall,
    registered_client,
    retry_after_fits,
    row_count,
    running_engine,
)
from trilium_recall.access.client_metadata import (
    MAX_CLIENT_NAME_CHARS,
    MAX_REDIRECT_URIS,
    MAX_URI_CHARS,
)
from trilium_recall.access.oauth import MAX_CLIENTS, REUSE_GRACE_SECONDS
from trilium_recall.access.oauth_routes import _LimitRegistration
from trilium_recall.access.pending_authorizations import MAX_PENDING
from trilium_recall.access.rate_limits import (
    REGISTER_OVERALL,
    REGISTER_PER_SOURCE,
    registration_limit,
)
from trilium_recall.body_limits import FORM_BODY_BYTES, PROMPT_BODY_BYTES, REGISTRATION_BODY_BYTES


def register(url: str, headers: dict[str, str] | None = None, **metadata: Any) -> httpx.Response:
    body = {"redirect_uris": [CALLBACK], "client_name": "Test client", **metadata}
    return httpx.post(f"{url}/register", json=body, headers=headers or {})


def engine_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("trilium_recall")]


# -- registration is bounded -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "error", "reason"),
    [
        (
            {"client_name": "x" * 1_000_000},
            "invalid_client_metadata",
            f"registration larger than {REGISTRATION_BODY_BYTES} bytes",
        ),
        (
            {"jwks": {"keys": ["k" * 100] * 400}},
            "invalid_client_metadata",
            f"registration larger than {REGISTRATION_BODY_BYTES} bytes",
        ),
        (
            {"client_name": "x" * (MAX_CLIENT_NAME_CHARS + 1)},
            "invalid_client_metadata",
            f"client_name is longer than {MAX_CLIENT_NAME_CHARS}",
        ),
        (
            {"client_name": "Claude\u202e"},  # would reverse the return host printed after it
            "invalid_client_metadata",
            "client_name holds control or formatting characters",
        ),
        (
            {"redirect_uris": [f"{CALLBACK}/{n}" for n in range(MAX_REDIRECT_URIS + 1)]},
            "invalid_redirect_uri",
            f"more than {MAX_REDIRECT_URIS} redirect URIs",
        ),
        (
            {"redirect_uris": [CALLBACK, f"{CALLBACK}?{'q' * MAX_URI_CHARS}"]},
            "invalid_client_metadata",
            f"redirect URI 2 is longer than {MAX_URI_CHARS}",
        ),
        (
            {"logo_uri": f"https://logo.example/{'l' * MAX_URI_CHARS}"},
            "invalid_client_metadata",
            f"logo_uri is longer than {MAX_URI_CHARS}",
        ),
        (  # https, so the reason is the fragment
            {"redirect_uris": ["https://app.example/cb#x"]},
            "invalid_redirect_uri",
            "redirect URI https://app.example/cb#x must not have a fragment (#…): RFC 6749 §3.1.2",
        ),
        (
            {"redirect_uris": ["http://app.example/cb"]},
            "invalid_redirect_uri",
            "redirect URI http://app.example/cb must be https, or http on 127.0.0.1, localhost "
            "or [::1]",
        ),
    ],
)
def test_oversized_registrations_are_refused_and_leave_nothing_behind(
    engine: Engine, caplog, metadata: dict[str, Any], error: str, reason: str
):
    caplog.set_level(logging.INFO)
    response = register(engine.url, **metadata)
    assert (response.status_code, response.json()) == (
        400,
        {"error": error, "error_description": reason},
    )
    assert row_count(engine.data_dir, "oauth_clients") == 0
    assert sum(map(len, engine_log(caplog))) < 1000


@pytest.mark.parametrize(
    ("path", "cap", "content_type"),
    [
        ("/token", FORM_BODY_BYTES, "application/x-www-form-urlencoded"),
        ("/revoke", FORM_BODY_BYTES, "application/x-www-form-urlencoded"),
        ("/login", FORM_BODY_BYTES, "application/x-www-form-urlencoded"),
        ("/mcp", PROMPT_BODY_BYTES, "application/json"),
    ],
)
def test_a_body_over_its_cap_is_refused_before_it_is_read(
    engine: Engine, path: str, cap: int, content_type: str
):
    """body_limits.py: one byte over the route's cap is a 413; at the cap the body gets past
    the size check to the route's own answer."""
    headers = {"Content-Type": content_type, "Authorization": f"Bearer {PASSWORD}"}
    answers = [
        httpx.post(f"{engine.url}{path}", content=b"a" * size, headers=headers, timeout=30)
        for size in (cap + 1, cap)
    ]
    assert [a.status_code == 413 for a in answers] == [True, False], [a.text for a in answers]


def test_the_limits_still_take_a_normal_registration(engine: Engine, caplog):
    caplog.set_level(logging.INFO)
    name = "n" * MAX_CLIENT_NAME_CHARS
    uris = [f"https://app.example/{n}/{'u' * 1900}" for n in range(MAX_REDIRECT_URIS)]
    assert register(engine.url, client_name=name, redirect_uris=uris).status_code == 201
    assert row_count(engine.data_dir, "oauth_clients") == 1


def test_a_client_name_cannot_forge_log_lines(engine: Engine, caplog):
    caplog.set_level(logging.INFO)
    refused = register(engine.url, client_name="app\nWARNING forged: all good")
    assert refused.status_code == 400
    assert refused.json()["error_description"] == (
        "client_name holds control or formatting characters"
    )
    assert not any("forged" in m for m in engine_log(caplog))


def test_registration_is_rate_limited_per_source(engine: Engine):
    started = time.time()
    statuses = [register(engine.url).status_code for _ in range(REGISTER_PER_SOURCE.burst + 3)]
    assert statuses == [201] * REGISTER_PER_SOURCE.burst + [429] * 3
    refused = register(engine.url)
    assert refused.json()["error"] == "too_many_requests"
    assert REGISTER_PER_SOURCE.drain_seconds == 360
    assert retry_after_fits(refused, 360, started), refused.headers["retry-after"]
    assert row_count(engine.data_dir, "oauth_clients") == REGISTER_PER_SOURCE.burst
    engine.clock.offset += REGISTER_PER_SOURCE.drain_seconds
    assert register(engine.url).status_code == 201


def test_refused_registrations_do_not_use_up_the_limit(engine: Engine):
    """Ten tries at a bad redirect URI locked the source out for an hour."""
    for _ in range(REGISTER_PER_SOURCE.burst):
        refused = register(engine.url, redirect_uris=["http://app.example/callback"])
        assert refused.status_code == 400
    assert register(engine.url).status_code == 201


def test_a_client_registered_without_a_method_may_send_its_secret_as_basic(engine: Engine):
    """RFC 7591 makes client_secret_basic the default; the SDK registers such a client as
    client_secret_post and then refused its Basic header: "Client secret is required"."""
    with httpx.Client(timeout=10) as http:
        oauth = OAuthClient(engine.url, http)
        registered = oauth.register(method=None)  # the field left out
        assert registered.json()["token_endpoint_auth_method"] == "client_secret_post"

        def exchange(secret: str) -> httpx.Response:
            form = {"grant_type": "authorization_code", "code": oauth.code(),
                    "redirect_uri": CALLBACK, "code_verifier": oauth.verifier}  # fmt: skip
            return http.post(
                f"{engine.url}/token", data=form, auth=httpx.BasicAuth(oauth.client_id, secret)
            )

        refused = exchange("not-the-secret")
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
        answer = exchange(oauth.client_secret)
        assert answer.status_code == 200, answer.text
        assert recall(engine.url, answer.json()["access_token"]).status_code == 200


def test_registration_from_rotating_sources_meets_the_overall_limit(tmp_path: Path):
    with running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as engine:
        statuses = [
            register(engine.url, {"X-Forwarded-For": f"10.0.{n}.1"}).status_code
            for n in range(REGISTER_OVERALL.burst + 5)
        ]
    assert statuses == [201] * REGISTER_OVERALL.burst + [429] * 5


def test_a_stranger_asking_to_authorize_again_and_again_pushes_out_only_their_own(
    tmp_path: Path,
):
    """/authorize needs no credential; every request waits in memory for the password. A
    stranger's thousand must not push out the owner's page while the owner types."""
    with (
        running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as engine,
        registered_client(engine.url) as owner,
    ):
        _, fields = owner.login_form()  # from 127.0.0.1 itself
        stranger = {"X-Forwarded-For": "10.9.9.9"}
        first = owner.authorize(headers=stranger).headers["location"]
        for _ in range(MAX_PENDING + 5):
            assert owner.authorize(headers=stranger).status_code == 302
        assert "Sign-in link expired" in owner.http.get(first).text  # their own oldest went
        signed_in = owner.submit(fields)
    assert signed_in.status_code == 303, signed_in.text


def test_past_the_cap_the_oldest_unused_clients_make_room(engine: Engine):
    with registered_client(engine.url) as owner:  # the oldest client, and signed in
        tokens = owner.tokens()
        for _ in range(MAX_CLIENTS - 1):
            engine.clock.offset += REGISTER_PER_SOURCE.drain_seconds  # past the rate limit
            assert register(engine.url).status_code == 201
        ids = _client_ids(engine.data_dir)
        assert len(ids) == MAX_CLIENTS and ids[0] == owner.client_id
        engine.clock.offset += REGISTER_PER_SOURCE.drain_seconds
        newest = register(engine.url)
        assert newest.status_code == 201
        after = _client_ids(engine.data_dir)
        assert after == [owner.client_id, *ids[2:], newest.json()["client_id"]]
        # The signed-in client was kept: its refresh token (30 days) still works.
        refreshed = owner.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
        assert refreshed.status_code == 200, refreshed.text
        assert recall(engine.url, refreshed.json()["access_token"]).status_code == 200


def _client_ids(data_dir: Path) -> list[str]:
    return [
        row[0] for row in query(data_dir, "SELECT client_id FROM oauth_clients ORDER BY created_at")
    ]


# -- revocation ------------------------------------------------------------------------------


def test_a_public_client_revokes_with_its_client_id(engine: Engine):
    with httpx.Client(timeout=10) as http:
        public = OAuthClient(engine.url, http)
        assert public.register(method="none").status_code == 201
        tokens = public.tokens()
        data = {"token": tokens["refresh_token"], "client_id": public.client_id}
        response = http.post(f"{engine.url}/revoke", data=data)  # RFC 7009: no secret to send
    assert response.status_code == 200, response.text
    assert recall(engine.url, tokens["access_token"]).status_code == 401  # the grant ended


def test_a_confidential_client_still_needs_its_secret_to_revoke(engine: Engine):
    with registered_client(engine.url) as client:
        tokens = client.tokens()
        for secret in (None, ""):
            data = {"token": tokens["access_token"], "client_id": client.client_id}
            if secret is not None:
                data["client_secret"] = secret
            response = client.http.post(f"{engine.url}/revoke", data=data)
            assert response.status_code == 401, response.text
            assert response.json()["error"] == "unauthorized_client"
    assert recall(engine.url, tokens["access_token"]).status_code == 200


# -- misuse ends the grant -------------------------------------------------------------------


def refresh(client: OAuthClient, refresh_token: str) -> httpx.Response:
    return client.token(grant_type="refresh_token", refresh_token=refresh_token)


def test_a_replayed_code_revokes_the_tokens_issued_from_it(engine: Engine, caplog):
    caplog.set_level(logging.WARNING)
    with registered_client(engine.url) as client:
        code = client.code()
        first = client.exchange(code)
        assert first.status_code == 200
        tokens = first.json()
        assert recall(engine.url, tokens["access_token"]).status_code == 200
        replayed = client.exchange(code)
        assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant")
        assert recall(engine.url, tokens["access_token"]).status_code == 401
        assert refresh(client, tokens["refresh_token"]).status_code == 400
        other = client.tokens()  # the client signs in again and goes on
        assert recall(engine.url, other["access_token"]).status_code == 200
    assert any("authorization code was presented again" in m for m in engine_log(caplog))


def test_a_code_replayed_after_refreshes_still_ends_the_grant(engine: Engine):
    with registered_client(engine.url) as client:
        code = client.code()
        tokens = client.exchange(code).json()
        for _ in range(3):
            tokens = refresh(client, tokens["refresh_token"]).json()
        engine.clock.offset += 24 * 3600  # long after the code itself expired
        tokens = refresh(client, tokens["refresh_token"]).json()
        assert client.exchange(code).status_code == 400
        assert refresh(client, tokens["refresh_token"]).status_code == 400


def test_a_reused_refresh_token_ends_the_whole_grant(engine: Engine, caplog):
    caplog.set_level(logging.WARNING)
    with registered_client(engine.url) as client:
        first = client.tokens()
        second = refresh(client, first["refresh_token"]).json()
        third = refresh(client, second["refresh_token"]).json()
        engine.clock.offset += REUSE_GRACE_SECONDS  # no parallel request of the client's own
        reused = refresh(client, first["refresh_token"])  # a stolen copy of an old one
        assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")
        assert recall(engine.url, third["access_token"]).status_code == 401
        assert refresh(client, third["refresh_token"]).status_code == 400
    assert any("refresh token was presented again" in m for m in engine_log(caplog))
    assert row_count(engine.data_dir, "oauth_tokens") == 0
    assert row_count(engine.data_dir, "oauth_spent") == 0  # nothing left to protect


def test_misuse_ends_only_its_own_grant(engine: Engine):
    with registered_client(engine.url) as client:
        kept, ended = client.tokens(), client.tokens()
        newer = refresh(client, ended["refresh_token"]).json()
        engine.clock.offset += REUSE_GRACE_SECONDS
        assert refresh(client, ended["refresh_token"]).status_code == 400
        assert recall(engine.url, newer["access_token"]).status_code == 401  # its grant ended
        assert recall(engine.url, kept["access_token"]).status_code == 200
        assert refresh(client, kept["refresh_token"]).status_code == 200


def test_a_refresh_sent_twice_at_once_keeps_the_grant(engine: Engine):
    """A client's two workers refreshing at expiry send the same refresh token at once: the
    second was taken for a leak and ended the grant the first had just renewed."""
    with registered_client(engine.url) as client:
        tokens = client.tokens()
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: refresh(client, tokens["refresh_token"]), range(2)))
        assert sorted(a.status_code for a in answers) == [200, 400]
        renewed = next(a.json() for a in answers if a.status_code == 200)
        assert recall(engine.url, renewed["access_token"]).status_code == 200
        assert recall(engine.url, tokens["access_token"]).status_code == 200  # lives its hour
        assert refresh(client, renewed["refresh_token"]).status_code == 200


def test_spent_credentials_are_forgotten_with_their_grant(engine: Engine):
    with registered_client(engine.url) as client:
        tokens = client.tokens()
        tokens = refresh(client, tokens["refresh_token"]).json()
        spent = row_count(engine.data_dir, "oauth_spent")
        assert spent == 2  # the code and the first refresh token
        data = {"token": tokens["refresh_token"], "client_id": client.client_id}
        data["client_secret"] = client.client_secret
        assert client.http.post(f"{engine.url}/revoke", data=data).status_code == 200
        client.tokens()  # any later write purges what belonged to the revoked grant
    assert row_count(engine.data_dir, "oauth_spent") == 1  # the new grant's code


async def test_registrations_sent_at_once_cannot_all_pass_the_limit() -> None:
    """Counted only once stored, registrations whose bodies were still arriving all passed the
    check: 100 at once from one source were 100 clients. Each is counted as it arrives."""

    async def stored(scope, receive, send) -> None:  # the SDK's /register, as far as it matters
        await receive()
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    guard, sent = _LimitRegistration(stored, registration_limit(), lambda _: False), 100
    statuses: list[int] = []
    reading = answered = 0
    every_one_in = asyncio.Event()  # each request waiting for its body, or already answered

    def check() -> None:
        if reading + answered == sent:
            every_one_in.set()

    async def body() -> dict:
        nonlocal reading
        reading += 1
        check()
        await every_one_in.wait()
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def one() -> None:
        nonlocal answered
        scope = {"type": "http", "method": "POST", "client": ("203.0.113.9", 1),
                 "headers": [(b"content-type", b"application/json")]}  # fmt: skip

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        try:
            await guard(scope, body, send)
        finally:
            answered += 1
            check()

    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(sent))), 60)
    assert statuses.count(201) == REGISTER_PER_SOURCE.burst
    assert statuses.count(429) == sent - REGISTER_PER_SOURCE.burst
