"""run.py's steps against the real engine process on the demo index: restarts, latency,
embed_ms against the raw model, closed loops, the old engine, the hook, thread-runtime settings."""

from __future__ import annotations

from pathlib import Path

from bench_engine_env import measure as measure_env
from bench_engine_env import rows as env_rows
from bench_hook import measure as measure_hook
from build_bench import fresh_embedder
from corpus import PROMPTS
from engine_bench import (
    PASSWORD,
    Restart,
    closed_loop,
    compare_embedding,
    import_seconds,
    median,
    percentile,
    restart,
    rss_mib,
    sequential,
    start_engine,
)
from old_engine import OLD_COMMIT, compare, start_old
from plan import (
    TARGET_4_CLIENTS_P99_MS,
    TARGET_DEMO_P50_MS,
    TARGET_DEMO_P99_MS,
    TARGET_EMBED_RATIO,
    TARGET_P50_GROWTH_MS,
    TARGET_RESTART_RATIO,
    Plan,
)
from report import Report, Row, load_average, load_row, p50_p99
from tables import latency_rows, loop_row, restart_rows, rss_row, took_embed

from engine_process import EngineProcess
from trilium_recall.demo.mode import DEMO_TOKEN, start_demo_trilium


def demo_engine(plan: Plan, work: Path, report: Report) -> None:
    load = load_average()[0]
    data = work / "demo"
    data.mkdir(parents=True, exist_ok=True)
    floor_s = import_seconds(plan.repeats)
    fake = start_demo_trilium()
    engines: list[EngineProcess] = []
    try:
        built = start_engine(data, fake.url(), DEMO_TOKEN, ("ok",))  # first start: builds
        built.engine.stop()
        restarts = []
        for _ in range(plan.repeats):
            if engines:
                engines.pop().stop()
            found, engine = restart(data, fake.url(), DEMO_TOKEN, PROMPTS, plan.after_restart)
            engines.append(engine)
            restarts.append(found)
        restart_table(report, restarts, built.ready_s, floor_s, load)
        engine_latency(plan, work, report, engines[0], fake.url())
        engines.pop().stop()
        engine_env(plan, data, fake.url(), report)
    finally:
        for engine in engines:
            engine.stop()
        fake.stop()


def engine_env(plan: Plan, data: Path, trilium: str, report: Report) -> None:
    load = load_average()[0]
    cells = measure_env(
        data, trilium, DEMO_TOKEN, plan.env_rounds, plan.env_requests, plan.env_loop_s
    )
    report.table(
        "10. The demo engine under thread-runtime settings (bench_engine_env.py; "
        "environment only, the product unchanged)",
        [*env_rows(cells), load_row(load)],
    )


def restart_table(
    report: Report, restarts: list[Restart], build_s: float, floor_s: float, load: float
) -> None:
    rows = [*restart_rows(restarts, build_s, floor_s), load_row(load)]
    report.table("4b. Restart: the engine process on the existing demo index", rows)
    worst = max(restarts, key=lambda r: r.ratio)
    report.target(
        f"first /recall after restart ÷ median of the next 100 (worst of {len(restarts)})",
        worst.ratio,
        TARGET_RESTART_RATIO,
        "×",
        f"{worst.first_ms:.1f} ms vs {median(worst.next_ms):.1f} ms; all: "
        + ", ".join(f"{r.ratio:.2f}" for r in restarts),
    )


