"""The real hook as a subprocess against real HTTP servers on 127.0.0.1.

The real engine (`demo_engine`: real e5 model, demo notebook) shows what a user gets; a stub
engine and raw sockets drive the fault matrix. Whatever the engine or stdin does, the hook exits
0; it prints hook JSON only when the engine has context, and it is done within the budget (1.5 s,
asserted ≤ 1.7 s wall with start-up).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from claude_mock import STUB_CONTEXT, StubEngine
from conftest import DemoEngine
from trilium_recall.claude_settings import module_command

HOOK = [sys.executable, "-m", "trilium_recall.hook"]
MAX_WALL_S = 1.7
PROMPT = "Where did I put the offsite backup disk?"


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes
    wall: float


def clean_env(**extra: str) -> dict[str, str]:
    """The parent's environment minus any RECALL_* setting, plus extra."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RECALL_")}
    return env | extra


def payload(prompt: str = PROMPT, session_id: str = "session-1") -> bytes:
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": "/tmp",
            "prompt_id": "prompt-1",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def run_hook(
    stdin: bytes | None, env: dict[str, str], argv: list[str] = HOOK, cwd: Path | None = None
) -> Run:
    started = time.monotonic()
    proc = subprocess.run(
        argv,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=15,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def assert_silent(run: Run) -> None:
    assert (run.returncode, run.stdout) == (0, b""), run.stderr
    assert run.wall <= MAX_WALL_S


def hook_output(context: str) -> dict[str, object]:
    return {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}
    }


@pytest.fixture
def recall_server() -> Iterator[StubEngine]:
    """A stub /recall that records requests (headers, body) and answers at once."""
    with StubEngine().running() as engine:
        yield engine


def engine_env(engine: StubEngine, **extra: str) -> dict[str, str]:
    return clean_env(RECALL_URL=engine.url, RECALL_LOGIN_PASSWORD=engine.password, **extra)


