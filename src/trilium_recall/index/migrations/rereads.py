"""Migrations that rebuild stored data from the notes' text: snippets cut again, hashed, the
keyword index stemmed or paired, notes marked to be read again (see __init__)."""

from __future__ import annotations

from typing import Any

import apsw

from ...notes.records import text_hash
from ...notes.snippets import snippet_prefix, snippet_text
from ..terms import cjk_pairs

# Snippets m014 hashes at a time: rows read by id ranges, so memory stays flat at any size.
_HASH_CHUNK = 4096


def m013_resplit_snippets(db: apsw.Connection) -> None:
    """Snippets are cut longer and without overlap (notes/snippets.py). Forgetting each note's
    blobId makes the start's full comparison read and split every note again; the old snippets
    answer until their note is rewritten, and text that did not change keeps its cached vector."""
    db.execute("UPDATE notes SET blob_id = NULL, utc_modified = '' WHERE skip_reason IS NULL")


def m014_snippet_hashes(db: apsw.Connection) -> None:
    """The live snippets are the embedding cache: each keeps the hash of the text it embedded,
    and a sync looks a text's vector up among them (`Store.cached_vectors`). The separate cache
    kept every vector ever embedded, never pruned: a second copy of each snippet's vector, and
    those of text no note holds any more. Each stored snippet's text is rebuilt as the sync
    built it (`snippet_text`) and hashed. Query vectors (calibration's pseudo-prompts, the
    generic-prompt bank for a model without shipped vectors) get a table of their own that
    keeps only the current prompts (query_cache.py); the old ones are embedded again
    when next needed rather than carried over without knowing their use."""
    db.execute(
        """
        ALTER TABLE snippets ADD COLUMN hash TEXT;  -- text_hash of the embedded text
        CREATE TABLE query_cache (
            purpose TEXT NOT NULL,      -- model and use, e.g. "<model>/bank"
            hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (purpose, hash)
        );
        """
    )
    last = 0
    # By id ranges rather than one cursor: no scan of `snippets` is open while it is updated.
    while rows := db.execute(
        "SELECT p.id, n.title, s.heading, s.text, p.start, p.end FROM snippets p "
        "JOIN sections s ON s.id = p.section_id JOIN notes n USING (instance, note_id) "
        "WHERE p.id > ? ORDER BY p.id LIMIT ?",
        (last, _HASH_CHUNK),
    ).fetchall():
        hashed = [_hash_of_stored(row) for row in rows]
        db.executemany("UPDATE snippets SET hash = ? WHERE id = ?", hashed)
        last = hashed[-1][1]
    db.execute("CREATE INDEX snippets_by_hash ON snippets (hash)")
    db.execute("DROP TABLE embedding_cache")


def _hash_of_stored(row: tuple[Any, ...]) -> tuple[str, int]:
    """(hash, id) of a stored snippet (id, note title, heading, section text, start, end)."""
    snippet_id, title, heading, text, start, end = row
    return text_hash(snippet_text(snippet_prefix(title, heading), text, start, end)), snippet_id


def m015_stemmed_keywords(db: apsw.Connection) -> None:
    """The keyword index stems (terms.py: FTS5's Porter stemmer over the same unicode61 split).
    Rebuilt from the sections and their notes' titles, which it only ever copied; its term
    counts (sections_vocab) are read from it, so that view is made again over the new table."""
    db.execute("DROP TABLE sections_vocab")
    db.execute("DROP TABLE sections_fts")
    db.execute(
        "CREATE VIRTUAL TABLE sections_fts USING fts5("
        "title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO sections_fts (rowid, title, heading, body) SELECT s.id, n.title, "
        "s.heading, s.text FROM sections s JOIN notes n USING (instance, note_id)"
    )
    db.execute("CREATE VIRTUAL TABLE sections_vocab USING fts5vocab(sections_fts, 'row')")


def m018_resplit_with_whole_lines(db: apsw.Connection) -> None:
    """A long section's pieces begin with the previous piece's last whole lines, not its last
    words run together (notes/sections.py): a split code note's pieces began mid-statement with
    three lines on one. Each note of more than one section is read and split again at the next
    full comparison, as after m013; the old pieces answer until then, and text that did not
    change keeps its cached vector."""
    db.execute(
        "UPDATE notes SET blob_id = NULL, utc_modified = '' WHERE skip_reason IS NULL AND "
        "(SELECT count(*) FROM sections s "
        "WHERE s.instance = notes.instance AND s.note_id = notes.note_id) > 1"
    )


def m020_read_again_for_new_text(db: apsw.Connection) -> None:
    """Alt text, captions, cut words, setext headings, no blank section: as after m013."""
    m013_resplit_snippets(db)


def m021_cjk_pairs(db: apsw.Connection) -> None:
    """CJK text in the keyword index as pairs of characters (terms.cjk_pairs), where it is."""
    db.create_scalar_function("cjk_pairs", _sql_pairs, 1, deterministic=True)
    db.execute(
        "UPDATE sections_fts SET title = cjk_pairs(title), heading = cjk_pairs(heading), "
        "body = cjk_pairs(body) WHERE rowid IN (SELECT rowid FROM sections_fts WHERE "
        "cjk_pairs(title) != title OR cjk_pairs(heading) != heading OR cjk_pairs(body) != body)"
    )


def _sql_pairs(*value: apsw.SQLiteValue) -> apsw.SQLiteValue:
    return cjk_pairs(value[0]) if isinstance(value[0], str) else value[0]
