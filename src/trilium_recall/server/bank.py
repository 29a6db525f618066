"""The generic-prompt bank as an index holds it: each snippet's hubness against it
(index/hubness.py), and the notebook's reference points (search/calibration.py), read from
what an earlier start kept or measured afresh."""

from __future__ import annotations

from ..index.embed import Embedder
from ..index.store import Store
from ..index.vectors import VectorIndex
from ..search.calibration import calibrate, last_calibration
from ..search.null_bank import GenericPrompts, bank_key


def read_bank(
    store: Store, vectors: VectorIndex, embedder: Embedder
) -> tuple[GenericPrompts, bool]:
    """The calibrated bank, and whether its reference points are stale.

    First start: ~1,300 query embeddings (~15 s); later starts read the cache, and the
    reference points the last calibration kept (measuring them scans every snippet ~360
    times)."""
    generic = measured_bank(store, vectors, embedder)
    if (kept := last_calibration(generic, store, embedder)) is not None:
        bank, measured_on = kept
        return bank, measured_on != len(vectors)
    return calibrate(generic, vectors, store, embedder), False


def measured_bank(store: Store, vectors: VectorIndex, embedder: Embedder) -> GenericPrompts:
    """The generic bank, and each snippet's hubness against it: what no earlier start measured
    and kept, or every snippet after the bank changed. Rows stored from then on are measured
    as they are stored."""
    generic = GenericPrompts.load(embedder, store)
    store.measure_hubness(vectors, generic.vectors, bank_key(generic.prompts, embedder.name))
    return generic
