"""Each injected failure, and what the user sees on HTTP, MCP, the CLI, the hook and `doctor`:
never a bare 500 or a traceback on the client side, never index data lost that the next sync
cannot rebuild. The index heals itself: a damaged file, one from a newer schema or another
model's is moved aside (kept) and rebuilt."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import httpx
import pytest

from conftest import OPEN, HashEmbedder, make_settings
from engine_process import serve_in_thread
from procs import HOOK_COMMANDS, free_port, scrubbed_env
from standin_faults import FaultyTrilium
from test_mcp import mcp_session
from trilium_recall.config import Instance
from trilium_recall.errors import (
    BadRequest,
    EngineStarting,
    IndexBusy,
    IndexDamaged,
    IndexUnusable,
    StoreError,
    TriliumBadResponse,
)
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.server import engine as engine_module
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import Engine
from trilium_recall.server.health import public_health
from trilium_recall.server.http_errors import BUG, error_answer

TOKEN = "failure_token"
PROMPT = "how do I feed the sourdough starter"


def notebook(version: str = "0.93") -> FaultyTrilium:
    fake = FaultyTrilium(token=TOKEN, version=version)
    fake.add_note("sourdough001", "Sourdough starter", content="<p>Feed the sourdough starter "
                  "rye flour twice a day.</p>")  # fmt: skip
    fake.add_note("brokenNote01", "Broken export", content="<p>never readable</p>")
    fake.add_note("bikeTyres001", "Bike tyres", content="<p>Road tyres at 5.5 bar.</p>")
    return fake


class OtherModel(HashEmbedder):
    name = "another-model"


@contextmanager
def served(
    trilium: FaultyTrilium,
    data: Path,
    embedder: HashEmbedder | None = None,
    token: str = TOKEN,
    **settings: object,
) -> Iterator[tuple[str, Engine]]:
    """The app over a real Engine syncing `trilium`; one note's content always fails to read."""
    trilium.start()
    try:
        instance = Instance("default", trilium.url(), _secret(token))
        engine = Engine(
            make_settings(data, instances={"default": instance}, **settings),
            embedder or HashEmbedder(),
            OPEN,
        )
        client = engine.syncers["default"].client
        real_content = client.content

        async def content(note_id: str) -> str:
            if note_id == "brokenNote01":
                raise TriliumBadResponse("Trilium answered 200 with no body")
            return await real_content(note_id)

        client.content = content  # type: ignore[method-assign]
        with serve_in_thread(create_app(engine)) as url:
            yield url, engine
    finally:
        trilium.delay = 0
        trilium.stop()


def _secret(value: str):
    from pydantic import SecretStr

    return SecretStr(value)


def wait_ok(url: str) -> dict:
    deadline = time.monotonic() + 60
    while (health := httpx.get(f"{url}/health").json())["status"] != "ok":
        assert time.monotonic() < deadline, health
        time.sleep(0.05)
    return health


