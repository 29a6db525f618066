"""The login pages, rendered and parsed: for OAuth, one password field between /authorize and
the client's redirect URI; for the status page (server/web.py), the same form on its own.

`/authorize` parks the validated request as a pending authorization and sends the browser to
`/login?request=<id>`; only that opaque id travels in the URL, never the client's parameters.
This module only draws the pages and reads the submitted form; what a submission does (rate
limit, password, code, redirect) is wired in `oauth_routes.py`. The page works without
JavaScript.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from urllib.parse import urlparse

from starlette.responses import HTMLResponse

LOGIN_PATH = "/login"

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
class Submission:
    """What a POST to the login page carried; absent or non-text fields read as ""."""

    request_id: str
    csrf: str
    password: str


def parse_submission(form: Mapping[str, object]) -> Submission:
    return Submission(
        _field(form.get("request")), _field(form.get("csrf")), _field(form.get("password"))
    )


def _field(value: object) -> str:
    return value if isinstance(value, str) else ""


def security_headers(csp: str, referrer: str = "no-referrer") -> dict[str, str]:
    """What every page the engine draws carries: its CSP, no framing, no sniffing, no caching."""
    return {
        "Content-Security-Policy": csp,
        "X-Frame-Options": "DENY",
        "Referrer-Policy": referrer,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }


def _security_headers(form_target: str | None = None) -> dict[str, str]:
    # Chromium applies form-action to the redirect that follows a POST, so the page must also
    # allow the client's redirect origin or the browser stops at our 303 (tests/test_login_browser).
    targets = "'self'" + (f" {form_target}" if form_target else "")
    return security_headers(
        f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; form-action {targets}; "
        "frame-ancestors 'none'; base-uri 'none'"
    )


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
    referrer = headers["Referrer-Policy"]
    document = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="referrer" content="{referrer}">\n'
        f"<title>{escape(title)} · trilium-recall</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )
    return HTMLResponse(document, status_code=status, headers=headers)


def form_page(
    request_id: str,
    csrf: str,
    client_name: str,
    redirect_uri: str,
    error: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    """The sign-in form for one pending request; `error` shown above the field."""
    host = urlparse(redirect_uri).hostname or redirect_uri
    body = (
        "<h1>Sign in to trilium-recall</h1>\n"
        f'<p class="who"><strong><bdi>{escape(client_name)}</bdi></strong> wants to search your '
        f"Trilium notes. After you sign in you return to <strong><bdi>{escape(host)}</bdi>"
        "</strong>.</p>\n"
        + _password_form(LOGIN_PATH, {"request": request_id, "csrf": csrf}, error)
    )
    headers = _security_headers(_origin(redirect_uri))
    return _page("Sign in", body, status, headers)


def sign_in_page(action: str, error: str | None = None, status: int = 200) -> HTMLResponse:
    """The status page's own sign-in: the same look, the same one password field."""
    body = (
        "<h1>Sign in to trilium-recall</h1>\n"
        '<p class="who">The status page shows your index, what recall sends and why.</p>\n'
        + _password_form(action, {}, error)
    )
    # same-origin, not no-referrer: under no-referrer the browser names the form's origin
    # "null", and the status page accepts a POST only from its own origin (server/web.py).
    headers = {**_security_headers(), "Referrer-Policy": "same-origin"}
    return _page("Sign in", body, status, headers)


def _password_form(action: str, hidden: Mapping[str, str], error: str | None) -> str:
    error_html = ""
    described = ""
    if error:
        error_html = f'<p class="error" id="error" role="alert">{escape(error)}</p>\n'
        described = ' aria-describedby="error" aria-invalid="true"'
    fields = "".join(
        f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">\n'
        for name, value in hidden.items()
    )
    return (
        f"{error_html}"
        f'<form method="post" action="{escape(action)}">\n'
        f"{fields}"
        '<label for="password">Password</label>\n'
        '<input type="password" id="password" name="password" required autofocus '
        f'autocomplete="current-password"{described}>\n'
        '<button type="submit">Sign in</button>\n'
        "</form>"
    )


def message_page(
    title: str, text: str, status: int, headers: dict[str, str] | None = None
) -> HTMLResponse:
    body = f'<h1>{escape(title)}</h1>\n<p class="error" role="alert">{escape(text)}</p>'
    return _page(title, body, status, {**_security_headers(), **(headers or {})})


def expired_page() -> HTMLResponse:
    return message_page(
        "Sign-in link expired",
        "This sign-in link is unknown or has expired. Go back to the app and connect again.",
        status=400,
    )


def form_expired_page() -> HTMLResponse:
    return message_page(
        "Form expired",
        "This form is no longer valid. Go back to the app and connect again.",
        status=403,
    )


def too_many_attempts_page(wait: int) -> HTMLResponse:
    return message_page(
        "Too many attempts",
        f"Too many wrong passwords. Wait {wait} seconds, then try again.",
        status=429,
        headers={"Retry-After": str(wait)},
    )
