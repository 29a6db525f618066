"""How large an OpenMP team a prompt's embedding should run on, when the machine is idle and
when other work holds its cores (issue 26: 4 clients at 50k sections; a user's build running).

    python bench/bench_query_team.py [--queries 60] [--rounds 2]

One E5Embedder (the product's, its model on its own thread) embeds the eval corpora's prompts
one after the other, each while 0, 1 or 2 busy-loop processes hold cores, on one thread (what
the product gives a prompt beside another: its `busy` callback says so) and on the full team
(what it gives a lone prompt). Team sizes alternate inside each round, so a busy neighbour
slows each alike. Reported: the wall
time of each query (p50 / p99) and CPU time per query (the process's: the model's thread and
its OpenMP worker, nothing else runs in it).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import eval_prompts  # noqa: E402
from engine_bench import percentile  # noqa: E402
from report import load_average, machine  # noqa: E402

from trilium_recall.index import embed  # noqa: E402

SPIN = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass"


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


CHOICES = {"one thread": True, "full team": False}  # the value: another prompt is answered


def run(
    another: threading.Event, embedder: embed.E5Embedder, choice: str, prompts: list[str]
) -> tuple[list[float], float]:
    """Wall ms of each query and CPU ms a query, the team chosen by `choice`."""
    (another.set if CHOICES[choice] else another.clear)()
    for prompt in prompts[:3]:
        embedder.query(prompt)
    walls = []
    cpu = time.process_time()
    for prompt in prompts:
        started = time.perf_counter()
        embedder.query(prompt)
        walls.append((time.perf_counter() - started) * 1000)
    return walls, (time.process_time() - cpu) * 1000 / len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    prompts = eval_prompts()[: args.queries]
    load = load_average()[0]
    another = threading.Event()
    embedder = embed.E5Embedder(busy=another.is_set)
    results: dict[tuple[int, str], tuple[list[float], list[float]]] = {}
    try:
        for _ in range(args.rounds):
            for busy in (0, 1, 2):
                loops = busy_loops(busy)
                try:
                    time.sleep(0.5)  # the loops are running
                    for choice in CHOICES:
                        walls, cpu = run(another, embedder, choice, prompts)
                        kept = results.setdefault((busy, choice), ([], []))
                        kept[0].extend(walls)
                        kept[1].append(cpu)
                finally:
                    for loop in loops:
                        loop.kill()
                        loop.wait()
    finally:
        embedder.close()
    print(machine())
    print(f"load average (1 min) before / after: {load:.2f} / {load_average()[0]:.2f}\n")
    print("| cores held by busy loops | team | query p50 / p99 | CPU a query |")
    print("|---|---|---|---|")
    for (busy, choice), (walls, cpus) in results.items():
        cpu = sum(cpus) / len(cpus)
        print(
            f"| {busy} | {choice} | {percentile(walls, 50):.1f} / {percentile(walls, 99):.1f} ms "
            f"| {cpu:.1f} ms |"
        )


if __name__ == "__main__":
    main()
