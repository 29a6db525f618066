"""The page at /: index status, a prompt box with the explain view, and recent activity.

Plain HTML, CSS and JavaScript from `static/`, no build step. The page reads the JSON endpoints
below and draws with DOM calls that set text, never markup, so a note title or a prompt holding
HTML is shown, not run; the CSP allows no inline script at all. Every answer comes from the
same `engine.recall` as /recall and /mcp.

    GET  /                 the page (a redirect to the sign-in without a session)
    GET  /ui/app.js, /ui/app.css
    GET  /ui/login, POST /ui/login, POST /ui/logout
    GET  /ui/status        health, notes per area, subjects and the gate's numbers
    POST /ui/explain       {"prompt", "instance"?, "path": "hook" | "mcp"}: what would be sent
    GET  /ui/activity      the newest calls (?limit=, ?session=)
    GET  /ui/doctor        the checks `trilium-recall doctor` prints (checks.py)

Access is as for /recall and /mcp. With RECALL_LOGIN_PASSWORD a browser signs in once
(access/web_sessions.py: a session cookie; POSTs need its CSRF token and, when the browser names
one, our own Origin); scripts send the password as a Bearer header. Every password attempt counts in
the one failure budget (access/rate_limits.py). Without a password the engine serves loopback only,
and so the page. Host and Origin are checked as on /mcp (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from typing import TypeVar, cast
from urllib.parse import urlparse

from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route, request_response

from ..access.login_page import (
    parse_submission,
    security_headers,
    sign_in_page,
    too_many_attempts_page,
)
from ..access.rate_limits import source_of
from ..access.web_sessions import COOKIE, SESSION_SECONDS, WebSessions, same_origin
from ..body_limits import EXPLAIN_BODY_BYTES, FORM_BODY_BYTES
from ..errors import BadRequest, RecallError
from ..index.activity_log import recent
from ..index.store import Store
from ..search.answers import RecallRequest, RecallResult, silence_reason
from ..search.hybrid import RRF_K
from .activity import ActivityLog
from .auth import Authenticator, bearer_token
from .checks import (
    Check,
    configuration,
    hook_installed,
    index_checks,
    index_state,
    last_hook_request,
    moved_aside,
    recall_check,
    trilium_instance,
)
from .engine import Engine
from .overview import IndexOverview, area_counts, failed_notes
from .request_body import optional_date, optional_text, prompt_field, read_json

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
LOGIN = "/ui/login"
LOGOUT = "/ui/logout"
ASSETS = {
    "/ui/app.js": "text/javascript",
    "/ui/app.css": "text/css",
    "/ui/icon.svg": "image/svg+xml",
}
ACTIVITY_DEFAULT, ACTIVITY_MAX = 50, 500
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
# Not no-referrer: under it browsers send `Origin: null` on our own POSTs (_same_origin).
HEADERS = security_headers(CSP, referrer="same-origin")
T = TypeVar("T")
Handler = Callable[[Request, "Caller"], Awaitable[Response]]


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is asking: `session` is the cookie when a signed-in browser is; a script that sent
    the password as a Bearer header needs no CSRF token."""

    session: str | None
    bearer: bool = False


