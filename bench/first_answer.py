"""Issue 26: how soon a first build answers. The real `trilium-recall serve` (real model) starts
on an empty data directory against the stand-in holding the real exports and the built-in demo
notebook (the notes the corpus prompts are about: the exports answer none of them); the
benchmark polls /recall with those prompts in turn and /health, and prints when the first
non-empty (partial) answer came, when the build finished, and how many of the prompts the
finished index answers.

With `--synthetic 50000` the stand-in holds only a synthetic notebook of that many sections
(synth_notebook.py: the eval corpora's text), the prompts are the eval corpora's, and the
engine is stopped at the first non-empty answer: the whole build with the real model would take
hours. `--src DIR` runs another source tree's engine (PYTHONPATH).

    python bench/first_answer.py [export.zip …]
    python bench/first_answer.py --synthetic 50000 [--src /path/to/other/src]"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from corpus import EXPORTS, PROMPTS, eval_prompts, export_trilium
from synth_notebook import write_notebook

from trilium_recall.demo.mode import NOTEBOOK_DIR

TOKEN = "firstAnswer_bench"
DEADLINE_S = 1800
PROGRESS_S = 30  # a progress line at least this often


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main(exports: tuple[Path, ...], synthetic: int, src: Path | None, log: Path | None) -> None:
    with tempfile.TemporaryDirectory() as work:
        if synthetic:
            started = time.monotonic()
            notes = write_notebook(Path(work) / "notebook", synthetic, 26)
            print(
                f"synthetic notebook: {notes} notes, {synthetic} sections, written in "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
            fake = export_trilium(TOKEN, ())
            fake.load_notebook_dir(Path(work) / "notebook")
        else:
            fake = export_trilium(TOKEN, exports)
            fake.load_notebook_dir(NOTEBOOK_DIR)
        try:
            serve(
                Path(work),
                fake.url(),
                src,
                eval_prompts() if synthetic else PROMPTS,
                bool(synthetic),
                log,
            )
        finally:
            fake.stop()


def serve(
    work: Path,
    trilium: str,
    src: Path | None,
    prompts: tuple[str, ...],
    first_only: bool,
    log: Path | None = None,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = work / "data"
    data.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "TRILIUM_"))}
    env |= {
        "RECALL_DATA_DIR": str(data),
        "RECALL_PORT": str(port),
        "TRILIUM_URL": trilium,
        "TRILIUM_ETAPI_TOKEN": TOKEN,
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    started = time.monotonic()
    with open(log or os.devnull, "wb") as output:
        engine = subprocess.Popen(
            [sys.executable, "-m", "trilium_recall.cli", "serve"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            watch(url, started, prompts, first_only)
        finally:
            engine.terminate()
            engine.wait(30)


def watch(url: str, started: float, prompts: tuple[str, ...], first_only: bool) -> None:
    first: float | None = None
    asked = 0
    shown = (None, None, -PROGRESS_S)  # status, notes done, when: a line on a change of status
    with httpx.Client(timeout=120) as http:
        while time.monotonic() - started < DEADLINE_S:
            try:
                health = http.get(f"{url}/health").json()
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            at = time.monotonic() - started
            if health["status"] != shown[0] or at - shown[2] >= PROGRESS_S:
                shown = (health["status"], health.get("notes_done"), at)
                print(
                    f"  {at:6.1f} s: {health['status']}, {health.get('notes_done')}/"
                    f"{health.get('notes_total')} notes, {asked} prompts asked",
                    flush=True,
                )
            if health["status"] == "ok":
                print(f"build complete at {at:.1f} s ({asked} prompts asked)", flush=True)
                answered = sum(
                    bool(http.post(f"{url}/recall", json={"prompt": p}).json()["passages"])
                    for p in prompts
                )
                print(f"the built index answers {answered} of {len(prompts)} prompts", flush=True)
                return
            if first is None and health["status"] == "building":
                prompt = prompts[asked % len(prompts)]
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
                    if first_only:
                        return
            time.sleep(0.5)
    print(f"no complete build within {DEADLINE_S} s", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", nargs="*", type=Path, help="export zips (default: the real two)")
    parser.add_argument("--synthetic", type=int, default=0, help="sections of a synthetic notebook")
    parser.add_argument("--src", type=Path, help="another source tree (holding trilium_recall/)")
    parser.add_argument("--log", type=Path, help="write the engine's output to this file")
    args = parser.parse_args()
    main(tuple(args.exports) or EXPORTS, args.synthetic, args.src, args.log)
