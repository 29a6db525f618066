"""Claude Code UserPromptSubmit hook: ask the engine for passages and add them to the context.

Claude Code runs this once per prompt, so two things matter more than elegance:

- It must never get in the way. Whatever goes wrong (no config, engine down or slow, 401, garbage,
  bad stdin, Ctrl-C, a closed stdout) it prints nothing and exits 0: exit 2 would erase the user's
  prompt, and any stdout of an exit-0 hook is injected into the model's context, so diagnostics go
  to stderr and only with ``RECALL_HOOK_DEBUG=1``.
- It must start fast: stdlib only. ``http.client`` speaks HTTP; its imports (email, ssl) cost
  ~25 ms per prompt here over a hand-written socket client (bench/bench_hook.py), well inside the
  120 ms the hook may add to the engine's own answer time, and a protocol is not ours to keep.

The whole exchange (stdin, connect, send, read) has 1.5 s. The connection's timeout is the time
left, and the work runs in a daemon thread the main thread stops waiting for at the deadline, which
also bounds what socket timeouts cannot: DNS look-ups, an answer dripping in byte by byte, and a
stdin that never closes.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from urllib.parse import urlsplit

BUDGET_S = 1.5
DEFAULT_URL = "http://127.0.0.1:8765"
# A real prompt is far below this; the engine reads only its first ~2,000 characters anyway.
MAX_STDIN_BYTES = 1_000_000
# Three passages and their context are a few kB; anything near this is not our engine talking.
MAX_ANSWER_BYTES = 4_000_000
_CHUNK = 65536  # stdin read size


class _Skip(Exception):
    """Nothing to add; the reason is shown on stderr in debug mode only."""


def main() -> None:
    """Run the hook: read the prompt from stdin, print hook JSON if the engine has context."""
    deadline = time.monotonic() + BUDGET_S
    result: list[bytes] = []
    worker = threading.Thread(target=_work, args=(deadline, result), daemon=True)
    try:
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            _debug(f"no answer within {BUDGET_S} s; adding nothing")
            _quit()
        if result:
            _write_stdout(result[0])
    except BaseException:  # KeyboardInterrupt included: the prompt must go on untouched
        _quit()


def _quit() -> None:  # never returns; NoReturn would cost a `typing` import
    # os._exit skips interpreter shutdown, which could hang or fail on a daemon thread still
    # blocked in a read; nothing is buffered (stdout is written with os.write).
    os._exit(0)


def _work(deadline: float, result: list[bytes]) -> None:
    try:
        result.append(_exchange(deadline))
    except _Skip as why:
        _debug(str(why))
    except BaseException as exc:
        # Only the type and errno text: str() of some errors quotes header values (the password).
        detail = f" ({exc.strerror})" if isinstance(exc, OSError) and exc.strerror else ""
        _debug(f"failed: {type(exc).__name__}{detail}")


def _exchange(deadline: float) -> bytes:
    """The hook's whole job; returns the bytes to print or raises."""
    payload = _read_payload()
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise _Skip("no prompt in the hook input")
    body: dict[str, str] = {"prompt": prompt}
    session_id = payload.get("session_id")
    if isinstance(session_id, str) and session_id:
        body["session_id"] = session_id
    url = (os.environ.get("RECALL_URL") or DEFAULT_URL).rstrip("/") + "/recall"
    answer = _post_json(url, json.dumps(body).encode(), _password(), deadline)
    context = _context(answer)
    output = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}
    }
    return json.dumps(output).encode() + b"\n"


def _read_payload() -> dict[str, object]:
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(0, _CHUNK):
        size += len(chunk)
        if size > MAX_STDIN_BYTES:
            raise _Skip(f"hook input over {MAX_STDIN_BYTES} bytes")
        chunks.append(chunk)
    try:
        payload = json.loads(b"".join(chunks))
    except ValueError:  # also UnicodeDecodeError
        raise _Skip("hook input is not JSON") from None
    if not isinstance(payload, dict):
        raise _Skip("hook input is not a JSON object")
    return payload


def _password() -> str | None:
    password = os.environ.get("RECALL_LOGIN_PASSWORD")
    if not password and (path := os.environ.get("RECALL_PASSWORD_FILE")):
        with open(path, encoding="utf-8") as handle:
            password = handle.read(4096).strip()
    if password and ("\r" in password or "\n" in password):
        raise _Skip("password contains a line break")  # it would split the request's headers
    return password or None


def _context(answer: bytes) -> str:
    try:
        data = json.loads(answer)
    except ValueError:
        raise _Skip("engine answer is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("passages"), list):
        raise _Skip("engine answer has the wrong shape")
    context = data.get("context")
    if not isinstance(context, str):
        raise _Skip("engine answer has no context text")
    if not context.strip():
        skipped = data.get("skipped")
        raise _Skip(f"nothing to add ({skipped})" if isinstance(skipped, str) else "nothing to add")
    return context


def _post_json(url: str, body: bytes, password: str | None, deadline: float) -> bytes:
    """POST body to url; return the body of a 200 answer, raise on anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Skip("RECALL_URL is not an http(s) URL")
    # Imported here, in the worker, so its ~25 ms count against the deadline (the hook is done
    # 1.5 s after main() starts, not 1.5 s plus imports) and bad input never pays for them.
    import http.client

    # http.client has no HTTPSConnection in a Python built without ssl: an error, caught like any.
    https = parts.scheme == "https"
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    # The timeout covers the connect and then each read; the deadline thread bounds the total.
    conn = kind(parts.hostname, parts.port, timeout=_remaining(deadline))
    headers = {
        "User-Agent": "trilium-recall-hook",
        "Content-Type": "application/json",
        "Connection": "close",
    }
    if password:
        headers["Authorization"] = f"Bearer {password}"
    try:
        conn.request("POST", parts.path + (f"?{parts.query}" if parts.query else ""), body, headers)
        if conn.sock is not None:
            conn.sock.settimeout(_remaining(deadline))
        response = conn.getresponse()
        if response.status != 200:
            raise _Skip(f"engine answered HTTP {response.status}")
        answer = response.read(MAX_ANSWER_BYTES + 1)  # chunked, Content-Length or until close
        if len(answer) > MAX_ANSWER_BYTES:
            raise _Skip("engine answer too large")
        if response.length:  # bytes still owed by the Content-Length: the engine hung up early
            raise _Skip("engine closed the connection mid-answer")
        return answer
    finally:
        conn.close()


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Skip(f"no answer within {BUDGET_S} s")
    return left


def _write_stdout(data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(1, view) :]
    except OSError as exc:  # BrokenPipeError when Claude Code stopped listening
        _debug(f"could not write the answer: {type(exc).__name__}")


def _debug(message: str) -> None:
    if os.environ.get("RECALL_HOOK_DEBUG") != "1" or sys.stderr is None:
        return
    try:
        sys.stderr.write(f"trilium-recall-hook: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
