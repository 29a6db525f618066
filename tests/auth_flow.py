"""The real app under uvicorn on 127.0.0.1 over a real engine (fake embedder, no Trilium), and an
OAuth client that walks the flow step by step as claude.ai does: shared by the auth, limits,
OAuth, browser and secrets tests."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import apsw
import httpx
import httpx2
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from starlette.types import ASGIApp

from conftest import HashEmbedder
from trilium_recall.config import Settings, load_settings
from trilium_recall.server.app import create_app, server_options
from trilium_recall.server.auth import Authenticator
from trilium_recall.server.engine import Engine as RecallEngine
from trilium_recall.server.mcp import NO_MATCH

PASSWORD = "correct horse battery staple"
CALLBACK = "http://127.0.0.1:9/callback"  # only ever read from a Location header here


# -- the app under test: create_app over a real Engine (fake embedder, no Trilium) -------------


class Clock:
    """Real time plus an offset, so our expiry checks and the SDK's time.time() agree."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def retry_after_fits(response: httpx.Response, drain_seconds: float, since: float) -> bool:
    """Whether a 429's Retry-After is a full drain less what drained since the first counted
    request (made after `since`, a time.time() reading): on a busy machine the requests that
    filled the bucket take seconds, and the bucket drains meanwhile."""
    elapsed = time.time() - since
    return drain_seconds - elapsed <= int(response.headers["retry-after"]) <= drain_seconds


@dataclass
class Engine:
    url: str
    data_dir: Path
    clock: Clock
    authenticator: Authenticator


