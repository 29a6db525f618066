"""How close a snippet sits to any prompt at all, so meaning search can rank it down for that.

A few snippets (one shared try/catch example, a long table of shortcuts) sit close to almost any
prompt and crowd the meaning ranking of every notebook they are in: the hubness of
high-dimensional nearest-neighbour search. Meaning search ranks each snippet by its cosine less
HUB_WEIGHT times its hubness, its mean cosine with the HUB_NEIGHBOURS closest prompts of a
reference set (the generic bank, search/null_bank.py). That is the CSLS correction (Conneau et
al., "Word translation without parallel data", 2018: rank by 2·cos − r_query − r_target, that
is by cos − r_target / 2 for one query). Every cosine a caller sees stays the exact cosine.

Held out over ten corpora it raised the gate-open hit@3 on eight and lowered it on none
(eval/RESULTS.md, stop 46). A snippet's hubness is measured from its int8 codes once, as it is
stored, and kept in the index file beside them (vector_rows.py) with the key of how and against
which bank it was measured: a start measures only what is missing, or every row when either
changed (the whole bank against 262k snippets takes ~4.5 s of one core). A row not measured
yet ranks as a typical one (vectors.VectorIndex._fill_unmeasured).
"""

from __future__ import annotations

import numpy as np

from .products import products

HUB_NEIGHBOURS = 10
HUB_WEIGHT = 0.5
# How it is measured, recorded with the kept values: a change here measures every row again.
HUB_METHOD = f"mean cosine of the {HUB_NEIGHBOURS} closest, from int8 codes"
# Rows measured at a time (a block × the reference's prompts, as float32: ~20 MiB).
HUB_BLOCK = 4_096


def hubness(vectors: np.ndarray, reference: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Each row's mean cosine with its HUB_NEIGHBOURS closest reference prompts (rows given
    as vectors, or as int8 codes with their `scale`); zeros without a reference."""
    out = np.zeros(len(vectors), dtype=np.float32)
    if not len(reference):
        return out
    nearest = min(HUB_NEIGHBOURS, len(reference))
    scaled = (reference.T / np.float32(scale)).astype(np.float32)
    for start in range(0, len(vectors), HUB_BLOCK):
        block = np.asarray(vectors[start : start + HUB_BLOCK], np.float32)
        cosines = products(block, scaled)
        closest = np.partition(cosines, len(reference) - nearest, axis=1)[:, -nearest:]
        out[start : start + len(cosines)] = closest.mean(axis=1)
    return out
