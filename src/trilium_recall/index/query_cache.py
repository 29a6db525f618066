"""Query vectors kept in the index file, so a start or a calibration need not embed them again.

Calibration's pseudo-prompts (search/calibration.py), and the generic-prompt bank for a model
without shipped vectors (search/null_bank.py). Each `purpose` names the model and the use, and
keeps only the prompts its last use asked for: the table never grows past one bank and one set
of pseudo-prompts. (Passage vectors need no such table: the stored snippets hold them.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np

from .file import index_errors
from .store import Store


def load(store: Store, purpose: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
    """The kept vectors of these prompt hashes."""
    with index_errors(store.path):
        rows = store.db.execute(
            "SELECT hash, vector FROM query_cache "
            "WHERE purpose = ? AND hash IN (SELECT value FROM json_each(?))",
            (purpose, json.dumps(sorted(set(hashes)))),
        )
        return {text_hash: np.frombuffer(blob, dtype=np.float32) for text_hash, blob in rows}


def keep(
    store: Store, purpose: str, vectors: dict[str, np.ndarray], current: Iterable[str]
) -> None:
    """Keep these vectors, and forget the purpose's prompts that are not in `current`."""
    with store.atomic() as db:
        db.execute(
            "DELETE FROM query_cache "
            "WHERE purpose = ? AND hash NOT IN (SELECT value FROM json_each(?))",
            (purpose, json.dumps(sorted(set(current)))),
        )
        db.executemany(
            "INSERT OR REPLACE INTO query_cache VALUES (?, ?, ?)",
            [(purpose, h, np.asarray(v, np.float32).tobytes()) for h, v in vectors.items()],
        )
