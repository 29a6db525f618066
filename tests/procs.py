"""Helpers for tests and benchmarks that run our commands as subprocesses on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def scrubbed_env(**extra: str) -> dict[str, str]:
    """This process's environment without any RECALL_/TRILIUM_ setting or CLAUDE_CONFIG_DIR,
    plus extra.

    A developer's own engine URL, password, Trilium or Claude Code settings must never reach a
    command under test.
    """
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RECALL_", "TRILIUM_")) and k != "CLAUDE_CONFIG_DIR"
    }
    return base | extra


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def closed_port_url() -> str:
    """A 127.0.0.1 URL nobody listens on: connection refused at once."""
    return f"http://127.0.0.1:{free_port()}"


@contextmanager
def silent_server(backlog: int = 1024) -> Iterator[str]:
    """A 127.0.0.1 URL that accepts connections and never answers.

    The kernel completes the handshake for a listening socket nobody accept()s, up to `backlog`
    connections, so a client connects and then waits for nothing.
    """
    with socket.create_server(("127.0.0.1", 0), backlog=backlog) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


BIN = Path(sys.executable).parent
# The documented ways to run the prompt hook (README), as Claude Code runs them.
HOOK_COMMANDS = {
    "trilium-recall-hook": [str(BIN / "trilium-recall-hook")],
    "trilium-recall hook": [str(BIN / "trilium-recall"), "hook"],
    "python -P -m trilium_recall.hook": [sys.executable, "-P", "-m", "trilium_recall.hook"],
}