def engine_latency(
    plan: Plan, work: Path, report: Report, engine: EngineProcess, trilium: str
) -> None:
    load = load_average()[0]
    assert engine.process is not None
    idle = rss_mib(engine.process.pid)
    seq = sequential(engine, PROMPTS, plan.sequential)
    embedder, _ = fresh_embedder()
    try:
        embeds = compare_embedding(engine, embedder, PROMPTS, plan.embed_rounds)
    finally:
        embedder.close()
    loops = {n: closed_loop(engine, PROMPTS, n, plan.loop_s) for n in (4, 8)}
    busy = rss_mib(engine.process.pid)
    rows = latency_rows("demo", seq)
    rows.append(
        (
            f"in-engine embed_ms ÷ E5Embedder.query here, p50 ({len(embeds.raw_ms)} each)",
            f"{embeds.ratio:.2f}×",
            f"engine {p50_p99(embeds.engine_ms)} vs raw {p50_p99(embeds.raw_ms)}, "
            f"{plan.embed_rounds} alternating rounds",
        )
    )
    rows += [loop_row("demo", n, s) for n, s in loops.items()]
    rows += [rss_row("demo", idle, busy), load_row(load)]
    report.table("5. /recall through HTTP, demo index (Trilium up)", rows)
    report.target("demo /recall p50", percentile(seq.wall, 50), TARGET_DEMO_P50_MS, "ms")
    report.target("demo /recall p99", percentile(seq.wall, 99), TARGET_DEMO_P99_MS, "ms")
    report.target(
        "in-engine embed_ms p50 ÷ raw query embedding p50",
        embeds.ratio,
        TARGET_EMBED_RATIO,
        "×",
        f"{median(embeds.engine_ms):.1f} vs {median(embeds.raw_ms):.1f} ms",
    )
    four, eight = loops[4], loops[8]
    report.target(
        "4 clients, closed loop: p99", percentile(four.wall, 99), TARGET_4_CLIENTS_P99_MS, "ms"
    )
    dropped = "answers emptied by the budget"
    report.target(f"4 clients: {dropped}", four.dropped, 0, "answers", f"of {len(four.wall)}")
    report.target("8 clients, closed loop: p99", percentile(eight.wall, 99), None, "ms")
    report.target(f"8 clients: {dropped}", eight.dropped, None, "answers", f"of {len(eight.wall)}")
    old_vs_new(plan, work, report, engine, trilium)
    hook = measure_hook(plan.hook_runs, plan.hook_silent_runs, engine.url, PASSWORD)
    report.table(
        "7. Prompt hook, process start → exit, each entry point (bench_hook.py; up = demo engine)",
        hook.rows(),
    )
    for name, measured, limit, unit in hook.targets():
        report.target(name, measured, limit, unit)


def old_vs_new(plan: Plan, work: Path, report: Report, new: EngineProcess, trilium: str) -> None:
    load = load_average()[0]
    started = start_old(work, trilium, DEMO_TOKEN)
    try:
        found = compare(started.engine, new, PROMPTS, plan.old_rounds, plan.old_requests)
    finally:
        started.engine.stop()
    rows: list[Row] = [
        ("old engine: first start → /health ok", f"{started.ready_s:.1f} s", "builds its index"),
        (f"{OLD_COMMIT}: /recall wall p50 / p99", p50_p99(found.old.wall), "sequential"),
        ("now: /recall wall p50 / p99", p50_p99(found.new.wall), "same prompts, same run"),
        (f"{OLD_COMMIT}: took_ms / embed_ms p50", took_embed(found.old), ""),
        ("now: took_ms / embed_ms p50", took_embed(found.new), ""),
        (
            "p50 per round (old / new)",
            ", ".join(f"{o:.1f} / {n:.1f}" for o, n in found.rounds),
            "rounds alternate which engine goes first",
        ),
        ("p50 now − p50 before", f"{found.p50_growth_ms:+.1f} ms", "issue 11: ≤ +5 ms"),
        load_row(load),
    ]
    title = f"6. Against the product before this work ({OLD_COMMIT}), demo notebook"
    report.table(title, rows)
    report.target(
        f"/recall p50 growth against {OLD_COMMIT}",
        found.p50_growth_ms,
        TARGET_P50_GROWTH_MS,
        "ms",
        f"{percentile(found.new.wall, 50):.1f} vs {percentile(found.old.wall, 50):.1f} ms",
    )
