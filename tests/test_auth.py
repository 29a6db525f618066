"""Authentication end to end: a real app under uvicorn on 127.0.0.1, real HTTP, the SDK client."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import secrets
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import apsw
import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from auth_flow import (
    CALLBACK,
    PASSWORD,
    Engine,
    OAuthClient,
    form_inputs,
    mcp_tools,
    recall,
    registered_client,
    retry_after_fits,
    row_count,
    running_engine,
)
from trilium_recall.access.oauth import ACCESS_TOKEN_SECONDS, digest
from trilium_recall.access.rate_limits import PASSWORD_PER_SOURCE
from trilium_recall.config import load_settings
from trilium_recall.errors import ConfigError
from trilium_recall.index.store import Store
from trilium_recall.server.auth import Authenticator


def test_health_is_public(engine: Engine):
    response = httpx.get(f"{engine.url}/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "instances": {}})


@pytest.mark.parametrize("path", ["/recall", "/mcp"])
def test_no_credentials_is_401_with_a_challenge(engine: Engine, path: str):
    response = httpx.post(f"{engine.url}{path}", json={})
    assert response.status_code == 401
    suffix = "/mcp" if path == "/mcp" else ""
    metadata = f"{engine.url}/.well-known/oauth-protected-resource{suffix}"
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    assert response.json()["error"] == "unauthorized"


@pytest.mark.parametrize("path", ["/recall", "/mcp"])
def test_wrong_password_is_401_invalid_token(engine: Engine, path: str):
    response = httpx.post(
        f"{engine.url}{path}", json={}, headers={"Authorization": "Bearer not-the-password"}
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert response.json()["error"] == "invalid_token"


async def test_password_opens_recall_and_mcp(engine: Engine):
    assert recall(engine.url, PASSWORD).status_code == 200
    assert await mcp_tools(engine.url, PASSWORD) == ["recall"]


async def test_mcp_with_a_trailing_slash_is_served_not_redirected(engine: Engine):
    assert await mcp_tools(engine.url, PASSWORD, path="/mcp/") == ["recall"]


@pytest.mark.parametrize("path", ["/mcp/", "/recall/", "/health/", "/login/", "/token/", "/mcp"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:443"])
def test_no_location_is_built_from_the_host_header(engine: Engine, path: str, host: str):
    """Starlette's slash redirect used to answer POST /mcp/ with Location: http://evil.example/mcp."""
    headers = {"Host": host, "Authorization": f"Bearer {PASSWORD}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for method in ("GET", "POST"):
        response = httpx.request(method, f"{engine.url}{path}", json=body, headers=headers)
        assert "location" not in response.headers, (method, response.headers)
        assert not 300 <= response.status_code < 400
        assert "evil.example" not in response.text


def test_bearer_guessing_is_rate_limited(engine: Engine):
    started = time.time()
    with httpx.Client() as http:
        for n in range(PASSWORD_PER_SOURCE.burst):  # each a new guess: repeats do not count
            assert recall(engine.url, f"guess-{n}", http).status_code == 401
        limited = recall(engine.url, PASSWORD, http)  # throttled: not even compared
    assert limited.status_code == 429
    assert limited.json()["error"] == "too_many_requests"
    assert PASSWORD_PER_SOURCE.drain_seconds == 60
    assert retry_after_fits(limited, 60, started), limited.headers["retry-after"]
    engine.clock.offset += 60  # one failure drained away: one more try
    assert recall(engine.url, PASSWORD).status_code == 200


def test_without_base_url_the_password_still_works_and_no_oauth(tmp_path: Path):
    with running_engine(tmp_path, oauth=False) as engine:
        assert engine.authenticator.routes() == []
        response = recall(engine.url, None)
        assert (response.status_code, response.headers["www-authenticate"]) == (401, "Bearer")
        assert recall(engine.url, PASSWORD).status_code == 200
        assert httpx.get(f"{engine.url}/.well-known/oauth-authorization-server").status_code == 404


async def test_without_password_nothing_is_guarded(tmp_path: Path):
    with running_engine(tmp_path, password=None) as engine:
        assert not engine.authenticator.enabled
        assert engine.authenticator.routes() == []
        assert recall(engine.url, None).status_code == 200
        assert await mcp_tools(engine.url, "anything") == ["recall"]


# -- OAuth: the whole dance ---------------------------------------------------------------------


async def test_discovery_register_login_token_and_mcp(engine: Engine):
    with httpx.Client(timeout=10) as http:
        oauth = OAuthClient(engine.url, http)
        found = oauth.discover()
        assert found["resource"]["resource"] == f"{engine.url}/mcp"
        assert found["resource"]["authorization_servers"] == [engine.url]
        server = found["server"]
        assert server["issuer"] == engine.url
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["registration_endpoint"] == f"{engine.url}/register"
        assert server["token_endpoint"] == f"{engine.url}/token"
        assert server["revocation_endpoint"] == f"{engine.url}/revoke"
        assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
        # Public clients register with "none" and are served (test_public_client_without_a_secret)
        methods = ["client_secret_post", "client_secret_basic", "none"]
        assert server["token_endpoint_auth_methods_supported"] == methods
        assert server["revocation_endpoint_auth_methods_supported"] == methods
        cors = http.options(
            f"{engine.url}/.well-known/oauth-authorization-server",
            headers={"Origin": "https://claude.ai", "Access-Control-Request-Method": "GET"},
        )
        assert cors.status_code == 200, cors.text
        root = http.get(f"{engine.url}/.well-known/oauth-protected-resource").json()
        assert root["resource"] == engine.url
        assert oauth.register().status_code == 201
        tokens = oauth.tokens()
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600
    assert await mcp_tools(engine.url, tokens["access_token"]) == ["recall"]
    assert recall(engine.url, tokens["access_token"]).status_code == 200


class MemoryTokens:
    """TokenStorage for the SDK's OAuth client."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_sdk_oauth_client_signs_in_on_its_own(engine: Engine):
    """The SDK's own OAuthClientProvider does discovery, registration, PKCE and resource."""
    landed: list[str] = []

    async def sign_in(authorize_url: str) -> None:  # plays the user in the browser
        async with httpx.AsyncClient(timeout=10) as browser:
            login = (await browser.get(authorize_url)).headers["location"]
            page = await browser.get(login)
            fields = {n: a.get("value") or "" for n, a in form_inputs(page.text).items()}
            fields["password"] = PASSWORD
            done = await browser.post(f"{engine.url}/login", data=fields)
            landed.append(done.headers["location"])

    async def callback() -> AuthorizationCodeResult:
        query = parse_qs(urlparse(landed[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])

    metadata = OAuthClientMetadata(redirect_uris=[AnyUrl(CALLBACK)], client_name="SDK client")
    storage = MemoryTokens()
    provider = OAuthClientProvider(f"{engine.url}/mcp", metadata, storage, sign_in, callback)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=10) as http,
        streamable_http_client(f"{engine.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert [tool.name for tool in (await session.list_tools()).tools] == ["recall"]
    assert len(landed) == 1 and storage.tokens is not None
    assert recall(engine.url, storage.tokens.access_token).status_code == 200


def test_login_page_is_accessible_and_locked_down(engine: Engine, client: OAuthClient):
    login_url, _ = client.login_form()
    page = httpx.get(login_url)
    inputs = form_inputs(page.text)
    password = inputs["password"]
    assert password["type"] == "password"
    assert password["autocomplete"] == "current-password"
    assert "autofocus" in password and "required" in password
    assert '<label for="password">Password</label>' in page.text
    style = re.search(r"<style>(.*)</style>", page.text, re.S).group(1)
    style_hash = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert page.headers["content-security-policy"] == (
        f"default-src 'none'; style-src 'sha256-{style_hash}'; "
        "form-action 'self' http://127.0.0.1:9; frame-ancestors 'none'; base-uri 'none'"
    )
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["cache-control"] == "no-store"
    assert "Test client" in page.text and "127.0.0.1" in page.text


def test_unknown_login_request_is_400(engine: Engine):
    response = httpx.get(f"{engine.url}/login?request=nope")
    assert response.status_code == 400
    assert "expired" in response.text


def test_wrong_password_shows_the_form_again_without_a_code(client: OAuthClient):
    _, fields = client.login_form()
    response = client.submit(fields, password="wrong")
    assert response.status_code == 403
    assert "location" not in response.headers
    assert 'role="alert">Wrong password. Try again.</p>' in response.text
    assert form_inputs(response.text)["csrf"]["value"] == fields["csrf"]
    assert client.submit(fields).status_code == 303  # the same form still works


@pytest.mark.parametrize("csrf", [None, "", "forged"])
def test_login_needs_the_csrf_token(client: OAuthClient, csrf: str | None):
    _, fields = client.login_form()
    sent = {"request": fields["request"]} if csrf is None else {**fields, "csrf": csrf}
    response = client.submit(sent)
    assert response.status_code == 403
    assert "location" not in response.headers


def test_login_attempts_are_rate_limited(engine: Engine, client: OAuthClient, caplog):
    caplog.set_level(logging.WARNING)
    _, fields = client.login_form()
    started = time.time()
    for n in range(PASSWORD_PER_SOURCE.burst):  # each a new guess: repeats do not count
        assert client.submit(fields, password=f"wrong-{n}").status_code == 403
    limited = client.submit(fields)  # even the right password waits
    assert limited.status_code == 429
    assert retry_after_fits(limited, 60, started), limited.headers["retry-after"]
    assert "location" not in limited.headers
    assert any("too many wrong passwords" in r.getMessage() for r in caplog.records)
    engine.clock.offset += 60
    assert client.submit(fields).status_code == 303


def test_state_round_trips_and_the_code_is_single_use(client: OAuthClient):
    code = client.code(state="a b&c=d/é")
    assert client.exchange(code).status_code == 200
    reused = client.exchange(code)
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")


def test_wrong_pkce_verifier_is_refused(client: OAuthClient):
    response = client.exchange(client.code(), verifier=secrets.token_urlsafe(48))
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


def test_codes_expire_after_five_minutes(engine: Engine, client: OAuthClient):
    code = client.code()
    engine.clock.offset += 301
    response = client.exchange(code)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


def test_unregistered_redirect_uri_is_never_redirected_to(client: OAuthClient):
    response = client.authorize(redirect_uri="https://evil.example/callback")
    assert response.status_code == 400
    assert "location" not in response.headers
    assert response.json()["error"] == "invalid_request"


@pytest.mark.parametrize(
    "uri", ["http://evil.example/cb", "myapp://cb", "https://ok.example/cb#frag"]
)
def test_registration_refuses_unsafe_redirect_uris(engine: Engine, uri: str):
    with httpx.Client() as http:
        oauth = OAuthClient(engine.url, http, redirect_uri=uri)
        response = oauth.register()
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize("uri", ["https://claude.ai/api/mcp/auth_callback", "http://[::1]:8/cb"])
def test_registration_accepts_https_and_loopback(engine: Engine, uri: str):
    with httpx.Client() as http:
        assert OAuthClient(engine.url, http, redirect_uri=uri).register().status_code == 201


def test_wrong_resource_is_refused_with_invalid_target(client: OAuthClient):
    response = client.authorize(resource="https://other.example/mcp")
    # Answered here, never redirected: not to the login page, and not to the client's URI
    # either (open registration would make that an open redirect).
    assert response.status_code == 400 and "location" not in response.headers
    assert response.json()["error"] == "invalid_target"


def test_authorize_errors_never_redirect_to_a_registered_uri(engine: Engine):
    with httpx.Client() as http:
        attacker = OAuthClient(engine.url, http, redirect_uri="https://evil.example/cb")
        assert attacker.register().status_code == 201
        response = attacker.authorize(code_challenge_method="plain")  # PKCE S256 only
    assert response.status_code == 400 and "location" not in response.headers
    assert response.json()["error"] == "invalid_request"


async def test_the_base_url_is_also_a_valid_resource(engine: Engine, client: OAuthClient):
    response = client.exchange(client.code(resource=engine.url))
    assert response.status_code == 200
    assert await mcp_tools(engine.url, response.json()["access_token"]) == ["recall"]


def test_access_tokens_expire_after_an_hour(engine: Engine, client: OAuthClient):
    access = client.tokens()["access_token"]
    engine.clock.offset += 3599
    assert recall(engine.url, access).status_code == 200
    engine.clock.offset += 2
    assert recall(engine.url, access).status_code == 401


def test_a_token_for_another_audience_is_refused(engine: Engine):
    # /authorize never issues one (see test_wrong_resource...); oauth_access() checks again.
    token, db = secrets.token_urlsafe(32), apsw.Connection(str(engine.data_dir / "recall.sqlite3"))
    row = (digest(token), "access", "g1", "c1", "[]", "https://other.example/mcp", time.time() + 60)
    with db:
        db.execute("INSERT INTO oauth_tokens VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    assert recall(engine.url, token).status_code == 401
    with db:
        db.execute("UPDATE oauth_tokens SET resource = ?", (f"{engine.url}/mcp",))
    assert recall(engine.url, token).status_code == 200  # the same row, right audience
    db.close()


def test_oauth_refuses_a_plain_http_public_base_url(tmp_path: Path):
    settings = load_settings(
        {}, login_password=PASSWORD, base_url="http://recall.example.org", data_dir=tmp_path
    )
    store = Store(settings.db_path)
    with pytest.raises(ConfigError, match="RECALL_BASE_URL: OAuth needs https"):
        Authenticator(settings, store).routes()
    store.close()


def test_refresh_rotates_and_the_old_access_token_lives_its_hour(
    engine: Engine, client: OAuthClient
):
    first = client.tokens()
    refreshed = client.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert recall(engine.url, second["access_token"]).status_code == 200
    # Requests already under way with the old one are not refused mid-flight...
    assert recall(engine.url, first["access_token"]).status_code == 200
    engine.clock.offset += ACCESS_TOKEN_SECONDS
    assert recall(engine.url, first["access_token"]).status_code == 401  # ...until its hour ends
    # Reusing the old refresh token ends the grant: tests/test_oauth.py.


def test_revoked_tokens_are_refused(engine: Engine, client: OAuthClient):
    tokens = client.tokens()
    data = {"token": tokens["access_token"], "client_id": client.client_id}
    data["client_secret"] = client.client_secret
    assert client.http.post(f"{engine.url}/revoke", data=data).status_code == 200
    assert recall(engine.url, tokens["access_token"]).status_code == 401
    refresh = client.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert refresh.status_code == 400  # revoking one token ends the whole grant


def test_unknown_client_at_token_is_401_invalid_client(engine: Engine):
    data = {"grant_type": "authorization_code", "code": "x", "code_verifier": "y" * 43}
    data["client_id"] = "no-such-client"
    response = httpx.post(f"{engine.url}/token", data=data)
    assert (response.status_code, response.json()["error"]) == (401, "invalid_client")


def test_client_secret_is_checked_and_its_digest_is_no_secret(client: OAuthClient):
    code = client.code()
    for wrong in ("wrong", digest(client.client_secret)):
        client.client_secret, real = wrong, client.client_secret
        response = client.exchange(code)
        assert (response.status_code, response.json()["error"]) == (401, "invalid_client")
        client.client_secret = real
    multipart = client.http.post(
        f"{client.url}/token",
        data={"client_id": client.client_id, "grant_type": "authorization_code"},
        files={"client_secret": ("s", digest(client.client_secret).encode())},
    )
    assert multipart.status_code == 400
    assert client.exchange(code).status_code == 200


def test_client_secret_basic_works(engine: Engine):
    """The client authenticates by the header alone (RFC 6749 §2.3.1): no client_id in the form."""
    with httpx.Client() as http:
        oauth = OAuthClient(engine.url, http)
        assert oauth.register(method="client_secret_basic").status_code == 201
        code = oauth.code()
        basic = base64.b64encode(f"{oauth.client_id}:{oauth.client_secret}".encode()).decode()
        form = {"grant_type": "authorization_code", "code": code}
        form |= {"redirect_uri": oauth.redirect_uri, "code_verifier": oauth.verifier}
        headers = {"Authorization": f"Basic {basic}"}
        response = http.post(f"{engine.url}/token", data=form, headers=headers)
        assert response.status_code == 200, response.text
        access = response.json()["access_token"]
        assert recall(engine.url, access).status_code == 200
        revoked = http.post(f"{engine.url}/revoke", data={"token": access}, headers=headers)
        assert revoked.status_code == 200, revoked.text
        assert recall(engine.url, access).status_code == 401


@pytest.mark.parametrize("grant", ["password", "client_credentials", "implicit"])
def test_a_grant_type_the_engine_does_not_issue_is_unsupported(client: OAuthClient, grant: str):
    response = client.token(grant_type=grant, username="owner", password="x")
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": "unsupported_grant_type",
            "error_description": "grant_type must be one of authorization_code, refresh_token",
        },
    )


def test_public_client_without_a_secret(engine: Engine):
    with httpx.Client() as http:
        oauth = OAuthClient(engine.url, http)
        response = oauth.register(method="none")
        assert response.status_code == 201 and "client_secret" not in response.json()
        assert recall(engine.url, oauth.tokens()["access_token"]).status_code == 200


async def test_clients_survive_a_restart(tmp_path: Path):
    with running_engine(tmp_path) as first, httpx.Client(timeout=10) as http:
        oauth = OAuthClient(first.url, http)
        assert oauth.register().status_code == 201
    with running_engine(tmp_path) as second, httpx.Client(timeout=10) as http:
        again = OAuthClient(second.url, http, oauth.client_id, oauth.client_secret)
        tokens = again.tokens()
        assert await mcp_tools(second.url, tokens["access_token"]) == ["recall"]


def test_a_new_password_ends_old_oauth_grants(tmp_path: Path):
    with running_engine(tmp_path) as first, httpx.Client(timeout=10) as http:
        oauth = OAuthClient(first.url, http)
        assert oauth.register().status_code == 201
        assert recall(first.url, oauth.tokens()["access_token"]).status_code == 200
    assert row_count(tmp_path, "oauth_tokens") == 2  # one access + one refresh token
    with running_engine(tmp_path):  # same password: the grant stays
        pass
    assert row_count(tmp_path, "oauth_tokens") == 2
    with running_engine(tmp_path, password="a-brand-new-password-91"):
        pass
    assert row_count(tmp_path, "oauth_tokens") == 0  # whoever knew the old password is out
    assert row_count(tmp_path, "oauth_clients") == 1  # registrations stay: clients log in again


# -- secrets stay secret ------------------------------------------------------------------------


async def test_no_secret_reaches_the_logs_or_the_file(engine: Engine, caplog):
    caplog.set_level(logging.DEBUG)
    with httpx.Client(timeout=10) as http:
        oauth = OAuthClient(engine.url, http)
        assert oauth.register().status_code == 201
        _, fields = oauth.login_form()
        assert oauth.submit(fields, password=PASSWORD + "x").status_code == 403
        first = oauth.tokens()
        refreshed = oauth.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
        assert refreshed.status_code == 200
        await mcp_tools(engine.url, refreshed.json()["access_token"])
    assert recall(engine.url, PASSWORD).status_code == 200
    assert recall(engine.url, PASSWORD + "y").status_code == 401
    secrets_seen = [PASSWORD, *oauth.issued]
    assert len(secrets_seen) == 7  # password, client secret, code, 2 access, 2 refresh

    # The test's own HTTP clients (httpx, httpcore and their "2" forks) log response headers at
    # DEBUG, the Location with the code among them; they are the client, not the engine.
    client_side = ("httpx", "httpcore")
    server_records = [r for r in caplog.records if not r.name.startswith(client_side)]
    logs = "\n".join(record.getMessage() for record in server_records)
    assert "POST /token" in logs  # uvicorn's access log was captured too
    files = b"".join(
        path.read_bytes() for path in engine.data_dir.iterdir() if "recall.sqlite3" in path.name
    )
    assert digest(refreshed.json()["access_token"]).encode() in files  # we read the right file
    for secret in secrets_seen:
        assert secret not in logs
        assert secret.encode() not in files
        assert secret.encode("utf-16-le") not in files


def test_form_encoded_body_is_rebuilt_not_trusted(client: OAuthClient):
    # The token route re-encodes the form it hashed; other fields must survive unchanged.
    code = client.code()
    body = urlencode(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": client.redirect_uri,
            "code_verifier": client.verifier,
            "client_id": client.client_id,
            "client_secret": client.client_secret,
        }
    )
    headers = {"content-type": "application/x-www-form-urlencoded"}
    response = client.http.post(f"{client.url}/token", content=body, headers=headers)
    assert response.status_code == 200, response.text
    assert json.loads(response.text)["token_type"] == "Bearer"


def test_a_base_url_in_capitals_signs_in(tmp_path: Path):
    """The metadata named the resource in lower case and /authorize compared it with the
    variable as written: every sign-in ended in invalid_target."""
    with (
        running_engine(tmp_path, base_host="LOCALHOST") as engine,
        registered_client(engine.url) as client,
    ):
        port = engine.url.rsplit(":", 1)[1]
        metadata = httpx.get(f"{engine.url}/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == f"http://localhost:{port}/mcp"
        authorized = client.authorize(resource=metadata["resource"])
        assert authorized.status_code == 302, authorized.text
        assert authorized.headers["location"].startswith(f"http://localhost:{port}/login?")
