"""The demo engine at an earlier commit against the engine as it is now, same run, same prompts:
a refactor must leave /recall's latency where it was.

    python bench/compare_commits.py 2a57c1d          # 4 rounds × 100 requests each side

Both engines build their own index of the demo notebook from one stand-in Trilium, then take
sequential /recall requests in alternating rounds (old_engine.compare); the passages each
answered are compared too, prompt by prompt.
"""

from __future__ import annotations

import argparse

import httpx
from corpus import PROMPTS
from engine_bench import PASSWORD, percentile
from old_engine import compare, demo_engines
from report import load_average

from engine_process import EngineProcess


def answers(engine: EngineProcess) -> list[list[str]]:
    """Each prompt's passages (note ids, in order), each in a session of its own."""
    headers = {"Authorization": f"Bearer {PASSWORD}"}
    with httpx.Client(timeout=30, headers=headers) as client:
        return [
            [
                p["note_id"]
                for p in client.post(f"{engine.url}/recall", json={"prompt": q}).json()["passages"]
            ]
            for q in PROMPTS
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", help="the earlier commit (anything git archive takes)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()
    with demo_engines(args.commit) as (old, new):
        load = load_average()
        pairs = zip(answers(old), answers(new), strict=True)
        changed = sum(before != now for before, now in pairs)
        found = compare(old, new, PROMPTS, args.rounds, args.requests)
    print(f"| | {args.commit} | now |\n|---|---|---|")
    for q in (50, 99):
        print(
            f"| /recall wall p{q} | {percentile(found.old.wall, q):.1f} ms | "
            f"{percentile(found.new.wall, q):.1f} ms |"
        )
    for q in (50,):
        print(
            f"| took_ms p{q} | {percentile(found.old.took, q):.1f} ms | "
            f"{percentile(found.new.took, q):.1f} ms |"
        )
    rounds = ", ".join(f"{o:.1f} / {n:.1f}" for o, n in found.rounds)
    print(f"| p50 per round (old / new) | {rounds} | |")
    print(f"| p50 now − before | {found.p50_growth_ms:+.1f} ms | |")
    print(f"| prompts answered with other passages | {changed} of {len(PROMPTS)} | |")
    print(f"| load average before (1/5/15 min) | {' / '.join(f'{x:.2f}' for x in load)} | |")


if __name__ == "__main__":
    main()
