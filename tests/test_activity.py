"""The activity log: bounded, prompt text only as asked, never in the way of a recall; and
`trilium-recall log` reading what the real engine wrote over HTTP and MCP."""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from conftest import OPEN, HashEmbedder, add_note, make_settings
from engine_process import serve_in_thread
from test_cli import run
from test_mcp import mcp_session
from trilium_recall.index.activity_log import Activity, SentNote, append, recent
from trilium_recall.index.store import Store
from trilium_recall.search.answers import Passage, RecallResult
from trilium_recall.server.activity import PROMPT_HEAD_CHARS, ActivityLog, parse_since, prompt_head
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import Engine

RESTIC_PROMPT = "how do i restore my restic backup"
SILENT_PROMPT = "write a regex that matches ISO 8601 dates with optional milliseconds"


def passage(note_id: str, title: str, score: float) -> Passage:
    return Passage("default", note_id, title, "Homelab", "other", title, "text", score, "")


SENT = RecallResult("sent", [passage("n1", "Backups (restic)", 0.41)], took_ms=12.34)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    path = tmp_path / "recall.sqlite3"
    Store(path).close()  # the file with its migrations, as the engine leaves it
    return path


def logged(path: Path, **query: object) -> list[Activity]:
    store = Store(path)
    try:
        return recent(store, **query)  # type: ignore[arg-type]
    finally:
        store.close()


def test_an_entry_holds_what_was_sent_and_how_long_it_took(tmp_path: Path, index: Path) -> None:
    log = ActivityLog(make_settings(tmp_path, time_budget_ms=1200.0))
    before = time.time()
    log.record("hook", "how do I\nrestore\trestic?", SENT, session_id="s-1", instance="default")
    skip = RecallResult("skipped", skipped="slash command", took_ms=0.5)
    log.record("api", "rename this variable", skip)
    log.record("mcp", "anything", RecallResult("late", took_ms=1200))  # the budget ran out
    assert log.flush()
    late, skipped, sent = logged(index)
    assert before <= sent.at <= time.time()
    assert sent == Activity(
        sent.at,
        "hook",
        "s-1",
        "default",
        "how do I restore restic?",
        (SentNote("default", "n1", "Backups (restic)", 0.41),),
        None,
        12.3,
    )
    assert (skipped.path, skipped.silence, skipped.passages) == (
        "api",
        "skipped: slash command",
        (),
    )
    assert (late.path, late.took_ms) == ("mcp", 1200)
    assert late.silence == "answered too late (budget 1200 ms)"
    log.close()


def test_prompts_are_kept_only_as_their_first_words() -> None:
    head = prompt_head("word " * 100)
    assert len(head) == PROMPT_HEAD_CHARS and head.endswith("…")
    assert prompt_head("a\x00b\x1b[31m\u2028c   d") == "a b [31m c d"
    assert prompt_head("readme \u202egnp.exe\u2066x\u2069") == "readme gnp.exex"


def test_the_log_keeps_only_the_newest_rows(tmp_path: Path, index: Path) -> None:
    log = ActivityLog(make_settings(tmp_path, activity_max_rows=5))
    for number in range(12):
        log.record("api", f"prompt {number}", SENT)
        if number == 6:
            assert log.flush()  # two batches: pruning happens on every write
    assert log.flush()
    assert [e.prompt_head for e in logged(index)] == [f"prompt {n}" for n in range(11, 6, -1)]
    store = Store(index)
    assert store.db.execute("SELECT count(*) FROM activity").fetchone()[0] == 5
    store.close()
    log.close()


def test_the_log_forgets_rows_older_than_its_days(tmp_path: Path, index: Path) -> None:
    settings = make_settings(tmp_path, activity_max_days=1)
    old = Activity(time.time() - 2 * 86400, "api", None, None, "two days ago", (), "x", 1.0)
    store = Store(index)
    with store.db:
        append(store.db, [old], max_rows=100, max_days=30)
    store.close()
    assert [e.prompt_head for e in logged(index)] == ["two days ago"]
    log = ActivityLog(settings)
    log.record("api", "today", SENT)
    assert log.flush()
    assert [e.prompt_head for e in logged(index)] == ["today"]
    log.close()


def test_no_prompt_text_with_log_prompts_off(tmp_path: Path, index: Path) -> None:
    log = ActivityLog(make_settings(tmp_path, log_prompts=False))
    log.record("hook", "zanzibar quokka pelican", SENT, session_id="s-2")
    assert log.flush()
    log.close()
    [entry] = logged(index)
    assert entry.prompt_head is None and entry.passages[0].title == "Backups (restic)"
    files = b"".join(p.read_bytes() for p in tmp_path.glob("recall.sqlite3*"))
    assert b"zanzibar" not in files and b"Backups (restic)" in files


def test_closing_writes_what_is_queued_and_nothing_after(tmp_path: Path, index: Path) -> None:
    log = ActivityLog(make_settings(tmp_path))
    log.record("api", "before", SENT)
    log.close()  # no flush first: close writes the queue out
    log.record("api", "after", SENT)
    assert log.flush() and [e.prompt_head for e in logged(index)] == ["before"]


def test_a_log_turned_off_writes_nothing(tmp_path: Path, index: Path) -> None:
    log = ActivityLog(make_settings(tmp_path, activity_max_rows=0))
    log.record("api", "anything", SENT)
    assert log.flush() and logged(index) == []
    log.close()