def cli(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI with `env`, run in `cwd`, else in HOME (or /) so no project's
    .claude/settings.json is read."""
    return subprocess.run(
        [sys.executable, "-m", "trilium_recall.cli", *args],
        env=scrubbed_env(**env),
        cwd=cwd or env.get("HOME", "/"),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def hook(url: str, prompt: str = PROMPT, **env: str) -> subprocess.CompletedProcess[str]:
    command = HOOK_COMMANDS["trilium-recall-hook"] + ["--url", url]
    body = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "session_id": "s"})
    return subprocess.run(
        command,
        input=body,
        env=scrubbed_env(RECALL_HOOK_DEBUG="1", **env),
        capture_output=True,
        text=True,
        timeout=30,
    )


def assert_json_reason(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert "Traceback" not in answer.text
    return answer.json()["error"]


# ---------------------------------------------------------------- the index heals itself


def _garbage(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database\n" * 200)
    return path.read_bytes()


def _future_schema(path: Path) -> bytes:
    Store(path).close()
    db = apsw.Connection(str(path))
    db.execute("PRAGMA user_version = 99")
    db.close()
    return path.read_bytes()


def _other_model(path: Path) -> bytes:
    Store(path, VectorIndex(OtherModel.dim, OtherModel.name)).close()
    return path.read_bytes()


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (_garbage, "is damaged (file is not a database)"),
        (_other_model, "was built with another-model (384 dimensions); this engine embeds with"),
    ],
    ids=["damaged", "model-change"],
)
def test_an_unusable_index_is_moved_aside_and_rebuilt(
    tmp_path: Path, damage, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "recall.sqlite3"
    before = damage(path)
    if damage is _garbage:  # the CLI names it and says what serve will do
        done = cli("status", env={"RECALL_DATA_DIR": str(tmp_path)})
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().endswith(
            "is damaged (file is not a database): "
            "start `trilium-recall serve` (again): it moves the file aside and rebuilds"
        )
    with served(notebook(), tmp_path) as (url, engine):
        assert engine.moved_aside is not None
        health = wait_ok(url)
        assert health["instances"]["default"]["notes"] == 2  # the broken note is not counted
        doctor = httpx.get(f"{url}/ui/doctor").json()["checks"]
    kept = list(tmp_path.glob("recall.sqlite3.broken-*"))
    assert [p.name for p in kept] == [engine.moved_aside[0].name]
    assert kept[0].read_bytes() == before  # kept as it was, never deleted
    assert why in caplog.text and "moved it to recall.sqlite3.broken-" in caplog.text
    moved = next(c for c in doctor if c["name"] == "index file")
    assert moved["status"] == "warn" and why in moved["lines"][0]


@pytest.mark.parametrize("command", ["serve", "index"])
def test_an_index_from_a_newer_release_is_refused_not_rebuilt(tmp_path: Path, command: str):
    """Moved aside and rebuilt, a downgrade by mistake lost the newer release's sign-ins,
    activity and every embedding, and upgrading again did not bring them back."""
    path = tmp_path / "recall.sqlite3"
    before = _future_schema(path)
    env = {"RECALL_DATA_DIR": str(tmp_path), "TRILIUM_URL": "http://127.0.0.1:9"}
    done = cli(command, env={**env, "TRILIUM_ETAPI_TOKEN": "t", "RECALL_PORT": str(free_port())})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("trilium-recall:")]
    assert len(said) == 1, done.stderr
    assert "was written by a newer trilium-recall (schema 99" in said[0]
    assert said[0].endswith("run the newer trilium-recall that wrote it, or move the file away "
                            "to build a fresh index with this one")  # fmt: skip
    assert not list(tmp_path.glob("recall.sqlite3.broken-*"))
    assert path.read_bytes() == before


def _damage_the_keyword_index(path: Path) -> None:
    """Overwrite the root page of the keyword index's data: opening the file reads none of
    it (the vectors and the schema are whole), the first keyword search does."""
    db = apsw.Connection(str(path))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute(
        "SELECT rootpage FROM sqlite_schema WHERE name = 'sections_fts_data'"
    ).fetchone()[0]
    db.close()
    with path.open("r+b") as file:
        file.seek((root - 1) * size)
        file.write(b"\xa5" * size)


def test_damage_the_warm_up_finds_is_moved_aside_before_serving(tmp_path: Path) -> None:
    """It crashed every start with a traceback: the file opened, and the warm-up's first
    search met the damage, which only moving the file away by hand got past."""
    with served(notebook(), tmp_path) as (url, _):
        wait_ok(url)
    _damage_the_keyword_index(tmp_path / "recall.sqlite3")
    with served(notebook(), tmp_path) as (url, engine):
        assert engine.moved_aside is not None and "is damaged" in engine.moved_aside[1]
        wait_ok(url)
        answer = httpx.post(f"{url}/recall", json={"prompt": PROMPT}, timeout=60)
    assert answer.status_code == 200 and "Sourdough starter" in answer.text
    assert len(list(tmp_path.glob("recall.sqlite3.broken-*"))) == 1


def test_damage_a_search_finds_is_told_by_health_and_mended_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = IndexDamaged(f"{tmp_path / 'recall.sqlite3'} is damaged (disk image is malformed)")

    def meets_damage(*args: object, **kwargs: object) -> None:
        raise damaged

    with served(notebook(), tmp_path) as (url, _):
        wait_ok(url)
        monkeypatch.setattr(engine_module, "recall", meets_damage)
        reason = assert_json_reason(httpx.post(f"{url}/recall", json={"prompt": PROMPT}), 503)
        health = httpx.get(f"{url}/health").json()
        monkeypatch.undo()
    assert "is damaged" in reason and "moves the file aside" in reason
    assert health["status"] == "degraded"
    assert health["index_error"] == f"{damaged}: restart to move it aside and rebuild"
    with served(notebook(), tmp_path) as (url, engine):  # the pages it opens are whole
        assert engine.moved_aside is not None
        assert engine.moved_aside[1] == f"{damaged} (found while serving)"
        assert wait_ok(url).get("index_error") is None
    kept = sorted(p.name for p in tmp_path.glob("recall.sqlite3.broken-*"))
    assert [name.endswith(".damaged") for name in kept] == [False, True]  # the note went too
    assert not (tmp_path / "recall.sqlite3.damaged").exists()


def test_damage_a_sync_finds_is_told_by_health_and_mended_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tick that met a damaged page only said "sync failed" again every minute: no tick can
    mend the file, and the next start opened it as whole."""
    damaged = IndexDamaged(f"{tmp_path / 'recall.sqlite3'} is damaged (disk image is malformed)")

    def meets_damage(*args: object, **kwargs: object) -> None:
        raise damaged

    trilium = notebook()
    with served(trilium, tmp_path, tick_seconds=0.2) as (url, engine):
        wait_ok(url)
        monkeypatch.setattr(engine.store, "save_note", meets_damage)
        trilium.set_content("bikeTyres001", "<p>Road tyres at 6 bar now.</p>")
        deadline = time.monotonic() + 60
        while (health := httpx.get(f"{url}/health").json())["status"] != "degraded":
            assert time.monotonic() < deadline, health
            time.sleep(0.05)
        monkeypatch.undo()
    assert health["index_error"] == f"{damaged}: restart to move it aside and rebuild"
    with served(trilium, tmp_path) as (url, engine):
        assert engine.moved_aside is not None
        assert engine.moved_aside[1] == f"{damaged} (found while serving)"
        assert wait_ok(url).get("index_error") is None


# ---------------------------------------------------------------- failed notes, listed


def test_a_note_that_failed_is_listed_with_its_reason_on_page_doctor_and_log(tmp_path):
    with served(notebook(), tmp_path) as (url, _):
        wait_ok(url)
        failed = httpx.get(f"{url}/ui/status").json()["instances"]["default"]["failed"]
        checks = {c["name"]: c for c in httpx.get(f"{url}/ui/doctor").json()["checks"]}
    assert [(f["note_id"], f["title"], f["reason"]) for f in failed] == [
        ("brokenNote01", "Broken export", "Trilium answered 200 with no body")
    ]
    assert checks["failed notes default"]["status"] == "warn"
    assert checks["failed notes default"]["lines"] == [
        "Broken export (brokenNote01): Trilium answered 200 with no body"
    ]
    done = cli("log", env={"RECALL_DATA_DIR": str(tmp_path)})
    assert "Notes of default that failed to index (1):" in done.stdout
    assert "Broken export (brokenNote01, " in done.stdout
    assert "): Trilium answered 200 with no body" in done.stdout
    status = json.loads(cli("status", env={"RECALL_DATA_DIR": str(tmp_path)}).stdout)
    assert status["default"]["failed"][0]["reason"] == "Trilium answered 200 with no body"


# ---------------------------------------------------------------- errors mapped once per surface


def test_public_health_names_the_instance_in_any_form_an_error_quotes_its_url(
    tmp_path,
) -> None:
    """httpx names a request by its normalised origin (the host lower-cased), not as
    TRILIUM_URL spells it."""
    trilium = Instance("work", "https://Notes.Example.org:8443/trilium/", _secret("t"))
    settings = make_settings(tmp_path, instances={"work": trilium})
    errors = {
        "work": "Trilium at https://Notes.Example.org:8443/trilium is unavailable (timeout)",
        "gone": "Trilium at http://old.example:8080 is unavailable",  # no longer configured
    }
    health = {"instances": {n: {"error": e} for n, e in errors.items()}}
    health["instances"]["work"]["error"] += (
        ": 403 for url 'https://notes.example.org:8443/etapi/app-info'."
    )
    shown = public_health(health, settings)["instances"]
    assert shown["work"]["error"] == (
        'Trilium "work" is unavailable (timeout): 403 for url \'the Trilium of "work"\'.'
    )
    assert shown["gone"]["error"] == errors["gone"]  # not ours to name: kept as it was


async def test_a_first_build_that_fails_is_named_by_recall_not_waited_for(tmp_path) -> None:
    """Nothing indexed because Trilium refuses the token: "still being built, try again in a
    minute" would send the user to wait for nothing."""
    with served(notebook(), tmp_path, token="not_the_token") as (url, engine):
        deadline = time.monotonic() + 60
        while (health := httpx.get(f"{url}/health").json())["status"] != "degraded":
            assert time.monotonic() < deadline, health
            time.sleep(0.05)
        answer = httpx.post(f"{url}/recall", json={"prompt": PROMPT})
        reason = assert_json_reason(answer, 503)
        # /health is public: it names the instance, where the answer (behind the password
        # when one is set) names the Trilium's address.
        error, trilium = (
            health["instances"]["default"]["error"],
            engine.settings.instances["default"],
        )
        assert error.startswith('Trilium "default" ') and trilium.shown_url not in error
        failed = 'No notes indexed yet: the first build of "default" failed: '
        assert reason.startswith(f"{failed}Trilium at {trilium.shown_url} ")
        assert error.removeprefix('Trilium "default" ') in reason
        # Asking again helps at the next sync tick, which the answer names, not in 5 s.
        tick = engine.settings.tick_seconds
        assert answer.headers["retry-after"] == str(max(1, math.ceil(tick)))
        assert answer.json()["retry_after"] == max(1, math.ceil(tick))
        assert reason.endswith(f"It is tried again every {tick:g} s.")
        assert reason.endswith("It is tried again every 60 s.") and "not_the_token" not in reason
        async with mcp_session(url) as mcp:
            result = await mcp.session.call_tool("recall", {"query": PROMPT})
        assert not result.is_error and result.content[0].text == reason


async def test_while_the_first_build_runs_recall_is_503_with_retry_after(tmp_path) -> None:
    trilium = notebook()
    trilium.delay = 5.0  # every ETAPI answer: the first build cannot finish during the test
    with served(trilium, tmp_path) as (url, _):
        answer = httpx.post(f"{url}/recall", json={"prompt": PROMPT})
        reason = assert_json_reason(answer, 503)
        assert reason == "The notes index is still being built; try again in a minute."
        assert answer.headers["retry-after"] == "5"
        run = hook(url)
        assert (run.returncode, run.stdout) == (0, "")  # the prompt goes on untouched
        assert f"engine answered HTTP 503: {reason}" in run.stderr
        async with mcp_session(url) as mcp:
            result = await mcp.session.call_tool("recall", {"query": PROMPT})
        assert not result.is_error and result.content[0].text == reason


async def test_a_bug_in_a_stage_is_a_json_500_without_its_details(tmp_path, monkeypatch) -> None:
    with served(notebook(), tmp_path) as (url, _):
        wait_ok(url)

        def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("secret internals")

        monkeypatch.setattr(engine_module, "recall", broken)
        answer = httpx.post(f"{url}/recall", json={"prompt": PROMPT})
        assert assert_json_reason(answer, 500) == BUG
        assert "secret internals" not in answer.text
        run = hook(url)
        assert (run.returncode, run.stdout) == (0, "")
        assert f"engine answered HTTP 500: {BUG}" in run.stderr
        async with mcp_session(url) as mcp:
            result = await mcp.session.call_tool("recall", {"query": PROMPT})
        text = result.content[0].text
        assert result.is_error and text.endswith(BUG) and "secret internals" not in text


async def test_a_locked_index_still_answers_within_the_budget(tmp_path, caplog) -> None:
    """Another process holds the index's write lock: /recall cannot remember what it sent in
    this session, but still answers within its budget (the note may come again); reads go on
    (WAL), and the next answer after the lock is released is remembered again."""
    # The product's default budget: how long the session write waits for the lock comes from it
    # (the tests' generous one would make every answer here wait a minute).
    with served(notebook(), tmp_path, time_budget_ms=1200.0) as (url, _):
        wait_ok(url)
        body = {"prompt": PROMPT, "session_id": "locked-session"}
        other = apsw.Connection(str(tmp_path / "recall.sqlite3"))
        other.execute("BEGIN IMMEDIATE")
        try:
            for _ in range(2):  # not remembered: the same note both times, each in time
                answer = httpx.post(f"{url}/recall", json=body, timeout=60)
                assert answer.status_code == 200 and answer.json()["status"] == "sent"
                assert answer.json()["passages"][0]["title"] == "Sourdough starter"
            async with mcp_session(url) as mcp:
                result = await mcp.session.call_tool("recall", {"query": PROMPT})
            assert not result.is_error and "Sourdough starter" in result.content[0].text
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert "is locked by another process; try again in a moment: this answer is not " in (
            caplog.text
        )
        assert httpx.post(f"{url}/recall", json=body).json()["status"] == "sent"
        assert httpx.post(f"{url}/recall", json=body).json()["status"] == "silent"  # remembered


@pytest.mark.parametrize(
    ("error", "status", "reason"),
    [
        (BadRequest("'prompt' is required"), 400, "'prompt' is required"),
        (IndexBusy("f is locked"), 503, "f is locked"),
        (StoreError("disk full while writing f"), 503, "disk full while writing f"),
        (IndexUnusable("f is damaged"), 503, f"f is damaged: {IndexUnusable.FIX}"),
        (EngineStarting("still being built"), 503, "still being built"),
        (RuntimeError("internals"), 500, BUG),
    ],
)  # fmt: skip
def test_one_mapping_from_error_to_http_answer(error: Exception, status: int, reason: str):
    answer = error_answer(error)
    assert (answer.status_code, json.loads(answer.body)["error"]) == (status, reason)
    assert ("retry-after" in answer.headers) == (status == 503)
