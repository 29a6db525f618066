"""The null model: a bank of generic prompts that are about nobody's notes.

Coding chatter, general questions and small talk as people type them into an assistant
(`generic_prompts.txt`, written for this purpose and kept apart from every eval set). A prompt
resembling one of them more than it resembles any snippet of the notes is most likely not about
the notes: e5 cosines sit in a narrow band that moves with the corpus, but the distance to the
closest generic prompt moves with it. The bank's vectors ship beside it (`generic_prompts.npz`,
made by `eval/bank_vectors.py` with the bundled model), so no start embeds 1,300 prompts; if the
bank or the model ever differ from what they were made with, the bank is embedded once and kept
in the index file's query vectors instead.
"""

from __future__ import annotations

import contextlib
from importlib import resources

import numpy as np

from ..errors import StoreError
from ..index import query_cache
from ..index.embed import Embedder
from ..index.products import products
from ..index.store import Store
from ..index.vectors import VectorIndex
from ..notes.records import text_hash
from .candidates import GenericMatch, Reference

BANK_FILE = "generic_prompts.txt"
VECTORS_FILE = "generic_prompts.npz"
_BATCH = 32
# Calibration reads this many bank prompts (every n-th): a mean needs no more, and at 150k
# snippets the pass costs ~1 s of CPU per 100 prompts.
CALIBRATION_PROMPTS = 300
# A prompt comes as close to another prompt as 1.0 (the same question asked twice), the passage
# that answers it hardly past 0.92 (the eval's answerable prompts' best snippet: median 0.885,
# 90th percentile 0.912). A bank prompt closer than that is the prompt's twin: it says the
# question is a common one, not that the notes do not answer it. Counted at 0.92, a twin leaves
# the decision to the notes' side (a git manual asked "git reset --soft vs --mixed vs --hard",
# word for word a bank prompt, answered it; eval/RESULTS.md, stop 48).
TWIN_COSINE = 0.92


def bank_prompts() -> list[str]:
    """The bank's prompts: one a line; `#` lines are headings."""
    text = resources.files(__package__).joinpath(BANK_FILE).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def bank_key(prompts: list[str], model: str) -> str:
    """What the shipped vectors were made from: the model and every prompt."""
    return text_hash("\n".join([model, *prompts]))


def shipped_vectors(prompts: list[str], model: str) -> np.ndarray | None:
    """The packaged vectors, if they were made from exactly these prompts by this model."""
    source = resources.files(__package__).joinpath(VECTORS_FILE)
    if not source.is_file():
        return None
    with source.open("rb") as handle, np.load(handle) as data:
        if str(data["key"]) != bank_key(prompts, model):
            return None
        return np.asarray(data["vectors"], dtype=np.float32)


class GenericPrompts:
    """The bank's query vectors, the closest one to a prompt, and how close generic prompts
    come to this index (`offset`, from `calibrated()`), with the notebook's other reference
    points (`reference`, from `calibration.calibrate` with the index and the model)."""

    def __init__(
        self,
        prompts: list[str],
        vectors: np.ndarray,
        offset: float = 0.0,
        reference: Reference | None = None,
    ) -> None:
        self.prompts = prompts
        self.vectors = np.asarray(vectors, dtype=np.float32).reshape(len(prompts), -1)
        self.offset = offset
        self.reference = reference or Reference(offset)

    @classmethod
    def load(cls, embedder: Embedder, store: Store) -> GenericPrompts:
        """The shipped vectors, or else the bank embedded as queries, kept in the index file."""
        prompts = bank_prompts()
        shipped = shipped_vectors(prompts, embedder.name)
        if shipped is not None:
            return cls(prompts, shipped)
        return cls(prompts, query_vectors(store, embedder, prompts, "bank", _BATCH))

    def closest(self, query_vector: np.ndarray) -> GenericMatch:
        scores = self.vectors @ query_vector
        best = int(np.argmax(scores))
        return GenericMatch(float(scores[best]), self.prompts[best])

    def calibrated(self, vectors: VectorIndex, store: Store | None = None) -> GenericPrompts:
        """A copy whose `offset` is the mean margin generic prompts themselves reach on this
        index: their best snippet's cosine minus their closest *other* bank prompt's. Notes of
        developer documentation sit nearer to coding chatter than a cooking notebook does
        (offset -0.016 against -0.024, eval/RESULTS.md); the gate reads a prompt's margin
        above this offset, so one threshold holds on both. Cosines are the int8 scan's unless
        the index file (`store`) is given for exact ones. The notebook's other reference points
        need the index and the model: `calibration.calibrate` adds them."""
        if not self.measurable(vectors):
            why = "empty index" if not len(vectors) else "no generic-prompt bank"
            points = Reference(self.offset, reason=f"{why}: shipped defaults")
            return GenericPrompts(self.prompts, self.vectors, self.offset, points)
        picked = np.arange(0, len(self.prompts), max(1, len(self.prompts) // CALIBRATION_PROMPTS))
        nearest = products(self.vectors[picked], self.vectors.T)
        nearest[np.arange(len(picked)), picked] = -1.0  # a prompt is not its own neighbour
        exact = store.exact_vectors if store is not None else None
        closest = np.minimum(nearest.max(axis=1), TWIN_COSINE)
        margins = vectors.best_cosines(self.vectors[picked], exact) - closest
        offset = float(margins.mean())
        points = Reference(offset, reason="no index given: shipped defaults")
        return GenericPrompts(self.prompts, self.vectors, offset, points)

    def measurable(self, vectors: VectorIndex) -> bool:
        """Whether generic prompts can be measured on this index: it has snippets, the bank
        more than one prompt."""
        return bool(len(vectors)) and len(self.prompts) >= 2


def query_vectors(
    store: Store, embedder: Embedder, prompts: list[str], use: str, batch: int | None = None
) -> np.ndarray:
    """Query vectors for one `use` ("bank", "pseudo-prompts") kept in the index file: only
    prompts it lacks are embedded (`batch` at a time, or all at once) and kept, and the use's
    prompts no longer asked are forgotten; a full disk costs the keeping, not the vectors."""
    purpose = f"{embedder.name}/{use}"
    hashes = [text_hash(prompt) for prompt in prompts]
    cached = query_cache.load(store, purpose, hashes)
    missing = [p for p, h in zip(prompts, hashes, strict=True) if h not in cached]
    step = batch or max(1, len(missing))
    for start in range(0, len(missing), step):
        chunk = missing[start : start + step]
        fresh = {text_hash(p): v for p, v in zip(chunk, embedder.queries(chunk), strict=True)}
        with contextlib.suppress(StoreError):
            query_cache.keep(store, purpose, fresh, hashes)
        cached.update(fresh)
    return np.stack([cached[h] for h in hashes])
