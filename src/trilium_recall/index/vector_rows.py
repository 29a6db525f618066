"""The two vector tables of the index file, and the reads `Store` makes of them.

`snippet_vectors` keeps each snippet's exact float32 vector: read only for the few snippets a
search rescores or a section's best snippet. `snippet_codes` keeps its int8 codes and section
beside it (migration m011), so a start reads 384 bytes a snippet instead of 1,536 and no join:
at 262k snippets one bulk read of the codes fills the mirror (bench/RESULTS.md). Its hubness
(hubness.py, m019) is kept there too, NULL until measured; `index_meta` keeps the key of the
prompts it was measured against.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import apsw
import numpy as np

from ..errors import StoreError
from ..notes.records import SnippetInput
from .hubness import HUB_METHOD
from .vectors import Match, VectorIndex, quantise

# Rows a start reads at a time: each is a Python tuple until copied into the mirror, and
# 16,384 of them (plus their codes joined, 6 MiB) left 16 MiB more RSS behind at 50k sections
# than 2,048, which load as fast (0.28 s; bench/RESULTS.md, issue 26 memory).
LOAD_CHUNK = 2_048
# Text hashes looked up in one query (`by_hash`): one JSON list bound as one value.
HASH_CHUNK = 500


HUB_KEY = "hubness_reference"
# A snippet just stored: (snippet id, section id), its vector, its hubness (None: not measured).
Added = tuple[tuple[int, int], np.ndarray, float | None]


def insert_snippets(
    db: apsw.Connection,
    section_id: int,
    snippets: Sequence[SnippetInput],
    mirror: VectorIndex | None,
) -> list[Added]:
    """A new section's snippets, each with its vector, codes and hubness (measured by the
    `mirror` when it has its reference), as the mirror is to be given them."""
    vectors = [snippet.vector for snippet in snippets]
    measured = mirror.hubness_of(np.stack(vectors)) if mirror and vectors else None
    rows: list[Added] = []
    for n, snippet in enumerate(snippets):
        db.execute(
            "INSERT INTO snippets (section_id, start, end, hash) VALUES (?, ?, ?, ?)",
            (section_id, snippet.start, snippet.end, snippet.hash),
        )
        snippet_id = db.last_insert_rowid()
        hub = None if measured is None else float(measured[n])
        insert(db, snippet_id, section_id, snippet.vector, hub)
        rows.append(((snippet_id, section_id), snippet.vector, hub))
    return rows


def insert(
    db: apsw.Connection, snippet_id: int, section_id: int, vector: np.ndarray, hub: float | None
) -> None:
    vector = np.asarray(vector, dtype=np.float32)
    db.execute(
        "INSERT INTO snippet_vectors (id, embedding) VALUES (?, ?)", (snippet_id, vector.tobytes())
    )
    db.execute(
        "INSERT INTO snippet_codes (id, section_id, code, hubness) VALUES (?, ?, ?, ?)",
        (snippet_id, section_id, quantise(vector).tobytes(), hub),
    )


def delete(db: apsw.Connection, snippet_ids: Sequence[tuple[Any, ...]]) -> None:
    """`snippet_ids` as rows of one id each (as a SELECT of them returns)."""
    db.executemany("DELETE FROM snippet_vectors WHERE id = ?", snippet_ids)
    db.executemany("DELETE FROM snippet_codes WHERE id = ?", snippet_ids)


def load(db: apsw.Connection, vectors: VectorIndex) -> int:
    """Fill the mirror from the codes: whole chunks into arrays allocated once. (Reading all
    rows at once would hold every row's Python objects; chunks keep the peak near steady.) Then
    the float32 rows of the first slots, for the exact z-score (vectors.SAMPLE_ROWS)."""
    total = int(db.execute("SELECT count(*) FROM snippet_codes").fetchone()[0])  # type: ignore[index]
    vectors.load(total, _chunks(db, vectors.dim))
    vectors.load_floats(lambda ids: exact(db, ids))
    return total


def _chunks(db: apsw.Connection, dim: int) -> Iterator[tuple[np.ndarray, ...]]:
    rows = db.execute("SELECT id, section_id, code, hubness FROM snippet_codes")
    while batch := list(itertools.islice(rows, LOAD_CHUNK)):
        ids = np.fromiter((row[0] for row in batch), np.int64, len(batch))
        sections = np.fromiter((row[1] for row in batch), np.int64, len(batch))
        codes = np.frombuffer(b"".join(row[2] for row in batch), np.int8).reshape(-1, dim)
        hubs = np.array([row[3] for row in batch], dtype=np.float32)  # None → NaN
        yield ids, sections, codes, hubs


def measure_hubness(
    db: apsw.Connection,
    transaction: Callable[[], AbstractContextManager[apsw.Connection]],
    vectors: VectorIndex,
    reference: np.ndarray,
    bank: str,
) -> int:
    """Measure against `reference` what the file's mirror lacks (every row again for another
    `bank` key or HUB_METHOD) and keep it a block at a time, each in a `transaction` of its
    own; how many rows. A full disk costs the keeping (measured again at the next start), not
    the hubness."""
    key = f"{HUB_METHOD} against {bank}"

    def keep(ids: np.ndarray, codes: np.ndarray, hubs: np.ndarray) -> None:
        with contextlib.suppress(StoreError), transaction() as kept:
            keep_hubness(kept, ids, codes, hubs, key)

    return vectors.set_reference(reference, every=hubness_key(db) != key, keep=keep)


def hubness_key(db: apsw.Connection) -> str | None:
    """The key of the prompts the kept hubness was measured against (None: never measured)."""
    row = db.execute("SELECT value FROM index_meta WHERE key = ?", (HUB_KEY,)).fetchone()
    return None if row is None else str(row[0])


def keep_hubness(
    db: apsw.Connection, ids: np.ndarray, codes: np.ndarray, hubs: np.ndarray, key: str
) -> None:
    """Each snippet's hubness, where the row still holds the codes it was measured from (an id
    a note saved again meanwhile reused is left for the next start), and the key of how and
    against what it was measured."""
    db.executemany(
        "UPDATE snippet_codes SET hubness = ? WHERE id = ? AND code = ?",
        (
            (float(hub), int(snippet_id), code.tobytes())
            for snippet_id, code, hub in zip(ids, codes, hubs, strict=True)
        ),
    )
    db.execute("INSERT OR REPLACE INTO index_meta VALUES (?, ?)", (HUB_KEY, key))


def exact(db: apsw.Connection, snippet_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The float32 vectors of these snippets (those no longer stored are left out)."""
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(snippet_ids), 1000):  # well under SQLite's variable limit
        part = list(snippet_ids[start : start + 1000])
        marks = ",".join("?" * len(part))
        for snippet_id, blob in db.execute(
            f"SELECT id, embedding FROM snippet_vectors WHERE id IN ({marks})", part
        ):
            found[snippet_id] = np.frombuffer(blob, dtype=np.float32)
    return found


