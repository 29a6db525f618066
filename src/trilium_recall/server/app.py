"""HTTP edge: GET /health, POST /recall (JSON API and Claude Code http-hook mode), /mcp, and
the status page (web.py). Each recall any of them answers goes into the activity log."""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from ..body_limits import SESSION_ID_CHARS
from ..claude_settings import HOOK_ANSWER_S
from ..config import Settings
from ..errors import BadRequest, EngineStarting, RecallError
from ..search.answers import RecallRequest
from .activity import ActivityLog
from .auth import Authenticator
from .engine import Engine
from .health import public_health
from .http_errors import HANDLERS
from .mcp import (
    build_mcp,
    cap_refused_headers_in_log,
    mcp_routes,
    refresh_instructions,
    transport_security,
)
from .overview import IndexOverview
from .request_body import optional_date, optional_text, prompt_field, read_json
from .web import WebUI

log = logging.getLogger(__name__)

HOOK_EVENT = "UserPromptSubmit"


def create_app(
    engine: Engine,
    authenticator: Authenticator | None = None,
    activity: ActivityLog | None = None,
) -> ASGIApp:
    """The one ASGI app: /health public; /recall, /mcp and the page at / behind the password
    or OAuth."""
    activity = activity or ActivityLog(engine.settings)
    server = build_mcp(engine, activity)
    authenticator = authenticator or Authenticator(engine.settings, engine.store)
    # The Host/Origin check the SDK applies to /mcp, applied to /recall too: without a password
    # a rebound DNS name must not let a web page read the notes.
    origin_check = TransportSecurityMiddleware(transport_security(engine.settings))
    cap_refused_headers_in_log()

    described = IndexOverview(engine.settings)
    web = WebUI(engine, authenticator, activity, origin_check, described)

    async def describe_index() -> None:
        refresh_instructions(server, engine.settings, await described.refresh())

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await engine.start()
        await describe_index()  # the index as the last run left it; again after each full sync
        engine.after_full.append(describe_index)
        try:
            async with server.session_manager.run():
                yield
        finally:
            await engine.stop()
            activity.close()
            authenticator.close()

    async def health(_: Request) -> JSONResponse:
        return JSONResponse(public_health(engine.health(), engine.settings))

    async def recall_endpoint(request: Request) -> Response:
        refused = await origin_check.validate_request(request)
        if refused is not None:
            return JSONResponse({"error": bytes(refused.body).decode()}, refused.status_code)
        body = await read_json(request)
        hook_mode = "hook_event_name" in body
        if hook_mode and optional_text(body, "hook_event_name") != HOOK_EVENT:
            raise BadRequest(f"'hook_event_name' must be {HOOK_EVENT}: only prompts are answered")
        prompt, session_id, instance = _recall_fields(body)
        asked = RecallRequest(
            prompt,
            session_id=session_id,
            instance=instance,
            # Claude Code sets agent_id when the hook fires inside a subagent or teammate.
            from_subagent=hook_mode and bool(body.get("agent_id")),
            today=optional_date(body, "today"),
            waits_s=HOOK_ANSWER_S if hook_mode else None,
        )
        result = await engine.recall(asked)
        if hook_mode:  # a hook got through: one refused before has its password now
            authenticator.refused_hook = None
        path = "hook" if hook_mode else "api"
        budget_ms = asked.budget_s(engine.settings.time_budget_ms / 1000) * 1000
        activity.record(
            path,
            asked.prompt,
            result,
            session_id=session_id,
            instance=instance,
            budget_ms=budget_ms,
        )
        if result.status in ("starting", "building"):  # 503 with Retry-After
            failed = result.waiting_for is not None  # tried again at the next tick
            raise EngineStarting(
                result.status_text, engine.settings.tick_seconds if failed else None
            )
        if hook_mode:
            return _hook_answer(result.context)
        answer: dict[str, Any] = result.to_json()
        if request.query_params.get("explain") in ("1", "true") and result.trace:
            answer["explain"] = result.trace.to_json()
        return JSONResponse(answer)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/recall", recall_endpoint, methods=["POST"]),
        *authenticator.routes(),
        *mcp_routes(server, engine.settings),
        *web.routes(),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=HANDLERS)
    # No slash redirects anywhere: Starlette builds them from the Host header (a foreign Host
    # made /mcp/ redirect off-site). /mcp/ has a route of its own instead.
    app.router.redirect_slashes = False
    return authenticator.protect(app)


def server_options(settings: Settings) -> dict[str, Any]:
    """How `serve` runs the app under uvicorn (the tests run it the same way).

    uvicorn rewrites the client address from X-Forwarded-For (it never reads `Forwarded`) only
    when the connecting peer is in `forwarded_allow_ips`; the rate limits key on that address.
    Its default trusts loopback, so any client on this machine, or whatever a local proxy
    passes through, could pick its own key. Here only `RECALL_TRUSTED_PROXIES` is trusted.
    """
    trusted = list(settings.trusted_proxies)
    return {
        "host": settings.host,
        "port": settings.port,
        "log_level": "info",
        "access_log": False,  # quiet by default
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,  # a list, never None: None reads FORWARDED_ALLOW_IPS
    }


_PORT_HINT = "RECALL_PORT or --port picks another port"
_HOST_HINT = "RECALL_HOST or --host picks one (127.0.0.1, or 0.0.0.0 for every interface)"


def refuse_unbindable(settings: Settings) -> None:
    """A RecallError naming the address when `serve` could not listen on it: checked before
    any work, since an engine already running there would otherwise get its index file synced
    by a second one that only then fails to listen."""
    for family, kind, proto, _, address in _bind_addresses(settings):
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
                probe.bind(address)
        except OSError as exc:  # the socket too: no IPv6 on this machine for "::"
            raise RecallError(
                f"cannot listen on {settings.host}:{settings.port} ({exc.strerror or exc}): "
                + _bind_hint(exc.errno, settings.port)
            ) from None


def _bind_hint(error: int | None, port: int) -> str:
    """What to change, by the reason the address could not be bound."""
    if error == errno.EADDRINUSE:
        return f"is trilium-recall already running? {_PORT_HINT}"
    if error in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return f"this machine has no such address: {_HOST_HINT}"
    if error == errno.EACCES and port < 1024:
        return f"ports below 1024 need privileges: {_PORT_HINT}"
    return _PORT_HINT


def _bind_addresses(settings: Settings) -> list[tuple[Any, ...]]:
    """Every address serving binds (asyncio binds each one a name such as localhost has)."""
    try:
        return socket.getaddrinfo(
            settings.host, settings.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise RecallError(
            f"cannot listen on {settings.host}: {exc.strerror}: {_HOST_HINT}"
        ) from None


def _recall_fields(body: dict[str, Any]) -> tuple[str, str | None, str | None]:
    session_id = optional_text(body, "session_id")
    if session_id is not None and len(session_id) > SESSION_ID_CHARS:
        raise BadRequest(f"'session_id' must be at most {SESSION_ID_CHARS} characters")
    return prompt_field(body), session_id, optional_text(body, "instance")


def _hook_answer(context: str) -> Response:
    """Claude Code http-hook format; an empty body adds nothing to the prompt."""
    if not context:
        return Response(status_code=200)
    return JSONResponse(
        {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": context}}
    )
