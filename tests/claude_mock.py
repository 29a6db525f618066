"""Local stand-ins for the hook tests, all on 127.0.0.1: a stub /recall engine, a mock of the
Anthropic Messages API that records what Claude Code sends, and the pinned Claude Code CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# 2.1.197 is the newest release whose engines field accepts the machine's Node 20 (TESTING.md).
CLAUDE_CODE_VERSION = "2.1.197"
CACHE_ROOT = Path.home() / ".cache" / "trilium-recall-tests"
STUB_CONTEXT = (
    "Relevant notes from Trilium:\n"
    "## Home lab › Backups › Offsite (http://trilium.test/#root/n1)\n"
    "Rotate the two USB disks every Friday; the spare lives at the office."
)
MODEL_REPLY = "Noted."


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Run handler on a free 127.0.0.1 port in a thread; yield the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll interval: shutdown() waits up to one interval (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass
class StubEngine:
    """POST /recall as DESIGN.md specifies it, with one canned passage for prompts about backups.

    Answers in Claude Code's own hook format when the body is a hook payload (http hook).
    """

    password: str = "stub-password-1"
    requests: list[tuple[dict[str, str], Any]] = field(default_factory=list)
    url: str = ""

    @contextmanager
    def running(self) -> Iterator[StubEngine]:
        with serve(self._handler()) as self.url:
            yield self

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        context = STUB_CONTEXT if "backup" in str(body.get("prompt", "")).lower() else ""
        if "hook_event_name" in body:
            if not context:
                return 200, b""
            output = {"hookEventName": "UserPromptSubmit", "additionalContext": context}
            return 200, json.dumps({"hookSpecificOutput": output}).encode()
        passages = [{"note_id": "n1", "title": "Offsite", "text": "Rotate…"}] if context else []
        skipped = None if context else "no match"
        answer = {"passages": passages, "context": context, "skipped": skipped, "took_ms": 1.0}
        return 200, json.dumps(answer).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        engine = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = self._read_json()
                engine.requests.append((dict(self.headers.items()), body))
                if self.path != "/recall":
                    self._send(404, b'{"error": "not found"}')
                elif self.headers.get("Authorization") != f"Bearer {engine.password}":
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", "Bearer")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif not isinstance(body, dict) or not isinstance(body.get("prompt"), str):
                    self._send(400, b'{"error": "prompt must be a string"}')
                else:
                    self._send(*engine.answer(body))

        return Handler


@dataclass
class MessagesMock:
    """POST /v1/messages answered with a one-block assistant turn; everything else 200 {}.

    Each entry of `tool_calls` (name, input) answers one main-conversation request with a
    tool_use block instead, in order; then every answer is the text MODEL_REPLY.
    """

    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    @contextmanager
    def running(self) -> Iterator[MessagesMock]:
        with serve(self._handler()) as self.url:
            yield self

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The next content block: a pending tool call if the request offers that tool."""
        offered = {tool.get("name") for tool in body.get("tools") or []}
        if self.tool_calls and self.tool_calls[0][0] in offered:
            name, arguments = self.tool_calls.pop(0)
            return {"type": "tool_use", "id": f"toolu_mock_{len(self.requests)}", "name": name,
                    "input": arguments}  # fmt: skip
        return {"type": "text", "text": MODEL_REPLY}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = self._read_json()
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._send(200, b"{}")
                    return
                mock.requests.append(body)
                model = str(body.get("model", "claude-mock"))
                block = mock.reply(body)
                if body.get("stream"):
                    self._send(200, sse_turn(model, block), "text/event-stream")
                else:
                    self._send(200, json.dumps(message(model, block)).encode())

            def do_GET(self) -> None:
                self._send(200, b"{}")

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler


def message(model: str, block: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


def sse_turn(model: str, block: dict[str, Any]) -> bytes:
    whole = message(model, block)
    start = {**whole, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": 10, "output_tokens": 1}
    if block["type"] == "tool_use":
        opening = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        opening = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    events = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": opening}),
        ("content_block_delta", {"index": 0, "delta": delta}),
        ("content_block_stop", {"index": 0}),
        (
            "message_delta",
            {
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
        ),
        ("message_stop", {}),
    ]
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    )


def install_claude_code(version: str = CLAUDE_CODE_VERSION, cache_root: Path = CACHE_ROOT) -> Path:
    """Install the pinned CLI with npm into the cache (once); return the `claude` executable."""
    target = cache_root / f"claude-code-{version}"
    claude = target / "node_modules" / ".bin" / "claude"
    if claude.exists():
        return claude
    staging = cache_root / f".claude-code-{version}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(staging),
         f"@anthropic-ai/claude-code@{version}"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    # Renamed into place only once complete, so a killed install is never taken for a cache hit.
    staging.rename(target)
    return claude