def refuse_writes(path: Path) -> None:
    """Every insert into the log fails, as on a full disk (SQLite says why)."""
    store = Store(path)
    store.db.execute(
        "CREATE TRIGGER no_room BEFORE INSERT ON activity "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    store.close()


def test_a_failing_write_is_a_warning_and_the_log_recovers(tmp_path, index, caplog) -> None:
    caplog.set_level(logging.INFO, logger="trilium_recall.server.activity")
    refuse_writes(index)
    log = ActivityLog(make_settings(tmp_path))
    log.record("api", "first", SENT)
    assert log.flush()
    log.record("api", "second", SENT)
    assert log.flush()
    assert log.dropped == 2 and logged(index) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "database or disk is full" in warnings[0]  # said once
    store = Store(index)
    store.db.execute("DROP TRIGGER no_room")
    store.close()
    log.record("api", "third", SENT)
    assert log.flush()
    assert [e.prompt_head for e in logged(index)] == ["third"]
    assert any("writing again (2 entries were dropped)" in r.getMessage() for r in caplog.records)
    log.close()


def test_recall_answers_while_the_log_cannot_be_written(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, instances={})
    engine = Engine(settings, embedder=HashEmbedder(), gate=OPEN)
    add_note(engine.store, engine.embedder, "n1", "Backups", [("Backups", "restic backup")])
    refuse_writes(settings.db_path)
    log = ActivityLog(settings)
    with serve_in_thread(create_app(engine, activity=log)) as url:
        for _ in range(3):
            answer = httpx.post(f"{url}/recall", json={"prompt": "restic backup"}, timeout=10)
            assert answer.status_code == 200, answer.text
        assert log.flush()
    assert log.dropped == 3


@pytest.mark.parametrize(
    ("text", "seconds_ago"),
    [("30m", 1800), ("2h", 7200), ("1d", 86400), ("1.5h", 5400), (" 1w ", 7 * 86400)],
)
def test_since_takes_durations(text: str, seconds_ago: float) -> None:
    assert parse_since(text, now=1_000_000.0) == 1_000_000.0 - seconds_ago


def test_since_takes_iso_times() -> None:
    assert parse_since("2026-12-03T09:00:00+00:00") == 1796288400.0
    assert parse_since("2026-12-03T09:00:00Z") == 1796288400.0
    local = datetime(2026, 12, 3, 9, 0).astimezone().timestamp()
    assert parse_since("2026-12-03T09:00") == local and parse_since("2026-12-03") < local


@pytest.mark.parametrize("text", ["yesterday", "2x", "-1h", "2026-13-01", ""])
def test_since_refuses_anything_else_with_the_forms_it_takes(text: str) -> None:
    with pytest.raises(ValueError, match=r"give a duration such as 30m, 2h or 1d, or an ISO time"):
        parse_since(text)


# -- the real engine: every path logged, read back with `trilium-recall log` -------------------


def hook_payload(session: str, prompt: str) -> dict[str, str]:
    return {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt}


async def test_every_path_is_logged_and_the_cli_shows_it(demo_engine) -> None:
    session = f"log-{uuid.uuid4()}"
    url = f"{demo_engine.url}/recall"
    headers = demo_engine.headers
    started = time.time()
    assert httpx.post(url, json=hook_payload(session, RESTIC_PROMPT), headers=headers).json()
    silent = httpx.post(url, json=hook_payload(session, SILENT_PROMPT), headers=headers)
    assert silent.content == b""
    api = httpx.post(url, json={"prompt": RESTIC_PROMPT}, headers=headers).json()
    async with mcp_session(demo_engine.url, headers) as mcp:
        await mcp.session.call_tool("recall", {"query": SILENT_PROMPT})
    env = {"RECALL_DATA_DIR": str(demo_engine.data_dir)}

    mine = run("log", "--session", session, "--json", env=env)
    assert mine.returncode == 0, mine.stderr
    found, quiet = json.loads(mine.stdout)  # oldest first
    assert (found["path"], found["session_id"], found["prompt"]) == ("hook", session, RESTIC_PROMPT)
    assert "Backups (restic)" in [p["title"] for p in found["passages"]]
    assert found["silence"] is None and found["took_ms"] > 0
    assert (quiet["path"], quiet["passages"]) == ("hook", [])
    assert quiet["silence"].startswith("not about the notes: score -")

    recent_calls = json.loads(run("log", "--since", "10m", "--json", env=env).stdout)
    api_entry, mcp_entry = recent_calls[-2:]
    assert datetime.fromisoformat(api_entry["at"]).timestamp() >= int(started)
    assert api_entry["path"] == "api" and api_entry["session_id"] is None
    assert [p["note_id"] for p in api_entry["passages"]] == [p["note_id"] for p in api["passages"]]
    assert (mcp_entry["path"], mcp_entry["prompt"], mcp_entry["passages"]) == (
        "mcp",
        SILENT_PROMPT,
        [],
    )

    text = run("log", "--session", session, env=env)
    lines = text.stdout.splitlines()
    assert len(lines) == 4 and f'"{RESTIC_PROMPT}"' in lines[0] and " hook " in lines[0]
    assert lines[1].startswith("    sent: ") and "Backups (restic) (0." in lines[1]
    assert lines[3].startswith("    silent: not about the notes: score -")
    nobody = run("log", "--session", "nobody", env=env)
    assert (nobody.returncode, nobody.stdout) == (0, "No calls logged.\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "trilium-recall: --since 'yesterday': give a duration such as"),
        (["--limit", "0"], "trilium-recall: --limit 0: give a number of entries, 1 or more"),
    ],
)
def test_log_refuses_bad_input_with_one_line(tmp_path: Path, args, message) -> None:
    Store(tmp_path / "recall.sqlite3").close()
    done = run("log", *args, env={"RECALL_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()] and done.stderr.startswith(message)


def test_log_without_an_index_is_a_clear_error(tmp_path: Path) -> None:
    done = run("log", env={"RECALL_DATA_DIR": str(tmp_path / "none")})
    assert done.returncode == 2 and "no index at" in done.stderr and "Traceback" not in done.stderr
