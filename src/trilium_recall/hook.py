"""Claude Code UserPromptSubmit hook: pass the prompt to the engine, print the engine's answer.

Claude Code runs this once per prompt, so two things matter more than elegance:

- It must never get in the way. Whatever goes wrong (no config, engine down or slow, 401, garbage,
  bad stdin, Ctrl-C, a closed stdout) it prints nothing and exits 0: exit 2 would erase the user's
  prompt, and any stdout of an exit-0 hook is injected into the model's context, so diagnostics go
  to stderr and only with ``RECALL_HOOK_DEBUG=1``.
- It must be done fast: stdlib only. ``http.client`` speaks HTTP; its imports (email, ssl) cost
  ~25 ms per prompt here over a hand-written socket client (bench/bench_hook.py), well inside the
  150 ms the hook may add to the engine's own answer time, and a protocol is not ours to keep.

The engine decides what the prompt gets: the hook sends it in Claude Code's own hook format
(``hook_event_name`` set), which ``POST /recall`` answers with hook JSON or an empty body, the
same answer the http hook gets. The hook only checks that answer's shape before printing it.

Claude Code gives the whole process 1.5 s, start-up and imports included, so the deadline is
counted from the process's start (``/proc/self/stat``), not from ``main()``. The work runs in a
daemon thread the main thread stops waiting for at the deadline; that one clock bounds the
connect, DNS look-ups, an answer dripping in byte by byte, and a stdin that never closes.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from urllib.parse import urlsplit

from .body_limits import HOOK_INPUT_BYTES, SESSION_ID_CHARS
from .engine_address import is_http_url, named_engine

BUDGET_S = 1.5  # Claude Code's limit for the whole hook process
# The main thread gives up this long after the process started. Waking, exiting and the parent
# noticing took, against a silent engine on 2 cores: idle, at most 8 ms past the deadline (150
# runs); with the test suite running alongside (load 3), p99 13 ms, max 75 ms (210 runs).
DEADLINE_S = BUDGET_S - 0.1
# Without /proc (not Linux): process start to main() took 30-110 ms here at load 3; assume 0.1 s.
START_UP_GUESS_S = 0.1
HOOK_EVENT = "UserPromptSubmit"
# Three passages and their context are a few kB; anything near this is not our engine talking.
MAX_ANSWER_BYTES = 4_000_000
_CHUNK = 65536  # stdin read size
OPTIONS = ("--url", "--password-env", "--password-file")  # as install-hook writes them
PASSWORD_VAR = "RECALL_LOGIN_PASSWORD"


class _Skip(Exception):
    """Nothing to add; the reason is shown on stderr in debug mode only."""


def main(argv: list[str] | None = None) -> None:
    """Run the hook: read the prompt from stdin, print the engine's hook JSON if it has any.

    `install-hook` writes where the engine is and where the password comes from into the
    command (``--url URL``, ``--password-env NAME`` or ``--password-file PATH``), so the hook
    does not depend on what Claude Code's environment happens to hold; without them it reads
    RECALL_URL and RECALL_LOGIN_PASSWORD / RECALL_PASSWORD_FILE. Other words are ignored: a
    hook must not fail on a typo (exit 2 would erase the prompt).
    """
    deadline = _process_start() + DEADLINE_S
    words = sys.argv[1:] if argv is None else argv
    options = {flag: value for flag, value in itertools.pairwise(words) if flag in OPTIONS}
    result: list[bytes] = []
    worker = threading.Thread(target=_work, args=(result, options), daemon=True)
    try:
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            _debug(f"not done {DEADLINE_S} s after the process started; adding nothing")
            _quit()
        if result:
            _write_stdout(result[0])
    except BaseException as exc:  # KeyboardInterrupt included: the prompt must go on untouched
        _debug(f"stopped: {type(exc).__name__}")
        _quit()


def _process_start() -> float:
    """When this process started, on the ``time.monotonic()`` clock.

    Field 22 of /proc/self/stat counts clock ticks (10 ms here) since boot to the fork, so the
    age is rounded up by up to a tick: the deadline errs early, never late.
    """
    try:
        with open("/proc/self/stat", "rb") as stat:
            # The command name in field 2 may hold spaces and ")": split after its last ")".
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # no /proc, no CLOCK_BOOTTIME
        age = START_UP_GUESS_S
    return time.monotonic() - min(max(age, 0.0), BUDGET_S)


def _quit() -> None:  # never returns; NoReturn would cost a `typing` import
    # os._exit skips interpreter shutdown, which could hang or fail on a daemon thread still
    # blocked in a read; nothing is buffered (stdout is written with os.write).
    os._exit(0)


def _work(result: list[bytes], options: dict[str, str]) -> None:
    try:
        result.append(_exchange(options))
    except _Skip as why:
        _debug(str(why))
    except BaseException as exc:
        # Only the type and errno text: str() of some errors quotes header values (the password).
        detail = f" ({exc.strerror})" if isinstance(exc, OSError) and exc.strerror else ""
        _debug(f"failed: {type(exc).__name__}{detail}")


def _exchange(options: dict[str, str]) -> bytes:
    """The hook's whole job; returns the bytes to print or raises."""
    body = _request_body(_read_payload())
    base = named_engine(options.get("--url"))
    return _hook_output(_post_json(base + "/recall", body, _password(options)))


