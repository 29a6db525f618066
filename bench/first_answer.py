"""Issue 26: how soon a first build answers. The real `trilium-recall serve` (real model) starts
on an empty data directory against the stand-in holding the real exports and the built-in demo
notebook (the notes the corpus prompts are about: the exports answer none of them); the
benchmark polls /recall with those prompts in turn and /health, and prints when the first
non-empty (partial) answer came, when the build finished, and how many of the prompts the
finished index answers.
`python bench/first_answer.py [export.zip …]`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from corpus import EXPORTS, PROMPTS, export_trilium

from trilium_recall.demo.mode import NOTEBOOK_DIR

TOKEN = "firstAnswer_bench"
DEADLINE_S = 1800


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main(exports: tuple[Path, ...]) -> None:
    fake = export_trilium(TOKEN, exports)
    fake.load_notebook_dir(NOTEBOOK_DIR)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "TRILIUM_"))}
        env |= {
            "RECALL_DATA_DIR": data,
            "RECALL_PORT": str(port),
            "TRILIUM_URL": fake.url(),
            "TRILIUM_ETAPI_TOKEN": TOKEN,
        }
        started = time.monotonic()
        engine = subprocess.Popen(
            [sys.executable, "-m", "trilium_recall.cli", "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            watch(url, started)
        finally:
            engine.terminate()
            engine.wait(30)
            fake.stop()


def watch(url: str, started: float) -> None:
    first: float | None = None
    asked = 0
    with httpx.Client(timeout=120) as http:
        while time.monotonic() - started < DEADLINE_S:
            try:
                health = http.get(f"{url}/health").json()
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            at = time.monotonic() - started
            if health["status"] == "ok":
                print(f"build complete at {at:.1f} s ({asked} prompts asked)", flush=True)
                answered = sum(
                    bool(http.post(f"{url}/recall", json={"prompt": p}).json()["passages"])
                    for p in PROMPTS
                )
                print(f"the built index answers {answered} of {len(PROMPTS)} prompts", flush=True)
                return
            if first is None and health["status"] == "building":
                prompt = PROMPTS[asked % len(PROMPTS)]
                asked += 1
                answer = http.post(f"{url}/recall", json={"prompt": prompt})
                if answer.status_code == 200 and answer.json()["passages"]:
                    first = time.monotonic() - started
                    done, total = health.get("notes_done"), health.get("notes_total")
                    print(f"first non-empty answer at {first:.1f} s: {prompt!r}", flush=True)
                    print(
                        f"  /health then: {done}/{total} notes, eta {health.get('eta_seconds')} s",
                        flush=True,
                    )
            time.sleep(0.5)
    print(f"no complete build within {DEADLINE_S} s", flush=True)


if __name__ == "__main__":
    main(tuple(Path(a) for a in sys.argv[1:]) or EXPORTS)
