"""/mcp through the official MCP SDK client, against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST, InitializeResult

from conftest import HashEmbedder, make_settings
from engine_process import app_over_trilium, serve_in_thread
from standin_faults import FaultyTrilium
from trilium_recall import __version__
from trilium_recall.body_limits import PROMPT_BODY_BYTES
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import Engine
from trilium_recall.server.mcp import (
    INSTRUCTIONS,
    MAX_INSTRUCTIONS_BYTES,
    NO_MATCH,
    STILL_BUILDING,
    WHEN_TO_CALL,
    build_mcp,
    index_instructions,
)
from trilium_recall.server.overview import InstanceOverview, Subject


class Connected:
    def __init__(self, session: ClientSession, initialized: InitializeResult) -> None:
        self.session = session
        self.instructions = initialized.instructions
        self.server = initialized.server_info


def mcp_session(url: str, headers: dict[str, str] | None = None):
    """initialize() done; yields the session and the server's instructions."""

    @contextlib.asynccontextmanager
    async def connect():
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=20) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            initialized = await session.initialize()
            yield Connected(session, initialized)

    return connect()


async def test_initialize_sends_instructions_and_lists_the_recall_tool(demo_engine) -> None:
    notes = httpx.get(f"{demo_engine.url}/health").json()["instances"]["default"]["notes"]
    async with mcp_session(demo_engine.url, demo_engine.headers) as mcp:
        assert (mcp.server.name, mcp.server.version) == ("trilium-recall", __version__)
        # Built from the index: what it holds, then when to call the tool.
        text = mcp.instructions
        assert len(text.encode()) < 2048  # Claude Code truncates longer instructions
        assert text.startswith(
            "This server searches the user's personal Trilium notebook: "
            f'{notes} notes in instance "default". Its largest subjects'
        )
        assert text.endswith(WHEN_TO_CALL)
        subjects = [line for line in text.splitlines() if line.startswith("- ")]
        assert subjects[0] == "- LLM Wiki (20, wiki): Raw, Summaries, Concepts, Entities"
        assert [line.split(" (")[0] for line in subjects] == [
            "- LLM Wiki",
            "- Journal",
            "- Homelab",
            "- Work & dev",
            "- Personal",
        ]
        assert "Backups (restic)" in text and "Archive" not in text  # archived: not indexed
        tools = (await mcp.session.list_tools()).tools
        assert [t.name for t in tools] == ["recall"]
        schema = tools[0].input_schema
        assert schema["required"] == ["query"]
        assert set(schema["properties"]) == {"query", "limit", "instance", "today"}
        assert schema["properties"]["limit"]["default"] == 3
        assert "Trilium" in tools[0].description


async def test_recall_tool_finds_the_note_and_is_silent_on_unrelated(demo_engine) -> None:
    async with mcp_session(demo_engine.url, demo_engine.headers) as mcp:
        found = await mcp.session.call_tool("recall", {"query": "restore a restic backup"})
        text = found.content[0].text
        assert not found.is_error
        assert "## Backups (restic)" in text or "## restic-backup.sh" in text
        assert f"{demo_engine.trilium.url()}/#root/" in text
        one = await mcp.session.call_tool(
            "recall", {"query": "restore a restic backup", "limit": 1}
        )
        assert one.content[0].text.count("## ") == 1
        nothing = await mcp.session.call_tool("recall", {"query": "who painted the mona lisa"})
        assert nothing.content[0].text == NO_MATCH
        # No skip rules and no session dedupe on the tool: "ok" is searched, repeats answer again.
        again = await mcp.session.call_tool("recall", {"query": "restore a restic backup"})
        assert again.content[0].text == text


async def test_days_from_today_count_from_the_date_the_model_gives(demo_engine) -> None:
    async with mcp_session(demo_engine.url, demo_engine.headers) as mcp:
        query = {"query": "what did I do yesterday?"}
        found = await mcp.session.call_tool("recall", {**query, "today": "2026-10-22"})
        assert found.content[0].text.startswith("## 21 - Wednesday")
        later = await mcp.session.call_tool("recall", {**query, "today": "2026-10-25"})
        assert later.content[0].text == NO_MATCH  # no note is filed on the 24th


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "restic", "limit": 0}, "limit"),
        ({"query": "restic", "limit": "many"}, "limit"),
        ({"query": "restic", "instance": "nope"}, "unknown instance 'nope'"),
        (
            {"query": "restic", "today": "22.10.2026"},
            "today: '22.10.2026' is not a date written YYYY-MM-DD, in 1900-2099",
        ),
        (
            {"query": "restic", "today": "2026-02-30"},
            "today: '2026-02-30' is no day of the calendar",
        ),
        (
            {"query": "restic", "today": "9999-12-31"},
            "today: '9999-12-31' is not a date written YYYY-MM-DD, in 1900-2099",
        ),
    ],
)
async def test_bad_arguments_are_tool_errors_not_crashes(demo_engine, arguments, message) -> None:
    async with mcp_session(demo_engine.url, demo_engine.headers) as mcp:
        result = await mcp.session.call_tool("recall", arguments)
        assert result.is_error
        assert message in result.content[0].text
        assert result.content[0].text.startswith("bad arguments: ")  # one form for every one
        assert "pydantic" not in result.content[0].text  # one line a field, no library's dump
        assert "(?:" not in result.content[0].text  # a form in words, not a regex
        still = await mcp.session.call_tool("recall", {"query": "restore a restic backup"})
        assert not still.is_error


async def test_instructions_can_be_replaced(tmp_path) -> None:
    settings = make_settings(
        tmp_path, instructions="Only call recall for gardening questions.", instances={}
    )
    with serve_in_thread(create_app(Engine(settings, embedder=HashEmbedder()))) as url:
        async with mcp_session(url) as mcp:
            assert mcp.instructions == "Only call recall for gardening questions."