def _read_payload() -> dict[str, object]:
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(0, _CHUNK):
        size += len(chunk)
        if size > HOOK_INPUT_BYTES:
            raise _Skip(f"hook input over {HOOK_INPUT_BYTES} bytes")
        chunks.append(chunk)
    try:
        payload = json.loads(b"".join(chunks))
    except ValueError:  # also UnicodeDecodeError
        raise _Skip("hook input is not JSON") from None
    if not isinstance(payload, dict):
        raise _Skip("hook input is not a JSON object")
    return payload


def _request_body(payload: dict[str, object]) -> bytes:
    """The part of Claude Code's hook input the engine uses, checked, and this machine's date;
    nothing else.

    ``cwd`` and ``transcript_path`` are the user's local paths: the engine has no use for them.
    """
    if payload.get("hook_event_name", HOOK_EVENT) != HOOK_EVENT:
        raise _Skip(f"hook input is not a {HOOK_EVENT} event")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise _Skip("no prompt in the hook input")
    body = {"hook_event_name": HOOK_EVENT, "prompt": prompt}
    session_id = payload.get("session_id")
    if isinstance(session_id, str) and 0 < len(session_id) <= SESSION_ID_CHARS:
        body["session_id"] = session_id
    if payload.get("agent_id"):  # fired inside a subagent or teammate: the engine skips it
        body["agent_id"] = "1"
    # This machine's date: "yesterday" in the prompt is the user's, and an engine in a UTC
    # container is a day ahead of an American evening.
    body["today"] = time.strftime("%Y-%m-%d")
    # UTF-8 as it came, not ASCII escapes: "ä" escaped is 6 bytes for its 2, and a long prompt
    # in another script outgrew the engine's cap. A lone surrogate (JSON may escape one, UTF-8
    # cannot hold it) becomes "?".
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")


def _password(options: dict[str, str]) -> str | None:
    """From the file or variable install-hook named; else RECALL_LOGIN_PASSWORD, then the file
    RECALL_PASSWORD_FILE names."""
    path = options.get("--password-file")
    password = None if path else os.environ.get(options.get("--password-env", PASSWORD_VAR))
    if not path and not password:
        path = os.environ.get("RECALL_PASSWORD_FILE")
    if path:
        source = "--password-file" if options.get("--password-file") else "RECALL_PASSWORD_FILE"
        try:
            with open(path, encoding="utf-8") as handle:
                password = handle.read(4096).strip()
        except (OSError, UnicodeDecodeError) as exc:  # the path is no secret; its text is
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
            raise _Skip(f"cannot read the password file {path} ({source}): {why}") from None
    if password and ("\r" in password or "\n" in password):
        raise _Skip("password contains a line break")  # it would split the request's headers
    return password or None