def ask_engine(engine: StubEngine | DemoEngine, prompt: str, session_id: str) -> str:
    """What the engine itself answers, asked directly (not through the hook)."""
    request = urllib.request.Request(
        f"{engine.url}/recall",
        data=json.dumps({"prompt": prompt, "session_id": session_id}).encode(),
        headers={"Authorization": f"Bearer {engine.password}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["context"]


# --- the real engine over the demo notebook --------------------------------------------------

RESTIC = "EHNWLmkEi2qa"  # "Backups (restic)" in the demo notebook
RESTIC_PROMPT = "how do I restore my restic backup?"
RESTIC_TEXT = "restore test every quarter into /tmp/restore-test"  # from that note's body


def real_env(engine: DemoEngine) -> dict[str, str]:
    return clean_env(RECALL_URL=engine.url, RECALL_LOGIN_PASSWORD=engine.password)


def session() -> str:
    """A fresh session id: the engine (and its per-session memory) is shared by all tests."""
    return f"hook-test-{uuid.uuid4()}"


def added_context(run: Run) -> str:
    """The additionalContext of a hook run that printed hook JSON, checking its whole shape."""
    assert (run.returncode, run.stderr) == (0, b"")
    assert run.wall <= MAX_WALL_S
    output = json.loads(run.stdout)
    assert run.stdout.count(b"\n") == 1
    assert list(output) == ["hookSpecificOutput"]
    specific = output["hookSpecificOutput"]
    assert list(specific) == ["hookEventName", "additionalContext"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    return specific["additionalContext"]


def sources(context: str) -> list[str]:
    return re.findall(r"^Source: (\S+)$", context, flags=re.MULTILINE)


@pytest.mark.slow
def test_real_engine_passage_reaches_the_hook_output(demo_engine: DemoEngine) -> None:
    expected = ask_engine(demo_engine, RESTIC_PROMPT, session())

    context = added_context(run_hook(payload(RESTIC_PROMPT, session()), real_env(demo_engine)))

    assert context == expected  # the engine's context, passed on unchanged
    assert context.startswith("Passages from the user's Trilium notes that match this prompt:")
    assert "Homelab › Backups (restic) (other)" in context
    assert RESTIC_TEXT in context
    assert f"{demo_engine.trilium.url()}/#root/{RESTIC}" in sources(context)


@pytest.mark.slow
def test_real_engine_sends_a_note_once_per_session(demo_engine: DemoEngine) -> None:
    env, first_session = real_env(demo_engine), session()
    first = added_context(run_hook(payload(RESTIC_PROMPT, first_session), env))
    assert RESTIC_TEXT in first
    sent = sources(first)
    assert f"{demo_engine.trilium.url()}/#root/{RESTIC}" in sent

    again = run_hook(payload(RESTIC_PROMPT, first_session), env)

    # Other notes may still match; none of those already sent comes back, nor their text.
    repeat = added_context(again) if again.stdout else ""
    assert again.returncode == 0
    assert RESTIC_TEXT not in repeat and "Backups (restic) (other)" not in repeat
    assert not set(sent) & set(sources(repeat))
    assert all(url not in repeat for url in sent)

    other = added_context(run_hook(payload(RESTIC_PROMPT, session()), env))
    assert other == first  # another session has not seen it: it gets the same passages


@pytest.mark.slow
@pytest.mark.parametrize(
    "prompt", ["what is the capital of Australia", "ok", "/compact"], ids=str.split
)
def test_real_engine_nothing_to_add(demo_engine: DemoEngine, prompt: str) -> None:
    assert_silent(run_hook(payload(prompt, session()), real_env(demo_engine)))


@pytest.mark.slow
def test_real_engine_wrong_password(demo_engine: DemoEngine) -> None:
    env = clean_env(
        RECALL_URL=demo_engine.url, RECALL_LOGIN_PASSWORD="wrong", RECALL_HOOK_DEBUG="1"
    )
    run = run_hook(payload(RESTIC_PROMPT, session()), env)
    assert_silent(run)
    assert run.stderr == b"trilium-recall-hook: engine answered HTTP 401\n"


# --- a stub engine has passages ---------------------------------------------------------------


def test_context_becomes_hook_output(recall_server: StubEngine) -> None:
    expected = ask_engine(recall_server, PROMPT, session_id="probe-session")
    assert expected.strip()

    run = run_hook(payload(session_id="hook-session"), engine_env(recall_server))

    assert run.returncode == 0 and run.stderr == b""
    assert json.loads(run.stdout) == hook_output(expected)
    assert run.stdout.count(b"\n") == 1  # exactly one JSON object, nothing else
    assert run.wall <= MAX_WALL_S


def test_request_carries_bearer_prompt_and_session() -> None:
    with StubEngine().running() as engine:
        run_hook(payload(session_id="abc-123"), engine_env(engine))
    [(headers, body)] = engine.requests
    assert headers["Authorization"] == f"Bearer {engine.password}"
    assert headers["Content-Type"] == "application/json"
    assert body == {"prompt": PROMPT, "session_id": "abc-123"}


def test_password_from_file(tmp_path: Path) -> None:
    with StubEngine().running() as engine:
        secret = tmp_path / "password"
        secret.write_text(engine.password + "\n", encoding="utf-8")
        env = clean_env(RECALL_URL=engine.url, RECALL_PASSWORD_FILE=str(secret))
        run = run_hook(payload(), env)
    assert json.loads(run.stdout) == hook_output(STUB_CONTEXT)
    assert engine.requests[0][0]["Authorization"] == f"Bearer {engine.password}"


def test_console_script_entry_point(recall_server: StubEngine) -> None:
    script = Path(sys.executable).parent / "trilium-recall-hook"
    run = run_hook(payload(), engine_env(recall_server), argv=[str(script)])
    assert json.loads(run.stdout) == hook_output(ask_engine(recall_server, PROMPT, "probe-2"))


def test_module_form_ignores_the_projects_own_modules(
    recall_server: StubEngine, tmp_path: Path
) -> None:
    # Claude Code runs the hook in the user's project; `-m` alone puts that directory first on
    # sys.path, so its json.py or http/ would replace the standard library's (and print).
    (tmp_path / "http").mkdir()
    for module in ("json.py", "http/__init__.py"):
        (tmp_path / module).write_text('print("project code ran")\n', encoding="utf-8")
    env = engine_env(recall_server)
    unsafe = run_hook(
        payload(), env, argv=[sys.executable, "-m", "trilium_recall.hook"], cwd=tmp_path
    )
    assert unsafe.stdout.startswith(b"project code ran")

    # The command install-hook writes when there is no console script, as Claude Code runs it.
    argv = ["sh", "-c", module_command(Path(sys.executable))]
    run = run_hook(payload(), env, argv=argv, cwd=tmp_path)
    assert json.loads(run.stdout) == hook_output(STUB_CONTEXT)


def test_no_passages_prints_nothing(recall_server: StubEngine) -> None:
    assert_silent(run_hook(payload("What is the capital of Peru?"), engine_env(recall_server)))


# --- canned raw HTTP answers: framing and the fault matrix -----------------------------------

ANSWER = json.dumps({"passages": [{}], "context": "ctx", "skipped": None, "took_ms": 2.0})


def http_answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def read_request(conn: socket.socket) -> None:
    """Read one whole request, head and Content-Length body, as a real server does.

    http.client sends the body in a second packet; a server closing with it unread would make
    the kernel reset the connection, and the hook would see that instead of the answer.
    """
    data = b""
    while b"\r\n\r\n" not in data:
        if not (chunk := conn.recv(65536)):
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    while length and len(body) < int(length[1]):
        if not (chunk := conn.recv(65536)):
            return
        body += chunk


@pytest.fixture
def raw_server() -> Iterator[Callable[..., str]]:
    """Start servers that read one request and answer with fixed bytes after a delay."""
    stop = threading.Event()
    sockets: list[socket.socket] = []

    def start(answer: bytes, delay: float = 0.0, drip: bool = False) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        sockets.append(listener)

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                read_request(conn)
                if stop.wait(delay):
                    return
                if not drip:
                    conn.sendall(answer)
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(0.05):  # one header byte at a time, forever
                    conn.sendall(b"X")

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    stop.set()
    for listener in sockets:
        listener.close()


@pytest.mark.parametrize(
    "answer",
    [
        http_answer("200 OK", ANSWER.encode(), f"Content-Length: {len(ANSWER)}"),
        http_answer("200 OK", ANSWER.encode(), "Connection: close"),  # length = until close
        http_answer(
            "200 OK",
            f"5\r\n{ANSWER[:5]}\r\n{len(ANSWER) - 5:x}\r\n{ANSWER[5:]}\r\n0\r\n\r\n".encode(),
            "Transfer-Encoding: chunked",
        ),
    ],
    ids=["content-length", "until-close", "chunked"],
)
def test_answer_framings(raw_server: Callable[..., str], answer: bytes) -> None:
    run = run_hook(payload(), clean_env(RECALL_URL=raw_server(answer)))
    assert json.loads(run.stdout) == hook_output("ctx")


def test_answer_within_budget_still_counts(raw_server: Callable[..., str]) -> None:
    answer = http_answer("200 OK", ANSWER.encode(), f"Content-Length: {len(ANSWER)}")
    run = run_hook(payload(), clean_env(RECALL_URL=raw_server(answer, delay=0.8)))
    assert json.loads(run.stdout) == hook_output("ctx")
    assert 0.8 <= run.wall <= MAX_WALL_S


@pytest.mark.parametrize(
    ("status", "body"),
    [
        ("500 Internal Server Error", b'{"error": "boom"}'),
        ("401 Unauthorized", b""),
        ("302 Found", ANSWER.encode()),
        ("200 OK", b"\x00\xff<html>not json"),
        ("200 OK", b"[1, 2, 3]"),
        ("200 OK", b'"just a string"'),
        ("200 OK", b'{"passages": [], "context": 7}'),
        ("200 OK", b'{"context": "no passages list"}'),
        ("200 OK", b'{"passages": [], "context": "   ", "skipped": "no match"}'),
    ],
    ids=[
        "500",
        "401",
        "redirect",
        "garbage",
        "list",
        "string",
        "context-number",
        "no-passages",
        "blank-context",
    ],
)
def test_bad_answers_add_nothing(raw_server: Callable[..., str], status: str, body: bytes) -> None:
    url = raw_server(http_answer(status, body, f"Content-Length: {len(body)}"))
    assert_silent(run_hook(payload(), clean_env(RECALL_URL=url)))


HUGE = ANSWER + " " * 4_000_000  # valid JSON, just over the 4 MB cap


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            http_answer("200 OK", ANSWER.encode(), f"Content-Length: {len(ANSWER) + 10}"),
            "engine closed the connection mid-answer",
        ),
        (
            http_answer(
                "200 OK",
                f"{len(ANSWER) + 10:x}\r\n{ANSWER}".encode(),
                "Transfer-Encoding: chunked",
            ),
            "failed: IncompleteRead",
        ),
        (
            http_answer("200 OK", HUGE.encode(), f"Content-Length: {len(HUGE)}"),
            "engine answer too large",
        ),
        (http_answer("200 OK", HUGE.encode(), "Connection: close"), "engine answer too large"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "failed: BadStatusLine"),
    ],
    ids=["short-content-length", "short-chunk", "too-large", "too-large-until-close", "not-http"],
)
def test_broken_answers_add_nothing(
    raw_server: Callable[..., str], answer: bytes, reason: str
) -> None:
    # The whole valid answer is in each (but the last): only the framing check keeps it out.
    env = clean_env(RECALL_URL=raw_server(answer), RECALL_HOOK_DEBUG="1")
    run = run_hook(payload(), env)
    assert_silent(run)
    assert run.stderr == f"trilium-recall-hook: {reason}\n".encode()


