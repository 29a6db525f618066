"""Each scored prompt's outcome, how sure a corpus's figure is, and two runs compared prompt by
prompt.

A held-out corpus scores 40–110 answerable prompts, so one prompt moves its hit@3 by 0.009 to
0.025: most of what changes between two runs is a handful of prompts. `interval` gives a
figure's 95 % bootstrap interval over its prompts; `compare` pairs two runs' outcomes (written
by `evaluate.py --outcomes`) and says which prompts moved and whether the gains and losses
could be a coin toss (an exact sign test on the prompts that changed, McNemar's test).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

METRICS = ("hit@3", "all silence", "ceiling")
RESAMPLES = 2000
SEED = 20261206  # the same intervals on every run of the same outcomes


@dataclass
class Outcomes:
    """One held-out corpus's prompts: True where the run did right (the expected note in the top
    3 of what was sent; silence for an unrelated prompt)."""

    answerable: dict[str, bool] = field(default_factory=dict)
    unrelated: dict[str, bool] = field(default_factory=dict)
    ceiling: dict[str, bool] = field(default_factory=dict)  # the gate open

    def metrics(self) -> dict[str, dict[str, bool]]:
        return dict(zip(METRICS, (self.answerable, self.unrelated, self.ceiling), strict=True))


def interval(values: Sequence[bool | float]) -> tuple[float, float]:
    """The 95 % percentile-bootstrap interval of the mean of `values` (resampling prompts)."""
    data = np.asarray(values, dtype=float)
    if not len(data):
        return (math.nan, math.nan)
    rng = np.random.default_rng(SEED)
    means = data[rng.integers(0, len(data), (RESAMPLES, len(data)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def mean_interval(groups: Sequence[Sequence[bool | float]]) -> tuple[float, float]:
    """The 95 % interval of the mean over corpora of each corpus's mean, resampling prompts
    within each corpus (the corpora themselves are fixed)."""
    rng = np.random.default_rng(SEED)
    total = np.zeros(RESAMPLES)
    kept = [np.asarray(g, dtype=float) for g in groups if len(g)]
    for data in kept:
        total += data[rng.integers(0, len(data), (RESAMPLES, len(data)))].mean(axis=1)
    low, high = np.quantile(total / max(1, len(kept)), [0.025, 0.975])
    return float(low), float(high)


def save(path: Path, runs: dict[str, Outcomes]) -> None:
    data = {name: o.metrics() for name, o in runs.items()}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def load(path: Path) -> dict[str, Outcomes]:
    data = json.loads(path.read_text())
    return {
        name: Outcomes(m["hit@3"], m["all silence"], m.get("ceiling", {}))
        for name, m in data.items()
    }


def sign_test(gained: int, lost: int) -> float:
    """Two-sided exact p-value that gains and losses this lopsided come from a fair coin."""
    n = gained + lost
    if not n:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass
class Change:
    metric: str
    corpus: str
    gained: list[str]
    lost: list[str]
    unpaired: int  # prompts in only one of the runs (a label set that changed)


def compare(before: dict[str, Outcomes], after: dict[str, Outcomes]) -> list[Change]:
    """Per metric and corpus (both runs'), the prompts the second run gets right and the first
    did not (gained), and the other way round (lost)."""
    changes = []
    for metric in METRICS:
        for corpus in [name for name in before if name in after]:
            a, b = before[corpus].metrics()[metric], after[corpus].metrics()[metric]
            both = a.keys() & b.keys()
            changes.append(
                Change(
                    metric,
                    corpus,
                    sorted(p for p in both if b[p] and not a[p]),
                    sorted(p for p in both if a[p] and not b[p]),
                    len(a.keys() ^ b.keys()),
                )
            )
    return changes
