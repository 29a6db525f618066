"""Helpers for tests and benchmarks that run our commands as subprocesses on 127.0.0.1."""

from __future__ import annotations

import os
import socket


def scrubbed_env(**extra: str) -> dict[str, str]:
    """This process's environment without any RECALL_/TRILIUM_ setting, plus extra.

    A developer's own engine URL, password or Trilium must never reach a command under test.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "TRILIUM_"))}
    return base | extra


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def closed_port_url() -> str:
    """A 127.0.0.1 URL nobody listens on: connection refused at once."""
    return f"http://127.0.0.1:{free_port()}"
