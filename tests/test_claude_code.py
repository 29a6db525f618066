"""End to end with the real Claude Code CLI, offline: prompt → our hook or MCP server → the model.

The engine is the real one (`demo_engine`: real e5 model over the demo notebook). The pinned CLI
is installed with npm into a cache dir once; the Anthropic API is a local mock that records each
request, and HOME / CLAUDE_CONFIG_DIR are throwaway dirs. The hook is registered the way users do
it, with install_hook("project", …); the MCP server with a project `.mcp.json`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from claude_mock import CLAUDE_CODE_VERSION, MODEL_REPLY, MessagesMock, install_claude_code
from conftest import DemoEngine
from test_mcp import mcp_session
from trilium_recall.claude_settings import install_hook
from trilium_recall.search.answers import CONTEXT_CHARS
from trilium_recall.server.mcp import INSTRUCTIONS, RECALL_DESCRIPTION, TODAY_DESCRIPTION

pytestmark = pytest.mark.slow

MARKER = "UserPromptSubmit hook additional context:"
PROMPT = "How do I restore my restic backup?"
RESTIC = "EHNWLmkEi2qa"  # "Backups (restic)" in the demo notebook
RESTIC_TEXT = "restore test every quarter into /tmp/restore-test"  # from that note's body


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
def messages_api() -> Iterator[MessagesMock]:
    with MessagesMock().running() as mock:
        yield mock


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def run_claude(
    claude: Path,
    project: Path,
    api: MessagesMock,
    engine_url: str,
    password: str,
    *args: str,
) -> dict[str, Any]:
    """`claude -p PROMPT [args]` in project, offline; return its JSON result."""
    home = project.parent / "home"
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
        [str(claude), "-p", PROMPT, "--output-format", "json", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["is_error"], result["result"]) == (False, MODEL_REPLY)
    return result


def recall(engine: DemoEngine, session_id: str) -> dict[str, Any]:
    """The engine's own answer to PROMPT, asked directly."""
    body = {"prompt": PROMPT, "session_id": session_id}
    answer = httpx.post(f"{engine.url}/recall", json=body, headers=engine.headers, timeout=10)
    answer.raise_for_status()
    return answer.json()


def engine_activity(engine: DemoEngine, session_id: str) -> list[dict[str, Any]]:
    """The engine's activity log for one session (GET /ui/activity), newest first."""
    answer = httpx.get(
        f"{engine.url}/ui/activity",
        params={"session": session_id},
        headers=engine.headers,
        timeout=10,
    )
    answer.raise_for_status()
    return answer.json()["entries"]


