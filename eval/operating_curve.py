"""The gate's held-out trade-off: hit@3 against silence as the training silence target moves.

For each corpus held out, the new gate is fitted on the others (the same `fit` as
evaluate.py) with the bias set for several shares of their unrelated prompts kept silent, and
scored on the held-out corpus. "open" passes every prompt: the ranking's own ceiling for hit@3.

    python eval/operating_curve.py
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from evaluate import fit, labelled_signals, load_all, opened, product, score
from fit import Variant, fit_gate

TRAIN_SILENCES = (0.85, 0.90, 0.93, 0.95, 0.97, 0.99)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    corpora = load_all()
    print("| held out | train silence | hit@3 | silence | near-miss silence |")
    print("|---|---|---|---|---|")
    for name, corpus in corpora.items():
        train = [c for n, c in corpora.items() if n != name]
        fitted = fit(train, Variant.NEW)
        ranking = Variant.NEW.ranking
        answerable, unrelated = labelled_signals(train, ranking)
        for target in (*TRAIN_SILENCES, None):
            gate = (
                opened(fitted)
                if target is None
                else replace(
                    fit_gate(answerable, unrelated, Variant.NEW, target, base=fitted),
                    neighbour_cosine_gap=fitted.neighbour_cosine_gap,
                )
            )
            row = score([corpus], product(gate, ranking))
            label = "open" if target is None else f"{target:.2f}"
            print(
                f"| {name} | {label} | {row['hit@3']:.3f} | {row['silence']:.3f} "
                f"| {row['near-miss silence'] or 0:.3f} |"
            )


if __name__ == "__main__":
    main()
