"""The OAuth 2.1 authorization server behind the login page, as the MCP SDK wants it.

`OAuthProvider` is the SDK's `OAuthAuthorizationServerProvider` over the index file: the SDK's
handlers do the protocol (RFC 8414 metadata, RFC 7591 registration, /authorize, /token with PKCE
S256, RFC 7009 revocation); this class keeps clients, codes and tokens. Codes and tokens are
random 256-bit strings stored only as SHA-256 digests; a client's secret likewise, which is why
the token and revocation routes hash the secret a client sends before the SDK compares it.
Access tokens live an hour, refresh tokens rotate on every use, codes are single-use and live
five minutes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from urllib.parse import parse_qsl, unquote, urlencode, urlparse

import apsw
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import AUTHORIZATION_PATH, REVOCATION_PATH, TOKEN_PATH
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .login_page import LOGIN_PATH, Pending, PendingAuthorizations

logger = logging.getLogger(__name__)

ACCESS_TOKEN_SECONDS = 3600
REFRESH_TOKEN_SECONDS = 30 * 24 * 3600
CODE_SECONDS = 300  # RFC 6749 §4.1.2 recommends at most 10 minutes
MCP_PATH = "/mcp"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_TOKEN_REQUEST_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE


def digest(secret: str) -> str:
    """What the file keeps instead of a code, token or client secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _password_check(password: bytes, salt: bytes) -> bytes:
    # scrypt, not a bare hash: the file must not make the password cheap to guess offline.
    return hashlib.scrypt(password, salt=salt, n=2**14, r=8, p=1, dklen=32)


def _redirect_uri_ok(uri: str) -> bool:
    parsed = urlparse(uri)
    if parsed.fragment or not parsed.hostname:
        return False
    return parsed.scheme == "https" or (
        parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS
    )


class OAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """The SDK's `OAuthAuthorizationServerProvider`, persisted in the index file.

    Subclassed, not just matched: the SDK's default refuses the identity-assertion grant."""

    def __init__(
        self, db: apsw.Connection, base_url: str, clock: Callable[[], float] = time.time
    ) -> None:
        self._db = db
        self._clock = clock
        self.resources = (f"{base_url}{MCP_PATH}", base_url)
        self.login_url = f"{base_url}{LOGIN_PATH}"
        self.pending = PendingAuthorizations(clock)

    def end_grants_if_password_changed(self, password: bytes) -> int:
        """Whoever knew the old password must not keep access through OAuth: on a new password,
        every token and code is deleted (clients stay registered). Returns grants ended."""
        with self._db:
            row = self._db.execute("SELECT salt, check_hash FROM auth_password").fetchone()
            if row and hmac.compare_digest(_password_check(password, row[0]), row[1]):
                return 0
            ended = 0
            if row:
                ended = len(
                    self._db.execute("SELECT DISTINCT grant_id FROM oauth_tokens").fetchall()
                )
                self._db.execute("DELETE FROM oauth_tokens")
                self._db.execute("DELETE FROM oauth_codes")
            salt = secrets.token_bytes(16)
            self._db.execute(
                "INSERT OR REPLACE INTO auth_password VALUES (1, ?, ?)",
                (salt, _password_check(password, salt)),
            )
        return ended

    # -- clients -----------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        row = self._db.execute(
            "SELECT info FROM oauth_clients WHERE client_id = ?", (client_id,)
        ).fetchone()
        return OAuthClientInformationFull.model_validate_json(row[0]) if row else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        for uri in client_info.redirect_uris or []:
            if not _redirect_uri_ok(str(uri)):
                raise RegistrationError(
                    "invalid_redirect_uri",
                    f"redirect URI {uri} must be https, or http on 127.0.0.1, localhost or [::1]",
                )
        # The SDK compares client secrets verbatim, so the file holds the hash and the token and
        # revocation routes hash what the client sends (`_HashClientSecret`) before comparing.
        secret = client_info.client_secret
        stored = client_info.model_copy(update={"client_secret": secret and digest(secret)})
        self._db.execute(
            "INSERT INTO oauth_clients (client_id, info, created_at) VALUES (?, ?, ?)",
            (client_info.client_id, stored.model_dump_json(exclude_none=True), self._clock()),
        )
        logger.info("registered OAuth client %s (%r)", client_info.client_id, stored.client_name)

    # -- authorization -----------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        resource = (params.resource or self.resources[0]).rstrip("/")
        if resource not in self.resources:
            raise AuthorizeError(
                "invalid_target", f"resource must be {self.resources[0]} or {self.resources[1]}"
            )
        bound = params.model_copy(update={"resource": resource})
        pending = self.pending.add(client.client_id, client.client_name or "An app", bound)
        return f"{self.login_url}?request={pending.id}"

    async def issue_code(self, pending: Pending) -> str:
        """Called by the login page after the password: a single-use code, back to the client."""
        code = secrets.token_urlsafe(32)
        params = pending.params
        record = {
            "scopes": params.scopes or [],
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "challenge": params.code_challenge,
            "resource": params.resource,
        }
        with self._db:
            self._purge()
            self._db.execute(
                "INSERT INTO oauth_codes VALUES (?, ?, ?, ?)",
                (digest(code), pending.client_id, json.dumps(record), self._clock() + CODE_SECONDS),
            )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        row = self._db.execute(
            "SELECT params, expires_at FROM oauth_codes WHERE code_hash = ? AND client_id = ?",
            (digest(authorization_code), client.client_id),
        ).fetchone()
        if row is None or row[1] <= self._clock():
            return None
        record = json.loads(row[0])
        return AuthorizationCode(
            code=authorization_code,
            scopes=record["scopes"],
            expires_at=row[1],
            client_id=client.client_id,
            code_challenge=record["challenge"],
            redirect_uri=AnyUrl(record["redirect_uri"]),
            redirect_uri_provided_explicitly=record["explicit"],
            resource=record["resource"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        with self._db:
            self._db.execute(
                "DELETE FROM oauth_codes WHERE code_hash = ?", (digest(authorization_code.code),)
            )
            if self._db.changes() == 0:  # already used: single-use even under a race
                raise TokenError("invalid_grant", "authorization code was already used")
            issued = self._issue_tokens(
                secrets.token_urlsafe(16),
                client.client_id,
                authorization_code.scopes,
                authorization_code.resource or self.resources[0],
            )
        return issued

    # -- tokens ------------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        row = self._token_row(refresh_token, "refresh")
        if row is None or row[0] != client.client_id:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=row[0],
            scopes=json.loads(row[1]),
            resource=row[2],
            expires_at=int(row[3]),
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        """Rotate: the old refresh token and its access token die, a new pair is issued."""
        token_hash = digest(refresh_token.token)
        with self._db:
            row = self._db.execute(
                "SELECT grant_id FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'",
                (token_hash,),
            ).fetchone()
            if row is None:
                raise TokenError("invalid_grant", "refresh token was already used")
            self._db.execute("DELETE FROM oauth_tokens WHERE grant_id = ?", (row[0],))
            issued = self._issue_tokens(
                row[0], client.client_id, scopes, refresh_token.resource or self.resources[0]
            )
        return issued

    async def load_access_token(self, token: str) -> AccessToken | None:
        row = self._token_row(token, "access")
        if row is None:
            return None
        return AccessToken(
            token=token,
            client_id=row[0],
            scopes=json.loads(row[1]),
            resource=row[2],
            expires_at=int(row[3]),
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """RFC 7009 via the SDK: revoking either token ends the whole grant."""
        with self._db:
            self._db.execute(
                "DELETE FROM oauth_tokens WHERE grant_id IN "
                "(SELECT grant_id FROM oauth_tokens WHERE token_hash = ?)",
                (digest(token.token),),
            )
        logger.info("revoked an OAuth grant of client %s", token.client_id)

    def _token_row(self, token: str, kind: str) -> tuple[str, str, str, float] | None:
        row = self._db.execute(
            "SELECT client_id, scopes, resource, expires_at FROM oauth_tokens "
            "WHERE token_hash = ? AND kind = ?",
            (digest(token), kind),
        ).fetchone()
        if row is None or row[3] <= self._clock():
            return None
        return row

    def _issue_tokens(
        self, grant_id: str, client_id: str, scopes: list[str], resource: str
    ) -> OAuthToken:
        now = self._clock()
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self._purge()
        for token, kind, lifetime in (
            (access, "access", ACCESS_TOKEN_SECONDS),
            (refresh, "refresh", REFRESH_TOKEN_SECONDS),
        ):
            self._db.execute(
                "INSERT INTO oauth_tokens VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    digest(token),
                    kind,
                    grant_id,
                    client_id,
                    json.dumps(scopes),
                    resource,
                    now + lifetime,
                ),
            )
        return OAuthToken(
            access_token=access,
            expires_in=ACCESS_TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    def _purge(self) -> None:
        now = self._clock()
        self._db.execute("DELETE FROM oauth_codes WHERE expires_at <= ?", (now,))
        self._db.execute("DELETE FROM oauth_tokens WHERE expires_at <= ?", (now,))


def guard_sdk_route(route: BaseRoute) -> BaseRoute:
    """Wrap the SDK routes that need it: secrets hashed at /token and /revoke, and no error
    redirects from /authorize."""
    if not isinstance(route, Route):
        return route
    app: ASGIApp
    if route.path in (TOKEN_PATH, REVOCATION_PATH):
        # The SDK's own limit goes first, so the hashing never buffers an unbounded body.
        app = RequestBodyLimitMiddleware(_HashClientSecret(route.app), MAX_TOKEN_REQUEST_BYTES)
    elif route.path == AUTHORIZATION_PATH:
        app = _NoErrorRedirects(route.app)
    else:
        return route
    return Route(route.path, app, methods=sorted(route.methods or []))


class _NoErrorRedirects:
    """The SDK sends /authorize errors to the client's redirect URI. Registration is open, so
    anyone can register any https URI and use our host as an open redirect to it: an error
    is answered here, as a 400, instead."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answered = False

        async def intercept(message: Message) -> None:
            nonlocal answered
            if answered:
                return  # the redirect's own body
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                location = dict(message.get("headers", [])).get(b"location", b"")
                query = dict(parse_qsl(urlparse(location.decode("latin-1")).query))
                if "error" in query:
                    answered = True
                    body = {k: query[k] for k in ("error", "error_description") if k in query}
                    headers = {"Cache-Control": "no-store"}
                    await JSONResponse(body, 400, headers=headers)(scope, receive, send)
                    return
            await send(message)

        await self.app(scope, receive, intercept)


class _HashClientSecret:
    """Replace the client secret a request carries by its digest, to match what the file holds.

    Only form bodies pass (RFC 6749 §3.2 requires them): a multipart body would reach the SDK
    unhashed, and a stolen digest must never work as the secret itself.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        content_type = headers.get(b"content-type", b"").lower()
        if not content_type.startswith(b"application/x-www-form-urlencoded"):
            answer = {
                "error": "invalid_request",
                "error_description": "send the request as application/x-www-form-urlencoded",
            }
            await JSONResponse(answer, status_code=400)(scope, receive, send)
            return
        body = await Request(scope, receive).body()
        form = [
            (key, digest(value) if key == "client_secret" else value)
            for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        ]
        new_body = urlencode(form).encode()
        headers[b"content-length"] = str(len(new_body)).encode()
        if b"authorization" in headers:
            headers[b"authorization"] = _hash_basic(headers[b"authorization"])
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": new_body, "more_body": False}

        await self.app({**scope, "headers": list(headers.items())}, replay, send)


def _hash_basic(value: bytes) -> bytes:
    """`Basic base64(id:secret)` → `Basic base64(id:digest(secret))`, decoded as the SDK does."""
    if not value.startswith(b"Basic "):
        return value
    try:
        decoded = base64.b64decode(value[6:]).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return value
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        return value
    return b"Basic " + base64.b64encode(f"{client_id}:{digest(unquote(secret))}".encode())