async def test_instructions_too_long_for_claude_code_are_warned_about(tmp_path, caplog) -> None:
    long = "Call recall for anything about my garden. " * 60  # 2,520 bytes
    said = f"RECALL_INSTRUCTIONS is {len(long)} bytes: Claude Code keeps only the first 2000"
    for instructions, warned in ((long, True), ("Gardening only.", False)):
        settings = make_settings(tmp_path / str(warned), instructions=instructions, instances={})
        engine = Engine(settings, embedder=HashEmbedder())
        try:
            caplog.clear()
            with caplog.at_level("WARNING"):
                build_mcp(engine)
        finally:
            await engine.stop()
        assert (said in caplog.text) is warned, caplog.text


def test_instructions_shed_detail_to_stay_under_the_cap() -> None:
    title = "Ω" * 80  # two bytes a character, clipped to 60 characters
    subject = Subject(title, 500, "wiki", (title,) * 4)
    big = [
        InstanceOverview(name, 8000, {"wiki": 8000}, (subject,) * 8)
        for name in ("work", "home", "lab")
    ]
    text = index_instructions(big)
    assert len(text.encode()) <= MAX_INSTRUCTIONS_BYTES
    assert '"work" (8,000), "home" (8,000), "lab" (8,000)' in text and text.endswith(WHEN_TO_CALL)
    assert "Ω" * 59 + "…" in text
    empty = [InstanceOverview("default", 0, {"wiki": 0}, ())]
    assert index_instructions(empty) == INSTRUCTIONS  # nothing indexed yet: the built-in text


async def test_instructions_describe_the_index_once_the_first_build_is_done(tmp_path) -> None:
    trilium = FaultyTrilium(token="mcp_token")
    trilium.add_note("homelab00001", "Homelab", content="<p>servers at home</p>")
    trilium.add_note("garden000001", "Tomato beds", parent_id="homelab00001", content="<p>sun</p>")
    trilium.delay = 1.0  # every ETAPI answer: the first build takes seconds; connect meanwhile
    with app_over_trilium(trilium, "mcp_token", tmp_path) as url:
        async with mcp_session(url) as during:
            assert during.instructions == INSTRUCTIONS
        assert httpx.get(f"{url}/health").json()["status"] in ("starting", "building")
        # Refreshed right after the build's full sync (and its recalibration): wait for it.
        deadline = time.monotonic() + 60
        while True:
            async with mcp_session(url) as after:
                if after.instructions != INSTRUCTIONS:
                    break
            assert time.monotonic() < deadline, "the instructions never described the index"
            await asyncio.sleep(0.1)
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
        assert after.instructions.startswith(
            "This server searches the user's personal Trilium notebook: 2 notes in "
            'instance "default".'
        )
        assert "\n- Homelab (2): Tomato beds\n" in after.instructions


async def test_connecting_does_not_wait_for_a_stuck_first_build(tmp_path) -> None:
    trilium = FaultyTrilium(token="slow_token")
    trilium.add_note("noteAAAAAAAA", "Garden", content="<p>tomatoes need sun</p>")
    # Every ETAPI answer takes 10 minutes: the first build cannot finish during this test, so a
    # connection that waited for it would hit the 60 s deadline below instead of answering.
    trilium.delay = 600.0
    with app_over_trilium(trilium, "slow_token", tmp_path) as url:

        async def connect_and_ask() -> tuple[list[str], str]:
            async with mcp_session(url) as mcp:
                tools = await mcp.session.list_tools()
                building = await mcp.session.call_tool("recall", {"query": "tomatoes"})
            return [t.name for t in tools.tools], building.content[0].text

        assert await asyncio.wait_for(connect_and_ask(), 60) == (["recall"], STILL_BUILDING)


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ({"Host": "evil.example"}, False),  # DNS rebinding: a foreign name for our address
        ({"Origin": "http://evil.example"}, False),
        ({"Origin": "https://claude.ai"}, True),
        ({}, True),
    ],
)
def test_mcp_checks_host_and_origin(demo_engine, headers: dict[str, str], allowed: bool) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    answer = httpx.post(
        f"{demo_engine.url}/mcp",
        json=body,
        timeout=10,
        headers={**demo_engine.headers, "Accept": "application/json, text/event-stream", **headers},
    )
    assert (answer.status_code < 400) is allowed, (answer.status_code, answer.text[:200])
    if not allowed:  # the SDK's own refusal, as a JSON-RPC error with its reason
        error = answer.json()["error"]
        assert error["message"] in ("Invalid Host header", "Invalid Origin header")


def test_mcp_refuses_a_body_over_the_limit_in_json(demo_engine) -> None:
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"x" * (3 << 20)
    answer = httpx.post(
        f"{demo_engine.url}/mcp",
        content=huge + b'"}}',
        timeout=30,
        headers={**demo_engine.headers, "Accept": "application/json, text/event-stream",
                 "Content-Type": "application/json"},
    )  # fmt: skip
    assert answer.status_code == 413
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["jsonrpc"] == "2.0" and answer.json()["id"] is None
    assert answer.json()["error"]["code"] == INVALID_REQUEST


async def test_the_official_client_shows_why_a_call_was_refused(demo_engine) -> None:
    """Refused before the SDK read it, a call over the body limit reached the client as
    "Server returned an error response": the reason was in a body it does not read."""
    async with mcp_session(demo_engine.url, demo_engine.headers) as mcp:
        with pytest.raises(MCPError) as refused:
            await mcp.session.call_tool("recall", {"query": "x" * (PROMPT_BODY_BYTES + 1)})
    assert refused.value.error.code == INVALID_REQUEST
    assert "too large" in refused.value.error.message
