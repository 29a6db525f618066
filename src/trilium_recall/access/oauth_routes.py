"""The HTTP side of the OAuth server: the SDK's routes with our shims, and the login route.

The SDK's handlers do the protocol over `oauth.OAuthProvider`; the shims here adapt them to how
the provider stores things (client secrets hashed) and to open registration (no error redirects
from /authorize). `LoginEndpoint` ties the login page (`login_page.py`, rendering only) to the
pending requests, the password check and its rate limit.
"""

from __future__ import annotations

import base64
import hmac
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl, unquote, urlencode, urlparse

from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.routes import (
    AUTHORIZATION_PATH,
    REGISTRATION_PATH,
    REVOCATION_PATH,
    TOKEN_PATH,
    build_metadata,
    cors_middleware,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from pydantic import AnyHttpUrl
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..body_limits import FORM_BODY_BYTES, REGISTRATION_BODY_BYTES, read_at_most
from .login_page import (
    LOGIN_PATH,
    expired_page,
    form_expired_page,
    form_page,
    parse_submission,
    too_many_attempts_page,
)
from .oauth import digest
from .pending_authorizations import ASKING_SOURCE, Pending, PendingAuthorizations
from .rate_limits import Attempt, LogLimit, SourceLimit, source_of

logger = logging.getLogger(__name__)


class LoginEndpoint:
    """GET shows the form, POST checks CSRF token and password, then redirects with a code."""

    def __init__(
        self,
        try_password: Callable[[str, Scope], Attempt],
        pending: PendingAuthorizations,
        issue_code: Callable[[Pending], Awaitable[str]],
        log_limit: LogLimit,
    ) -> None:
        """`try_password(candidate, scope)`: the rate-limited password check."""
        self._try_password = try_password
        self._pending = pending
        self._issue_code = issue_code
        self._log_limit = log_limit

    def routes(self) -> list[BaseRoute]:
        return [
            Route(LOGIN_PATH, self.show, methods=["GET"]),
            Route(
                LOGIN_PATH,
                RequestBodyLimitMiddleware(request_response(self.submit), FORM_BODY_BYTES),
                methods=["POST"],
            ),
        ]

    async def show(self, request: Request) -> Response:
        pending = self._pending.get(request.query_params.get("request", ""))
        if pending is None:
            return expired_page()
        return _form(pending)

    async def submit(self, request: Request) -> Response:
        source = source_of(request.scope)
        form = parse_submission(await request.form())
        pending = self._pending.get(form.request_id)
        if pending is None:
            return expired_page()
        if not hmac.compare_digest(form.csrf.encode(), pending.csrf.encode()):
            if self._log_limit.allow(source, "form token"):
                logger.warning("sign-in from %s refused: missing or wrong form token", source)
            return form_expired_page()
        attempt = self._try_password(form.password, request.scope)
        if attempt.retry_after:
            if self._log_limit.allow(source, attempt.refusal):
                logger.warning("sign-in from %s refused: too many wrong passwords", source)
            return too_many_attempts_page(attempt.retry_after)
        if not attempt.ok:
            if not attempt.repeat and self._log_limit.allow(source, attempt.refusal):
                logger.warning("wrong password on the sign-in page from %s", source)
            return _form(pending, error="Wrong password. Try again.", status=403)
        if self._pending.pop(pending.id) is None:  # a double submit already used it
            return expired_page()
        logger.info("sign-in for OAuth client %s", pending.client_id)
        return RedirectResponse(
            await self._issue_code(pending),
            status_code=303,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )


def _form(pending: Pending, error: str | None = None, status: int = 200) -> Response:
    redirect_uri = str(pending.params.redirect_uri)
    return form_page(pending.id, pending.csrf, pending.client_name, redirect_uri, error, status)


METADATA_PATH = "/.well-known/oauth-authorization-server"
# RFC 8414's lists of how clients authenticate: the SDK leaves out "none", though public clients
# (claude.ai's among them) register with it and are served.
CLIENT_AUTH_METHODS = ["client_secret_post", "client_secret_basic", "none"]


def metadata_route(
    issuer_url: AnyHttpUrl, registration: ClientRegistrationOptions, revocation: RevocationOptions
) -> Route:
    """The authorization server's metadata as the SDK builds it, "none" in its method lists;
    in place of the SDK's own route."""
    built = build_metadata(issuer_url, None, registration, revocation)
    metadata = built.model_copy(
        update={
            "token_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
            "revocation_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        }
    )
    handler = cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"])
    return Route(METADATA_PATH, endpoint=handler, methods=["GET", "OPTIONS"])


def guard_sdk_route(
    route: BaseRoute, registrations: SourceLimit, trusted: Callable[[Scope], bool]
) -> BaseRoute:
    """Wrap the SDK routes that need it: secrets hashed at /token and /revoke, no error
    redirects from /authorize, and /register rate limited (`trusted` sources only by their own
    limit) and small."""
    if not isinstance(route, Route):
        return route
    app: ASGIApp
    if route.path in (TOKEN_PATH, REVOCATION_PATH):
        # The size limit goes first, so the hashing never buffers an unbounded body.
        hashing = _HashClientSecret(route.app, public_revocation=route.path == REVOCATION_PATH)
        app = RequestBodyLimitMiddleware(hashing, FORM_BODY_BYTES)
    elif route.path == AUTHORIZATION_PATH:
        app = _NoErrorRedirects(_FromSource(route.app))
    elif route.path == REGISTRATION_PATH:
        app = _LimitRegistration(route.app, registrations, trusted)
    else:
        return route
    return Route(route.path, app, methods=sorted(route.methods or []))


class _LimitRegistration:
    """Anyone may register (RFC 7591), so the clients registered are counted per source and
    overall (`rate_limits.REGISTER_*`), and a body is at most REGISTRATION_BODY_BYTES (the
    SDK's: 4 MB). A stranger can keep the overall limit full; this machine and the addresses
    that gave the password lately are held only by their own."""

    def __init__(self, app: ASGIApp, limit: SourceLimit, trusted: Callable[[Scope], bool]) -> None:
        self.app = app
        self._limit = limit
        self._trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)  # CORS preflight
            return
        source = source_of(scope)
        wait = self._limit.wait(source, overall=not self._trusted(scope))
        if wait:
            # Not logged: a refusal per line would let a stranger fill the log instead.
            answer = {"error": "too_many_requests", "error_description": "too many registrations"}
            headers = {"Retry-After": str(wait)}
            await JSONResponse(answer, 429, headers=headers)(scope, receive, send)
            return
        # Counted now, with no await since the check: registrations sent at once all count.
        self._limit.add(source)
        body = await read_at_most(Headers(scope=scope), receive, REGISTRATION_BODY_BYTES)
        if body is None:
            answer = {
                "error": "invalid_client_metadata",
                "error_description": f"registration larger than {REGISTRATION_BODY_BYTES} bytes",
            }
            await JSONResponse(answer, 400)(scope, receive, send)
            return

        async def counted(message: Message) -> None:
            # Only a client stored stays counted: one fixing a bad redirect URI is not locked out.
            if message["type"] == "http.response.start" and message["status"] >= 300:
                self._limit.remove(source)
            await send(message)

        await self.app(scope, _replay(body, receive), counted)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app `body` (already read) and then the rest of the stream."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


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


class _FromSource:
    """Tell the provider which source asks (pending_authorizations.ASKING_SOURCE), so that each
    source holds only its share of the pending requests."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asking = ASKING_SOURCE.set(source_of(scope))
        try:
            await self.app(scope, receive, send)
        finally:
            ASKING_SOURCE.reset(asking)


GRANT_TYPES = ("authorization_code", "refresh_token")


class _HashClientSecret:
    """Replace the client secret a request carries by its digest, to match what the file holds.

    Only form bodies pass (RFC 6749 §3.2 requires them): a multipart body would reach the SDK
    unhashed, and a stolen digest must never work as the secret itself.

    With `public_revocation`, a request without `client_secret` gets an empty one: the SDK's
    revocation model requires the field (modelcontextprotocol/python-sdk#3508, still so in
    mcp 2.3.0), so a public client could not revoke its own tokens as RFC 7009 §2.1 allows.
    An empty secret authenticates only a client that has none.
    """

    def __init__(self, app: ASGIApp, public_revocation: bool = False) -> None:
        self.app = app
        self._public_revocation = public_revocation

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
            (key, digest(value) if key == "client_secret" and value else value)
            for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        ]
        given = dict(form)
        grant = given.get("grant_type")
        if not self._public_revocation and grant is not None and grant not in GRANT_TYPES:
            answer = {
                "error": "unsupported_grant_type",  # RFC 6749 §5.2, not the SDK's invalid_request
                "error_description": f"grant_type must be one of {', '.join(GRANT_TYPES)}",
            }
            await JSONResponse(answer, status_code=400)(scope, receive, send)
            return
        # RFC 6749 §2.3.1: the header alone authenticates, but the SDK reads the id (and, to
        # revoke, the secret) from the form; and it takes the secret from the form for a client
        # registered without naming a method, where RFC 7591 §2 makes Basic the default.
        basic_id, basic_secret = _basic_credentials(headers.get(b"authorization", b""))
        if basic_id and "client_id" not in given:
            form.append(("client_id", basic_id))
        if "client_secret" not in given and (basic_secret or self._public_revocation):
            form.append(("client_secret", digest(basic_secret) if basic_secret else ""))
        new_body = urlencode(form).encode()
        headers[b"content-length"] = str(len(new_body)).encode()
        if b"authorization" in headers:
            headers[b"authorization"] = _hash_basic(headers[b"authorization"])
        scope = {**scope, "headers": list(headers.items())}
        await self.app(scope, _replay(new_body, receive), send)


def _basic_credentials(value: bytes) -> tuple[str, str]:
    """(client id, secret) of an HTTP Basic `Authorization` header, decoded as the SDK does;
    empty strings when it is none."""
    if not value.startswith(b"Basic "):
        return "", ""
    try:
        decoded = base64.b64decode(value[6:]).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return "", ""
    client_id, sep, secret = decoded.partition(":")
    return (unquote(client_id), unquote(secret)) if sep else ("", "")


def _hash_basic(value: bytes) -> bytes:
    """`Basic base64(id:secret)` → `Basic base64(id:digest(secret))`."""
    client_id, secret = _basic_credentials(value)
    if not client_id:
        return value
    return b"Basic " + base64.b64encode(f"{client_id}:{digest(secret)}".encode())
