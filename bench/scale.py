"""Issue 26 at scale: 50k and 250k synthetic sections (real text, derived vectors:
synth_notebook.py) served by the real `trilium-recall serve`, for one or more source trees in
the same run (landed against new).

    python bench/scale.py [--sizes 50000,250000] [--src new=/path/to/other/src] [--keep DIR]
    python bench/scale.py --label new --commit landed=<rev>   # after a merge: before vs after

For each size and each tree: the tree's own code writes the index (`synth_notebook.py index`
run with `PYTHONPATH=<its src>`, so each engine reads the format it writes), the file's size,
then its engine starts with Trilium at a closed 127.0.0.1 port (`degraded`, serving) and gets
300 sequential `/recall` with the eval corpora's prompts, a closed loop of 4 clients, and its
RSS is read; then it starts once more on the same index (a restart: the target's "ready").
The trees run one after the other on the same machine: load before and after each.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import eval_prompts  # noqa: E402
from engine_bench import closed_loop, percentile, rss_mib, sequential, start_engine  # noqa: E402
from old_engine import check_imports_old, old_source  # noqa: E402
from report import Report, load_average, load_row, machine, wait_for_quiet  # noqa: E402
from tables import latency_rows, loop_row, rss_row  # noqa: E402

from procs import closed_port_url  # noqa: E402

SEED = 26
BUDGET_MS = 1200  # the shipped RECALL_TIME_BUDGET_MS (test engines get a longer one)
# Issue 26 targets: (p99 ms, 4 clients p99 ms or None, RSS MiB, ready s) per size.
TARGETS = {50_000: (80.0, 200.0, 300.0, 2.0), 250_000: (150.0, None, 800.0, 5.0)}


@dataclass(frozen=True)
class Tree:
    label: str
    src: Path | None  # None: the installed package (this checkout)

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.src)} if self.src else {}


def parse_tree(text: str) -> Tree:
    label, _, path = text.partition("=")
    src = Path(path).resolve()
    if not label or not (src / "trilium_recall" / "__init__.py").is_file():
        sys.exit(f"scale: --src wants LABEL=DIR with DIR holding trilium_recall/, not {text!r}")
    return Tree(label, src)


def generate(tree: Tree, size: int, path: Path) -> dict[str, float]:
    """The tree's own Store writes the synthetic index; returns synth_notebook's figures."""
    env = {"PATH": "/usr/bin:/bin", **tree.env()}
    command = [sys.executable, str(BENCH / "synth_notebook.py"), "index"]
    command += ["--sections", str(size), "--out", str(path), "--seed", str(SEED)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"synth_notebook failed for {tree.label}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def file_mib(data: Path) -> float:
    return sum(p.stat().st_size for p in data.glob("recall.sqlite3*")) / 2**20


def measure(
    tree: Tree,
    size: int,
    work: Path,
    requests: int,
    loop_s: float,
    report: Report,
    budget_ms: int = BUDGET_MS,
) -> None:
    load = load_average()[0]
    data = work / f"{tree.label}-{size}"
    if tree.src:
        check_imports_old(tree.src)
    built = generate(tree, size, data / "recall.sqlite3")
    written_mib = file_mib(data)
    prompts = eval_prompts()
    trilium = closed_port_url()
    extra = {"RECALL_TIME_BUDGET_MS": str(budget_ms), **tree.env()}
    started = start_engine(data, trilium, "bench-token", ("ok", "degraded"), extra_env=extra)
    engine = started.engine
    try:
        assert engine.process is not None
        idle = rss_mib(engine.process.pid)
        seq = sequential(engine, prompts, requests)
        loop = closed_loop(engine, prompts[requests:] + prompts[:requests], 4, loop_s)
        busy = rss_mib(engine.process.pid)
    finally:
        engine.stop()
    # The first start measured the index's reference points (a synthetic index was never
    # calibrated; a real one is at the end of its first build) and kept them: a restart reads them.
    restarted = start_engine(data, trilium, "bench-token", ("ok", "degraded"), extra_env=extra)
    restarted.engine.stop()
    label = f"{tree.label} {size // 1000}k"
    rows = [
        (
            f"{label}: generate + write the index (its own Store)",
            f"{built['seconds']:.0f} s",
            f"{built['notes']} notes, {built['sections']} sections, {built['snippets']} "
            f"snippets ({built['snippets'] / built['sections']:.2f} a section; the real "
            f"corpora {built['real_snippets_per_section']:.2f})",
        ),
        (f"{label}: index file", f"{written_mib:.0f} MiB", "recall.sqlite3 (+ -wal)"),
        (
            f"{label}: first start, spawn → /health answers / ready",
            f"{started.first_answer_s:.2f} / {started.ready_s:.2f} s",
            "degraded: Trilium down on purpose; calibrates the index once",
        ),
        (
            f"{label}: restart, spawn → /health answers / ready",
            f"{restarted.first_answer_s:.2f} / {restarted.ready_s:.2f} s",
            "reads the reference points the first start kept",
        ),
        *latency_rows(label, seq),
        loop_row(label, 4, loop),
        rss_row(label, idle, busy),
        load_row(load),
    ]
    report.table(f"{label}: /recall through HTTP, {built['sections']:,} synthetic sections", rows)
    p99, clients_p99, rss, ready = TARGETS.get(size, (None, None, None, None))
    report.target(f"{label} /recall p99", percentile(seq.wall, 99), p99, "ms")
    report.target(f"{label} 4 clients p99", percentile(loop.wall, 99), clients_p99, "ms")
    report.target(f"{label} RSS (peak)", busy[1], rss, "MiB")
    report.target(f"{label} first start → ready", started.ready_s, None, "s")
    report.target(f"{label} restart → ready", restarted.ready_s, ready, "s")
    report.target(f"{label} index file", written_mib, None, "MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,250000", help="sections, comma-separated")
    parser.add_argument(
        "--src",
        action="append",
        default=[],
        type=parse_tree,
        help="LABEL=DIR: another source tree (the dir holding trilium_recall/), repeatable",
    )
    parser.add_argument(
        "--commit",
        action="append",
        default=[],
        help="LABEL=REV: this repository's src at REV (git archive), repeatable",
    )
    parser.add_argument("--label", default="landed", help="label of this checkout's engine")
    parser.add_argument("--requests", type=int, default=300, help="sequential /recall")
    parser.add_argument("--loop-s", type=float, default=20, help="4-client closed loop, seconds")
    parser.add_argument(
        "--budget-ms",
        type=int,
        default=BUDGET_MS,
        help="RECALL_TIME_BUDGET_MS (a long one shows the latency a busy machine hides)",
    )
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument("--wait-quiet", type=float, help="wait for a 1-min load below this")
    parser.add_argument("--wait-max", type=float, default=20, help="minutes to wait at most")
    args = parser.parse_args()
    if args.wait_quiet is not None:
        wait_for_quiet(args.wait_quiet, args.wait_max)
    work = args.keep or Path(tempfile.mkdtemp(prefix="recall-scale-"))
    trees = [Tree(args.label, None), *args.src]
    for text in args.commit:
        label, _, rev = text.partition("=")
        trees.append(Tree(label, old_source(work / f"src-{label}", rev)))
    report = Report()
    started = time.perf_counter()
    first = "/".join(f"{x:.2f}" for x in load_average())
    print(f"# trilium-recall scale bench, work dir {work}\n\n{machine()}\n", flush=True)
    try:
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            for tree in trees:
                measure(tree, size, work, args.requests, args.loop_s, report, args.budget_ms)
                if args.keep is None:  # 250k sections take ~3 GB of disk each
                    shutil.rmtree(work / f"{tree.label}-{size}", ignore_errors=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n## Summary\n\n{report.render_targets()}")
    last = "/".join(f"{x:.2f}" for x in load_average())
    print(
        f"\nwall time {time.perf_counter() - started:.0f} s; load average (1/5/15 min) at start "
        f"{first}, at end {last}"
    )


if __name__ == "__main__":
    main()