class WebUI:
    def __init__(
        self,
        engine: Engine,
        authenticator: Authenticator,
        activity: ActivityLog,
        origin_check: TransportSecurityMiddleware,
        described: IndexOverview,
        sessions: WebSessions | None = None,
    ) -> None:
        self._engine = engine
        self._described = described
        self._auth = authenticator
        self._activity = activity
        self._origin_check = origin_check
        self._sessions = sessions or WebSessions()
        self._page = (STATIC / "index.html").read_text()
        base = urlparse(engine.settings.base_url or "")
        self._base_origin = f"{base.scheme}://{base.netloc}" if base.netloc else None

    def routes(self) -> list[BaseRoute]:
        login = RequestBodyLimitMiddleware(request_response(self.login), FORM_BODY_BYTES)
        logout = RequestBodyLimitMiddleware(request_response(self.logout), FORM_BODY_BYTES)
        return [
            Route("/", self._guard(self.page, page=True), methods=["GET"]),
            *(Route(path, self.asset, methods=["GET"]) for path in ASSETS),
            Route(LOGIN, self.login_form, methods=["GET"]),
            Route(LOGIN, login, methods=["POST"]),
            Route(LOGOUT, logout, methods=["POST"]),
            Route("/ui/status", self._guard(self.status), methods=["GET"]),
            Route("/ui/explain", self._guard(self.explain, post=True), methods=["POST"]),
            Route("/ui/activity", self._guard(self.activity), methods=["GET"]),
            Route("/ui/doctor", self._guard(self.doctor), methods=["GET"]),
        ]

    # -- access ------------------------------------------------------------------------------

    def _guard(
        self, handler: Handler, *, page: bool = False, post: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def guarded(request: Request) -> Response:
            refused = await self._origin_check.validate_request(request, is_post=post)
            if refused is not None:
                return _error(bytes(refused.body).decode(), refused.status_code)
            caller = self._caller(request, page)
            if isinstance(caller, Response):
                return caller
            if post and not caller.bearer:
                if not self._same_origin(request):
                    return _error("cross-site request refused", 403)
                if not self._sessions.csrf_ok(caller.session, request.headers.get("x-csrf-token")):
                    return _error("missing or wrong CSRF token: reload the page", 403)
            return await handler(request, caller)  # errors: http_errors, as on every route

        return guarded

    def _caller(self, request: Request, page: bool) -> Caller | Response:
        if not self._auth.enabled:
            return Caller(None)
        token = bearer_token(request.scope)
        if token is not None:
            attempt = self._auth.try_password(token, request.scope)
            if attempt.ok:
                return Caller(None, bearer=True)
            source = source_of(request.scope)
            return _with_headers(self._auth.refuse(request.url.path, source, attempt))
        cookie = request.cookies.get(COOKIE)
        if self._sessions.valid(cookie):
            return Caller(cookie)
        if page:
            return RedirectResponse(LOGIN, status_code=303, headers=HEADERS)
        return _with_headers(self._auth.deny(request.url.path, "sign in first", None))

    def _same_origin(self, request: Request) -> bool:
        """Browsers name the page's origin on every POST; it must be ours."""
        origin = request.headers.get("origin")
        if origin is None:
            return True  # not a browser: the CSRF token still has to be right
        host = request.headers.get("host", "")
        return same_origin(origin, request.url.scheme, host, self._base_origin)

    def _secure(self, request: Request) -> bool:
        """The cookie is Secure when the browser is on https, whether or not the engine is."""
        urls = (str(request.url), self._base_origin or "", request.headers.get("origin", ""))
        return any(url.startswith("https://") for url in urls)

    # -- pages -------------------------------------------------------------------------------

    async def page(self, request: Request, caller: Caller) -> Response:
        html = self._page.replace("__CSRF__", escape(self._sessions.csrf(caller.session)))
        html = html.replace("__SIGNED_IN__", "yes" if caller.session else "no")
        return Response(html, media_type="text/html", headers=HEADERS)

    async def asset(self, request: Request) -> Response:
        name = request.url.path.rsplit("/", 1)[-1]
        body = (STATIC / name).read_bytes()
        return Response(body, media_type=ASSETS[request.url.path], headers=HEADERS)

    async def login_form(self, request: Request) -> Response:
        if not self._auth.enabled or self._sessions.valid(request.cookies.get(COOKIE)):
            return RedirectResponse("/", status_code=303, headers=HEADERS)
        return sign_in_page(LOGIN)

    async def login(self, request: Request) -> Response:
        refused = await self._origin_check.validate_request(request)
        source = source_of(request.scope)
        if refused is not None or not self._same_origin(request):
            if self._auth.log_limit.allow(source, "another site"):
                log.warning("status page sign-in from %s refused: another site's form", source)
            return sign_in_page(LOGIN, "This sign-in came from another site: sign in here.", 403)
        if not self._auth.enabled:
            return RedirectResponse("/", status_code=303, headers=HEADERS)
        password = parse_submission(await request.form()).password
        attempt = self._auth.try_password(password, request.scope)
        refusal = attempt.refusal
        if not attempt.ok and not attempt.repeat and self._auth.log_limit.allow(source, refusal):
            log.warning("status page sign-in from %s refused: %s", source, refusal)
        if attempt.retry_after:
            return too_many_attempts_page(attempt.retry_after)
        if not attempt.ok:
            return sign_in_page(LOGIN, "Wrong password. Try again.", status=403)
        response = RedirectResponse("/", status_code=303, headers=HEADERS)
        response.set_cookie(
            COOKIE,
            self._sessions.create(),
            max_age=SESSION_SECONDS,
            path="/",
            secure=self._secure(request),
            httponly=True,
            samesite="strict",
        )
        return response

    async def logout(self, request: Request) -> Response:
        cookie = request.cookies.get(COOKIE)
        form = await request.form()
        csrf = form.get("csrf")
        if not self._same_origin(request) or not self._sessions.csrf_ok(
            cookie, csrf if isinstance(csrf, str) else None
        ):
            return RedirectResponse("/", status_code=303, headers=HEADERS)  # its session stays
        self._sessions.end(cookie)
        response = RedirectResponse(LOGIN, status_code=303, headers=HEADERS)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    # -- JSON --------------------------------------------------------------------------------

    async def status(self, request: Request, caller: Caller) -> Response:
        engine = self._engine
        health = engine.health()
        names = list(engine.settings.instances)
        # Areas counted now (~10 ms at 50k notes); subjects as of the last full sync.
        areas, failed = await self._read(
            lambda store: (
                {name: area_counts(store, name) for name in names},
                {name: failed_notes(store, name) for name in names},
            )
        )
        subjects = {o.name: [s.to_json() for s in o.subjects] for o in self._described.current}
        instances = cast(dict[str, dict[str, object]], health["instances"])
        for name in names:
            instances[name] |= {
                "areas": areas[name],
                "failed": failed[name],
                "subjects": subjects.get(name, []),
                "running": engine.syncers[name].status.running,
            }
        settings = engine.settings
        return _json(
            {
                **health,
                "building": engine.building,
                "gate": engine.gate.to_json(),
                "budget_ms": settings.time_budget_ms,
                "log": {
                    "enabled": self._activity.enabled,
                    "prompts": settings.log_prompts,
                    "max_rows": settings.activity_max_rows,
                    "max_days": settings.activity_max_days,
                },
            }
        )

    async def explain(self, request: Request, caller: Caller) -> Response:
        body = await read_json(request, EXPLAIN_BODY_BYTES)
        prompt = prompt_field(body)
        instance = optional_text(body, "instance")
        path = optional_text(body, "path") or "hook"
        if path not in ("hook", "mcp"):
            raise BadRequest('\'path\' must be "hook" or "mcp"')
        if not prompt.strip():
            raise BadRequest("type a prompt first")
        today = optional_date(body, "today")  # the browser's: "yesterday" as the user means it
        asked = RecallRequest(prompt, instance=instance, use_skip_rules=path == "hook", today=today)
        result = await self._engine.recall(asked)
        self._activity.record("web", asked.prompt, result, instance=instance)
        return _json(self._explained(path, result))

    def _explained(self, path: str, result: RecallResult) -> dict[str, object]:
        engine = self._engine
        trace = result.trace
        return {
            "path": path,
            "result": result.to_json(),
            "sent": result.text if path == "mcp" else result.context,
            "silence": silence_reason(result, engine.settings.time_budget_ms),
            "explain": trace.to_json(top=len(trace.candidates)) if trace else None,
            "gate": engine.gate.to_json(),
            "rrf_k": RRF_K,  # the learned order reads a rank as RRF counts it (page caption)
            "notice": self._notice(),
        }

    def _notice(self) -> str | None:
        engine = self._engine
        if engine.generic is None:
            return "The engine is starting: it answers in a moment."
        if engine.building:
            unbuilt = [s for s in engine.syncers.values() if not s.build_complete]
            done, total = sum(s.status.done for s in unbuilt), sum(s.status.total for s in unbuilt)
            return (
                f"The first build is still running ({done} of {total} notes indexed): "
                "answers may miss notes that are not indexed yet."
            )
        return None

    async def activity(self, request: Request, caller: Caller) -> Response:
        text = request.query_params.get("limit", str(ACTIVITY_DEFAULT))
        if not text.isdigit() or not 1 <= int(text) <= ACTIVITY_MAX:
            raise BadRequest(f"'limit' must be a whole number from 1 to {ACTIVITY_MAX}")
        session = request.query_params.get("session") or None
        await asyncio.to_thread(self._activity.flush, 2.0)
        entries = await self._read(lambda store: recent(store, limit=int(text), session_id=session))
        return _json(
            {
                "enabled": self._activity.enabled,
                "prompts": self._engine.settings.log_prompts,
                "entries": [entry.to_json() for entry in entries],
            }
        )

    async def doctor(self, request: Request, caller: Caller) -> Response:
        """The checks the engine can answer (checks.py), for the page and `doctor`."""
        engine, settings = self._engine, self._engine.settings
        names = list(settings.instances)
        await asyncio.to_thread(self._activity.flush, 2.0)
        state, entries = await self._read(
            lambda store: (index_state(store, names), recent(store, limit=ACTIVITY_MAX))
        )
        for name, syncer in engine.syncers.items():
            state[name]["error"] = syncer.status.error  # the live one, as /health shows
        progress = {n: (s.status.done, s.status.total) for n, s in engine.syncers.items()}
        instances = settings.instances.values()
        checks = [
            configuration(os.environ, "engine configuration"),
            *await asyncio.gather(*(trilium_instance(i) for i in instances)),
            *moved_aside(engine.moved_aside),
            *index_checks(state, progress),
            hook_installed(settings.engine_url),
            last_hook_request(
                [e.to_json() for e in entries], self._activity.enabled, self._auth.refused_hook
            ),
            await self._test_recall(),
        ]
        return _json({"checks": [check.to_json() for check in checks]})

    async def _test_recall(self) -> Check:
        """A recall about the largest subject, as the MCP tool would ask it."""
        subjects = [s.title for o in self._described.current for s in o.subjects]
        prompt = f"what do my notes say about {subjects[0]}?" if subjects else "my notes"
        try:
            result = await self._engine.recall(RecallRequest(prompt, use_skip_rules=False))
        except RecallError as exc:  # the index unavailable: this check fails, not the page
            return Check("test recall", "fail", f'"{prompt}": {exc}', "see the index checks")
        silence = silence_reason(result, self._engine.settings.time_budget_ms)
        return recall_check(prompt, [p.title for p in result.passages], silence, result.status)

    async def _read(self, read: Callable[[Store], T]) -> T:
        return await self._engine.read(read)


def _json(body: object, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=HEADERS)


def _error(message: str, status: int) -> JSONResponse:
    return _json({"error": message}, status)


def _with_headers(response: Response) -> Response:
    response.headers.update(HEADERS)
    return response
