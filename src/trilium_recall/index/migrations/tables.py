"""Migrations that add or change tables, carrying the rows they hold over (see __init__)."""

from __future__ import annotations

import itertools

import apsw
import numpy as np

from ..vectors import quantise


def m001_index(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE instances (
            name TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            watermark TEXT,             -- newest utcDateModified seen by a sync
            last_sync TEXT,             -- ISO time of the last successful tick or full run
            last_full TEXT,             -- ISO time of the last complete full comparison
            build_complete INTEGER NOT NULL DEFAULT 0,
            error TEXT
        );
        CREATE TABLE notes (
            instance TEXT NOT NULL,
            note_id TEXT NOT NULL,
            title TEXT NOT NULL,
            type TEXT NOT NULL,
            mime TEXT NOT NULL,
            area TEXT NOT NULL,
            paths TEXT NOT NULL,        -- JSON list of breadcrumbs ("Wiki › Summaries")
            parents TEXT NOT NULL,      -- JSON sorted list of parent note ids
            blob_id TEXT,
            content_hash TEXT,
            utc_modified TEXT NOT NULL,
            attr_fingerprint TEXT NOT NULL,
            skip_reason TEXT,           -- NULL when indexed
            PRIMARY KEY (instance, note_id)
        );
        CREATE TABLE sections (
            id INTEGER PRIMARY KEY,
            instance TEXT NOT NULL,
            note_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            heading TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            UNIQUE (instance, note_id, ordinal)
        );
        CREATE TABLE links (
            instance TEXT NOT NULL,
            source_id TEXT NOT NULL,
            target_id TEXT NOT NULL,
            kind TEXT NOT NULL,         -- link | include | <relation name>
            PRIMARY KEY (instance, source_id, target_id, kind)
        );
        CREATE INDEX links_by_target ON links (instance, target_id);
        CREATE VIRTUAL TABLE sections_fts USING fts5(
            title, heading, body, tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE section_vectors USING vec0(embedding float[384]);
        CREATE TABLE embedding_cache (
            hash TEXT NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (hash, model)
        );
        CREATE TABLE sent (
            session_id TEXT NOT NULL,
            instance TEXT NOT NULL,
            note_id TEXT NOT NULL,
            sent_at REAL NOT NULL,
            PRIMARY KEY (session_id, instance, note_id)
        );
        CREATE INDEX sent_by_age ON sent (sent_at);
        """
    )


def m002_oauth(db: apsw.Connection) -> None:
    """OAuth clients, codes and tokens (server/auth.py). Codes and tokens are stored only as SHA-256
    hashes, and a client's secret only as its hash, so the file never holds a usable credential."""
    db.execute(
        """
        CREATE TABLE oauth_clients (
            client_id TEXT PRIMARY KEY,
            info TEXT NOT NULL,         -- JSON OAuthClientInformationFull, client_secret hashed
            created_at REAL NOT NULL
        );
        CREATE TABLE oauth_codes (
            code_hash TEXT PRIMARY KEY,
            client_id TEXT NOT NULL,
            params TEXT NOT NULL,       -- JSON: scopes, redirect_uri, code_challenge, resource
            expires_at REAL NOT NULL
        );
        CREATE TABLE oauth_tokens (
            token_hash TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
            grant_id TEXT NOT NULL,     -- one login; refresh rotation and revocation act on it
            client_id TEXT NOT NULL,
            scopes TEXT NOT NULL,       -- JSON list
            resource TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
        """
    )


def m003_term_stats(db: apsw.Connection) -> None:
    """Document frequency per indexed term, for the keyword side of the relevance gate."""
    db.execute("CREATE VIRTUAL TABLE sections_vocab USING fts5vocab(sections_fts, 'row')")


def m004_password_check(db: apsw.Connection) -> None:
    """A salted scrypt of the login password, so a new password can end old OAuth grants."""
    db.execute(
        "CREATE TABLE auth_password "
        "(id INTEGER PRIMARY KEY CHECK (id = 1), salt BLOB NOT NULL, check_hash BLOB NOT NULL)"
    )


def m005_spent_credentials(db: apsw.Connection) -> None:
    """Used codes and rotated refresh tokens (SHA-256 only), remembered with their grant: one
    presented again means it leaked, and the grant it started or continued ends."""
    db.execute(
        """
        CREATE TABLE oauth_spent (
            credential_hash TEXT PRIMARY KEY,
            grant_id TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX oauth_spent_by_grant ON oauth_spent (grant_id);
        """
    )


def m006_snippets(db: apsw.Connection) -> None:
    """Meaning search embeds snippets (a few sentences, notes/snippets.py) instead of whole
    sections. Section vectors are dropped and every note is read again; the vector table itself is
    made by the store with the embedder's dimension, which `index_meta` records."""
    db.execute(
        """
        DROP TABLE section_vectors;
        CREATE TABLE snippets (
            id INTEGER PRIMARY KEY,
            section_id INTEGER NOT NULL,
            start INTEGER NOT NULL,     -- character span of its sentences in sections.text
            end INTEGER NOT NULL
        );
        CREATE INDEX snippets_by_section ON snippets (section_id);
        CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        DELETE FROM sections_fts;
        DELETE FROM sections;
        DELETE FROM links;
        DELETE FROM notes;
        DELETE FROM embedding_cache;
        UPDATE instances SET watermark = NULL, build_complete = 0;
        """
    )


def m007_activity(db: apsw.Connection) -> None:
    """What each /recall and MCP call sent (server/activity.py): note ids, titles, scores or the
    reason for silence. A prompt is kept only as its first words, or not at all
    (RECALL_LOG_PROMPTS=0)."""
    db.execute(
        """
        CREATE TABLE activity (
            id INTEGER PRIMARY KEY,     -- pruning keeps the newest rows by id
            at REAL NOT NULL,           -- unix time
            path TEXT NOT NULL,         -- hook | api | mcp | web
            session_id TEXT,
            instance TEXT,
            prompt_head TEXT,           -- NULL when prompts are not logged
            passages TEXT NOT NULL,     -- JSON list: instance, note_id, title, score
            silence TEXT,               -- why nothing was sent; NULL when something was
            took_ms REAL                -- NULL when the answer came too late
        );
        CREATE INDEX activity_by_time ON activity (at);
        CREATE INDEX activity_by_session ON activity (session_id, at);
        """
    )


def m008_note_errors(db: apsw.Connection) -> None:
    """Why each note that failed to index failed (its notes row says skip_reason "error").
    Made to run again harmlessly (m009 makes it for files that skipped it)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS note_errors (instance TEXT NOT NULL, note_id TEXT NOT NULL, "
        "reason TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (instance, note_id))"
    )


def m009_server_features(db: apsw.Connection) -> None:
    """Per instance, what its Trilium is and offers (trilium/features.py), and how far the minute
    tick has read its recent changes. Releases on the branch that added these numbered this
    step 8, so their files come here at schema 8 with the columns and without m008's table:
    made to run again harmlessly, and makes that table."""
    # appVersion; a JSON list such as ["history"]; the newest recent-change row read
    for column in ("trilium_version", "sync_features", "history_mark"):
        _add_column(db, "instances", column, "TEXT")
    m008_note_errors(db)


def m010_vector_blobs(db: apsw.Connection) -> None:
    """Snippet vectors in a plain table of float32 BLOBs instead of sqlite-vec's vec0: nothing
    searches vec0 (numpy searches the mirror, vectors.py), and a plain table writes 1.6-2.2x and
    fills the mirror at start 3-4.5x faster (bench/bench_vectors.py). A file with vec0 rows
    keeps them, copied as they are (vec0 stores float32 in the same byte order)."""
    old = db.execute(
        "SELECT 1 FROM sqlite_schema WHERE name = 'snippet_vectors' AND sql LIKE '%vec0%'"
    ).fetchone()
    db.execute(
        "CREATE TABLE snippet_vector_blobs (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
    )
    if old:
        db.execute(
            "INSERT INTO snippet_vector_blobs (id, embedding) "
            "SELECT rowid, embedding FROM snippet_vectors"
        )
        db.execute("DROP TABLE snippet_vectors")
    db.execute("ALTER TABLE snippet_vector_blobs RENAME TO snippet_vectors")


def m011_vector_codes(db: apsw.Connection) -> None:
    """Each snippet's int8 codes and section beside its float32 vector: the mirror holds codes
    (vectors.py) and a start reads only these (a quarter of the bytes, no join). Filled from
    the stored vectors a chunk at a time, so an upgraded index needs no rebuild."""
    db.execute(
        "CREATE TABLE snippet_codes "
        "(id INTEGER PRIMARY KEY, section_id INTEGER NOT NULL, code BLOB NOT NULL)"
    )
    rows = db.execute(
        "SELECT s.id, s.section_id, v.embedding FROM snippets s "
        "JOIN snippet_vectors v ON v.id = s.id"
    )
    while batch := list(itertools.islice(rows, 4096)):
        vectors = np.frombuffer(b"".join(row[2] for row in batch), dtype=np.float32)
        codes = quantise(vectors.reshape(len(batch), -1))
        db.executemany(
            "INSERT INTO snippet_codes VALUES (?, ?, ?)",
            [(row[0], row[1], code.tobytes()) for row, code in zip(batch, codes, strict=True)],
        )


def m012_reference_points(db: apsw.Connection) -> None:
    """The last calibration's reference points (reference_points.py): one row."""
    db.execute(
        "CREATE TABLE reference_points "
        "(id INTEGER PRIMARY KEY CHECK (id = 1), key TEXT NOT NULL, points TEXT NOT NULL)"
    )


def m016_notes_changes(db: apsw.Connection) -> None:
    """A count of writes to the notes table: the notes filed by date (Store.filed_notes) are
    read again when it moves, not after every tick. Made to run again harmlessly."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS notes_changes "
        "(id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL)"
    )
    db.execute("INSERT OR IGNORE INTO notes_changes VALUES (1, 0)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER IF NOT EXISTS notes_{event.lower()} AFTER {event} ON notes "
            "BEGIN UPDATE notes_changes SET count = count + 1; END"
        )


def m017_note_calendar(db: apsw.Connection) -> None:
    """Each note's place in the journal as its labels say (`#dateNote`, `#monthNote`: its own or
    its nearest ancestor's), so a journal whose day notes are not titled "21 - Thursday" is found
    by date too. Empty until the next full comparison writes each labelled note again (a change
    of its metadata only: nothing is read or embedded again). Made to run again harmlessly."""
    _add_column(db, "notes", "calendar", "TEXT")


def m019_snippet_hubness(db: apsw.Connection) -> None:
    """Each snippet's hubness beside its codes (hubness.py): NULL until the next start
    measures it (vector_rows.measure_hubness)."""
    db.execute("ALTER TABLE snippet_codes ADD COLUMN hubness REAL")


def m022_proven_sources(db: apsw.Connection) -> None:
    """The addresses that gave the login password in the last 30 days (access/rate_limits.py):
    kept, so an engine restarted while someone guesses still lets the owner's addresses past
    the shared limit. Made to run again harmlessly."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS proven_sources (source TEXT PRIMARY KEY, until REAL NOT NULL)"
    )


def m023_grant_times(db: apsw.Connection) -> None:
    """When each credential was spent (a refresh token presented again seconds after its
    rotation is the client's own parallel request, not a leak: access/oauth.py) and when each
    client last signed in (registration makes room by dropping those that never did first).
    Made to run again harmlessly."""
    _add_column(db, "oauth_spent", "spent_at", "REAL")
    if _add_column(db, "oauth_clients", "signed_in_at", "REAL"):
        # Unknown before: no client registered then is taken for one that never signed in.
        db.execute("UPDATE oauth_clients SET signed_in_at = created_at")


def _add_column(db: apsw.Connection, table: str, column: str, kind: str) -> bool:
    """Add a column unless the table has it (so a step runs again harmlessly); True if added."""
    if column in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
        return False
    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    return True
