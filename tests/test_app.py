"""POST /recall and /health over real HTTP against the real engine (real e5 model)."""

from __future__ import annotations

import asyncio
import threading
import uuid

import httpx
import pytest

from conftest import (
    OPEN,
    RESTIC,
    RESTIC_ANSWER,
    RESTIC_PROMPT,
    HashEmbedder,
    add_note,
    make_settings,
)
from engine_process import serve_in_thread
from trilium_recall.claude_settings import HOOK_ANSWER_S
from trilium_recall.index import sent_marks
from trilium_recall.index.activity_log import recent
from trilium_recall.index.store import Store
from trilium_recall.search.answers import RecallRequest
from trilium_recall.search.gate import FITTED
from trilium_recall.server.activity import ActivityLog
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import Engine


def post(engine, body, **kwargs) -> httpx.Response:
    kwargs.setdefault("headers", engine.headers)
    return httpx.post(f"{engine.url}/recall", json=body, timeout=10, **kwargs)


def test_health_is_public_and_shows_counts_never_titles(demo_engine) -> None:
    health = httpx.get(f"{demo_engine.url}/health", timeout=5).json()
    assert health["status"] == "ok"
    counts = health["instances"]["default"]
    assert counts["notes"] > 40 and counts["sections"] >= counts["notes"]
    assert counts["skipped"]["archived"] == 4 and counts["skipped"]["protected"] == 1
    assert counts["skipped"]["plumbing"] >= 6
    assert counts["progress"]["done"] == counts["progress"]["total"]
    assert counts["error"] is None and counts["last_full"]
    # The stand-in answers as Trilium 0.93: no recent changes, blobIds (issue 25).
    assert counts["trilium"] == {"version": "0.93.0", "features": ["blobId"]}
    assert "restic" not in str(health).lower()


def test_recall_returns_the_right_note_with_a_full_passage(demo_engine) -> None:
    answer = post(demo_engine, {"prompt": RESTIC_PROMPT}).json()
    assert (answer["status"], answer["skipped"]) == ("sent", None) and answer["took_ms"] > 0
    assert sorted(p["note_id"] for p in answer["passages"]) == RESTIC_ANSWER
    top = next(p for p in answer["passages"] if p["note_id"] == RESTIC)
    assert set(top) == {
        "instance",
        "note_id",
        "title",
        "path",
        "area",
        "heading",
        "text",
        "score",
        "url",
    }
    assert (top["title"], top["path"], top["area"]) == ("Backups (restic)", "Homelab", "other")
    assert "restic" in top["text"].lower() and len(top["text"]) <= 1202
    assert top["url"] == f"{demo_engine.trilium.url()}/#root/{RESTIC}"
    assert "Backups (restic)" in answer["context"] and top["url"] in answer["context"]


def test_unrelated_prompt_gets_nothing(demo_engine) -> None:
    for prompt in ("what is the capital of Australia", "rename this variable to snake_case"):
        answer = post(demo_engine, {"prompt": prompt}).json()
        assert (answer["passages"], answer["context"]) == ([], ""), prompt


def test_skip_rules_answer_before_searching(demo_engine) -> None:
    answer = post(demo_engine, {"prompt": "/compact"}).json()
    assert answer["skipped"] == "slash command" and answer["passages"] == []


def test_session_dedupe_over_http(demo_engine) -> None:
    session = f"s-{uuid.uuid4()}"
    first = post(demo_engine, {"prompt": RESTIC_PROMPT, "session_id": session}).json()
    second = post(demo_engine, {"prompt": RESTIC_PROMPT, "session_id": session}).json()
    assert sorted(p["note_id"] for p in first["passages"]) == RESTIC_ANSWER
    # The best notes went with the first answer; what is left is weaker than the best: nothing.
    assert (second["passages"], second["context"]) == ([], "")