def _hook_output(answer: bytes) -> bytes:
    """The engine's hook JSON, re-encoded, if it is exactly a UserPromptSubmit context answer.

    Anything else is refused, not passed on: other hook fields could block the prompt
    (``"decision": "block"``) or stop the session (``"continue": false``).
    """
    if not answer.strip():
        raise _Skip("engine has nothing to add")
    try:
        data = json.loads(answer)
    except ValueError:
        raise _Skip("engine answer is not JSON") from None
    specific = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or list(data) != ["hookSpecificOutput"]
        or not isinstance(specific, dict)
        or sorted(specific) != ["additionalContext", "hookEventName"]
        or specific["hookEventName"] != HOOK_EVENT
        or not isinstance(specific["additionalContext"], str)
    ):
        raise _Skip(f"engine answer is not {HOOK_EVENT} hook JSON")
    if not specific["additionalContext"].strip():
        raise _Skip("engine has nothing to add")
    return json.dumps(data).encode() + b"\n"


def _post_json(url: str, body: bytes, password: str | None) -> bytes:
    """POST body to url; return the body of a 200 answer, raise on anything else."""
    if not is_http_url(url):
        raise _Skip("the engine's URL (--url or RECALL_URL) is not an http(s) URL")
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port
    # Imported here, in the worker, so bad input never pays its ~25 ms and a stuck import
    # cannot outlast the deadline.
    import http.client

    # http.client has no HTTPSConnection in a Python built without ssl: an error, caught like any.
    https = parts.scheme == "https"
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    # No socket timeout: the main thread's deadline is the one clock. A timeout racing it would
    # give one event two reasons, and one per read would not bound an answer sent byte by byte.
    conn = kind(host, port)
    headers = {
        "User-Agent": "trilium-recall-hook",
        "Content-Type": "application/json",
        "Connection": "close",
    }
    if password:
        headers["Authorization"] = f"Bearer {password}"
    try:
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            conn.request("POST", target, body, headers)
            response = conn.getresponse()
        except OSError as exc:  # refused, unreachable, no such host: say where it looked
            shown = f"[{host}]" if ":" in host else host
            where = f"{parts.scheme}://{shown}:{port or (443 if https else 80)}"
            why = exc.strerror or type(exc).__name__
            raise _Skip(f"no engine answers at {where} (--url or RECALL_URL): {why}") from None
        if response.status != 200:
            reason = f": {_reason(response)}" if _debugging() else ""  # only read to be shown
            raise _Skip(f"engine answered HTTP {response.status}{reason}")
        answer = response.read(MAX_ANSWER_BYTES + 1)  # chunked, Content-Length or until close
        if len(answer) > MAX_ANSWER_BYTES:
            raise _Skip("engine answer too large")
        if response.length:  # bytes still owed by the Content-Length: the engine hung up early
            raise _Skip("engine closed the connection mid-answer")
        return answer
    finally:
        conn.close()


def _reason(response: object) -> str:
    """The engine's JSON reason for a refusal (shown in debug mode only)."""
    try:
        reason = json.loads(response.read(4096)).get("error")  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        reason = None
    return reason if isinstance(reason, str) else "no reason given"


def _write_stdout(data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(1, view) :]
    except OSError as exc:  # BrokenPipeError when Claude Code stopped listening
        _debug(f"could not write the answer: {type(exc).__name__}")


def _debugging() -> bool:
    return os.environ.get("RECALL_HOOK_DEBUG") == "1" and sys.stderr is not None


def _debug(message: str) -> None:
    if not _debugging():
        return
    try:
        sys.stderr.write(f"trilium-recall-hook: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
