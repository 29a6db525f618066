"""End to end with the real Claude Code CLI, offline: prompt → our hook → the model request.

The pinned CLI is installed with npm into a cache dir once; the Anthropic API is a local mock that
records each request, and HOME / CLAUDE_CONFIG_DIR are throwaway dirs. The hook is registered the
way users do it, with install_hook("project", …).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from claude_mock import (
    CLAUDE_CODE_VERSION,
    MODEL_REPLY,
    STUB_CONTEXT,
    MessagesMock,
    StubEngine,
    install_claude_code,
)
from trilium_recall.claude_settings import install_hook

pytestmark = pytest.mark.slow

MARKER = "UserPromptSubmit hook additional context:"
PROMPT = "Where is the offsite backup disk this week?"


@pytest.fixture(scope="session")
def claude() -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not on PATH: cannot install the Claude Code CLI")
    path = install_claude_code()
    version = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert version.startswith(f"{CLAUDE_CODE_VERSION} ")
    return path


@pytest.fixture
def recall_server() -> Iterator[StubEngine]:
    """The engine; a stub /recall until the real engine replaces it here."""
    with StubEngine().running() as engine:
        yield engine


@pytest.fixture
def messages_api() -> Iterator[MessagesMock]:
    with MessagesMock().running() as mock:
        yield mock


def run_claude(
    claude: Path, tmp_path: Path, api: MessagesMock, engine_url: str, password: str
) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("RECALL_")}
    env |= {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "RECALL_URL": engine_url,
        "RECALL_LOGIN_PASSWORD": password,
    }
    proc = subprocess.run(
        [str(claude), "-p", PROMPT, "--output-format", "json"],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["is_error"], result["result"]) == (False, MODEL_REPLY)
    return result


def make_project(tmp_path: Path, *, http: bool, engine_url: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    install_hook("project", http=http, project_dir=project, engine_url=engine_url)


def text_of(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def prompt_request(api: MessagesMock) -> list[dict[str, Any]]:
    """The messages of the one model request that carries the user's prompt."""
    [request] = [r for r in api.requests if PROMPT in json.dumps(r["messages"])]
    return request["messages"]


@pytest.mark.parametrize("http", [False, True], ids=["command-hook", "http-hook"])
def test_recalled_context_reaches_the_model(
    claude: Path,
    tmp_path: Path,
    messages_api: MessagesMock,
    recall_server: StubEngine,
    http: bool,
) -> None:
    make_project(tmp_path, http=http, engine_url=recall_server.url)

    run_claude(claude, tmp_path, messages_api, recall_server.url, recall_server.password)

    messages = prompt_request(messages_api)
    with_prompt = [i for i, m in enumerate(messages) if PROMPT in text_of(m["content"])]
    with_marker = [i for i, m in enumerate(messages) if MARKER in text_of(m["content"])]
    assert len(with_prompt) == 1 and len(with_marker) == 1
    [prompt_at], [context_at] = with_prompt, with_marker
    assert messages[prompt_at]["role"] == "user"
    # Claude Code 2.1.197 sends hook context as a system message after the prompt, ending with
    # the marker and our text exactly.
    assert messages[context_at]["role"] == "system"
    assert context_at > prompt_at
    system_text = text_of(messages[context_at]["content"])
    assert system_text.endswith(f"\n\n{MARKER} {STUB_CONTEXT}")
    assert system_text.count(STUB_CONTEXT) == 1

    # The hook (not something else) asked the engine, once, with the Bearer password.
    [(headers, body)] = recall_server.requests
    assert headers["Authorization"] == f"Bearer {recall_server.password}"
    assert body["prompt"] == PROMPT
    assert ("hook_event_name" in body) is http


@pytest.mark.parametrize("http", [False, True], ids=["command-hook", "http-hook"])
@pytest.mark.parametrize("engine", ["down", "silent"])
def test_engine_trouble_lets_the_prompt_through(
    claude: Path, tmp_path: Path, messages_api: MessagesMock, http: bool, engine: str
) -> None:
    with ExitStack() as stack:
        listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        engine_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        if engine == "down":
            listener.close()  # connection refused
        # "silent": listening, never accepting, so the hook connects and waits for nothing
        make_project(tmp_path, http=http, engine_url=engine_url)

        run_claude(claude, tmp_path, messages_api, engine_url, "some-password")

    messages = prompt_request(messages_api)
    assert MARKER not in json.dumps(messages)
    assert sum(PROMPT in text_of(m["content"]) for m in messages) == 1