def test_claude_code_http_hook_mode(demo_engine) -> None:
    session = f"hook-{uuid.uuid4()}"
    payload = {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": RESTIC_PROMPT,
    }
    answer = post(demo_engine, payload)
    assert answer.status_code == 200
    output = answer.json()["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "Backups (restic)" in output["additionalContext"]
    nothing = post(demo_engine, {**payload, "prompt": "what is the capital of Australia"})
    assert (nothing.status_code, nothing.content) == (200, b"")
    skipped = post(demo_engine, {**payload, "prompt": "ok"})
    assert (skipped.status_code, skipped.content) == (200, b"")
    subagent = {**payload, "session_id": f"sub-{uuid.uuid4()}", "agent_id": "a3082f96"}
    assert (post(demo_engine, subagent).status_code, post(demo_engine, subagent).content) == (
        200,
        b"",
    )
    as_api = post(demo_engine, {"prompt": RESTIC_PROMPT, "agent_id": "a3082f96"}).json()
    assert as_api["passages"]  # only the hook's payload says where a prompt came from


def test_machine_prompts_are_skipped_with_the_envelope_named(demo_engine) -> None:
    envelope = (
        "<task-notification>\n<task-id>b1c496c</task-id>\n<status>completed</status>\n"
        '<summary>Background command "restic backup" completed (exit code 0)</summary>\n'
        "</task-notification>\nRead the output file to retrieve the result: /tmp/b1c496c.output"
    )
    answer = post(demo_engine, {"prompt": envelope}).json()
    assert (answer["passages"], answer["skipped"]) == ([], "machine: task-notification")
    asked = post(demo_engine, {"prompt": f"{envelope}\nwhy did my restic backup restore fail?"})
    assert any("restic" in p["title"].lower() for p in asked.json()["passages"])


def test_explain_shows_every_step(demo_engine) -> None:
    answer = post(demo_engine, {"prompt": RESTIC_PROMPT}, params={"explain": "1"}).json()
    explain = answer["explain"]
    assert explain["searched_as"] is None  # nothing only says where to look
    pointed = post(
        demo_engine, {"prompt": f"according to my notes, {RESTIC_PROMPT}"}, params={"explain": "1"}
    ).json()
    assert pointed["explain"]["searched_as"] == RESTIC_PROMPT
    acked = post(demo_engine, {"prompt": f"ok, {RESTIC_PROMPT}"}, params={"explain": "1"}).json()
    assert acked["explain"]["searched_as"] == RESTIC_PROMPT  # the acknowledgement peeled off
    assert [p["note_id"] for p in pointed["passages"]] == [p["note_id"] for p in answer["passages"]]
    assert explain["terms"] == ["restore", "restic", "backup"]
    assert (explain["keyword_hits"], explain["meaning_hits"]) == (6, 40)
    first = explain["candidates"][0]
    assert {
        "cosine",
        "matched_terms",
        "coverage",
        "fused",
        "area_weight",
        "score",
        "passed",
        "why",
    } <= set(first)
    assert first["passed"] is True
    prompt = explain["prompt"]
    assert prompt["about_notes"] is True and prompt["why"].startswith("about the notes")
    assert set(prompt["parts"]) == {
        "bias",
        "margin",
        "agreement",
        "zscore",
        "foreign language",
        "code phrase",
        "another stack",
        "unknown words",
        "fused top",
    }
    assert prompt["score"] == pytest.approx(sum(prompt["parts"].values()), abs=0.01)
    assert (prompt["unknown_terms"], prompt["unknown_share"]) == ([], 0)  # every word is known
    assert prompt["uncounted_terms"] == []
    assert prompt["parts"]["fused top"] == pytest.approx(
        FITTED.fused_weight * prompt["fused_top"], abs=0.01
    )
    assert explain["closest_generic_prompt"] and -1 < explain["generic_cosine"] < 1


BAD_DAY = "'today' must be a date written YYYY-MM-DD, in 1900-2099"
NOT_A_PROMPT = "'hook_event_name' must be UserPromptSubmit: only prompts are answered"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"not json", "body is not valid JSON"),
        (b"[1, 2]", "body must be a JSON object"),
        (b"{}", "'prompt' is required and must be a string"),
        (b'{"prompt": 42}', "'prompt' is required and must be a string"),
        (b'{"prompt": "x", "session_id": 5}', "'session_id' must be a string"),
        (b'{"prompt": "x", "instance": ["a"]}', "'instance' must be a string"),
        (b'{"prompt": "restic", "instance": "nope"}', "unknown instance 'nope' (known: default)"),
        (b"\xff\xfe", "body is not valid JSON"),
        (b'{"prompt": "x", "today": "22.10.2026"}', BAD_DAY),
        (b'{"prompt": "x", "today": "2026-02-30"}', BAD_DAY),
        (b'{"prompt": "x", "today": "20261022"}', BAD_DAY),
        (b'{"prompt": "x", "today": "9999-12-31"}', BAD_DAY),
        (b'{"prompt": "x", "today": 20261022}', "'today' must be a string"),
        (b'{"prompt": "x", "hook_event_name": "Stop"}', NOT_A_PROMPT),
        (b'{"prompt": "x", "hook_event_name": 5}', "'hook_event_name' must be a string"),
    ],
)
def test_bad_input_is_a_400_with_a_reason(demo_engine, body: bytes, error: str) -> None:
    answer = httpx.post(
        f"{demo_engine.url}/recall", content=body, headers=demo_engine.headers, timeout=10
    )
    assert answer.status_code == 400
    assert answer.json() == {"error": error}


