"""The index file: notes, sections, links, FTS5, snippet vectors, sessions.

One SQLite file (apsw + sqlite-vec, WAL). Each note's writes happen in one transaction, so a
crash never leaves a note half-written; queries scan the in-memory int8 mirror in
`vectors.py`, kept in step after each commit, and rescore from the float32 rows
(`vector_rows.py`). Opening the file (private modes, sqlite-vec, migrations) is `file.py`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from ..errors import StoreError
from ..notes.records import FiledNote, NoteRecord, SectionHit, SectionInput
from ..notes.sections import TEXT_LINK_KINDS
from . import note_failures, note_stats, vector_rows
from .file import ensure_vector_table, index_errors, open_db, own_errors
from .hubness import HUB_WEIGHT
from .instance_rows import InstanceRows
from .terms import cjk_pairs, index_term
from .transactions import write_transaction
from .vector_rows import Added
from .vectors import Match, VectorIndex

SKIP_REASONS = (
    "archived", "hidden", "protected", "plumbing", "type", "unknown type", "error",
)  # fmt: skip


# The notes table's columns in NoteRecord's order: written by name, read back into the record.
_NOTE_COLUMNS = ", ".join(field.name for field in dataclasses.fields(NoteRecord))


@own_errors
class Store(InstanceRows):
    """One connection to the index file, and the shared vector mirror when given one.

    The mirror's dimension and model are the embedder's: the vector table is made with them and
    the file remembers them, so an index built by another model is refused with a clear message.
    """

    def __init__(
        self, path: Path, vectors: VectorIndex | None = None, *, read_only: bool = False
    ) -> None:
        """`read_only`: a connection that cannot change the file, for the commands that only
        read: what they would keep (hubness, a calibration) is measured and not kept, as on a
        full disk."""
        self.path = path
        self.db = open_db(path, read_only)
        self._vectors = vectors
        self._sections: tuple[object, int] = (None, 0)  # (when counted, how many)
        self._filed: tuple[object, list[FiledNote]] = (None, [])  # (when read, which)
        self._parents: tuple[object, frozenset[tuple[str, str]]] = (None, frozenset())
        if vectors is not None:
            try:
                with index_errors(path):
                    ensure_vector_table(self.db, path, vectors.dim, vectors.model)
            except BaseException:
                self.db.close()
                raise

    @property
    def vectors(self) -> VectorIndex:
        if self._vectors is None:
            raise StoreError("this index connection was opened without the vector mirror")
        return self._vectors

    def close(self) -> None:
        self.db.close()

    def _scalar(self, sql: str, params: tuple[object, ...] = ()) -> Any:
        row = self.db.execute(sql, params).fetchone()
        assert row is not None, sql  # only used for aggregates, which always give a row
        return row[0]

    @contextmanager
    def atomic(self, wait_s: float | None = None) -> Iterator[apsw.Connection]:
        """One write transaction, holding the lock from its start; nested ones are savepoints."""
        with index_errors(self.path), write_transaction(self.db, wait_s):
            yield self.db

    def load_vectors(self) -> int:
        """Fill the mirror from the index file at start (vector_rows.load); the row count."""
        return vector_rows.load(self.db, self.vectors)

    def exact_vectors(self, snippet_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The float32 vectors the mirror's int8 codes stand for: searches rescore with them."""
        return vector_rows.exact(self.db, snippet_ids)

    def best_snippets(
        self, section_ids: Sequence[int], query: np.ndarray, hub_weight: float = HUB_WEIGHT
    ) -> dict[int, Match]:
        """Each stored section's best snippet as meaning search picks it (unknown ones left out)."""
        return vector_rows.best_snippets(self.db, section_ids, query, hub_weight)

    def cached_vectors(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The vector of each text hash a live snippet embedded: what a sync need not embed."""
        return vector_rows.by_hash(self.db, hashes)

    # -- instances (the table's own rows: instance_rows.py) -----------------------------------

    def forget_instance(self, name: str) -> None:
        """What an instance leaves once each of its notes is deleted (`delete_note`): its sent
        marks and its row. Until then it is recorded, so an interrupted drop goes on later."""
        with self.atomic() as db:
            db.execute("DELETE FROM sent WHERE instance = ?", (name,))
            db.execute("DELETE FROM instances WHERE name = ?", (name,))

    # -- notes -------------------------------------------------------------------------------

    def known_notes(self, instance: str) -> dict[str, NoteRecord]:
        rows = self.db.execute(f"SELECT {_NOTE_COLUMNS} FROM notes WHERE instance = ?", (instance,))
        known = {}
        for row in rows:
            fields = list(row)
            fields[6], fields[7] = tuple(json.loads(fields[6])), tuple(json.loads(fields[7]))
            known[row[1]] = NoteRecord(*fields)
        return known

    def save_note(
        self,
        note: NoteRecord,
        sections: Sequence[SectionInput] | None,
        links: Iterable[tuple[str, str]] = (),
        failure: str | None = None,
    ) -> None:
        """Write a note in one transaction. `sections=None` keeps the stored sections and the
        links its text makes, and `links` are then its named relations; a `failure` says why a
        note skipped for "error" failed (overview.failed_notes)."""
        removed: list[int] = []
        added: list[Added] = []
        with self.atomic() as db:
            before = db.execute(
                "SELECT content_hash FROM notes WHERE instance = ? AND note_id = ?",
                (note.instance, note.note_id),
            ).fetchone()
            paths, parents = json.dumps(note.paths, ensure_ascii=False), json.dumps(note.parents)
            values = {**dataclasses.asdict(note), "paths": paths, "parents": parents}
            marks = ",".join("?" * len(values))
            db.execute(
                f"INSERT OR REPLACE INTO notes ({_NOTE_COLUMNS}) VALUES ({marks})",
                tuple(values.values()),
            )
            if failure is not None:
                note_failures.record(db, note.instance, note.note_id, failure)
            elif sections is not None:  # read and written whole: what failed before is over
                note_failures.clear(db, note.instance, note.note_id)
            if note.skip_reason is not None:
                sections = []
                links = ()
            if sections is not None:
                removed = self._delete_sections(note.instance, note.note_id)
                for section in sections:
                    added += self._insert_section(note, section)
                if before is not None and note.content_hash != before[0]:  # sent_marks.py
                    db.execute(  # a session that had the old text is sent the new one
                        "DELETE FROM sent WHERE instance = ? AND note_id = ?",
                        (note.instance, note.note_id),
                    )
            else:
                self._retitle_fts(note)
            self._replace_links(note, links, text_read=sections is not None)
        self._mirror(removed, added)

    def _replace_links(
        self, note: NoteRecord, links: Iterable[tuple[str, str]], text_read: bool
    ) -> None:
        """Its links anew; with its text unread, those the text makes stay as they were."""
        kept = [] if text_read else sorted(TEXT_LINK_KINDS)
        self.db.execute(
            "DELETE FROM links WHERE instance = ? AND source_id = ? "
            "AND kind NOT IN (SELECT value FROM json_each(?))",
            (note.instance, note.note_id, json.dumps(kept)),
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO links VALUES (?, ?, ?, ?)",
            [(note.instance, note.note_id, target, kind) for target, kind in links],
        )

    def _mirror(self, removed: list[int], added: list[Added]) -> None:
        """Bring the vector mirror in step with what was just committed."""
        if self._vectors is None:
            return
        self._vectors.remove_sections(removed)
        if added:
            rows, vectors, hubs = zip(*added, strict=True)
            self._vectors.add(list(rows), np.stack(vectors), list(hubs))

    def measure_hubness(self, vectors: VectorIndex, reference: np.ndarray, bank: str) -> int:
        """This file's snippets' hubness against `reference`, measured and kept (vector_rows)."""
        return vector_rows.measure_hubness(self.db, self.atomic, vectors, reference, bank)

    def note_failed(self, instance: str, note_id: str, why: str) -> None:
        """Its new text could not be read: its last version keeps serving, the failure shown."""
        with self.atomic() as db:
            note_failures.record(db, instance, note_id, note_failures.KEPT + why)

    def delete_note(self, instance: str, note_id: str) -> None:
        with self.atomic() as db:
            removed = self._delete_sections(instance, note_id)
            for table in ("notes", "note_errors"):
                db.execute(
                    f"DELETE FROM {table} WHERE instance = ? AND note_id = ?", (instance, note_id)
                )
            db.execute(
                "DELETE FROM links WHERE instance = ? AND (source_id = ? OR target_id = ?)",
                (instance, note_id, note_id),
            )
        self._mirror(removed, [])

    def _insert_section(self, note: NoteRecord, section: SectionInput) -> list[Added]:
        self.db.execute(
            "INSERT INTO sections (instance, note_id, ordinal, heading, text, hash) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                note.instance,
                note.note_id,
                section.ordinal,
                section.heading,
                section.text,
                section.hash,
            ),
        )
        section_id = self.db.last_insert_rowid()
        self.db.execute(
            "INSERT INTO sections_fts (rowid, title, heading, body) VALUES (?, ?, ?, ?)",
            (section_id, *map(cjk_pairs, (note.title, section.heading, section.text))),
        )
        return vector_rows.insert_snippets(self.db, section_id, section.snippets, self._vectors)

    def _delete_sections(self, instance: str, note_id: str) -> list[int]:
        ids = [
            row[0]
            for row in self.db.execute(
                "SELECT id FROM sections WHERE instance = ? AND note_id = ?", (instance, note_id)
            )
        ]
        for section_id in ids:
            self.db.execute("DELETE FROM sections_fts WHERE rowid = ?", (section_id,))
            snippet_ids = self.db.execute(
                "SELECT id FROM snippets WHERE section_id = ?", (section_id,)
            ).fetchall()
            vector_rows.delete(self.db, snippet_ids)
            self.db.execute("DELETE FROM snippets WHERE section_id = ?", (section_id,))
        self.db.execute(
            "DELETE FROM sections WHERE instance = ? AND note_id = ?", (instance, note_id)
        )
        return ids

    def _retitle_fts(self, note: NoteRecord) -> None:
        self.db.execute(
            "UPDATE sections_fts SET title = ? WHERE rowid IN "
            "(SELECT id FROM sections WHERE instance = ? AND note_id = ?)",
            (cjk_pairs(note.title), note.instance, note.note_id),
        )

    # -- counts ------------------------------------------------------------------------------

    def holds_notes(self, instance: str) -> bool:
        """Whether any note of `instance` is indexed (the answer path asks it during a build)."""
        return bool(
            self._scalar(
                "SELECT EXISTS (SELECT 1 FROM notes WHERE instance = ? AND skip_reason IS NULL)",
                (instance,),
            )
        )

    def counts(self, instance: str) -> dict[str, object]:
        notes = self._scalar(
            "SELECT count(*) FROM notes WHERE instance = ? AND skip_reason IS NULL", (instance,)
        )
        sections = self._scalar("SELECT count(*) FROM sections WHERE instance = ?", (instance,))
        skipped = dict.fromkeys(SKIP_REASONS[:4], 0)
        for reason, count in self.db.execute(
            "SELECT skip_reason, count(*) FROM notes "
            "WHERE instance = ? AND skip_reason IS NOT NULL GROUP BY skip_reason",
            (instance,),
        ):
            skipped[reason] = count
        return {"notes": notes, "sections": sections, "skipped": skipped}

    # -- search support ----------------------------------------------------------------------

    def keyword_search(self, match: str, limit: int) -> list[tuple[int, float]]:
        """(section id, bm25) best first; title and heading weigh more than body."""
        return [
            (row[0], row[1])
            for row in self.db.execute(
                "SELECT rowid, bm25(sections_fts, 4.0, 2.0, 1.0) AS rank FROM sections_fts "
                "WHERE sections_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
        ]

    def term_document_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(sections in the index, sections containing each term) for IDF weights: each term a
        word, counted under the form the index holds it (`terms.index_term`)."""
        total = self._section_count()
        counts = {}
        for term in terms:
            row = self.db.execute(
                "SELECT doc FROM sections_vocab WHERE term = ?", (index_term(term),)
            )
            found = row.fetchone()
            counts[term] = found[0] if found else 0
        return total, counts

    def _section_count(self) -> int:
        """Counted again only once a commit (this connection's or another's) may have changed
        it: count(*) walks a whole index, 3.6 ms a search at 250,000 sections."""
        stamp = (self._scalar("PRAGMA data_version"), self.db.total_changes())
        if stamp != self._sections[0]:
            self._sections = (stamp, self._scalar("SELECT count(*) FROM sections"))
        return self._sections[1]

    def filed_notes(self) -> list[FiledNote]:
        """Each indexed note whose title or breadcrumbs hold a digit (where a date can be), read
        again only after a write to the notes: asked by every prompt naming a day. The same
        list object while they stay the same, so what is built from it can be kept."""
        if (stamp := self._scalar("SELECT count FROM notes_changes")) != self._filed[0]:
            rows = self.db.execute(
                "SELECT instance, note_id, title, paths, calendar FROM notes "
                "WHERE skip_reason IS NULL "
                "AND (title GLOB '*[0-9]*' OR paths GLOB '*[0-9]*' OR calendar IS NOT NULL)"
            )
            notes = [FiledNote(i, n, t, tuple(json.loads(p)), c) for i, n, t, p, c in rows]
            self._filed = (stamp, self._filed[1] if notes == self._filed[1] else notes)
        return self._filed[1]

    def has_children(self, instance: str, note_id: str) -> bool:
        """Whether an indexed note is filed under this one; all parents read once a write to
        the notes (a scan per question took 17 ms at 50,000 notes, reading them all 30)."""
        if (stamp := self._scalar("SELECT count FROM notes_changes")) != self._parents[0]:
            self._parents = (stamp, note_stats.parents(self.db))
        return (instance, note_id) in self._parents[1]

    def section_hits(self, ids: Sequence[int]) -> dict[int, SectionHit]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            "SELECT s.id, s.instance, s.note_id, n.title, n.area, n.paths, s.heading, s.text, "
            "n.calendar, s.ordinal "
            f"FROM sections s JOIN notes n USING (instance, note_id) WHERE s.id IN ({marks})",
            tuple(ids),
        )
        return {
            i: SectionHit(i, instance, note, title, area, tuple(json.loads(p)), head, text, day, at)
            for i, instance, note, title, area, p, head, text, day, at in rows
        }

    def snippet_spans(self, snippet_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """Where each snippet's sentences sit in its section's text."""
        marks = ",".join("?" * len(snippet_ids))
        rows = self.db.execute(
            f"SELECT id, start, end FROM snippets WHERE id IN ({marks})", tuple(snippet_ids)
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def section_ids_of(self, instance: str, note_ids: Sequence[str]) -> list[int]:
        """Their sections, each note's in its order (search/dates/filed.py sends a long note's
        first few)."""
        marks = ",".join("?" * len(note_ids))
        return [
            row[0]
            for row in self.db.execute(
                f"SELECT id FROM sections WHERE instance = ? AND note_id IN ({marks}) "
                "ORDER BY note_id, ordinal",
                (instance, *note_ids),
            )
        ]

    def linked_from(
        self, instance: str, targets: Iterable[str], kinds: Sequence[str]
    ) -> dict[str, list[str]]:
        """For each target note, the notes whose relation in `kinds` points at it."""
        found: dict[str, list[str]] = {}
        marks = ",".join("?" * len(kinds))
        for target in set(targets):
            for (source,) in self.db.execute(
                f"SELECT source_id FROM links WHERE instance = ? AND target_id = ? "
                f"AND kind IN ({marks}) ORDER BY source_id",
                (instance, target, *kinds),
            ):
                found.setdefault(target, []).append(source)
        return found
