"""What a bench run measures (full or quick) and issue 12's targets."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from corpus import EXPORTS

# Issue 12, "Fast at every edge".
TARGET_RESTART_RATIO = 1.5
TARGET_EMBED_RATIO = 1.15
TARGET_DEMO_P50_MS = 22
TARGET_DEMO_P99_MS = 45
TARGET_50K_P99_MS = 80
TARGET_4_CLIENTS_P99_MS = 150
TARGET_BUILD_RATIO = 1.1
TARGET_P50_GROWTH_MS = 5  # issue 11, against 15ec4b2
EXPORT_TOKEN = "benchExportToken"


@dataclass(frozen=True)
class Plan:
    packed: int  # ~250-token passages for the raw embedder rate
    queries: int  # query embeddings timed
    repeats: int  # engine restarts, full comparisons, ticks
    after_restart: int  # /recall requests after the first one of a restart
    sequential: int  # /recall requests, one at a time
    embed_rounds: int  # alternating rounds of raw vs in-engine query embedding
    loop_s: float  # closed loop per number of clients, demo index
    synthetic_loop_s: float  # closed loop of 4 clients on each synthetic index
    old_rounds: int  # alternating rounds against the old and the new engine
    old_requests: int
    stage_rounds: int  # passes over the prompts for the in-process stage breakdown
    hook_runs: int
    hook_silent_runs: int  # each ~1.4 s: the hook waits out its deadline
    thread_s: float  # bench_threads: seconds per variant, callers count and round
    thread_rounds: int
    env_rounds: int  # bench_engine_env: rounds over the thread-runtime settings
    env_requests: int
    env_loop_s: float
    exports: tuple[Path, ...]
    sizes: tuple[int, ...]


FULL = Plan(
    packed=64,
    queries=90,
    repeats=3,
    after_restart=100,
    sequential=300,
    embed_rounds=3,
    loop_s=30,
    synthetic_loop_s=10,
    old_rounds=3,
    old_requests=100,
    stage_rounds=2,
    hook_runs=40,
    hook_silent_runs=10,
    thread_s=6,
    thread_rounds=2,
    env_rounds=2,
    env_requests=60,
    env_loop_s=8,
    exports=EXPORTS,
    sizes=(10_000, 50_000),
)
# For development: every step runs, with few samples, demo.zip only and 10k sections.
QUICK = replace(
    FULL,
    packed=16,
    queries=30,
    repeats=1,
    sequential=60,
    embed_rounds=1,
    loop_s=5,
    synthetic_loop_s=3,
    old_rounds=1,
    old_requests=30,
    stage_rounds=1,
    hook_runs=10,
    hook_silent_runs=3,
    thread_s=2,
    thread_rounds=1,
    env_rounds=1,
    env_requests=20,
    env_loop_s=3,
    exports=EXPORTS[1:],
    sizes=(10_000,),
)
