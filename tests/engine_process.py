"""Run the real engine (`trilium-recall serve`) as a subprocess on 127.0.0.1 for tests."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn
from pydantic import SecretStr
from starlette.types import ASGIApp

from conftest import HashEmbedder, make_settings
from procs import free_port, scrubbed_env
from standin_faults import FaultyTrilium
from trilium_recall.config import Instance
from trilium_recall.search.gate import GateThresholds
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import Engine

# Tests assert what an answer holds, not how fast it came: on a loaded machine (CI with every
# core busy) embedding a prompt can outlast the default 1.2 s budget, and a late answer is empty.
# So test engines get a generous budget; the budget itself is tested with a held embedder
# (test_app.py), and latency is measured in bench/.
TEST_BUDGET_MS = "60000"


class EngineProcess:
    """`trilium-recall serve` with its own env; stdout+stderr go to a log file."""

    def __init__(self, data_dir: Path, env: dict[str, str], port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir / f"engine-{self.port}.log"
        self.env = (
            scrubbed_env(
                RECALL_DATA_DIR=str(data_dir),
                RECALL_PORT=str(self.port),
                RECALL_HOST="127.0.0.1",
                RECALL_TIME_BUDGET_MS=TEST_BUDGET_MS,
            )
            | env
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> EngineProcess:
        # The child keeps its own copy of the file descriptor; ours is closed at once.
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "trilium_recall.cli", "serve"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        return self

    def health(self) -> dict | None:
        try:
            return httpx.get(f"{self.url}/health", timeout=2).json()
        except (httpx.HTTPError, ValueError):
            return None

    def wait_for(self, *statuses: str, timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"engine exited with {self.process.returncode}:\n{self.logs()}")
            health = self.health()
            if health and health["status"] in statuses:
                return health
            time.sleep(0.1)
        raise TimeoutError(
            f"engine not {statuses} after {timeout}s: {self.health()}\n{self.logs()}"
        )

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@contextlib.contextmanager
def serve_in_thread(app: ASGIApp) -> Iterator[str]:
    """An ASGI app under uvicorn on an ephemeral 127.0.0.1 port, in a daemon thread."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextlib.contextmanager
def app_over_trilium(
    trilium: FaultyTrilium,
    token: str,
    data_dir: Path,
    gate: GateThresholds | None = None,
    **settings: object,
) -> Iterator[str]:
    """The app over a real Engine (fake embedder) syncing `trilium` (started here, with the
    ETAPI `token` it was made with), under uvicorn in a thread; yields the app's URL. A delay
    or held contents set on `trilium` are cleared on the way out, so stopping it waits for
    nothing."""
    trilium.start()
    try:
        instance = Instance("default", trilium.url(), SecretStr(token))
        app_settings = make_settings(data_dir, instances={"default": instance}, **settings)
        with serve_in_thread(create_app(Engine(app_settings, HashEmbedder(), gate))) as url:
            yield url
    finally:
        if isinstance(trilium, FaultyTrilium):  # a plain stand-in has no faults to clear
            trilium.delay = 0
            trilium.contents_open.set()
        trilium.stop()