def test_slow_answer_is_dropped_at_the_deadline(raw_server: Callable[..., str]) -> None:
    answer = http_answer("200 OK", ANSWER.encode(), f"Content-Length: {len(ANSWER)}")
    assert_silent(run_hook(payload(), clean_env(RECALL_URL=raw_server(answer, delay=3.0))))


def test_dripping_answer_is_dropped_at_the_deadline(raw_server: Callable[..., str]) -> None:
    # Every byte arrives well within a socket timeout; only the overall deadline stops this.
    run = run_hook(payload(), clean_env(RECALL_URL=raw_server(b"", drip=True)))
    assert_silent(run)
    assert run.wall >= 1.4


# --- no engine, no config -----------------------------------------------------------------


def test_no_environment_at_all() -> None:
    assert_silent(run_hook(payload(), clean_env()))


def test_engine_port_closed() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    assert_silent(run_hook(payload(), clean_env(RECALL_URL=f"http://127.0.0.1:{port}")))


def test_engine_accepts_and_never_answers() -> None:
    # The kernel completes the handshake for a listening socket nobody accept()s.
    with socket.create_server(("127.0.0.1", 0), backlog=8) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        run = run_hook(payload(), clean_env(RECALL_URL=url))
    assert_silent(run)


@pytest.mark.parametrize("url", ["not a url", "ftp://127.0.0.1/", "http://127.0.0.1:99999"])
def test_unusable_recall_url(url: str) -> None:
    assert_silent(run_hook(payload(), clean_env(RECALL_URL=url)))