@contextlib.contextmanager
def serve(app: ASGIApp, sock: socket.socket, settings: Settings) -> Iterator[None]:
    """Run uvicorn as `serve` does (proxy headers included) on an already bound loopback
    socket in a thread; stop it on exit. Access log on, for the secrets test."""
    options = {**server_options(settings), "access_log": True}
    config = uvicorn.Config(app, **options, log_config=None, lifespan="on", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive(), "uvicorn did not shut down"


def loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def running_engine(
    data_dir: Path,
    password: str | None = PASSWORD,
    oauth: bool = True,
    base_host: str = "127.0.0.1",
    **overrides: Any,
) -> Iterator[Engine]:
    """`base_host`: how RECALL_BASE_URL names this machine."""
    sock = loopback_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    base_url = f"http://{base_host}:{sock.getsockname()[1]}"
    settings = load_settings(
        {},
        login_password=password,
        base_url=base_url if oauth else None,
        data_dir=data_dir,
        **overrides,
    )
    # The app `serve` runs, over a real engine with no Trilium instances: it syncs nothing, its
    # index stays empty and /health is "ok". The lifespan starts and stops the engine and the
    # MCP session manager.
    engine = RecallEngine(settings, embedder=HashEmbedder())
    clock = Clock()
    authenticator = Authenticator(settings, engine.store, clock=clock)
    with serve(create_app(engine, authenticator), sock, settings):
        yield Engine(url, data_dir, clock, authenticator)
    # The lifespan's shutdown ran engine.stop(), which closes the index connection.
    with pytest.raises(apsw.ConnectionClosedError):
        engine.store.db.execute("SELECT 1")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with running_engine(tmp_path) as running:
        yield running


# -- an OAuth client, step by step as claude.ai does it ----------------------------------------


class FormFields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inputs: dict[str, dict[str, str | None]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "input":
            attributes = dict(attrs)
            self.inputs[attributes.get("name") or ""] = attributes


def form_inputs(html: str) -> dict[str, dict[str, str | None]]:
    parser = FormFields()
    parser.feed(html)
    return parser.inputs


@dataclass
class OAuthClient:
    url: str
    http: httpx.Client
    client_id: str = ""
    client_secret: str = ""
    redirect_uri: str = CALLBACK
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    issued: list[str] = field(default_factory=list)  # every secret string we saw, for leak checks
    password: str = PASSWORD  # the engine's login password, typed into the login form

    @property
    def challenge(self) -> str:
        raw = hashlib.sha256(self.verifier.encode()).digest()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def discover(self) -> dict[str, Any]:
        challenge = self.http.post(f"{self.url}/mcp", json={}).headers["www-authenticate"]
        metadata_url = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
        resource = self.http.get(metadata_url).json()
        issuer = resource["authorization_servers"][0].rstrip("/")
        server = self.http.get(f"{issuer}/.well-known/oauth-authorization-server").json()
        return {"resource": resource, "server": server}

    def register(self, method: str | None = "client_secret_post", **extra: Any) -> httpx.Response:
        """`method` None: registered without naming one."""
        body = {
            "redirect_uris": [self.redirect_uri],
            "client_name": "Test client",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            **({"token_endpoint_auth_method": method} if method else {}),
            **extra,
        }
        response = self.http.post(f"{self.url}/register", json=body)
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
            self.client_secret = response.json().get("client_secret") or ""
            self.issued.append(self.client_secret)
        return response

    def authorize(self, headers: dict[str, str] | None = None, **overrides: str) -> httpx.Response:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": self.challenge,
            "code_challenge_method": "S256",
            "state": "state-123",
            "resource": f"{self.url}/mcp",
            **overrides,
        }
        return self.http.get(f"{self.url}/authorize", params=params, headers=headers)

    def login_form(self, **overrides: str) -> tuple[str, dict[str, str]]:
        """Follow /authorize to the login page; return its URL and the form's hidden fields."""
        response = self.authorize(**overrides)
        assert response.status_code == 302, response.text
        login_url = response.headers["location"]
        assert login_url.startswith(f"{self.url}/login?request=")
        page = self.http.get(login_url)
        assert page.status_code == 200
        fields = {name: attrs.get("value") or "" for name, attrs in form_inputs(page.text).items()}
        return login_url, {k: v for k, v in fields.items() if k in ("request", "csrf")}

    def submit(self, fields: dict[str, str], password: str | None = None) -> httpx.Response:
        data = {**fields, "password": self.password if password is None else password}
        return self.http.post(f"{self.url}/login", data=data)

    def code(self, **overrides: str) -> str:
        _, fields = self.login_form(**overrides)
        response = self.submit(fields)
        assert response.status_code == 303, response.text
        query = parse_qs(urlparse(response.headers["location"]).query)
        assert query["state"] == [overrides.get("state", "state-123")]
        self.issued.append(query["code"][0])
        return query["code"][0]

    def token(self, **form: str) -> httpx.Response:
        data = {"client_id": self.client_id, "client_secret": self.client_secret, **form}
        response = self.http.post(f"{self.url}/token", data=data)
        if response.status_code == 200:
            self.issued += [response.json()["access_token"], response.json()["refresh_token"]]
        return response

    def exchange(self, code: str, verifier: str | None = None) -> httpx.Response:
        return self.token(
            grant_type="authorization_code",
            code=code,
            redirect_uri=self.redirect_uri,
            code_verifier=verifier or self.verifier,
            resource=f"{self.url}/mcp",
        )

    def tokens(self) -> dict[str, Any]:
        response = self.exchange(self.code())
        assert response.status_code == 200, response.text
        return response.json()


@contextlib.contextmanager
def registered_client(url: str) -> Iterator[OAuthClient]:
    with httpx.Client(timeout=10) as http:
        oauth = OAuthClient(url, http)
        assert oauth.register().status_code == 201
        yield oauth


@pytest.fixture
def client(engine: Engine) -> Iterator[OAuthClient]:
    with registered_client(engine.url) as oauth:
        yield oauth


def recall(url: str, token: str | None, http: httpx.Client | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    post = http.post if http is not None else httpx.post
    return post(f"{url}/recall", json={"prompt": "hi"}, headers=headers, timeout=10)


async def mcp_recall(url: str, token: str, query: str, path: str = "/mcp") -> tuple[list[str], str]:
    """initialize + list_tools + call `recall` through the official SDK client."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10, follow_redirects=False) as http,
        streamable_http_client(f"{url}{path}", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        called = await session.call_tool("recall", {"query": query})
        assert not called.is_error, called.content
        return tools, called.content[0].text


async def mcp_tools(url: str, token: str, path: str = "/mcp") -> list[str]:
    """The tool names; the recall call over the empty index answers "No matching notes."."""
    tools, text = await mcp_recall(url, token, "how do I restore my restic backup?", path)
    assert text == NO_MATCH == "No matching notes."
    return tools


# -- Bearer -------------------------------------------------------------------------------------


def query(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows from the engine's index file, read over a connection of our own."""
    db = apsw.Connection(str(data_dir / "recall.sqlite3"))
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def row_count(data_dir: Path, table: str) -> int:
    return query(data_dir, f"SELECT count(*) FROM {table}")[0][0]
