"""The eval's comparison of two runs (eval/outcomes.py): the figures a stop's note reports as
moved or not are computed right."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[1] / "eval"


def _outcomes_module():
    spec = importlib.util.spec_from_file_location("eval_outcomes", EVAL / "outcomes.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


outcomes = _outcomes_module()


@pytest.mark.parametrize(
    ("gained", "lost", "p"),
    [
        (0, 0, 1.0),
        (1, 1, 1.0),
        (5, 0, 0.0625),
        (6, 0, 0.03125),
        (7, 2, 0.1796875),
        (3, 5, 0.7265625),
    ],
)
def test_the_sign_test_is_the_exact_two_sided_binomial(gained: int, lost: int, p: float) -> None:
    assert outcomes.sign_test(gained, lost) == pytest.approx(p)


def test_a_bootstrap_interval_holds_the_mean_and_narrows_with_more_prompts() -> None:
    few = [True] * 6 + [False] * 4
    many = few * 10
    low, high = outcomes.interval(few)
    assert low < 0.6 < high
    wide, narrow = high - low, outcomes.interval(many)[1] - outcomes.interval(many)[0]
    assert narrow < wide / 2
    assert outcomes.interval(few) == (low, high)  # seeded: the same figures on every run
    assert all(math.isnan(v) for v in outcomes.interval([]))


def test_the_mean_over_corpora_weighs_each_corpus_once() -> None:
    small, large = [True] * 10, [False] * 100
    low, high = outcomes.mean_interval([small, large])
    assert low == pytest.approx(0.5) and high == pytest.approx(0.5)


def test_two_runs_are_compared_prompt_by_prompt(tmp_path: Path) -> None:
    before = outcomes.Outcomes({"a": True, "b": False, "c": False}, {"x": True}, {"a": True})
    after = outcomes.Outcomes({"a": False, "b": True, "c": True, "d": True}, {"x": True}, {})
    outcomes.save(tmp_path / "before.json", {"gitdocs": before})
    outcomes.save(tmp_path / "after.json", {"gitdocs": after})
    loaded = outcomes.load(tmp_path / "after.json")
    assert loaded["gitdocs"].answerable == after.answerable
    changes = outcomes.compare(outcomes.load(tmp_path / "before.json"), loaded)
    hits = next(c for c in changes if c.metric == "hit@3")
    assert (hits.gained, hits.lost, hits.unpaired) == (["b", "c"], ["a"], 1)
    silence = next(c for c in changes if c.metric == "all silence")
    assert (silence.gained, silence.lost) == ([], [])
