"""The engine's RSS and `/recall` latency on one index, for several engines in the same run.

    python bench/memory_ab.py /tmp/syn50k --variant before@<rev> --variant new \\
        [--variant arena1@<rev>:MALLOC_ARENA_MAX=1] [--rounds 2] [--requests 150]

A variant is LABEL[@COMMIT][:VAR=VALUE,...]: `trilium-recall serve` from that commit's `src`
(`git archive`, put first on PYTHONPATH; without @, this checkout) with those environment
variables, on the index in the given folder (written by `synth_notebook.py index`; every
variant must read its format). Trilium is at a closed port (`degraded`, serving), as in
bench/scale.py. Rounds alternate the variants (A B A B) so the shared machine's load falls on
each alike. Each start: spawn → ready, `--requests` sequential `/recall` with the eval prompts,
then 4 clients in a closed loop for `--loop-s` (both search threads busy at once, as in
scale.py), then RSS from /proc/<pid>/smaps_rollup (anonymous and file-backed) and the peak
(VmHWM). The
answers' passages are compared with the first variant's, prompt by prompt: a memory change must
not change results.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import eval_prompts  # noqa: E402
from engine_bench import (  # noqa: E402
    _client,
    closed_loop,
    memory_mib,
    percentile,
    recall_once,
    start_engine,
)
from old_engine import check_imports_old, old_source  # noqa: E402
from report import load_average  # noqa: E402

from procs import closed_port_url  # noqa: E402

CLIENTS = 4
BUDGET_MS = "60000"  # shows the latency instead of cutting answers at 1.2 s (as scale.py)


@dataclass
class Variant:
    label: str
    commit: str | None
    env: dict[str, str]
    src: Path | None = None
    wall: list[float] = field(default_factory=list)
    rss: list[dict[str, float]] = field(default_factory=list)
    ready: list[float] = field(default_factory=list)
    loop: list[float] = field(default_factory=list)  # the 4 clients' request times
    differing: int = 0

    def environment(self) -> dict[str, str]:
        return {**({"PYTHONPATH": str(self.src)} if self.src else {}), **self.env}


def parse_variant(text: str) -> Variant:
    head, _, settings = text.partition(":")
    label, _, commit = head.partition("@")
    env = dict(pair.split("=", 1) for pair in settings.split(",") if pair)
    if not label:
        sys.exit(f"memory_ab: --variant wants LABEL[@COMMIT][:VAR=VALUE,...], not {text!r}")
    return Variant(label, commit or None, env)


def run_once(
    variant: Variant, data: Path, prompts: tuple[str, ...], answers: dict, loop_s: float
) -> None:
    extra = {"RECALL_TIME_BUDGET_MS": BUDGET_MS, **variant.environment()}
    ready = ("ok", "degraded")
    started = start_engine(data, closed_port_url(), "bench-token", ready, extra_env=extra)
    engine = started.engine
    try:
        assert engine.process is not None
        with _client() as client:
            for prompt in prompts:
                wall_ms, answer = recall_once(client, engine.url, prompt)
                variant.wall.append(wall_ms)
                # Each start has its own closed Trilium port, which the passages' links name.
                kept = [{k: v for k, v in p.items() if k != "url"} for p in answer["passages"]]
                passages = json.dumps(kept, sort_keys=True)
                first = answers.setdefault(prompt, passages)
                variant.differing += first != passages
        if loop_s:
            variant.loop += closed_loop(engine, prompts[::-1], CLIENTS, loop_s).wall
        variant.rss.append(memory_mib(engine.process.pid))
        variant.ready.append(started.ready_s)
    finally:
        engine.stop()


def table(variants: list[Variant]) -> str:
    rows = [
        "| variant | RSS after the recalls (MiB) | anonymous | file-backed | peak (VmHWM) "
        "| spawn → ready (s) | /recall p50 / p99 (ms) | 4 clients p99 (ms) "
        "| answers unlike the first variant's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v in variants:

        def each(key: str, v: Variant = v) -> str:
            return " / ".join(f"{r[key]:.0f}" for r in v.rss)

        rows.append(
            f"| {v.label} | {each('rss')} | {each('anonymous')} | {each('file')} | {each('peak')} "
            f"| {' / '.join(f'{s:.1f}' for s in v.ready)} "
            f"| {percentile(v.wall, 50):.1f} / {percentile(v.wall, 99):.1f} "
            f"| {percentile(v.loop, 99) if v.loop else float('nan'):.1f} | {v.differing} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a folder holding recall.sqlite3")
    parser.add_argument("--variant", action="append", type=parse_variant, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--loop-s", type=float, default=20.0, help="0: no 4-client loop")
    args = parser.parse_args()
    if not (args.data / "recall.sqlite3").is_file():
        sys.exit(f"memory_ab: no recall.sqlite3 in {args.data}")
    prompts = eval_prompts()[: args.requests]
    answers: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="memory-ab-") as work:
        for n, variant in enumerate(args.variant):
            if variant.commit:
                variant.src = old_source(Path(work) / f"{n}-{variant.label}", variant.commit)
                check_imports_old(variant.src)
        load = load_average()[0]
        for _ in range(args.rounds):
            for variant in args.variant:
                run_once(variant, args.data, prompts, answers, args.loop_s)
                print(f"{variant.label}: {variant.rss[-1]}", flush=True)
    load_now = load_average()[0]
    print(f"\nload average {load:.2f} → {load_now:.2f}; {args.requests} requests a start\n")
    print(table(args.variant))


if __name__ == "__main__":
    main()
