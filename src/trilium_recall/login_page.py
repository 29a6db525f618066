"""The OAuth login page: one password field between /authorize and the client's redirect URI.

`/authorize` (the SDK's handler) parks the validated request here as a `Pending` authorization
and sends the browser to `/login?request=<id>`; only that opaque id travels in the URL, never
the client's parameters. A correct password turns the pending request into an authorization code
and a 303 to the client's registered redirect URI. The page works without JavaScript.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from html import escape
from urllib.parse import urlparse

from mcp.server.auth.provider import AuthorizationParams
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route, request_response

logger = logging.getLogger(__name__)

LOGIN_PATH = "/login"
PENDING_SECONDS = 600.0  # time to type a password; the code itself lives 5 minutes after that
MAX_PENDING = 1000  # /authorize is unauthenticated; cap what strangers can make us hold
LOGIN_ATTEMPTS_PER_MINUTE = 5
MAX_FORM_BYTES = 16 * 1024  # the form is three short fields
MAX_TRACKED_CLIENTS = 10_000

_CSS = """
:root { color-scheme: light dark; --accent: #3060c0; --error: #b00020; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: Canvas; color: CanvasText; }
main { width: min(24rem, 100% - 2rem); padding: 2rem; border-radius: 12px;
  border: 1px solid color-mix(in srgb, CanvasText 15%, transparent);
  box-shadow: 0 4px 24px color-mix(in srgb, CanvasText 8%, transparent); }
h1 { margin: 0 0 .25rem; font-size: 1.4rem; }
p { margin: 0 0 1.25rem; }
.who { color: color-mix(in srgb, CanvasText 70%, transparent); font-size: .95rem; }
label { display: block; font-weight: 600; margin-bottom: .35rem; }
input { width: 100%; padding: .6rem .7rem; font: inherit; border-radius: 8px;
  border: 1px solid color-mix(in srgb, CanvasText 35%, transparent);
  background: Field; color: FieldText; }
input:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
button { width: 100%; margin-top: 1rem; padding: .65rem; font: inherit; font-weight: 600;
  border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
.error { color: var(--error); font-weight: 600; margin: 0 0 1rem; }
@media (prefers-color-scheme: dark) { :root { --accent: #7aa2f7; --error: #ff8a80; }
  button { color: #111; } }
"""
# A hash, not 'unsafe-inline': the CSP then allows exactly this stylesheet and nothing else.
_CSS_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()


@dataclass(frozen=True)
class Pending:
    """An /authorize request waiting for the password."""

    id: str
    csrf: str
    client_id: str
    client_name: str
    params: AuthorizationParams
    expires_at: float


class PendingAuthorizations:
    """Pending requests in memory: they live minutes, and a restart only means 'connect again'."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._items: OrderedDict[str, Pending] = OrderedDict()

    def add(self, client_id: str, client_name: str, params: AuthorizationParams) -> Pending:
        self._expire()
        while len(self._items) >= MAX_PENDING:
            self._items.popitem(last=False)
        pending = Pending(
            id=secrets.token_urlsafe(24),
            csrf=secrets.token_urlsafe(24),
            client_id=client_id,
            client_name=client_name,
            params=params,
            expires_at=self._clock() + PENDING_SECONDS,
        )
        self._items[pending.id] = pending
        return pending

    def get(self, pending_id: str) -> Pending | None:
        self._expire()
        return self._items.get(pending_id)

    def pop(self, pending_id: str) -> Pending | None:
        return self._items.pop(pending_id, None)

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, p in self._items.items() if p.expires_at <= now]:
            del self._items[key]


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


class LoginPage:
    """GET shows the form, POST checks CSRF token and password, then redirects with a code."""

    def __init__(
        self,
        check_password: Callable[[str], bool],
        pending: PendingAuthorizations,
        issue_code: Callable[[Pending], Awaitable[str]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._check_password = check_password
        self._pending = pending
        self._issue_code = issue_code
        self._limiter = RateLimiter(LOGIN_ATTEMPTS_PER_MINUTE, 60.0, clock)

    def routes(self) -> list[BaseRoute]:
        return [
            Route(LOGIN_PATH, self.show, methods=["GET"]),
            Route(
                LOGIN_PATH,
                RequestBodyLimitMiddleware(request_response(self.submit), MAX_FORM_BYTES),
                methods=["POST"],
            ),
        ]

    async def show(self, request: Request) -> Response:
        pending = self._pending.get(request.query_params.get("request", ""))
        if pending is None:
            return _expired()
        return _form(pending)

    async def submit(self, request: Request) -> Response:
        ip = request.client.host if request.client else "unknown"
        wait = self._limiter.retry_after(ip)
        if wait:
            logger.warning("sign-in from %s refused: too many wrong passwords", ip)
            return _message(
                "Too many attempts",
                f"Too many wrong passwords. Wait {wait} seconds, then try again.",
                status=429,
                headers={"Retry-After": str(wait)},
            )
        form = await request.form()
        pending = self._pending.get(_field(form.get("request")))
        if pending is None:
            return _expired()
        if not hmac.compare_digest(_field(form.get("csrf")).encode(), pending.csrf.encode()):
            logger.warning("sign-in from %s refused: missing or wrong form token", ip)
            return _message(
                "Form expired",
                "This form is no longer valid. Go back to the app and connect again.",
                status=403,
            )
        if not self._check_password(_field(form.get("password"))):
            self._limiter.fail(ip)
            logger.warning("wrong password on the sign-in page from %s", ip)
            return _form(pending, error="Wrong password. Try again.", status=403)
        if self._pending.pop(pending.id) is None:  # a double submit already used it
            return _expired()
        logger.info("sign-in for OAuth client %s", pending.client_id)
        return RedirectResponse(
            await self._issue_code(pending),
            status_code=303,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )


def _field(value: object) -> str:
    return value if isinstance(value, str) else ""


def _security_headers(form_target: str | None = None) -> dict[str, str]:
    # Chromium applies form-action to the redirect that follows a POST, so the page must also
    # allow the client's redirect origin or the browser stops at our 303 (tests/test_login_browser).
    targets = "'self'" + (f" {form_target}" if form_target else "")
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; form-action {targets}; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }


def _origin(url: str) -> str | None:
    """scheme://host[:port] of a registered redirect URI, if it is safe to put in a CSP header."""
    parsed = urlparse(url)
    netloc = parsed.netloc
    if parsed.scheme not in ("http", "https") or not netloc:
        return None
    if any(c in netloc for c in " ;,'\"\r\n@"):
        return None
    return f"{parsed.scheme}://{netloc}"


def _page(title: str, body: str, status: int, headers: dict[str, str]) -> HTMLResponse:
    document = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{escape(title)} · trilium-recall</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )
    return HTMLResponse(document, status_code=status, headers=headers)


def _form(pending: Pending, error: str | None = None, status: int = 200) -> HTMLResponse:
    redirect = str(pending.params.redirect_uri)
    host = urlparse(redirect).hostname or redirect
    error_html = ""
    described = ""
    if error:
        error_html = f'<p class="error" id="error" role="alert">{escape(error)}</p>\n'
        described = ' aria-describedby="error" aria-invalid="true"'
    body = (
        "<h1>Sign in to trilium-recall</h1>\n"
        f'<p class="who"><strong>{escape(pending.client_name)}</strong> wants to search your '
        f"Trilium notes. After you sign in you return to <strong>{escape(host)}</strong>.</p>\n"
        f"{error_html}"
        f'<form method="post" action="{LOGIN_PATH}">\n'
        f'<input type="hidden" name="request" value="{escape(pending.id)}">\n'
        f'<input type="hidden" name="csrf" value="{escape(pending.csrf)}">\n'
        '<label for="password">Password</label>\n'
        '<input type="password" id="password" name="password" required autofocus '
        f'autocomplete="current-password"{described}>\n'
        '<button type="submit">Sign in</button>\n'
        "</form>"
    )
    headers = _security_headers(_origin(redirect))
    return _page("Sign in", body, status, headers)


def _message(
    title: str, text: str, status: int, headers: dict[str, str] | None = None
) -> HTMLResponse:
    body = f'<h1>{escape(title)}</h1>\n<p class="error" role="alert">{escape(text)}</p>'
    return _page(title, body, status, {**_security_headers(), **(headers or {})})


def _expired() -> HTMLResponse:
    return _message(
        "Sign-in link expired",
        "This sign-in link is unknown or has expired. Go back to the app and connect again.",
        status=400,
    )
