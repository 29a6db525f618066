"""Fitting the gate: a logistic prompt score, its bias for a silence target, the keyword rule.

Pure numpy over per-prompt signals (`PromptSignals`) with labels; `evaluate.py` calls it once per
leave-one-corpus-out fold and once on everything (the shipped `gate.FITTED`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from trilium_recall.gate import GateThresholds, PromptSignals

# Share of the training corpora's unrelated prompts the fitted bias keeps silent. Above the
# held-out target (0.96) because a threshold fitted on two corpora loosens on a third.
TRAIN_SILENCE = 0.97
L2 = 1.0  # ridge on the standardised weights: three features, a few hundred prompts
FEATURES = ("margin", "agreement", "zscore")
KEYWORD_TERMS = 3


def features(signals: PromptSignals) -> list[float]:
    return [signals.margin, signals.agreement, signals.zscore]


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


def fit_meaning_only(
    answerable: Sequence[PromptSignals],
    unrelated: Sequence[PromptSignals],
    base: GateThresholds,
    silence: float = TRAIN_SILENCE,
) -> GateThresholds:
    """The baseline's gate: the margin alone, fitted the same way; no keyword rule."""
    x = np.array([[s.margin] for s in [*answerable, *unrelated]])
    y = np.r_[np.ones(len(answerable)), np.zeros(len(unrelated))]
    weights, bias = logistic(x, y)
    shift = float(np.quantile(x[len(answerable) :] @ weights + bias, silence))
    return replace(
        base,
        bias=bias - shift,
        margin_weight=float(weights[0]),
        agreement_weight=0.0,
        zscore_weight=0.0,
        keyword_terms=10**6,
    )


def fit_keyword_only(
    unrelated: Sequence[PromptSignals], base: GateThresholds, silence: float = TRAIN_SILENCE
) -> GateThresholds:
    """The baseline's gate: two or more matched terms carrying more of the prompt's IDF weight
    than `silence` of the unrelated prompts reached; the prompt score never passes alone."""
    reached = [s.coverage if s.terms >= 2 else 0.0 for s in unrelated]
    return replace(
        base,
        bias=-(10.0**6),
        keyword_terms=2,
        keyword_coverage=float(np.quantile(reached, silence)) + 1e-6,
    )


def fit_gate(
    answerable: Sequence[PromptSignals],
    unrelated: Sequence[PromptSignals],
    base: GateThresholds,
    silence: float = TRAIN_SILENCE,
) -> GateThresholds:
    """Logistic weights on all prompts; bias moved so `silence` of the unrelated ones score
    below 0; the keyword rule set just above what any unrelated prompt reached."""
    x = np.array([features(s) for s in [*answerable, *unrelated]])
    y = np.r_[np.ones(len(answerable)), np.zeros(len(unrelated))]
    weights, bias = logistic(x, y)
    unrelated_scores = x[len(answerable) :] @ weights + bias
    shift = float(np.quantile(unrelated_scores, silence))
    keyword_coverage = max((s.coverage for s in unrelated if s.terms >= KEYWORD_TERMS), default=0.0)
    return replace(
        base,
        bias=round(bias - shift, 4),
        margin_weight=round(float(weights[0]), 4),
        agreement_weight=round(float(weights[1]), 4),
        zscore_weight=round(float(weights[2]), 4),
        keyword_terms=KEYWORD_TERMS,
        keyword_coverage=round(min(1.0, keyword_coverage + 0.05), 3),
    )
