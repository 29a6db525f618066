"""What the activity log costs: in-process (queueing an entry, writing and pruning), and /recall
over HTTP on the real engine with the log on and off.

    python bench/bench_activity.py [--requests 120] [--rounds 2] [--keep DIR]

1. `ActivityLog.record()` as the request path calls it (entry built and queued; the writer
   thread running meanwhile), and the writer: rows per second into a table already at its
   bound of 10,000 rows, so every batch also prunes.
2. The real `trilium-recall serve` over the demo notebook (fake Trilium on 127.0.0.1), the
   same prompts sequentially against it with the log on and with RECALL_ACTIVITY_MAX_ROWS=0,
   alternating on/off `--rounds` times so drift in the machine's load falls on both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from engine_bench import percentile

from engine_process import EngineProcess
from trilium_recall.config import load_settings
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.index.store import Store
from trilium_recall.search.answers import Passage, RecallResult
from trilium_recall.server.activity import ActivityLog

PASSWORD = "bench-password-not-secret"
PROMPTS = [
    "how do i restore my restic backup",
    "write a regex that matches ISO 8601 dates with optional milliseconds",
    "which port does wireguard listen on",
    "what is the capital of Australia",
    "why did we move background jobs from celery to dramatiq",
    "rename this variable to snake_case",
]


def in_process(calls: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"RECALL_DATA_DIR": tmp})
        Store(settings.db_path).close()
        passages = [
            Passage("default", f"note{i:08d}", f"Title {i}", "Path", "wiki", "h", "t", 0.3, "")
            for i in range(3)
        ]
        result = RecallResult("sent", passages, took_ms=42.0)
        log = ActivityLog(settings)
        log.record("api", "warm-up", result)
        log.flush()
        fill_started = time.perf_counter()
        for i in range(10_000):  # to the bound: from here on every batch prunes
            log.record("api", f"filling {i}", result)
            if i % 500 == 499:
                log.flush(60)  # the queue holds 1,000: a burst beyond it is dropped, counted
        fill_s = time.perf_counter() - fill_started
        costs = []
        for i in range(calls):
            started = time.perf_counter_ns()
            log.record(
                "hook", f"how do I restore my restic backup, take {i}?", result, session_id="s"
            )
            costs.append((time.perf_counter_ns() - started) / 1000)
            if i % 100 == 99:
                log.flush(60)  # keep the queue from filling: a real request rate is far lower
        flushed = time.perf_counter()
        log.flush(60)
        tail_ms = (time.perf_counter() - flushed) * 1000
        log.close()
        store = Store(settings.db_path)
        rows = store.db.execute("SELECT count(*) FROM activity").fetchone()[0]
        store.close()
    if rows != 10_000 or log.dropped:  # a figure over entries that were never written is none
        raise SystemExit(f"bench_activity: {rows} rows kept, {log.dropped} dropped: see the log")
    return [
        "| measure | value |",
        "|---|---|",
        f"| record() per call, p50 / p99 / max | {statistics.median(costs):.1f} / "
        f"{percentile(costs, 99):.1f} / {max(costs):.1f} µs ({calls} calls) |",
        f"| 10,000 entries recorded and written | {fill_s * 1000:.0f} ms "
        f"({10_000 / fill_s:,.0f} rows/s; the writer's batches are up to 200) |",
        f"| last flush after the timed calls | {tail_ms:.1f} ms |",
        f"| rows kept (bound 10,000) | {rows:,} |",
        f"| entries dropped | {log.dropped} |",
    ]


def serve(data_dir: Path, trilium: FakeTrilium, log_on: bool) -> EngineProcess:
    env = {
        "TRILIUM_URL": trilium.url(),
        "TRILIUM_ETAPI_TOKEN": "bench_token",
        "RECALL_LOGIN_PASSWORD": PASSWORD,
        "RECALL_ACTIVITY_MAX_ROWS": "10000" if log_on else "0",
    }
    engine = EngineProcess(data_dir, env).start()
    engine.wait_for("ok")
    return engine


def latencies(url: str, requests: int) -> tuple[list[float], list[float]]:
    wall, took = [], []
    headers = {"Authorization": f"Bearer {PASSWORD}"}
    with httpx.Client(timeout=10, headers=headers) as http:
        for prompt in PROMPTS:  # warm-up
            http.post(f"{url}/recall", json={"prompt": prompt})
        for i in range(requests):
            body = {"prompt": PROMPTS[i % len(PROMPTS)], "session_id": f"bench-{i}"}
            started = time.perf_counter()
            answer = http.post(f"{url}/recall", json=body).json()
            wall.append((time.perf_counter() - started) * 1000)
            took.append(float(answer["took_ms"]))
    return wall, took


def over_http(data_dir: Path, requests: int, rounds: int) -> list[str]:
    trilium = FakeTrilium(token="bench_token")
    trilium.load_notebook_dir(NOTEBOOK_DIR)
    samples: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    with trilium:
        for _ in range(rounds):
            for log_on in (True, False):
                engine = serve(data_dir, trilium, log_on)
                try:
                    wall, took = latencies(engine.url, requests)
                finally:
                    engine.stop()
                samples[log_on][0].extend(wall)
                samples[log_on][1].extend(took)
    store = Store(data_dir / "recall.sqlite3")
    logged = store.db.execute("SELECT count(*) FROM activity").fetchone()[0]
    store.close()
    lines = [
        "| log | requests | wall p50 / p95 (ms) | took_ms p50 / p95 | wall − took p50 |",
        "|---|---|---|---|---|",
    ]
    for log_on in (True, False):
        wall, took = samples[log_on]
        overhead = statistics.median(w - t for w, t in zip(wall, took, strict=True))
        lines.append(
            f"| {'on' if log_on else 'off (RECALL_ACTIVITY_MAX_ROWS=0)'} | {len(wall)} | "
            f"{statistics.median(wall):.1f} / {percentile(wall, 95):.1f} | "
            f"{statistics.median(took):.1f} / {percentile(took, 95):.1f} | {overhead:.1f} |"
        )
    lines.append(f"\nRows the log holds after the runs: {logged:,}.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=120, help="per engine run")
    parser.add_argument("--rounds", type=int, default=2, help="on/off pairs")
    parser.add_argument("--calls", type=int, default=5000, help="timed record() calls")
    parser.add_argument("--keep", type=Path, help="index directory to use and keep")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    print("\n".join(in_process(args.calls)) + "\n")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        print("\n".join(over_http(args.keep, args.requests, args.rounds)))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            print("\n".join(over_http(Path(tmp), args.requests, args.rounds)))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