def test_days_from_today_count_from_the_asker_s_date(demo_engine) -> None:
    """The hook sends its machine's date: an engine in a UTC container is a day ahead of an
    American evening, and "yesterday" is the user's."""

    def asked(today: str) -> dict:
        return post(demo_engine, {"prompt": "what did I do yesterday?", "today": today}).json()

    assert [p["title"] for p in asked("2026-10-22")["passages"]] == ["21 - Wednesday"]
    assert asked("2026-10-25")["passages"] == []  # no note is filed on the 24th


def test_odd_prompts_are_answered_not_refused(demo_engine) -> None:
    for prompt in [
        '"NEAR(" OR *',
        "restic\x00\x01\x1b[31m backup",
        "复原 restic 备份 🙂",
        "x" * 1_000_000,
    ]:
        answer = post(demo_engine, {"prompt": prompt})
        assert answer.status_code == 200, prompt[:40]
        assert answer.json()["status"] in ("sent", "silent"), prompt[:40]  # not "late", no error


def test_a_body_over_the_limit_is_refused(demo_engine) -> None:
    answer = post(demo_engine, {"prompt": "x" * 3_000_000})
    assert answer.status_code == 413
    assert "larger than" in answer.json()["error"]
    # Routing's own refusals are JSON with a reason too.
    wrong_method = httpx.get(f"{demo_engine.url}/recall", headers=demo_engine.headers)
    assert (wrong_method.status_code, wrong_method.json()) == (405, {"error": "Method Not Allowed"})
    assert wrong_method.headers["allow"] == "POST"
    assert wrong_method.headers["cache-control"] == "no-store"
    no_path = httpx.get(f"{demo_engine.url}/no-such-path")
    assert (no_path.status_code, no_path.json()) == (404, {"error": "Not Found"})


