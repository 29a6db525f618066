"""The status page over real HTTP: who may see it, sessions, CSRF, headers, and bad input.

A real app under uvicorn on 127.0.0.1 (test_auth.running_engine: password, OAuth base URL,
a controllable clock), the shared real engine over the demo notebook, and engines of our own
over a fake Trilium. The page in a real browser is tests/test_web_browser.py.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engine_process import app_over_trilium
from standin_faults import FaultyTrilium
from test_auth import PASSWORD, running_engine
from trilium_recall.access.rate_limits import PASSWORD_PER_SOURCE
from trilium_recall.access.web_sessions import COOKIE, SESSION_SECONDS, WebSessions
from trilium_recall.body_limits import EXPLAIN_BODY_BYTES, EXPLAIN_BOX_CHARS
from trilium_recall.search.gate import FITTED
from trilium_recall.search.rankings import RRF_K
from trilium_recall.server.web import CSP, STATIC

JSON_ENDPOINTS = [("GET", "/ui/status"), ("GET", "/ui/activity"), ("POST", "/ui/explain")]
RESTIC_PROMPT = "how do i restore my restic backup"


def csrf_of(page: str) -> str:
    return re.search(r'<meta name="csrf-token" content="([0-9a-f]{64})">', page).group(1)


def sign_in(http: httpx.Client, url: str, password: str = PASSWORD) -> httpx.Response:
    return http.post(f"{url}/ui/login", data={"password": password})


@contextlib.contextmanager
def signed_in(url: str, password: str = PASSWORD) -> Iterator[tuple[httpx.Client, str]]:
    """A client holding a session cookie, and the page's CSRF token."""
    with httpx.Client(timeout=30) as http:
        assert sign_in(http, url, password).status_code == 303
        page = http.get(f"{url}/")
        assert page.status_code == 200
        yield http, csrf_of(page.text)


def explain(http: httpx.Client, url: str, body: dict, csrf: str | None, **headers: str):
    if csrf is not None:
        headers["X-CSRF-Token"] = csrf
    return http.post(f"{url}/ui/explain", json=body, headers=headers)


@pytest.fixture
def engine(tmp_path: Path):
    with running_engine(tmp_path) as running:
        yield running


def test_nothing_is_readable_without_signing_in(engine) -> None:
    with httpx.Client(timeout=10) as http:
        page = http.get(f"{engine.url}/")
        assert (page.status_code, page.headers["location"]) == (303, "/ui/login")
        assert page.content == b""
        for method, path in JSON_ENDPOINTS:
            answer = http.request(method, f"{engine.url}{path}", json={"prompt": "restic"})
            assert answer.status_code == 401, path
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert answer.json()["error"] == "unauthorized"
    with httpx.Client(timeout=10, cookies={COOKIE: "made-up"}) as forged:
        assert forged.get(f"{engine.url}/ui/status").status_code == 401
        assert forged.get(f"{engine.url}/").status_code == 303
    with httpx.Client(timeout=10) as http:
        login = http.get(f"{engine.url}/ui/login")
        assert login.status_code == 200 and 'name="password"' in login.text
        assert 'action="/ui/login"' in login.text


