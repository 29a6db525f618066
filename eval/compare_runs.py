"""Two eval runs compared prompt by prompt: which prompts each metric gained and lost, per
held-out corpus, and whether that many gains against that many losses could be chance.

Each run writes its held-out outcomes with `python eval/evaluate.py --outcomes FILE`; run the
code before a change, then after it, and compare:

    python eval/compare_runs.py before.json after.json [--prompts]

p is an exact two-sided sign test on the prompts that changed (McNemar's test): a p above
0.05 says the change moved prompts both ways about as a coin would. The figures beside it
are each run's share of prompts right, as in the tables of evaluate.py.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from outcomes import METRICS, Change, compare, load, sign_test


def share(outcomes: dict[str, bool]) -> str:
    return f"{statistics.fmean(outcomes.values()):.3f}" if outcomes else "–"


def report(before_path: Path, after_path: Path, prompts: bool) -> str:
    before, after = load(before_path), load(after_path)
    changes = compare(before, after)
    lines = []
    for metric in METRICS:
        rows = [c for c in changes if c.metric == metric]
        lines += [
            f"### {metric}",
            "",
            "| held out | before | after | gained | lost | p |",
            "|---|---|---|---|---|---|",
        ]
        for c in rows:
            a = before[c.corpus].metrics()[metric]
            b = after[c.corpus].metrics()[metric]
            p = sign_test(len(c.gained), len(c.lost))
            lines.append(
                f"| {c.corpus} | {share(a)} | {share(b)} | {len(c.gained)} | {len(c.lost)} "
                f"| {p:.2f} |" + (f" {c.unpaired} prompts in one run only" if c.unpaired else "")
            )
        gained, lost = sum(len(c.gained) for c in rows), sum(len(c.lost) for c in rows)
        lines += [
            f"| all | | | {gained} | {lost} | {sign_test(gained, lost):.2f} |",
            "",
        ]
        if prompts:
            lines += _listed(rows)
    return "\n".join(lines)


def _listed(rows: list[Change]) -> list[str]:
    lines = []
    for c in rows:
        lines += [f"- {c.corpus}, gained: {p!r}" for p in c.gained]
        lines += [f"- {c.corpus}, lost: {p!r}" for p in c.lost]
    return [*lines, ""] if lines else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--prompts", action="store_true", help="list the prompts that moved")
    args = parser.parse_args()
    for path in (args.before, args.after):
        if not path.is_file():
            parser.error(f"no outcomes file at {path} (write one with evaluate.py --outcomes)")
    print(report(args.before, args.after, args.prompts))


if __name__ == "__main__":
    main()