def test_wrong_password(recall_server: StubEngine) -> None:
    env = clean_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD="wrong")
    assert_silent(run_hook(payload(), env))


# --- bad stdin (the engine is up and would answer, so a silent hook proves the check) --------


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"session_id": "s"}',
        json.dumps({"prompt": 42}).encode(),
        b'{"prompt": "backup \xff\xfe"}',
    ],
    ids=["empty", "invalid", "list", "no-prompt", "prompt-number", "not-utf8"],
)
def test_bad_stdin(recall_server: StubEngine, stdin: bytes) -> None:
    assert_silent(run_hook(stdin, engine_env(recall_server)))
    assert recall_server.requests == []


def test_huge_stdin(recall_server: StubEngine) -> None:
    huge = payload(prompt="backup " * 3_000_000)  # ~21 MB of otherwise valid input
    assert len(huge) > 20_000_000
    assert_silent(run_hook(huge, engine_env(recall_server)))
    assert recall_server.requests == []


def test_stdin_closed(recall_server: StubEngine) -> None:
    argv = ["sh", "-c", 'exec "$0" "$@" <&-', *HOOK]
    assert_silent(run_hook(None, engine_env(recall_server), argv=argv))
    assert recall_server.requests == []


def test_stdin_never_closes(recall_server: StubEngine) -> None:
    started = time.monotonic()
    proc = subprocess.Popen(
        HOOK, env=engine_env(recall_server), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload()[:20])  # the writer stalls mid-JSON and keeps the pipe open
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=5) == 0
        wall = time.monotonic() - started
    finally:
        proc.stdin.close()
    assert proc.stdout.read() == b""
    assert wall <= MAX_WALL_S
    assert recall_server.requests == []


# --- the process itself -------------------------------------------------------------------


def test_ctrl_c_while_waiting() -> None:
    accepted = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def hold() -> None:
            conn, _ = listener.accept()
            accepted.set()
            conn.recv(65536)  # keep the connection open until the hook goes away

        threading.Thread(target=hold, daemon=True).start()
        env = clean_env(RECALL_URL=f"http://127.0.0.1:{listener.getsockname()[1]}")
        proc = subprocess.Popen(HOOK, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(payload())
        proc.stdin.close()
        assert accepted.wait(5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
        assert proc.stdout.read() == b""


def test_broken_stdout_pipe(recall_server: StubEngine) -> None:
    proc = subprocess.Popen(
        HOOK,
        env=engine_env(recall_server, RECALL_HOOK_DEBUG="1"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # nobody will read the answer
    _, stderr = proc.communicate(payload(), timeout=10)
    assert proc.returncode == 0
    assert stderr == b"trilium-recall-hook: could not write the answer: BrokenPipeError\n"


def test_debug_goes_to_stderr_without_secrets(recall_server: StubEngine) -> None:
    secret = "s3cret-do-not-print"
    env = clean_env(
        RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD=secret, RECALL_HOOK_DEBUG="1"
    )
    run = run_hook(payload(), env)
    assert_silent(run)
    assert run.stderr == b"trilium-recall-hook: engine answered HTTP 401\n"


def test_password_with_line_break_is_not_sent(recall_server: StubEngine) -> None:
    secret = "line1\r\nX-Injected: yes"
    env = clean_env(
        RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD=secret, RECALL_HOOK_DEBUG="1"
    )
    run = run_hook(payload(), env)
    assert_silent(run)
    assert recall_server.requests == []
    assert b"line1" not in run.stderr and b"Injected" not in run.stderr


def test_no_debug_output_by_default(recall_server: StubEngine) -> None:
    env = clean_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD="wrong")
    assert run_hook(payload(), env).stderr == b""
