"""The Dockerfile's health check, run as Docker runs it (the image's environment, a user's
RECALL_PORT), against each status /health reports."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from procs import scrubbed_env
from trilium_recall.config import load_settings

DOCKERFILE = Path(__file__).resolve().parent.parent / "Dockerfile"
COMPOSE = DOCKERFILE.with_name("compose.yaml")


def health_check() -> list[str]:
    """The command the HEALTHCHECK runs (exec form), as this test can start it."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    command = re.search(r"^HEALTHCHECK .*? CMD (.+)$", text, re.MULTILINE)
    assert command, "the Dockerfile has no HEALTHCHECK CMD"
    words = json.loads(command[1])
    assert words[0] == "trilium-recall", words  # the installed entry point, run here as a module
    return [sys.executable, "-m", "trilium_recall.cli", *words[1:]]


def image_env(**extra: str) -> dict[str, str]:
    """The Dockerfile's ENV, plus what a user sets with -e."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    block = re.search(r"^ENV (.+)$", text, re.MULTILINE)
    assert block, "the Dockerfile sets no ENV"
    image = dict(word.split("=", 1) for word in shlex.split(block[1]))
    return scrubbed_env(**(image | extra))


def in_image(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """`command` with the image's environment and a user's `env`."""
    return subprocess.run(
        command,
        env=image_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def probe(**env: str) -> subprocess.CompletedProcess[str]:
    return in_image(health_check(), **env)


@contextmanager
def health_answering(status: str) -> Iterator[int]:
    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"status": status}).encode()
            self.send_response(200 if self.path == "/health" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "healthy"),
    # Building is work under way; degraded is a Trilium down, which a restart would not fix.
    [("ok", True), ("starting", True), ("building", True), ("degraded", True), ("?", False)],
)
def test_the_container_is_healthy_while_the_engine_answers(status: str, healthy: bool) -> None:
    with health_answering(status) as port:
        done = probe(RECALL_PORT=str(port))  # a port of the user's own: probed, not 8765
    assert (done.returncode == 0) is healthy, done.stdout
    assert len(done.stdout.splitlines()) == 1 and "Traceback" not in done.stderr
    assert f"127.0.0.1:{port}" in done.stdout  # RECALL_HOST=0.0.0.0 is reached on loopback


def test_the_container_is_unhealthy_when_nothing_answers() -> None:
    with health_answering("ok") as port:
        pass  # closed again: nothing listens there now
    done = probe(RECALL_PORT=str(port))
    assert done.returncode == 1  # never 2: Docker reserves it
    assert f"127.0.0.1:{port} does not answer" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_configuration_the_engine_refuses_is_unhealthy_in_one_line() -> None:
    done = probe(RECALL_PORT="eighty")
    assert done.returncode == 1
    assert done.stdout.startswith("trilium-recall: RECALL_PORT")
    assert len(done.stdout.splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_image_s_data_folder_is_its_owner_s_alone() -> None:
    # A fresh named volume takes the folder's mode: 755 had the engine warn at every start.
    assert re.search(r"chown recall /data && chmod 700 /data", DOCKERFILE.read_text())


def compose_environment(service: str, **shell: str) -> dict[str, str]:
    """compose.yaml's environment for a service, interpolated as Compose does from `shell`."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    text = COMPOSE.read_text()
    assert not re.search(r"\$\{\w+:?\?", text), (
        "a required variable refuses `docker compose up -d trilium` too"
    )

    def value(raw: str) -> str:
        def fill(match: re.Match[str]) -> str:
            return shell.get(match[1]) or match[2]

        return re.sub(r"\$\{(\w+):-([^}]*)\}", fill, raw)

    return {name: value(str(raw)) for name, raw in services[service]["environment"].items()}


def test_recall_started_before_its_token_exists_stops_in_one_line(tmp_path: Path) -> None:
    """Step 1 of compose.yaml starts Trilium alone; recall, started without its variables,
    names the first one missing instead of serving or crashing."""
    serve = [sys.executable, "-m", "trilium_recall.cli", "serve"]
    done = in_image(serve, **compose_environment("recall"), RECALL_DATA_DIR=str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "trilium-recall: TRILIUM_ETAPI_TOKEN is set but empty: give it a value or unset it"
    ]
    given = compose_environment("recall", TRILIUM_ETAPI_TOKEN="tok", RECALL_LOGIN_PASSWORD="pw")
    assert given["TRILIUM_ETAPI_TOKEN"] == "tok" and given["RECALL_LOGIN_PASSWORD"] == "pw"


def test_compose_s_passages_link_where_the_host_s_browser_opens_trilium() -> None:
    """compose.yaml reaches Trilium as http://trilium:8080; its links went there too, a name
    the host's browser cannot resolve."""
    env = compose_environment("recall", TRILIUM_ETAPI_TOKEN="tok", RECALL_LOGIN_PASSWORD="pw")
    instance = load_settings(env, quiet=True).instances["default"]
    assert instance.url == "http://trilium:8080"
    assert instance.note_url("abc") == "http://localhost:8080/#root/abc"
