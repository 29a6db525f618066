"""The areas a note falls into, best first, and how much each weighs in the ranking.

Best first: a note reachable through two areas (a clone) belongs to the better one, and the
weights fall in the same order (wiki > sources > journal = other). The weights are multipliers
on the fused rank score: small, because they break near-ties between equally good matches —
at 0.7 a hub page of the wiki outranked the one journal note that answered the prompt, and
hit@3 on the built-in notebook fell from 0.98 to 0.75 (eval/RESULTS.md).
"""

from __future__ import annotations

import math

AREAS = ("wiki", "sources", "journal", "other")
AREA_RANK = {area: rank for rank, area in enumerate(AREAS)}
DEFAULT_WEIGHTS = {"wiki": 1.0, "sources": 0.95, "journal": 0.9, "other": 0.9}


def parse_weights(text: str) -> dict[str, float]:
    """`wiki=1.0,journal=0.8` over the defaults; ValueError names the bad part."""
    weights = dict(DEFAULT_WEIGHTS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        area, sep, number = (piece.strip() for piece in part.partition("="))
        if not sep or area not in AREAS:
            raise ValueError(f"expected area=weight with area in {', '.join(AREAS)}, got {part!r}")
        try:
            weights[area] = float(number)
        except ValueError:
            raise ValueError(f"weight for {area} is not a number: {number!r}") from None
        if not 0 < weights[area] < math.inf:
            raise ValueError(f"weight for {area} must be a number above 0, got {number!r}")
    return weights
