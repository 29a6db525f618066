"""The Dockerfile's health check, run as Docker runs it, against each status /health reports."""

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

DOCKERFILE = Path(__file__).resolve().parent.parent / "Dockerfile"


def health_check_code() -> str:
    """The Python the HEALTHCHECK's CMD runs."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    command = re.search(r"^HEALTHCHECK .*? CMD (.+)$", text, re.MULTILINE)
    assert command, "the Dockerfile has no HEALTHCHECK CMD"
    words = shlex.split(command[1])
    assert words[:2] == ["python", "-c"], words
    return words[2]


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
    code = health_check_code()
    assert "http://127.0.0.1:8765/health" in code
    with health_answering(status) as port:
        here = code.replace("127.0.0.1:8765", f"127.0.0.1:{port}")
        done = subprocess.run([sys.executable, "-c", here], capture_output=True, timeout=60)
    assert (done.returncode == 0) is healthy, done.stderr


def test_the_container_is_unhealthy_when_nothing_answers() -> None:
    with health_answering("ok") as port:
        pass  # closed again: nothing listens there now
    here = health_check_code().replace("127.0.0.1:8765", f"127.0.0.1:{port}")
    done = subprocess.run([sys.executable, "-c", here], capture_output=True, timeout=60)
    assert done.returncode != 0