class HeldEmbedder(HashEmbedder):
    """Query embedding that waits until the test releases it; `finished` is set once a query
    got past. Holding it, not sleeping, makes "answered before the search ended" a fact of the
    test rather than a race against a busy machine's clock."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.release.set()
        self.finished = threading.Event()

    def query(self, text: str):
        assert self.release.wait(60), "the test never released the embedder"
        vector = super().query(text)
        self.finished.set()
        return vector


async def test_time_budget_overrun_answers_nothing_and_on_time(tmp_path) -> None:
    settings = make_settings(tmp_path)  # the tests' generous budget (conftest.make_settings)
    embedder = HeldEmbedder()
    engine = Engine(settings, embedder=embedder, gate=OPEN)
    add_note(engine.store, embedder, "n1", "Backups", [("Backups", "restic backup nightly")])
    await engine.warm()
    on_time = await engine.recall(RecallRequest("restic backup", session_id="other"))
    assert (on_time.status, [p.note_id for p in on_time.passages]) == ("sent", ["n1"])

    engine.settings = settings.model_copy(update={"time_budget_ms": 100})
    embedder.finished.clear()
    embedder.release.clear()  # the next search cannot end until the test says so
    late = await engine.recall(RecallRequest("restic backup", session_id="s"))
    assert (late.status, late.passages, late.context) == ("late", [], "")
    assert "try again" in late.text and "shorter" not in late.text  # the MCP tool's text
    # Flagged as an answer in time is: from part of the notes while the first build runs.
    assert engine.building and late.partial and on_time.partial
    assert not embedder.finished.is_set()  # answered at the budget, not when the search ended
    embedder.release.set()
    assert await asyncio.to_thread(embedder.finished.wait, 30)  # the search went on past it...
    await engine.stop()  # ...and stop() waits for its thread to end
    store = Store(settings.db_path)
    try:  # it found n1, but answered late, so nothing counts as sent
        assert sent_marks.already_sent(store, "s", 3600) == set()
        assert sent_marks.already_sent(store, "other", 3600) == {("default", "n1")}
    finally:
        store.close()


def test_a_hook_prompt_is_late_past_the_hooks_wait_whatever_the_budget(tmp_path) -> None:
    """The configured budget is a minute (conftest.make_settings); the command hook gives up
    after 1.4 s. An answer later than that reaches nobody, so its note must not count as sent
    to the session, or the session would never see it."""
    settings = make_settings(tmp_path)
    assert settings.time_budget_ms / 1000 > 10 * HOOK_ANSWER_S
    embedder = HeldEmbedder()
    engine = Engine(settings, embedder=embedder, gate=OPEN)
    add_note(engine.store, embedder, "n1", "Backups", [("Backups", "restic backup nightly")])
    hook_body = {"hook_event_name": "UserPromptSubmit", "prompt": "restic backup"}
    log = ActivityLog(settings)
    with serve_in_thread(create_app(engine, activity=log)) as url:  # its warm-up search is done
        embedder.finished.clear()
        embedder.release.clear()  # no search ends until the test says so
        answer = httpx.post(f"{url}/recall", json={**hook_body, "session_id": "s"}, timeout=60)
        embedder.release.set()
        assert answer.status_code == 200 and answer.content == b"", answer.text
        assert embedder.finished.wait(30)  # the search went on and found n1...
        again = httpx.post(f"{url}/recall", json={**hook_body, "session_id": "s"}, timeout=60)
        # ...but answered late, so the session gets it now
        assert "restic backup nightly" in again.json()["hookSpecificOutput"]["additionalContext"]
        api = httpx.post(f"{url}/recall", json={"prompt": "restic backup"}, timeout=60)
        assert api.json()["status"] == "sent"  # other doors keep the configured budget
        assert log.flush()
        store = Store(settings.db_path)
        try:
            api_entry, again_entry, late_entry = recent(store)
        finally:
            store.close()
    assert (late_entry.path, late_entry.passages) == ("hook", ())
    assert late_entry.silence == f"answered too late (budget {HOOK_ANSWER_S * 1000:.0f} ms)"
    assert again_entry.passages and api_entry.path == "api"


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"Host": "evil.example"}, 421), ({"Origin": "http://evil.example"}, 403)],
)
def test_recall_refuses_foreign_host_and_origin(demo_engine, headers, status) -> None:
    """DNS rebinding: a web page must not read the notes through a name it controls."""
    answer = post(
        demo_engine, {"prompt": RESTIC_PROMPT}, headers={**demo_engine.headers, **headers}
    )
    assert answer.status_code == status
    assert "passages" not in answer.json() and answer.json()["error"].startswith("Invalid")


def test_an_instance_is_named_in_any_case(demo_engine) -> None:
    """RECALL_INSTANCES=Work names the instance "work"; asking for "Work" was refused."""
    body = {"prompt": "how do i restore my restic backup", "instance": "DEFAULT"}
    answer = httpx.post(f"{demo_engine.url}/recall", json=body, headers=demo_engine.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["passages"], answer.text
