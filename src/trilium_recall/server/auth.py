"""Who may call /recall and /mcp: the login password as a Bearer token, or an OAuth access token.

claude.ai custom connectors cannot send a static header, so with `RECALL_BASE_URL` set the engine
is also its own small OAuth 2.1 authorization server: the MCP SDK's `mcp.server.auth` routes
(wrapped in `access/oauth_routes.py`) over `oauth.OAuthProvider`, with `access/login_page.py` asking
for the password.

Resource (RFC 8707) and audience: the engine is one protected resource with two identifiers,
`<base>/mcp` (the path-specific RFC 9728 metadata, where MCP clients start) and `<base>` (the
root metadata). /authorize accepts either, binds a request without one to `<base>/mcp`, and
refuses anything else with `invalid_target`; `oauth_access` only accepts tokens bound to one of the
two, on both /recall and /mcp, because both sit behind the same password.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime

import apsw
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import (
    create_auth_routes,
    create_protected_resource_routes,
    validate_issuer_url,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.authentication import AuthCredentials
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from ..access.login_page import LOGIN_PATH
from ..access.oauth import OAuthProvider, slow_digest
from ..access.oauth_routes import METADATA_PATH, LoginEndpoint, guard_sdk_route, metadata_route
from ..access.rate_limits import (
    MAX_PROVEN_SOURCES,
    Attempt,
    LogLimit,
    PasswordGuard,
    registration_limit,
    source_of,
)
from ..config import MCP_PATH, Settings
from ..engine_address import is_loopback_name
from ..errors import ConfigError, StoreError
from ..index import proven_sources
from ..index.store import Store

logger = logging.getLogger(__name__)

PASSWORD_CLIENT_ID = "login-password"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"


def check_base_url(base_url: str) -> None:
    """RECALL_BASE_URL as an issuer the MCP SDK's OAuth routes take (https; plain http only on
    localhost), checked when `serve` starts rather than once the first build is done."""
    try:
        validate_issuer_url(AnyHttpUrl(base_url))
    except ValueError as exc:
        raise ConfigError(
            f"RECALL_BASE_URL: OAuth needs https (plain http only on localhost): {exc}"
        ) from None


class Authenticator:
    """The one gate in front of /recall and /mcp, and (with a base URL) the OAuth routes."""

    def __init__(
        self, settings: Settings, store: Store, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._password = (
            settings.login_password.get_secret_value().encode() if settings.login_password else None
        )
        self._base_url = settings.base_url
        self._clock = clock
        # Its own connection: a transaction another thread holds open on `store.db` must never
        # swallow (or roll back) a token or proof write.
        self._store = Store(store.path) if self._password else None
        proven, self._proof_secret = {}, b""
        if self._store and self._password:
            try:
                with self._store.atomic(wait_s=0.5) as db:
                    salt = proven_sources.salt(db)
                proven = proven_sources.live(self._store.db, clock())
            except (StoreError, apsw.Error) as exc:  # a full disk must not stop the start
                logger.warning("proofs of the password are not kept this run: %s", exc)
                salt = secrets.token_bytes(16)
            # Slow, once: the file must not make the password cheap to guess offline, and
            # 127.0.0.1's proof (the hook's) would be a known message under a fast key.
            self._proof_secret = slow_digest(self._password, salt)
        # Bearer and login page: one password, one budget
        self._guard = PasswordGuard(
            clock, proven=proven, on_proof=self._keep_proof, proof_key=self._proof_key
        )
        self._registrations = registration_limit(clock)
        self.log_limit = LogLimit()
        # The last refused JSON POST /recall (when, why, from where), until a hook's request is
        # let through (app.py): a hook whose Claude Code lacks the password, or holds an old
        # one, is refused at every prompt, and only `doctor` can say so.
        self.refused_hook: tuple[str, str, str] | None = None
        self._provider: OAuthProvider | None = None
        if self._store and self._password and self._base_url:
            login_url = f"{self._base_url}{LOGIN_PATH}"
            resources = (f"{self._base_url}{MCP_PATH}", self._base_url)
            self._provider = OAuthProvider(self._store, resources, login_url, clock)
            if ended := self._provider.end_grants_if_password_changed(self._password):
                logger.warning("the login password changed: ended %d OAuth grant(s)", ended)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    @property
    def enabled(self) -> bool:
        return self._password is not None

    def check_password(self, candidate: str) -> bool:
        if not self._password or not candidate:  # an empty password never opens anything
            return False
        return hmac.compare_digest(candidate.encode(), self._password)

    def try_password(self, candidate: str, scope: Scope) -> Attempt:
        """The password compared, unless the request's source must wait first
        (rate_limits.PasswordGuard)."""
        return self._guard.attempt(
            source_of(scope),
            candidate,
            lambda: self.check_password(candidate),
            local=from_this_machine(scope),
        )

    def trusted_source(self, scope: Scope) -> bool:
        """This machine, or an address that gave the password lately: past shared limits."""
        return from_this_machine(scope) or self._guard.is_proven(source_of(scope))

    def _proof_key(self, source: str) -> str:
        """A source as its proof is kept: keyed by a slow digest of the password, so a new one
        voids every proof (whoever knew the old one keeps no address past the shared limit),
        and the file holds no address."""
        return hmac.new(self._proof_secret, source.encode(), "sha256").hexdigest()

    def _keep_proof(self, key: str, until: float) -> None:
        """Write a proof to the index file; a failure costs only the proof after a restart."""
        assert self._store is not None  # a proof needs the password, which opened the store
        try:
            with self._store.atomic(wait_s=0.5) as db:
                proven_sources.keep(db, key, until, self._clock(), MAX_PROVEN_SOURCES)
        except (StoreError, apsw.Error) as exc:
            logger.warning("could not keep a proof of the password in the index: %s", exc)

    async def oauth_access(self, token: str) -> AccessToken | None:
        """A live OAuth access token issued for this server; never rate limited: 256 random bits
        cannot be guessed, and a guesser's failures must not lock out signed-in clients."""
        if self._provider is None or not token:
            return None
        access = await self._provider.load_access_token(token)
        if access is None or access.resource not in self._provider.resources:
            return None
        return access

    def routes(self) -> list[BaseRoute]:
        if self._provider is None or self._base_url is None:
            return []
        check_base_url(self._base_url)
        try:
            # Validated from strings: AnyHttpUrl(...) itself would add a trailing "/" to the
            # issuer, which clients compare verbatim.
            settings = AuthSettings.model_validate(
                {
                    "issuer_url": self._base_url,
                    "resource_server_url": self._provider.resources[0],
                    "validate_token_resource": False,  # `oauth_access` checks the audience
                }
            )
            registration = ClientRegistrationOptions(enabled=True)
            revocation = RevocationOptions(enabled=True)
            sdk_routes = create_auth_routes(
                self._provider,
                settings.issuer_url,
                client_registration_options=registration,
                revocation_options=revocation,
            )
        except ValueError as exc:
            raise ConfigError(
                f"RECALL_BASE_URL: OAuth needs https (plain http only on localhost): {exc}"
            ) from None
        metadata = [
            route
            for resource in (settings.resource_server_url, settings.issuer_url)
            if resource is not None
            for route in create_protected_resource_routes(
                resource, [settings.issuer_url], resource_name="trilium-recall"
            )
        ]
        login = LoginEndpoint(
            self.try_password, self._provider.pending, self._provider.issue_code, self.log_limit
        )
        guarded = [
            guard_sdk_route(route, self._registrations, self.trusted_source)
            for route in sdk_routes
            if getattr(route, "path", None) != METADATA_PATH
        ]
        guarded.append(metadata_route(settings.issuer_url, registration, revocation))
        return [*guarded, *metadata, *login.routes()]

    def protect(self, app: ASGIApp, paths: tuple[str, ...] = ("/recall", MCP_PATH)) -> ASGIApp:
        """401 on `paths` (and below) without a valid Bearer token; everything else untouched."""
        with_context = AuthContextMiddleware(app)  # lets tools call the SDK's get_access_token()

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope.get("path", "") if scope["type"] == "http" else ""
            if not self.enabled and path != "/health" and forwarded(scope):
                await proxied_without_password()(scope, receive, send)
                return
            if not self.enabled or not any(path == p or path.startswith(p + "/") for p in paths):
                await app(scope, receive, send)
                return
            token = bearer_token(scope)
            if token is None:
                self._note_refusal(scope, "no password sent")
                await self.deny(path, "authentication required", None)(scope, receive, send)
                return
            access = await self.oauth_access(token)
            if access is None:
                attempt = self.try_password(token, scope)
                if not attempt.ok:
                    self._note_refusal(scope, attempt.refusal)
                    await self.refuse(path, source_of(scope), attempt)(scope, receive, send)
                    return
                access = AccessToken(token="", client_id=PASSWORD_CLIENT_ID, scopes=[])
            user = AuthenticatedUser(access)
            await with_context(
                {**scope, "user": user, "auth": AuthCredentials(access.scopes)}, receive, send
            )

        return guarded

    def _note_refusal(self, scope: Scope, why: str) -> None:
        """Both hooks POST JSON; a scanner's GET or form, or a request elsewhere, says nothing
        about them."""
        json_body = (b"content-type", b"application/json") in [
            (name, value.split(b";")[0].strip().lower()) for name, value in scope["headers"]
        ]
        if scope.get("path") == "/recall" and scope.get("method") == "POST" and json_body:
            when = datetime.now(UTC).isoformat(timespec="seconds")
            self.refused_hook = (when, why, source_of(scope))

    def refuse(self, path: str, source: str, attempt: Attempt) -> JSONResponse:
        if attempt.retry_after:
            answer = {"error": "too_many_requests", "error_description": "too many bad tokens"}
            return JSONResponse(answer, 429, headers={"Retry-After": str(attempt.retry_after)})
        if not attempt.repeat and self.log_limit.allow(source, attempt.refusal):
            logger.warning("rejected a bearer token from %s on %.100r", source, path)
        return self.deny(path, "the token is wrong, expired or revoked", "invalid_token")

    def deny(self, path: str, description: str, error: str | None) -> JSONResponse:
        # RFC 6750 §3.1: no error code when the request carried no credentials at all.
        params = [f'error="{error}"', f'error_description="{description}"'] if error else []
        if self._provider is not None and self._base_url is not None:
            suffix = MCP_PATH if path == MCP_PATH or path.startswith(MCP_PATH + "/") else ""
            metadata_url = f"{self._base_url}{PROTECTED_RESOURCE_PATH}{suffix}"
            params.append(f'resource_metadata="{metadata_url}"')
        challenge = "Bearer" + (" " + ", ".join(params) if params else "")
        body = {"error": error or "unauthorized", "error_description": description}
        headers = {"WWW-Authenticate": challenge, "Cache-Control": "no-store"}
        return JSONResponse(body, status_code=401, headers=headers)


