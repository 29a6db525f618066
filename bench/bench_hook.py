"""Wall time of the prompt hook as Claude Code sees it: process start → exit.

    python bench/bench_hook.py [--runs 40] [--url URL]

Measured in the same run, so the numbers compare: the interpreter's own start-up
(`python -c pass`), importing the hook module, and the hook itself with an instant local engine
(context / no context), with the engine down (port closed) and, with --url, against a real engine
(password from RECALL_LOGIN_PASSWORD). Overhead = hook wall time − the engine's own took_ms.
Wall times follow the machine's load; the cpu column (the child's user + system time) less so.
Goal (issue 5): ≤ 120 ms beyond the engine's answer time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PYTHON = sys.executable
HOOK_SCRIPT = str(Path(PYTHON).parent / "trilium-recall-hook")
PROMPT = "Where is the offsite backup disk?"
IMPORT = "import trilium_recall.hook"
CONTEXT = "Relevant notes from Trilium:\n## Backups › Offsite\nRotate the USB disks on Fridays."


class _InstantEngine(BaseHTTPRequestHandler):
    """Answers /recall at once; the context is empty when the server's `empty` flag is set."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        empty = getattr(self.server, "empty", False)
        answer = {
            "passages": [] if empty else [{"note_id": "n1"}],
            "context": "" if empty else CONTEXT,
            "skipped": "no match" if empty else None,
            "took_ms": 0.0,
        }
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def instant_engine(empty: bool) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _InstantEngine)
    server.empty = empty  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def hook_env(url: str, password: str | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("RECALL_")}
    env["RECALL_URL"] = url
    if password:
        env["RECALL_LOGIN_PASSWORD"] = password
    return env


def hook_input(session_id: str) -> bytes:
    # A fresh session per run: a real engine sends a note only once per session.
    hook_input = {
        "session_id": session_id,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "prompt_id": "p",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }
    return json.dumps(hook_input).encode()


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str]
    expect_output: bool | None  # None: do not check (a real engine may have nothing to add)
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def run_once(self) -> None:
        """Time one run, from spawning the process to its exit, in milliseconds.

        Also its CPU time (user + system): on a busy machine wall times swing with the load,
        CPU time much less, so it shows what the hook's own code and imports cost.
        """
        stdin = hook_input(f"bench-{time.time_ns()}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(self.argv, input=stdin, capture_output=True, env=self.env, timeout=10)
        self.times.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.cpu.append(used * 1000)
        wrong = self.expect_output is not None and bool(proc.stdout) != self.expect_output
        if proc.returncode != 0 or wrong:
            raise SystemExit(f"unexpected result from {self.name}: rc={proc.returncode}")


def engine_took_ms(url: str, password: str | None) -> float:
    """The real engine's own answer time for the bench prompt (median of 5)."""
    import urllib.request

    headers = {"Content-Type": "application/json"}
    if password:
        headers["Authorization"] = f"Bearer {password}"
    took = []
    for i in range(5):
        body = json.dumps({"prompt": PROMPT, "session_id": f"bench-took-{time.time_ns()}-{i}"})
        request = urllib.request.Request(f"{url}/recall", data=body.encode(), headers=headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            took.append(float(json.load(response)["took_ms"]))
    return statistics.median(took)


def report(case: Case, baseline: float | None = None) -> None:
    ordered = sorted(case.times)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    median = statistics.median(ordered)
    extra = f"  (+{median - baseline:5.1f} over python -c pass)" if baseline is not None else ""
    cpu = statistics.median(case.cpu)
    print(
        f"{case.name:44s} median {median:6.1f}  p90 {p90:6.1f}  min {ordered[0]:6.1f}"
        f"  cpu {cpu:5.1f} ms{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--url", help="a running engine to time the hook against")
    args = parser.parse_args()
    down = hook_env(closed_port_url())
    module = [PYTHON, "-m", "trilium_recall.hook"]
    print(f"python {sys.version.split()[0]} at {PYTHON}; {args.runs} runs each; wall times in ms")
    with instant_engine(empty=False) as full, instant_engine(empty=True) as empty:
        cases = [
            Case("python -c pass (baseline)", [PYTHON, "-c", "pass"], down, False),
            Case("python -c 'import trilium_recall.hook'", [PYTHON, "-c", IMPORT], down, False),
            Case("hook -m, engine down", module, down, False),
            Case("hook script, engine down", [HOOK_SCRIPT], down, False),
            Case("hook -m, instant engine, context", module, hook_env(full), True),
            Case("hook script, instant engine, context", [HOOK_SCRIPT], hook_env(full), True),
            Case("hook script, instant engine, no context", [HOOK_SCRIPT], hook_env(empty), False),
        ]
        if args.url:
            password = os.environ.get("RECALL_LOGIN_PASSWORD")
            env = hook_env(args.url, password)
            cases.append(Case(f"hook script, engine at {args.url}", [HOOK_SCRIPT], env, None))
        # Round-robin, so a busy machine slows every case alike instead of a few of them.
        for _ in range(args.runs):
            for case in cases:
                case.run_once()
    baseline = statistics.median(cases[0].times)
    report(cases[0])
    for case in cases[1:]:
        report(case, baseline)
    if args.url:
        took = engine_took_ms(args.url, password)
        overhead = statistics.median(cases[-1].times) - took
        print(f"engine took_ms median {took:.1f}; hook overhead beyond it ≈ {overhead:.1f} ms")


if __name__ == "__main__":
    main()
