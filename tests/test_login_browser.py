"""The login page in a real browser: headless Debian Chromium driven by Playwright."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest

from auth_flow import PASSWORD, Engine, OAuthClient, running_engine
from chromium import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM


@contextlib.contextmanager
def callback_server() -> Iterator[tuple[str, list[dict[str, list[str]]]]]:
    """A client's loopback redirect URI that records each query it receives."""
    received: list[dict[str, list[str]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/callback":  # not /favicon.ico
                received.append(parse_qs(url.query))
            body = b"<!doctype html><title>done</title><p>Signed in.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the code out of the test output

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/callback", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Engine, OAuthClient, list[dict[str, list[str]]]]]:
    with (
        running_engine(tmp_path / "data") as engine,
        callback_server() as (redirect_uri, received),
        httpx.Client(timeout=10) as http,
    ):
        client = OAuthClient(engine.url, http, redirect_uri=redirect_uri)
        assert client.register().status_code == 201
        yield engine, client, received


def authorize_url(client: OAuthClient) -> str:
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uri,
        "code_challenge": client.challenge,
        "code_challenge_method": "S256",
        "state": "browser-state",
        "resource": f"{client.url}/mcp",
    }
    return f"{client.url}/authorize?{urlencode(params)}"


def test_sign_in_lands_on_the_redirect_uri_with_code_and_state(setup, browser, tmp_path):
    engine, client, received = setup
    page = browser.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.goto(authorize_url(client))
    assert page.url.startswith(f"{engine.url}/login?request=")
    password = page.get_by_label("Password")
    button = page.get_by_role("button", name="Sign in")
    assert password.is_visible() and button.is_visible()
    assert page.evaluate("document.activeElement.id") == "password"  # autofocus

    shot = tmp_path / "login.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 5_000

    password.fill(PASSWORD)
    button.click()
    page.wait_for_url(f"{client.redirect_uri}?**")
    assert page.get_by_text("Signed in.").is_visible()
    assert len(received) == 1
    assert received[0]["state"] == ["browser-state"]
    # The code the browser carried really is a code: the client can exchange it.
    response = client.exchange(received[0]["code"][0])
    assert response.status_code == 200, response.text
    assert not [line for line in console if "Content Security Policy" in line]


def test_wrong_password_shows_the_error(setup, browser, tmp_path):
    engine, client, received = setup
    page = browser.new_page()
    page.goto(authorize_url(client))
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == "Wrong password. Try again."
    assert page.url == f"{engine.url}/login"
    assert page.get_by_label("Password").is_visible()
    page.screenshot(path=str(tmp_path / "wrong-password.png"), full_page=True)
    assert received == []