# Headers proxies add to say whom or what they forward for (one of them is enough). A heuristic:
# a bare `proxy_pass`, socat or an ssh tunnel adds none, so any proxy needs the password.
FORWARDING_HEADERS = frozenset(
    {
        b"forwarded", b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-proto",
        b"x-forwarded-port", b"x-forwarded-server", b"x-real-ip", b"via",
        b"cf-connecting-ip", b"true-client-ip",
    }
)  # fmt: skip


def forwarded(scope: Scope) -> bool:
    """Whether the request came through a proxy that says so."""
    return any(name.lower() in FORWARDING_HEADERS for name, _ in scope.get("headers", []))


def proxied_without_password() -> JSONResponse:
    """Without a password the engine answers this machine only, and a proxy on this machine
    connects from loopback on behalf of anyone: what it forwards is refused, not served."""
    description = (
        "RECALL_LOGIN_PASSWORD is not set, so the engine answers this machine only; "
        "this request came through a proxy: set a password"
    )
    answer = {"error": "forbidden", "error_description": description}
    return JSONResponse(answer, 403, headers={"Cache-Control": "no-store"})


def from_this_machine(scope: Scope) -> bool:
    """A loopback peer that no proxy speaks for: a process of this machine (the hook)."""
    client = scope.get("client")
    return client is not None and is_loopback_name(client[0]) and not forwarded(scope)


def bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None
