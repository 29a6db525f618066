"""The gate's held-out trade-off: hit@3 against silence as the training silence target moves.

For each corpus held out, the gate is fitted on the other two (the same `fit` as evaluate.py)
with the bias set for several shares of their unrelated prompts kept silent, and scored on the
held-out corpus. "open" passes every prompt: the ranking's own ceiling for hit@3.

    python eval/operating_curve.py
"""

from __future__ import annotations

from dataclasses import replace

from evaluate import fit, load_all, pooled, product, score
from fit import fit_gate

from trilium_recall.gate import FITTED

TRAIN_SILENCES = (0.80, 0.85, 0.90, 0.93, 0.95, 0.97, 0.99)


def main() -> None:
    corpora, signals = load_all()
    print("| held out | train silence | hit@3 | silence |\n|---|---|---|---|")
    for name, corpus in corpora.items():
        train = [c for n, c in corpora.items() if n != name]
        gap = fit(train, signals, FITTED).neighbour_cosine_gap
        for target in TRAIN_SILENCES:
            gate = replace(
                fit_gate(*pooled(train, signals), FITTED, target), neighbour_cosine_gap=gap
            )
            row = score([corpus], product(gate))
            print(f"| {name} | {target:.2f} | {row['hit@3']:.3f} | {row['silence']:.3f} |")
        row = score([corpus], product(replace(FITTED, bias=1e6, neighbour_cosine_gap=gap)))
        print(f"| {name} | open | {row['hit@3']:.3f} | {row['silence']:.3f} |")


if __name__ == "__main__":
    main()