def text_of(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def prompt_request(api: MessagesMock) -> dict[str, Any]:
    """The one model request that carries the user's prompt."""
    [request] = [r for r in api.requests if PROMPT in json.dumps(r["messages"])]
    return request


@pytest.mark.parametrize("http", [False, True], ids=["command-hook", "http-hook"])
def test_recalled_passage_reaches_the_model(
    claude: Path,
    project: Path,
    messages_api: MessagesMock,
    demo_engine: DemoEngine,
    http: bool,
) -> None:
    expected = recall(demo_engine, f"probe-{uuid.uuid4()}")["context"]  # a fresh session's answer
    assert RESTIC_TEXT in expected
    install_hook("project", http=http, project_dir=project, engine_url=demo_engine.url)

    result = run_claude(claude, project, messages_api, demo_engine.url, demo_engine.password)

    messages = prompt_request(messages_api)["messages"]
    with_prompt = [i for i, m in enumerate(messages) if PROMPT in text_of(m["content"])]
    with_marker = [i for i, m in enumerate(messages) if MARKER in text_of(m["content"])]
    # Claude Code drops a hook answer that comes after the hook's timeout: on a failure, what
    # the engine logged for this session tells a slow answer from a wrong one.
    activity = engine_activity(demo_engine, result["session_id"])
    assert len(with_prompt) == 1 and len(with_marker) == 1, json.dumps(activity)
    [prompt_at], [context_at] = with_prompt, with_marker
    assert messages[prompt_at]["role"] == "user"
    # Claude Code 2.1.197 sends hook context as a system message after the prompt, ending with
    # the marker and the engine's context exactly: the real passage, its path and its link.
    assert messages[context_at]["role"] == "system"
    assert context_at > prompt_at
    system_text = text_of(messages[context_at]["content"])
    assert system_text.endswith(f"\n\n{MARKER} {expected}")
    assert system_text.count(RESTIC_TEXT) == 1
    assert f"Source: {demo_engine.trilium.url()}/#root/{RESTIC}" in system_text

    # The hook passed Claude Code's session id on: the engine has this session's note marked sent.
    again = recall(demo_engine, result["session_id"])
    assert RESTIC not in {passage["note_id"] for passage in again["passages"]}


@pytest.mark.parametrize("http", [False, True], ids=["command-hook", "http-hook"])
@pytest.mark.parametrize("engine", ["down", "silent", "wrong-password"])
def test_engine_trouble_lets_the_prompt_through(
    request: pytest.FixtureRequest,
    claude: Path,
    project: Path,
    messages_api: MessagesMock,
    http: bool,
    engine: str,
) -> None:
    with ExitStack() as stack:
        if engine == "wrong-password":
            engine_url = request.getfixturevalue("demo_engine").url  # answers 401
        else:
            listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
            engine_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
            if engine == "down":
                listener.close()  # connection refused
            # "silent": listening, never accepting, so the hook connects and waits for nothing
        install_hook("project", http=http, project_dir=project, engine_url=engine_url)

        run_claude(claude, project, messages_api, engine_url, "not-the-password")

    messages = prompt_request(messages_api)["messages"]
    assert MARKER not in json.dumps(messages)
    assert RESTIC_TEXT not in json.dumps(messages)
    assert sum(PROMPT in text_of(m["content"]) for m in messages) == 1


TOOL = "mcp__trilium-recall__recall"  # Claude Code's name for our server's `recall` tool


def use_mcp_server(project: Path, engine: DemoEngine) -> None:
    """Register the engine's /mcp in the project's .mcp.json, as the README writes it: the
    password a Bearer header that names RECALL_LOGIN_PASSWORD, which Claude Code fills in from
    its environment (`run_claude` sets it), so the file never holds it.

    Claude Code 2.1.197 connects to project .mcp.json servers in -p mode without --mcp-config and
    without the approval an interactive session asks for once (enabledMcpjsonServers /
    enableAllProjectMcpServers): the trust dialog is skipped in -p mode (TESTING.md; also
    anthropics/claude-code#37805: "local/project MCP servers (from .mcp.json) load normally in -p
    mode"). Calling a tool in -p mode does need permission: --allowedTools below.
    """
    server = {
        "type": "http",
        "url": f"{engine.url}/mcp",
        "headers": {"Authorization": "Bearer ${RECALL_LOGIN_PASSWORD}"},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"trilium-recall": server}}))
    assert engine.password not in (project / ".mcp.json").read_text()


async def server_instructions(engine: DemoEngine) -> str:
    async with mcp_session(engine.url, engine.headers) as mcp:
        assert mcp.instructions is not None
        return mcp.instructions