def test_signing_in_sets_a_strict_http_only_cookie_and_opens_the_page(engine) -> None:
    with httpx.Client(timeout=10) as http:
        wrong = sign_in(http, engine.url, "not the password")
        assert wrong.status_code == 403 and "Wrong password. Try again." in wrong.text
        assert COOKIE not in http.cookies
        right = sign_in(http, engine.url)
        assert (right.status_code, right.headers["location"]) == (303, "/")
        cookie = right.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=")
        attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
        assert attributes == {"httponly", "samesite=strict", "path=/", f"max-age={SESSION_SECONDS}"}
        page = http.get(f"{engine.url}/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<script src="/ui/app.js" defer></script>' in page.text
        assert "<script>" not in page.text  # no inline script: the CSP forbids it anyway
        assert page.headers["content-security-policy"] == CSP
        assert "script-src 'self'" in CSP and "frame-ancestors 'none'" in CSP
        for name, value in {
            "x-frame-options": "DENY",
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
            "referrer-policy": "same-origin",
        }.items():
            assert page.headers[name] == value, name
        status = http.get(f"{engine.url}/ui/status")
        assert status.status_code == 200 and status.headers["cache-control"] == "no-store"
        assert status.json()["status"] == "ok"
        # A signed-in browser is sent on from the sign-in page.
        assert http.get(f"{engine.url}/ui/login").headers["location"] == "/"


def test_the_cookie_is_secure_behind_https(tmp_path: Path) -> None:
    with (
        running_engine(tmp_path, trusted_proxies=("127.0.0.1",)) as engine,
        httpx.Client(timeout=10) as http,
    ):
        headers = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
        answer = http.post(f"{engine.url}/ui/login", data={"password": PASSWORD}, headers=headers)
        assert answer.status_code == 303
        assert "secure" in answer.headers["set-cookie"].lower().split("; ")


def test_signing_in_through_a_proxy_that_ends_tls(tmp_path: Path) -> None:
    """nginx's plain `proxy_pass`: the browser is on https://recall.lan, the engine hears http
    with `Host: recall.lan` and no X-Forwarded-Proto. The sign-in was refused as cross-site,
    in raw JSON."""
    with (
        running_engine(
            tmp_path, oauth=False, allowed_hosts=("recall.lan", "recall.lan:443")
        ) as engine,
        httpx.Client(timeout=10) as http,
    ):
        # A browser's Origin never spells the default port; a proxy's Host may.
        for host in ("recall.lan", "recall.lan:443"):
            headers = {"Host": host, "Origin": "https://recall.lan"}
            answer = http.post(
                f"{engine.url}/ui/login", data={"password": PASSWORD}, headers=headers
            )
            assert answer.status_code == 303, host
            assert "secure" in answer.headers["set-cookie"].lower().split("; ")
        for origin in ("https://evil.example", "http://recall.lan:8080", "null"):
            headers = {"Host": "recall.lan", "Origin": origin}
            refused = http.post(
                f"{engine.url}/ui/login", data={"password": PASSWORD}, headers=headers
            )
            assert refused.status_code == 403, origin
            assert refused.headers["content-type"].startswith("text/html")
            assert "came from another site" in refused.text
            assert "set-cookie" not in refused.headers


def test_posts_need_the_csrf_token_and_our_own_origin(engine) -> None:
    body = {"prompt": "restic backup"}
    with signed_in(engine.url) as (http, csrf):
        for token in (None, "0" * 64, csrf[:-1] + "x"):
            refused = explain(http, engine.url, body, token)
            assert refused.status_code == 403, token
            assert refused.json() == {"error": "missing or wrong CSRF token: reload the page"}
        foreign = explain(http, engine.url, body, csrf, Origin="https://evil.example")
        assert foreign.status_code == 403
        as_form = http.post(
            f"{engine.url}/ui/explain",
            content=b"prompt=restic",
            headers={"X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert as_form.status_code == 400  # a cross-site form can only send simple types
        own = explain(http, engine.url, body, csrf, Origin=engine.url)
        assert own.status_code == 200, own.text
        assert own.json()["silence"] == "no note matched"  # this engine's index is empty


def test_the_password_as_a_bearer_header_works_for_scripts(engine) -> None:
    bearer = {"Authorization": f"Bearer {PASSWORD}"}
    with httpx.Client(timeout=10, headers=bearer) as http:
        assert http.get(f"{engine.url}/").status_code == 200
        assert http.get(f"{engine.url}/ui/status").json()["status"] == "ok"
        answer = http.post(f"{engine.url}/ui/explain", json={"prompt": "restic", "path": "mcp"})
        assert answer.status_code == 200  # no CSRF token: a header no page can set
        assert answer.json()["sent"] == "No matching notes."
        entries = http.get(f"{engine.url}/ui/activity").json()["entries"]
        assert [(e["path"], e["prompt"]) for e in entries] == [("web", "restic")]
    wrong = httpx.get(f"{engine.url}/ui/status", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_token"


def test_sign_in_failures_share_the_one_password_budget(engine) -> None:
    with httpx.Client(timeout=10) as http:
        for n in range(PASSWORD_PER_SOURCE.burst):  # each a new guess: repeats do not count
            assert sign_in(http, engine.url, f"guess-{n}").status_code == 403
        throttled = sign_in(http, engine.url)  # even the right one: nothing is compared
        assert throttled.status_code == 429 and "Too many wrong passwords" in throttled.text
        bearer = {"Authorization": f"Bearer {PASSWORD}"}
        assert (
            http.post(f"{engine.url}/recall", json={"prompt": "x"}, headers=bearer).status_code
            == 429
        )
        assert http.get(f"{engine.url}/ui/status", headers=bearer).status_code == 429
        engine.clock.offset += PASSWORD_PER_SOURCE.drain_seconds  # one more try fits
        assert sign_in(http, engine.url).status_code == 303


def test_signing_out_ends_the_session(engine) -> None:
    with signed_in(engine.url) as (http, csrf):
        cookie = http.cookies[COOKIE]
        stale = http.post(f"{engine.url}/ui/logout", data={"csrf": "wrong"})
        assert (stale.status_code, stale.headers["location"]) == (303, "/")  # a page, not JSON
        assert http.get(f"{engine.url}/ui/status").status_code == 200  # and its session stays
        out = http.post(f"{engine.url}/ui/logout", data={"csrf": csrf})
        assert (out.status_code, out.headers["location"]) == (303, "/ui/login")
        assert COOKIE not in http.cookies
    with httpx.Client(cookies={COOKIE: cookie}) as replayed:  # dead on the server too
        assert replayed.get(f"{engine.url}/ui/status").status_code == 401


def test_sessions_expire_and_are_bounded() -> None:
    now = [1000.0]
    sessions = WebSessions(clock=lambda: now[0])
    token = sessions.create()
    assert sessions.valid(token) and not sessions.valid(token + "x") and not sessions.valid(None)
    assert sessions.csrf_ok(token, sessions.csrf(token))
    assert not sessions.csrf_ok(token, sessions.csrf(None)) and not sessions.csrf_ok(token, "")
    now[0] += SESSION_SECONDS
    assert not sessions.valid(token)
    tokens = [sessions.create() for _ in range(100)]
    assert sum(map(sessions.valid, tokens)) == 64 and sessions.valid(tokens[-1])
    assert not sessions.valid(tokens[0])  # the oldest made room


def test_bad_input_is_a_clear_400(engine) -> None:
    with signed_in(engine.url) as (http, csrf):
        for body, error in [
            ({"prompt": "x", "instance": "nope"}, "unknown instance 'nope' (known: none)"),
            ({"prompt": "x", "path": "elsewhere"}, '\'path\' must be "hook" or "mcp"'),
            ({"prompt": "   "}, "type a prompt first"),
            ({"prompt": 5}, "'prompt' is required and must be a string"),
        ]:
            answer = explain(http, engine.url, body, csrf)
            assert (answer.status_code, answer.json()) == (400, {"error": error}), body
        huge = explain(http, engine.url, {"prompt": "x" * (EXPLAIN_BODY_BYTES + 1)}, csrf)
        expected = {"error": f"body larger than {EXPLAIN_BODY_BYTES} bytes"}
        assert (huge.status_code, huge.json()) == (413, expected)
        long = explain(http, engine.url, {"prompt": "restic " * 30_000}, csrf)
        assert long.status_code == 200  # long is fine: search reads its start
        # A full box, as the page's JSON.stringify sends it: UTF-8, control characters escaped.
        box = int(re.search(r'maxlength="(\d+)"', (STATIC / "index.html").read_text())[1])
        assert box == EXPLAIN_BOX_CHARS
        for full in ("日" * box, "\x01" * box):
            body = json.dumps({"prompt": full}, ensure_ascii=False).encode()
            headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
            answer = http.post(f"{engine.url}/ui/explain", content=body, headers=headers)
            assert answer.status_code in (200, 400), answer.text[:200]  # never 413
        for limit in ("0", "501", "many"):
            answer = http.get(f"{engine.url}/ui/activity", params={"limit": limit})
            assert answer.status_code == 400, limit
            assert answer.json() == {"error": "'limit' must be a whole number from 1 to 500"}


def test_a_foreign_host_is_refused_everywhere(engine) -> None:
    """DNS rebinding: a page on a name that resolves to us must not read the page either."""
    bearer = {"Authorization": f"Bearer {PASSWORD}", "Host": "evil.example"}
    for path in ("/", "/ui/status", "/ui/activity"):
        answer = httpx.get(f"{engine.url}{path}", headers=bearer)
        assert answer.status_code == 421, path


def test_a_refused_header_is_logged_capped_and_quoted(engine, caplog) -> None:
    """The page and the login form check Host and Origin before anyone signs in: a stranger's
    long header must not reach the log whole."""
    long_host, long_origin = "y" * 20_000, "https://" + "z" * 20_000
    with caplog.at_level(logging.WARNING, logger="mcp.server.transport_security"):
        assert httpx.get(f"{engine.url}/ui/status", headers={"Host": long_host}).status_code == 421
        login = httpx.post(
            f"{engine.url}/ui/login", data={"password": "x"}, headers={"Origin": long_origin}
        )
        assert login.status_code == 403
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp.server.transport_security"]
    assert len(lines) == 2, lines
    assert lines[0].startswith("Invalid Host header: 'yyy") and lines[0].endswith("…'")
    assert lines[1].startswith("Invalid Origin header: 'https://zzz")
    assert all(len(line) < 300 for line in lines)


def test_without_a_password_the_page_is_open_on_loopback_but_posts_need_the_token(tmp_path):
    with running_engine(tmp_path, password=None, oauth=False) as engine, httpx.Client() as http:
        page = http.get(f"{engine.url}/")
        assert page.status_code == 200 and 'data-signed-in="no"' in page.text
        assert http.get(f"{engine.url}/ui/login").headers["location"] == "/"
        body = {"prompt": "restic"}
        assert explain(http, engine.url, body, None).status_code == 403
        assert explain(http, engine.url, body, csrf_of(page.text)).status_code == 200
        assert explain(http, engine.url, body, csrf_of(page.text), Origin="null").status_code == 403


def test_while_the_first_build_runs_the_page_says_so(tmp_path: Path) -> None:
    trilium = FaultyTrilium(token="web_token")
    trilium.add_note("garden000001", "Garden", content="<p>tomatoes need sun</p>")
    trilium.delay = 5.0  # every ETAPI answer: the first build cannot finish during the test
    with app_over_trilium(trilium, "web_token", tmp_path) as url:
        page = httpx.get(f"{url}/")
        status = httpx.get(f"{url}/ui/status").json()
        assert status["status"] == "starting" and status["building"] is True
        assert status["instances"]["default"]["notes"] == 0
        assert status["instances"]["default"]["subjects"] == []
        assert status["instances"]["default"]["trilium"] == {"version": None, "features": []}
        csrf = {"X-CSRF-Token": csrf_of(page.text)}
        answer = httpx.post(f"{url}/ui/explain", json={"prompt": "tomatoes"}, headers=csrf)
        assert answer.status_code == 200
        assert answer.json()["notice"].startswith("The first build is still running")
        assert answer.json()["result"]["passages"] == []


def test_the_demo_status_and_an_explained_prompt(demo_engine) -> None:
    with signed_in(demo_engine.url, demo_engine.password) as (http, csrf):
        status = http.get(f"{demo_engine.url}/ui/status").json()
        demo = status["instances"]["default"]
        assert demo["areas"] == {"wiki": 15, "sources": 5, "journal": 10, "other": 20}
        assert sum(demo["areas"].values()) == demo["notes"]
        assert [s["title"] for s in demo["subjects"]][:3] == ["LLM Wiki", "Journal", "Homelab"]
        assert demo["skipped"]["archived"] == 4 and demo["last_full"] and demo["error"] is None
        assert demo["trilium"] == {"version": "0.93.0", "features": ["blobId"]}  # issue 25
        assert status["gate"] == FITTED.to_json()  # the page draws the gate's numbers
        assert status["log"] == {
            "enabled": True,
            "prompts": True,
            "max_rows": 10000,
            "max_days": 30.0,
        }

        answer = explain(http, demo_engine.url, {"prompt": RESTIC_PROMPT}, csrf).json()
        titles = [p["title"] for p in answer["result"]["passages"]]
        assert "Backups (restic)" in titles and answer["silence"] is None
        assert (
            answer["sent"] == answer["result"]["context"] and "Backups (restic)" in answer["sent"]
        )
        trace = answer["explain"]
        assert len(trace["candidates"]) > 10  # every candidate, not the CLI's first ten
        learned = [c["order_value"] for c in trace["candidates"]]  # the first ten are ordered
        assert sum(v is not None for v in learned) == 10
        assert answer["rrf_k"] == RRF_K  # the page's caption of the learned order reads it
        assert {c["why"].split(":")[0] for c in trace["candidates"] if not c["passed"]} == {
            "weaker"
        }
        assert trace["prompt"]["about_notes"] is True

        mcp = explain(http, demo_engine.url, {"prompt": "ok", "path": "mcp"}, csrf).json()
        hook = explain(http, demo_engine.url, {"prompt": "ok", "path": "hook"}, csrf).json()
        assert (hook["silence"], hook["sent"], hook["explain"]) == (
            "skipped: acknowledgement",
            "",
            None,
        )
        assert mcp["explain"] is not None  # the MCP path has no skip rules: "ok" is searched
