"""No secret leaks: the real engine process (`trilium-recall serve`, real e5 model) over a fake
Trilium, a full session of every kind of credential, then a grep of its log and its index files.
Also the `serve` guard against exposing an unguarded engine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from auth_flow import OAuthClient, mcp_recall, recall
from engine_process import EngineProcess, free_port
from standin_faults import FaultyTrilium
from trilium_recall.access.oauth import digest
from trilium_recall.config import load_settings
from trilium_recall.serving import proxy_settings

pytestmark = pytest.mark.slow

LOGIN_PASSWORD = "Secret-Login-Pw-7f3a9c1e"
ETAPI_TOKEN = "EtapiTok3nX9_q2w8e7r6t5y4u3i2o1p"
WRONG_PASSWORDS = ("Secret-Login-Pw-7f3a9c1f", "Wrong-Guess-b84d20")  # a typo is secret too
SQLITE_FILES = ("recall.sqlite3", "recall.sqlite3-wal", "recall.sqlite3-shm")

NOTES = (
    (
        "bkp1",
        "Backups (restic)",
        "<h2>Restore</h2><p>Restore the home server with <code>restic restore latest "
        "--target /srv/restore</code>; the repository lives on the NAS share.</p>",
    ),
    (
        "vpn1",
        "WireGuard VPN",
        "<p>The WireGuard tunnel listens on UDP port 51820 on the router; peers get "
        "addresses from 10.8.0.0/24.</p>",
    ),
    (
        "pln1",
        "Garden plans",
        "<p>Plant tomatoes in May after the last frost; basil goes next to them.</p>",
    ),
)


def clean_env(**values: str) -> dict[str, str]:
    """This process's environment without any RECALL_/TRILIUM_ setting, plus `values`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "TRILIUM_"))}
    return {**base, **values}


def run_serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`trilium-recall serve` to completion; a refusal must come long before the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "trilium_recall.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def trilium() -> Iterator[FaultyTrilium]:
    fake = FaultyTrilium(token=ETAPI_TOKEN)
    for note_id, title, content in NOTES:
        fake.add_note(note_id, title, content=content)
    with fake:
        yield fake


def sqlite_bytes(data_dir: Path) -> bytes:
    return b"".join(
        (data_dir / name).read_bytes() for name in SQLITE_FILES if (data_dir / name).exists()
    )


