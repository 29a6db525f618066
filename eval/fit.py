"""Fitting the gate: a logistic prompt score, its bias for a silence target, the keyword rule.

Pure numpy over per-prompt signals (`PromptSignals`) with labels; `evaluate.py` calls it once per
leave-one-corpus-out fold and once on everything (the shipped `gate.FITTED`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from trilium_recall.search.gate import (
    FITTED,
    SCORE_INPUTS,
    GateThresholds,
    PromptSignals,
    ScoreInput,
)
from trilium_recall.search.hybrid import RANKING, Ranking

# Share of the training corpora's unrelated prompts the fitted bias keeps silent, as the landed
# gate was fitted (the new gate's share is chosen by inner folds: evaluate.choose_silence).
TRAIN_SILENCE = 0.97
L2 = 1.0  # ridge on the standardised weights: a few features, several hundred prompts
KEYWORD_TERMS = 3

# The gate as landed before issue 23 (fitted on demo_zip, notebook and devdocs, 2026-12-03).
LANDED = GateThresholds(
    bias=-6.1046,
    margin_weight=68.7171,
    agreement_weight=6.3219,
    zscore_weight=0.6928,
    keyword_terms=3,
    keyword_coverage=0.646,
    neighbour_cosine_gap=0.015,
    neighbour_coverage=0.5,
    filed_coverage=2.0,
    day_only=2.0,
)
# The ranking as landed before issue 23: no code-phrase query, the whole section as evidence,
# no note ranking, no dates.
LANDED_RANKING = Ranking(
    phrase_weight=0.0, evidence_chars=None, note_weight=0.0, dates=False, hub_weight=0.0
)


class Variant(enum.Enum):
    """Which gate a fold fits: the landed signals and procedure, or the new ones."""

    LANDED = "landed"
    NEW = "new"

    @property
    def base(self) -> GateThresholds:
        return LANDED if self is Variant.LANDED else FITTED

    @property
    def ranking(self) -> Ranking:
        return LANDED_RANKING if self is Variant.LANDED else RANKING

    @property
    def inputs(self) -> tuple[ScoreInput, ...]:
        """The prompt score's inputs it fits: the landed gate knew three of them."""
        if self is Variant.NEW:
            return SCORE_INPUTS
        return tuple(i for i in SCORE_INPUTS if i.name in ("margin", "agreement", "zscore"))


def features(signals: PromptSignals, base: GateThresholds, variant: Variant) -> list[float]:
    """What the variant's logistic weighs (`Variant.inputs`, read as `base` says)."""
    return [i.read(signals, base) for i in variant.inputs]


def logistic(
    x: np.ndarray, y: np.ndarray, l2: float = L2, weights: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Weights and bias in the features' own units (IRLS on standardised columns); `weights`
    counts each row that many times (1 if not given)."""
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.c_[np.ones(len(x)), (x - mean) / std]
    counts = np.ones(len(x)) if weights is None else weights
    w = np.zeros(z.shape[1])
    ridge = l2 * np.diag(np.r_[0.0, np.ones(z.shape[1] - 1)])
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (counts * (p - y)) + ridge @ w
        hessian = (z * (counts * p * (1 - p))[:, None]).T @ z + ridge
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    scaled = w[1:] / std
    return scaled, float(w[0] - scaled @ mean)


def fit_gate(
    answerable: Sequence[PromptSignals],
    unrelated: Sequence[PromptSignals],
    variant: Variant,
    silence: float = TRAIN_SILENCE,
    base: GateThresholds | None = None,
) -> GateThresholds:
    """Logistic weights on all prompts; bias moved so `silence` of the unrelated ones score
    below 0; the keyword rule set just above what any unrelated prompt reached."""
    base = base or variant.base
    x = np.array([features(s, base, variant) for s in [*answerable, *unrelated]])
    y = np.r_[np.ones(len(answerable)), np.zeros(len(unrelated))]
    weights, bias = logistic(x, y)
    unrelated_scores = x[len(answerable) :] @ weights + bias
    shift = float(np.quantile(unrelated_scores, silence))
    keyword_coverage = max((s.coverage for s in unrelated if s.terms >= KEYWORD_TERMS), default=0.0)
    fitted = {i.weight: round(float(w), 4) for i, w in zip(variant.inputs, weights, strict=True)}
    return replace(
        base,
        bias=round(bias - shift, 4),
        **(dict.fromkeys((i.weight for i in SCORE_INPUTS), 0.0) | fitted),
        keyword_terms=KEYWORD_TERMS,
        # Above 1 when an unrelated prompt matched 95 % or more: keywords alone never pass.
        keyword_coverage=round(keyword_coverage + 0.05, 3),
    )
