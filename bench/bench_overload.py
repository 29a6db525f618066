"""/recall past the machine's capacity: N clients asking back to back, the engine at an earlier
commit against the engine as it is now, same run, same prompts, alternating rounds.

    python bench/bench_overload.py 12b4c5d --clients 50 --seconds 20 --rounds 2

What counts is what the hook can use: answers in time (not "late", within the hook's window)
each second, and how long they took. Both engines build their own index of the demo notebook
from one stand-in Trilium; each round is a closed loop of `--clients` threads (engine_bench).
"""

from __future__ import annotations

import argparse

from corpus import PROMPTS
from engine_bench import Samples, closed_loop, percentile
from old_engine import demo_engines
from report import load_average

from trilium_recall.claude_settings import HOOK_ANSWER_S

HOOK_WINDOW_MS = 1400.0  # the hook gives up 1.4 s after it started (hook.py)


def row(samples: Samples) -> dict[str, float]:
    """What one side's closed loops gave, over all its rounds."""
    in_time = [w for w in samples.answered_wall if w <= HOOK_WINDOW_MS]
    return {
        "requests a second": len(samples.wall) / samples.seconds,
        "answers in time a second": len(in_time) / samples.seconds,
        "late (share of requests)": samples.timed_out / max(1, len(samples.wall)),
        "answer p50 ms": percentile(in_time, 50) if in_time else float("nan"),
        "answer p95 ms": percentile(in_time, 95) if in_time else float("nan"),
        "request p50 ms": percentile(samples.wall, 50),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", help="the earlier commit (anything git archive takes)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sides = {"before": Samples(), "now": Samples()}
    with demo_engines(args.commit) as (old, new):
        load = load_average()
        for number in range(args.rounds):
            order = [("before", old), ("now", new)]
            for name, engine in order[:: 1 if number % 2 == 0 else -1]:
                run = closed_loop(engine, PROMPTS, args.clients, args.seconds)
                seconds = sides[name].seconds + run.seconds
                sides[name].merge(run)
                sides[name].seconds = seconds
    rows = {name: row(samples) for name, samples in sides.items()}
    print(
        f"{args.clients} clients, {args.rounds} rounds × {args.seconds:.0f} s a side; "
        f"hook window {HOOK_WINDOW_MS:.0f} ms, a hook's budget {HOOK_ANSWER_S * 1000:.0f} ms\n"
    )
    print(f"| | {args.commit} | now |\n|---|---|---|")
    for name in rows["now"]:
        print(f"| {name} | {rows['before'][name]:.2f} | {rows['now'][name]:.2f} |")
    print(f"| load average before (1/5/15 min) | {' / '.join(f'{x:.2f}' for x in load)} | |")


if __name__ == "__main__":
    main()