async def test_no_secret_reaches_the_engine_log_or_its_files(
    tmp_path: Path, trilium: FaultyTrilium
):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "TRILIUM_URL": trilium.url(),
        "TRILIUM_ETAPI_TOKEN": ETAPI_TOKEN,
        "RECALL_LOGIN_PASSWORD": LOGIN_PASSWORD,
        "RECALL_BASE_URL": url,
    }
    engine = EngineProcess(data_dir, env, port=port).start()
    try:
        health = engine.wait_for("ok")
        assert health["instances"]["default"]["notes"] == len(NOTES)

        # The password as a Bearer token, right and wrong.
        password = {"Authorization": f"Bearer {LOGIN_PASSWORD}"}
        prompt = {"prompt": "how do I restore the home server from the restic backup?"}
        answer = httpx.post(f"{url}/recall", json=prompt, headers=password, timeout=10)
        assert answer.status_code == 200, answer.text
        assert [p["note_id"] for p in answer.json()["passages"]][:1] == ["bkp1"], answer.text
        for wrong in WRONG_PASSWORDS:
            assert recall(url, wrong).status_code == 401
            bearer = {"Authorization": f"Bearer {wrong}"}
            assert httpx.post(f"{url}/mcp", json={}, headers=bearer).status_code == 401

        # The whole OAuth dance: register, authorize, a wrong and a right password, PKCE token.
        with httpx.Client(timeout=10) as http:
            oauth = OAuthClient(url, http, password=LOGIN_PASSWORD)
            assert oauth.discover()["server"]["issuer"] == url
            assert oauth.register().status_code == 201
            _, fields = oauth.login_form()
            for wrong in WRONG_PASSWORDS:
                assert oauth.submit(fields, password=wrong).status_code == 403
            code = oauth.code()
            assert code in oauth.issued  # oauth.code() submitted the right password
            first = oauth.exchange(code)
            assert first.status_code == 200, first.text
            access = first.json()["access_token"]
            assert recall(url, access).status_code == 200
            tools, text = await mcp_recall(url, access, "which UDP port does the VPN use?")
            assert tools == ["recall"] and "WireGuard VPN" in text, text
            refreshed = oauth.token(
                grant_type="refresh_token", refresh_token=first.json()["refresh_token"]
            )
            assert refreshed.status_code == 200, refreshed.text
            assert recall(url, refreshed.json()["access_token"]).status_code == 200
            assert recall(url, access).status_code == 200  # the old one lives out its hour
        secrets = {
            "login password": LOGIN_PASSWORD,
            "ETAPI token": ETAPI_TOKEN,
            **{f"wrong password {i}": wrong for i, wrong in enumerate(WRONG_PASSWORDS)},
            "client secret": oauth.client_secret,
            "authorization code": code,
            "access token": access,
            "refresh token": first.json()["refresh_token"],
            "refreshed access token": refreshed.json()["access_token"],
            "refreshed refresh token": refreshed.json()["refresh_token"],
        }

        # The status page: wrong and right sign-ins, the page, its JSON, an explained prompt.
        with httpx.Client(timeout=30) as browser:
            for wrong in WRONG_PASSWORDS:
                refused = browser.post(f"{url}/ui/login", data={"password": wrong})
                assert refused.status_code == 403
            signed_in = browser.post(f"{url}/ui/login", data={"password": LOGIN_PASSWORD})
            assert signed_in.status_code == 303
            cookie = browser.cookies["recall_session"]
            page = browser.get(f"{url}/")
            csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page.text).group(1)
            explained = browser.post(
                f"{url}/ui/explain", json=prompt, headers={"X-CSRF-Token": csrf}
            )
            assert explained.json()["result"]["passages"][0]["note_id"] == "bkp1"
            shown = [
                page.text,
                explained.text,
                browser.get(f"{url}/ui/status").text,
                browser.get(f"{url}/ui/activity").text,
                browser.get(f"{url}/ui/app.js").text,
            ]
        assert "restic" in shown[3]  # the activity log holds the calls made above
        secrets = {**secrets, "session cookie": cookie}
        assert all(secrets.values()) and set(oauth.issued) <= set(secrets.values())
        for name, secret in secrets.items():
            assert not any(secret in text for text in shown), f"the {name} is on the page"
        while_running = sqlite_bytes(data_dir)  # the WAL as the running engine left it
    finally:
        engine.stop()
    logs = engine.logs()
    # A clean stop: the lifespan closed the index (uvicorn re-raises SIGTERM once it is done).
    assert "Application shutdown complete." in logs and "Traceback" not in logs
    # We grep the right things: the log holds the engine's own lines about this session, and the
    # file holds the digest of a token we were given.
    assert "registered OAuth client" in logs and "rejected a bearer token" in logs
    after_stop = sqlite_bytes(data_dir)
    assert (data_dir / "recall.sqlite3").exists()
    assert digest(refreshed.json()["access_token"]).encode() in while_running + after_stop
    for name, secret in secrets.items():
        assert secret not in logs, f"the {name} is in the engine's log"
        for label, blob in (("running", while_running), ("stopped", after_stop)):
            assert secret.encode() not in blob, f"the {name} is in the SQLite files ({label})"
            assert secret.encode("utf-16-le") not in blob, f"the {name} (UTF-16) ({label})"


# -- `serve` refuses to expose an engine without a password -------------------------------------


BEHIND = "refusing to serve behind a proxy ({} set); set a password"
OPEN = "refusing to serve on 0.0.0.0; set a password or bind to 127.0.0.1"


