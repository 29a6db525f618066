"""What `explain` prints of the prompt decision: shares that add up to the score it shows."""

from __future__ import annotations

import math
import random

from trilium_recall.explained import _score_parts


def shown(parts: dict[str, float]) -> list[float]:
    return [float(share.split()[-1]) for share in _score_parts(parts).split(" + ")]


def test_shares_add_up_to_the_score_even_when_each_alone_rounds_away() -> None:
    parts = {f"signal{i}": 0.004 for i in range(8)}  # each alone "+0.00", together "+0.03"
    assert f"{math.fsum(shown(parts)):+.2f}" == f"{math.fsum(parts.values()):+.2f}" == "+0.03"


def test_each_share_stays_within_a_cent_and_the_names_keep_their_order() -> None:
    rng = random.Random(7)
    for _ in range(500):
        parts = {f"s{i}": rng.uniform(-7.0, 7.0) for i in range(rng.randint(1, 9))}
        printed = _score_parts(parts)
        assert [share.split()[0] for share in printed.split(" + ")] == list(parts)
        values = shown(parts)
        assert f"{math.fsum(values):+.2f}" == f"{math.fsum(parts.values()):+.2f}"
        assert all(abs(v - p) <= 0.01 + 1e-9 for v, p in zip(values, parts.values(), strict=True))


def test_a_share_that_rounds_to_nothing_is_never_minus_nothing() -> None:
    assert _score_parts({"a": -0.001, "b": 0.0}) == "a +0.00 + b +0.00"
    assert "-0.00" not in _score_parts({"bias": 0.004, "margin": -0.004, "agreement": -0.001})