def test_mcp_server_instructions_reach_the_model(
    claude: Path, project: Path, messages_api: MessagesMock, demo_engine: DemoEngine
) -> None:
    use_mcp_server(project, demo_engine)

    run_claude(claude, project, messages_api, demo_engine.url, demo_engine.password)

    request = prompt_request(messages_api)
    # The initialize result's instructions, whole, under the server's name in a system message.
    [system] = [
        m for m in request["messages"] if "# MCP Server Instructions" in text_of(m["content"])
    ]
    assert system["role"] == "system"
    text = text_of(system["content"])
    sent = asyncio.run(server_instructions(demo_engine))  # built from the demo index
    assert sent != INSTRUCTIONS and "- Homelab (" in sent
    assert f"\n## trilium-recall\n{sent}\n" in text
    assert "Call `recall` before answering whenever the question may depend on something" in text
    # The tool list came from the server too, so the model can call it.
    [tool] = [t for t in request["tools"] if t["name"] == TOOL]
    assert tool["description"] == RECALL_DESCRIPTION
    properties = tool["input_schema"]["properties"]
    assert set(properties) == {"query", "limit", "instance", "today"}
    assert properties["today"]["description"] == TODAY_DESCRIPTION  # when to give the date


def test_model_calls_the_mcp_recall_tool(
    claude: Path, project: Path, demo_engine: DemoEngine
) -> None:
    use_mcp_server(project, demo_engine)
    query = {"query": "restore the restic backup"}
    with MessagesMock(tool_calls=[(TOOL, query)]).running() as api:
        result = run_claude(
            claude, project, api, demo_engine.url, demo_engine.password, "--allowedTools", TOOL
        )

    assert result["num_turns"] == 2
    first, second = api.requests  # the prompt; then the same conversation with the tool's answer
    assert PROMPT in json.dumps(first["messages"])
    *_, call, answer = second["messages"]
    [tool_use] = [block for block in call["content"] if block["type"] == "tool_use"]
    assert (call["role"], tool_use["name"], tool_use["input"]) == ("assistant", TOOL, query)
    [tool_result] = [block for block in answer["content"] if block["type"] == "tool_result"]
    assert tool_result["tool_use_id"] == tool_use["id"] and not tool_result.get("is_error")
    # Claude Code ran the tool against the engine: the real passage and its link came back.
    text = text_of(tool_result["content"])
    assert RESTIC_TEXT in text
    assert text.startswith("## ") and "\n" in text  # plain text, not JSON-wrapped
    assert f"{demo_engine.trilium.url()}/#root/{RESTIC}" in text


@pytest.mark.parametrize(
    ("extra", "filler"),
    [(0, "x"), (10, "x"), (0, "🗂"), (10, "🗂")],
    ids=["at-the-cap", "over-it", "emoji-at-the-cap", "emoji-over-it"],
)
def test_the_context_the_engine_keeps_within_reaches_the_model_whole(
    claude: Path, project: Path, messages_api: MessagesMock, extra: int, filler: str
) -> None:
    """CONTEXT_CHARS is the pinned CLI's own limit, counted in UTF-16 units as the engine counts
    it (an emoji is two): a hook context of that many reaches the model whole; ten more and
    the model gets a preview and a file path instead, which is why every answer is kept
    within it (answers.within_context)."""
    per_filler = len(filler.encode("utf-16-le")) // 2  # its UTF-16 units
    context = "START" + filler * ((CONTEXT_CHARS + extra - 10) // per_filler) + "END!!"
    (project.parent / "context.txt").write_text(context)
    hook = project.parent / "hook.py"
    hook.write_text(
        "import json, pathlib, sys\nsys.stdin.read()\n"
        f"text = pathlib.Path({str(project.parent / 'context.txt')!r}).read_text()\n"
        "print(json.dumps({'hookSpecificOutput': "
        "{'hookEventName': 'UserPromptSubmit', 'additionalContext': text}}))\n"
    )
    command = {"type": "command", "command": shlex.join([sys.executable, str(hook)])}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [command]}]}}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))

    run_claude(claude, project, messages_api, "http://127.0.0.1:9", "unused")

    [system_text] = [
        text_of(m["content"])
        for m in prompt_request(messages_api)["messages"]
        if MARKER in text_of(m["content"])
    ]
    assert (context in system_text) == (extra == 0)
    if extra:  # what the model gets instead: a preview of the start
        assert "START" in system_text and "END!!" not in system_text
