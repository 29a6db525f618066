"""Claude Code UserPromptSubmit hook: ask the engine for passages and add them to the context.

Claude Code runs this once per prompt, so two things matter more than elegance:

- It must never get in the way. Whatever goes wrong (no config, engine down or slow, 401, garbage,
  bad stdin, Ctrl-C, a closed stdout) it prints nothing and exits 0: exit 2 would erase the user's
  prompt, and any stdout of an exit-0 hook is injected into the model's context, so diagnostics go
  to stderr and only with ``RECALL_HOOK_DEBUG=1``.
- It must start fast. Stdlib only, and a small HTTP/1.1 client on a raw socket instead of
  ``http.client``, whose email-package imports cost ~25 ms per prompt here (measured: 60 ms vs
  35 ms for the imports alone, against 16 ms for ``python -c pass``).

The whole exchange (stdin, connect, send, read) has 1.5 s. Every socket step gets a timeout equal
to the time left, and the work runs in a daemon thread the main thread stops waiting for at the
deadline, which also bounds what timeouts cannot: DNS look-ups and a stdin that never closes.
"""

from __future__ import annotations

import json
import os
import socket
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
_CHUNK = 65536


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
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    if any(ch.isspace() or ord(ch) < 32 for ch in target):
        raise _Skip("RECALL_URL path has spaces or control characters")
    headers = [
        f"POST {target} HTTP/1.1",
        f"Host: {parts.netloc.rpartition('@')[2]}",
        "User-Agent: trilium-recall-hook",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if password:
        headers.append(f"Authorization: Bearer {password}")
    request = ("\r\n".join(headers) + "\r\n\r\n").encode() + body
    sock = socket.create_connection((parts.hostname, port), timeout=_remaining(deadline))
    try:
        if parts.scheme == "https":
            import ssl  # only here: costs start-up time nobody on plain http should pay

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
        sock.settimeout(_remaining(deadline))
        sock.sendall(request)
        return _read_answer(sock, deadline)
    finally:
        sock.close()


def _read_answer(sock: socket.socket, deadline: float) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = _recv(sock, deadline)
        if not chunk or len(data) > _CHUNK:
            raise _Skip("engine closed the connection or sent no HTTP header")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, headers = _parse_head(head)
    if status != 200:
        raise _Skip(f"engine answered HTTP {status}")
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    length = None if chunked else int(headers.get("content-length", "-1"))
    while True:
        if chunked and (decoded := _dechunk(body)) is not None:
            return decoded
        if length is not None and 0 <= length <= len(body):
            return body[:length]
        chunk = _recv(sock, deadline)
        if not chunk:
            if chunked or (length is not None and length >= 0):
                raise _Skip("engine closed the connection mid-answer")
            return body  # no length given: the body ends when the connection does
        body += chunk
        if len(body) > MAX_ANSWER_BYTES:
            raise _Skip("engine answer too large")


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    status_line, *lines = head.decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not version.startswith("HTTP/"):
        raise _Skip("engine answer is not HTTP")
    status = int(rest[:3])
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _dechunk(body: bytes) -> bytes | None:
    """Decode a chunked body, or None while it is still incomplete."""
    out: list[bytes] = []
    pos = 0
    while (eol := body.find(b"\r\n", pos)) >= 0:
        size = int(body[pos:eol].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        start = eol + 2
        if len(body) < start + size + 2:
            return None
        out.append(body[start : start + size])
        pos = start + size + 2
    return None


def _recv(sock: socket.socket, deadline: float) -> bytes:
    sock.settimeout(_remaining(deadline))
    return sock.recv(_CHUNK)


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