def by_hash(db: apsw.Connection, hashes: Iterable[str]) -> dict[str, np.ndarray]:
    """The float32 vector of each text hash a stored snippet embedded (any one of those that
    share it): the sync's cache. The file holds one model's vectors (`ensure_vector_table`
    refuses another), so the hash alone names a vector."""
    found: dict[str, np.ndarray] = {}
    wanted = sorted(set(hashes))
    for start in range(0, len(wanted), HASH_CHUNK):
        for text_hash, blob in db.execute(
            "SELECT p.hash, v.embedding FROM snippets p JOIN snippet_vectors v ON v.id = p.id "
            "WHERE p.hash IN (SELECT value FROM json_each(?)) GROUP BY p.hash",
            (json.dumps(wanted[start : start + HASH_CHUNK]),),
        ):
            found[text_hash] = np.frombuffer(blob, dtype=np.float32)
    return found


def best_snippets(
    db: apsw.Connection, section_ids: Sequence[int], query: np.ndarray, hub_weight: float
) -> dict[int, Match]:
    """Each stored section's best snippet for the query, as meaning search picks it: by exact
    cosine less `hub_weight` times its kept hubness (none kept: by cosine)."""
    if not section_ids:
        return {}
    found: dict[int, tuple[float, Match]] = {}
    marks = ",".join("?" * len(section_ids))
    for snippet_id, section_id, blob, hub in db.execute(
        "SELECT s.id, s.section_id, v.embedding, c.hubness FROM snippets s "
        "JOIN snippet_vectors v ON v.id = s.id JOIN snippet_codes c ON c.id = s.id "
        f"WHERE s.section_id IN ({marks})",
        tuple(section_ids),
    ):
        cosine, hub = float(np.frombuffer(blob, dtype=np.float32) @ query), hub or 0.0
        score = cosine - hub_weight * hub
        if section_id not in found or score > found[section_id][0]:
            found[section_id] = (score, Match(section_id, cosine, snippet_id, hub))
    return {section_id: match for section_id, (_, match) in found.items()}