@pytest.mark.parametrize(
    ("setting", "refusal"),
    [
        ({"RECALL_HOST": "0.0.0.0"}, OPEN),
        # A proxy on this machine connects from loopback on behalf of anyone it serves.
        ({"RECALL_BASE_URL": "https://recall.example.org"}, BEHIND.format("RECALL_BASE_URL")),
        ({"RECALL_TRUSTED_PROXIES": "127.0.0.1"}, BEHIND.format("RECALL_TRUSTED_PROXIES")),
        ({"RECALL_ALLOWED_HOSTS": "recall.example.org"}, BEHIND.format("RECALL_ALLOWED_HOSTS")),
    ],
)  # fmt: skip
def test_serve_refuses_to_expose_the_notes_without_a_password(
    setting: dict[str, str], refusal: str, tmp_path: Path, trilium: FaultyTrilium
):
    env = clean_env(
        RECALL_PORT=str(free_port()),
        RECALL_DATA_DIR=str(tmp_path / "data"),
        TRILIUM_URL=trilium.url(),
        TRILIUM_ETAPI_TOKEN=ETAPI_TOKEN,
        **setting,
    )
    done = run_serve(env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"trilium-recall: RECALL_LOGIN_PASSWORD is not set: {refusal}"
    ]
    assert done.stdout == ""
    assert trilium.requests == []  # refused before syncing anything


def test_names_of_this_machine_are_no_proxy() -> None:
    def said(**env: str) -> list[str]:
        return proxy_settings(load_settings(env, quiet=True))

    assert said(RECALL_BASE_URL="http://127.0.0.1:8765") == []
    assert said(RECALL_ALLOWED_HOSTS="recall.localhost:8765,[::1]:8765,localhost:*") == []
    assert said(RECALL_ALLOWED_HOSTS="localhost:*,notes.example.org") == ["RECALL_ALLOWED_HOSTS"]
    assert said(RECALL_BASE_URL="https://recall.example.org") == ["RECALL_BASE_URL"]


def test_serve_refuses_before_building_the_demo_notebook(tmp_path: Path):
    data_dir = tmp_path / "data"
    env = clean_env(
        RECALL_HOST="0.0.0.0", RECALL_PORT=str(free_port()), RECALL_DATA_DIR=str(data_dir)
    )
    done = run_serve(env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("trilium-recall: RECALL_LOGIN_PASSWORD")
    assert not (data_dir / "demo" / "recall.sqlite3").exists(), "built the demo, then refused"


def test_an_oauth_issuer_on_plain_http_is_refused_before_building_the_demo(tmp_path: Path):
    """It was refused once the demo notebook was indexed and its commands printed."""
    data_dir = tmp_path / "data"
    env = clean_env(
        RECALL_BASE_URL="http://recall.example.org",
        RECALL_LOGIN_PASSWORD="demo-password-1",
        RECALL_PORT=str(free_port()),
        RECALL_DATA_DIR=str(data_dir),
    )
    done = run_serve(env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "trilium-recall: RECALL_BASE_URL: OAuth needs https (plain http only on localhost): "
        "Issuer URL must be HTTPS"
    )
    assert "Try:" not in done.stdout
    assert not (data_dir / "demo" / "recall.sqlite3").exists(), "built the demo, then refused"


def test_serve_on_loopback_without_a_password_warns(tmp_path: Path, trilium: FaultyTrilium):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {"TRILIUM_URL": trilium.url(), "TRILIUM_ETAPI_TOKEN": ETAPI_TOKEN}
    engine = EngineProcess(data_dir, env).start()
    try:
        # The warning is logged before uvicorn binds, so it is in the log once /health answers.
        engine.wait_for("starting", "ok", "degraded")
        assert recall(engine.url, None).status_code == 200  # open, as the warning says
        # But not to what a proxy on this machine forwards: that may be anyone.
        for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP", "Via"):
            proxied = {header: "203.0.113.7"}
            for method, path in (("POST", "/recall"), ("POST", "/mcp"), ("GET", "/ui/status")):
                refused = httpx.request(
                    method, f"{engine.url}{path}", json={"prompt": "restic"}, headers=proxied
                )
                assert refused.status_code == 403, (header, path, refused.text)
                assert "RECALL_LOGIN_PASSWORD is not set" in refused.json()["error_description"]
        health = httpx.get(f"{engine.url}/health", headers={"X-Forwarded-For": "203.0.113.7"})
        assert health.status_code == 200  # says nothing of the notes
    finally:
        engine.stop()
    warnings = [line for line in engine.logs().splitlines() if " WARNING " in line]
    assert any(
        "RECALL_LOGIN_PASSWORD is not set: /recall and /mcp are open to this machine only" in line
        for line in warnings
    ), engine.logs()
    assert "Traceback" not in engine.logs()
