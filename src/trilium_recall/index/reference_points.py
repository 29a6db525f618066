"""The last calibration's reference points, kept so that a restart need not measure them again.

Measuring them scans every snippet's codes once per generic prompt and pseudo-prompt (364
scans: 6.4 s of a start at 370,000 snippets, bench/RESULTS.md), yet they change only with the
notes, and are measured again after each full comparison that changed the index. One row, as
JSON, under the key of what they were measured with: the generic-prompt bank, the model, the
keyword index's tokenizer and the name and marker lists (`calibration.calibration_key` makes
it; search/calibration.py writes and reads the row)."""

from __future__ import annotations

import json

from .store import Store


def save(store: Store, key: str, points: dict[str, object]) -> None:
    with store.atomic() as db:
        db.execute(
            "INSERT OR REPLACE INTO reference_points VALUES (1, ?, ?)", (key, json.dumps(points))
        )


def load(store: Store, key: str) -> dict[str, object] | None:
    """The kept points if they were measured with `key`'s bank and model."""
    row = store.db.execute("SELECT key, points FROM reference_points WHERE id = 1").fetchone()
    return json.loads(row[1]) if row is not None and row[0] == key else None
