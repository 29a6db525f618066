from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlite_vec

from conftest import add_note, reopened_at_schema, undo_m014, undo_m019
from trilium_recall.errors import IndexInUse, IndexUnusable, StoreError
from trilium_recall.index import sent_marks, vector_rows
from trilium_recall.index.file import hold_index
from trilium_recall.index.migrations import (
    MIGRATIONS,
    m009_server_features,
    m018_resplit_with_whole_lines,
)
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import ExactVectors, Match, VectorIndex
from trilium_recall.notes.records import text_hash
from trilium_recall.notes.sections import Section
from trilium_recall.notes.snippets import split_snippets


def _unit(*values: float) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def _exact(vectors: dict[int, np.ndarray]) -> ExactVectors:
    """The float32 rows a Store would read from the index file, from a dict."""
    return lambda ids: {i: vectors[i] for i in ids if i in vectors}


def test_vector_index_answers_per_section_by_its_best_snippet() -> None:
    index = VectorIndex(384)
    floats = {10: _unit(1, 0), 11: _unit(0, 1), 12: _unit(1, 1), 13: _unit(1, 0.01)}
    # (snippet id, section id): section 1 has two snippets, section 2 one.
    index.add([(10, 1), (11, 1), (12, 2)], np.stack([floats[10], floats[11], floats[12]]))
    assert index.search(_unit(0, 1), 2, _exact(floats)).hits == [
        Match(1, pytest.approx(1.0), 11),
        Match(2, pytest.approx(0.7071, abs=1e-4), 12),
    ]
    index.remove_sections([1])
    assert [m.section_id for m in index.search(_unit(1, 0), 3, _exact(floats)).hits] == [2]
    index.add([(13, 3)], np.stack([floats[13]]))  # reuses a freed slot
    assert index.search(_unit(1, 0), 1, _exact(floats)).hits[0].snippet_id == 13
    assert len(index) == 2


def test_vector_index_grows_past_its_first_capacity() -> None:
    index = VectorIndex(384)
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.add([(i, i // 3) for i in range(3000)], vectors)
    exact = _exact(dict(enumerate(vectors)))
    neighbours = index.search(vectors[2999], 1, exact)
    assert neighbours.hits[0] == Match(999, pytest.approx(1.0), 2999)
    assert neighbours.zscore(1.0) > 10  # random unit vectors barely correlate
    assert index.best_cosines(vectors[[0, 1500, 2999]], exact) == pytest.approx([1.0] * 3)
    # The codes alone: within their rounding (a code step is 0.002 of a component).
    assert index.best_cosines(vectors[[0, 1500]]) == pytest.approx([1.0] * 2, abs=0.01)


def test_a_store_opened_for_another_embedding_size_is_refused(tmp_path) -> None:
    path = tmp_path / "recall.sqlite3"
    Store(path, VectorIndex(384, "e5-small-q4")).close()
    with pytest.raises(IndexUnusable, match=r"built with e5-small-q4 \(384 dimensions\); this "
                       r"engine embeds with e5-base \(768\)"):  # fmt: skip
        Store(path, VectorIndex(768, "e5-base"))


def test_a_store_opened_for_another_model_of_the_same_size_is_refused(tmp_path) -> None:
    path = tmp_path / "recall.sqlite3"
    Store(path, VectorIndex(384, "e5-small-q4")).close()
    Store(path, VectorIndex(384, "e5-small-q4")).close()  # the same model opens it again
    with pytest.raises(IndexUnusable, match=r"built with e5-small-q4 .* embeds with other-384"):
        Store(path, VectorIndex(384, "other-384"))


def test_an_index_from_before_the_model_was_recorded_learns_it_once(tmp_path) -> None:
    path = tmp_path / "recall.sqlite3"
    Store(
        path, VectorIndex(384)
    ).close()  # dimension only, as indexes built before this release recorded
    Store(path, VectorIndex(384, "e5-small-q4")).close()
    with pytest.raises(StoreError, match="built with e5-small-q4"):
        Store(path, VectorIndex(384, "other-384"))


def test_delete_note_clears_every_table(store, embedder) -> None:
    add_note(
        store,
        embedder,
        "a",
        "Alpha",
        [("Alpha", "alpha text"), ("Alpha › b", "beta text")],
        links=[("b", "link")],
    )
    add_note(store, embedder, "b", "Beta", [("Beta", "other words")], links=[("a", "link")])
    store.delete_note("default", "a")
    db = store.db
    assert db.execute("SELECT count(*) FROM notes WHERE note_id = 'a'").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM sections WHERE note_id = 'a'").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM sections_fts").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM snippets").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM snippet_vectors").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM snippet_codes").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM links").fetchone()[0] == 0
    assert len(store.vectors) == 1


def test_reopen_keeps_data_and_schema_version(tmp_path, embedder) -> None:
    path = tmp_path / "recall.sqlite3"
    first = Store(path, VectorIndex(embedder.dim, embedder.name))
    add_note(first, embedder, "a", "Alpha", [("Alpha", "alpha text")])
    first.close()
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert again.load_vectors() == 1
    assert [section_id for section_id, _ in again.keyword_search('"alpha"', 5)] == [1]


@pytest.mark.parametrize("where", ["file-in-the-way", "read-only-filesystem"])
def test_unwritable_data_dir_is_a_clear_store_error(tmp_path, where) -> None:
    if where == "file-in-the-way":
        (tmp_path / "data").write_text("not a directory")
        path = tmp_path / "data" / "recall.sqlite3"
    else:
        path = Path("/proc/self/recall-data/recall.sqlite3")  # EROFS/ENOENT even for root
    with pytest.raises(StoreError, match="cannot open the index at"):
        Store(path)


def test_load_vectors_in_chunks_restores_every_vector(tmp_path, embedder, monkeypatch) -> None:
    path = tmp_path / "recall.sqlite3"
    first = Store(path, VectorIndex(embedder.dim, embedder.name))
    for i in range(7):
        add_note(first, embedder, f"n{i}", f"Note {i}", [(f"Note {i}", f"words number {i}")])
    first.close()
    monkeypatch.setattr(vector_rows, "LOAD_CHUNK", 3)  # three chunks, the last one short
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.load_vectors() == 7
    assert len(again.vectors) == 7
    query = embedder.query("Note 5\nwords number 5")
    best = again.vectors.search(query, 1, again.exact_vectors).hits[0]
    assert best.cosine == pytest.approx(1.0)
    assert again.section_hits([best.section_id])[best.section_id].note_id == "n5"


def test_sent_notes_expire_after_the_session_ttl(store) -> None:
    sent_marks.claim(store, "s1", [("default", "a"), ("default", "b")], 3600, wait_s=5)
    assert sent_marks.already_sent(store, "s1", 3600) == {("default", "a"), ("default", "b")}
    store.db.execute("UPDATE sent SET sent_at = sent_at - 7200 WHERE note_id = 'a'")
    assert sent_marks.already_sent(store, "s1", 3600) == {("default", "b")}
    sent_marks.claim(store, "s2", [("default", "c")], 3600, wait_s=5)  # writing prunes expired
    assert store.db.execute("SELECT note_id FROM sent ORDER BY note_id").fetchall() == [
        ("b",),
        ("c",),
    ]
    assert sent_marks.already_sent(store, "other", 3600) == set()


def test_a_note_is_claimed_once_a_session_whoever_asks_first(store) -> None:
    """Two requests of one session at once (our hook installed in two forms) both found the
    note unsent, and both sent it."""
    notes = [("default", "a"), ("default", "b")]
    assert sent_marks.claim(store, "s1", notes, 3600, wait_s=5) == notes
    assert sent_marks.claim(store, "s1", [("default", "b"), ("default", "c")], 3600, 5) == [
        ("default", "c")
    ]
    assert sent_marks.claim(store, "s2", notes, 3600, wait_s=5) == notes  # another session


def test_a_note_whose_text_changed_may_be_sent_again(store, embedder) -> None:
    """A session that had a note kept its old text: the edit never reached the assistant."""
    add_note(store, embedder, "n1", "Ingress", [("Ingress", "proxy-read-timeout is 300 s")])
    add_note(store, embedder, "n2", "Other", [("Other", "unrelated")])
    sent_marks.claim(store, "s1", [("default", "n1"), ("default", "n2")], 3600, wait_s=5)
    store.save_note(store.known_notes("default")["n2"], None)  # a move, a label: same text
    assert sent_marks.already_sent(store, "s1", 3600) == {("default", "n1"), ("default", "n2")}
    add_note(store, embedder, "n1", "Ingress", [("Ingress", "proxy-read-timeout is 900 s")])
    assert sent_marks.already_sent(store, "s1", 3600) == {("default", "n2")}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_index_is_private_to_its_owner_under_a_usual_umask(tmp_path, embedder, caplog):
    caplog.set_level(logging.WARNING)
    path = tmp_path / "data" / "demo" / "recall.sqlite3"  # two levels missing, as for the demo
    old = os.umask(0o022)
    try:
        store = Store(path, VectorIndex(embedder.dim, embedder.name))
        add_note(store, embedder, "a", "Alpha", [("Alpha", "private text")])  # WAL and SHM
        files = {p.name: _mode(p) for p in path.parent.iterdir()}
        store.close()
    finally:
        os.umask(old)
    assert files == {
        name: 0o600 for name in ("recall.sqlite3", "recall.sqlite3-wal", "recall.sqlite3-shm")
    }
    assert (_mode(path.parent), _mode(path.parent.parent)) == (0o700, 0o700)
    assert not [r for r in caplog.records if r.name == "trilium_recall.index.file"]


def test_an_existing_looser_mode_is_warned_about_not_changed(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    data = tmp_path / "shared-data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    Store(data / "recall.sqlite3").close()
    (data / "recall.sqlite3").chmod(0o644)
    Store(data / "recall.sqlite3").close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "trilium_recall.index.file"]
    assert warnings == [
        f"{data} is open to other users (mode 755): chmod 700 it, it holds your notes",
        f"{data / 'recall.sqlite3'} is open to other users (mode 644): chmod 600 it, "
        "it holds your notes",
    ]
    assert (_mode(data), _mode(data / "recall.sqlite3")) == (0o755, 0o644)


def test_a_transaction_that_reads_then_writes_survives_another_writer(tmp_path) -> None:
    """The OAuth store looks a credential up, then deletes its grant. Begun deferred, another
    connection's commit in between made that delete fail at once with BusyError (seen in CI);
    the transaction now holds the write lock from its start, so the other writer waits."""
    path = tmp_path / "index.sqlite"
    mine, theirs = Store(path), Store(path)
    committed = threading.Event()

    def other_writer() -> None:
        with theirs.atomic() as db:
            db.execute("INSERT INTO index_meta VALUES ('theirs', '1')")
        committed.set()

    with mine.atomic() as db:
        db.execute("SELECT count(*) FROM index_meta").fetchone()
        writer = threading.Thread(target=other_writer)
        writer.start()
        # Bounded wait: with a deferred transaction the other commit lands here at once.
        assert not committed.wait(timeout=0.5)
        db.execute("INSERT INTO index_meta VALUES ('mine', '1')")
    writer.join()
    keys = {row[0] for row in mine.db.execute("SELECT key FROM index_meta")}
    assert {"mine", "theirs"} <= keys


def test_a_failed_write_transaction_leaves_nothing_behind(store) -> None:
    with pytest.raises(RuntimeError), store.atomic() as db:
        db.execute("INSERT INTO index_meta VALUES ('half', '1')")
        raise RuntimeError("interrupted")
    assert not store.db.in_transaction
    assert store.db.execute("SELECT 1 FROM index_meta WHERE key = 'half'").fetchone() is None


def test_connections_opening_a_new_file_at_once_migrate_it_once(tmp_path) -> None:
    path, errors, opened = tmp_path / "index.sqlite", [], []
    start = threading.Barrier(4)

    def open_store() -> None:
        start.wait()
        try:
            opened.append(Store(path))
        except StoreError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(opened) == 4
    assert opened[0].db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert {store.db.execute("PRAGMA journal_mode").fetchone()[0] for store in opened} == {"wal"}


def _schema_8_of_the_branch_that_numbered_m009_as_m008(path: Path) -> None:
    db = apsw.Connection(str(path))
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())  # m001's vec0 table
    for step in MIGRATIONS[:7]:
        step(db)
    m009_server_features(db)  # that branch's step 8
    db.execute("PRAGMA user_version = 8")
    db.close()


def test_a_schema_8_file_of_the_branch_numbered_otherwise_migrates(tmp_path, embedder) -> None:
    """Releases on one branch shipped m009 as their step 8: their files came back at schema 8
    with its columns, and m009 failed ("duplicate column name") at every start."""
    path = tmp_path / "recall.sqlite3"
    _schema_8_of_the_branch_that_numbered_m009_as_m008(path)
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert store.db.execute("SELECT count(*) FROM note_errors").fetchone() == (0,)
    columns = {row[1] for row in store.db.execute("PRAGMA table_info(instances)")}
    assert {"trilium_version", "sync_features", "history_mark"} <= columns
    add_note(store, embedder, "a", "Alpha", [("Alpha", "alpha text")])
    assert store.db.execute("SELECT count(*) FROM notes").fetchone() == (1,)


def test_a_migration_the_file_cannot_take_is_refused_and_left_as_it_was(tmp_path, embedder):
    """A file no release wrote (here: its keyword index gone) fails a step: refused, naming the
    step, rather than a bare SQL error; and never moved aside, as the fault may be the step's."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    with store.atomic() as db:
        db.execute("DROP TABLE sections_vocab")
        db.execute("DROP TABLE sections_fts")
        db.execute("PRAGMA user_version = 20")
    store.close()
    failed = r"could not be updated to schema 21 \(m021_cjk_pairs"
    with pytest.raises(StoreError, match=failed) as e:
        Store(path, VectorIndex(embedder.dim, embedder.name))
    assert not isinstance(e.value, IndexUnusable)  # which `serve` would move aside
    kept = apsw.Connection(str(path)).execute("PRAGMA user_version").get
    assert kept == 20 and list(tmp_path.glob("*.broken-*")) == []


def test_vectors_in_a_schema_9_vec0_table_move_to_blobs_unchanged(tmp_path, embedder) -> None:
    """An index written before migration m010 kept its vectors in sqlite-vec's vec0 table; the
    upgrade copies them byte for byte and the mirror loads the same vectors."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "a", "Alpha", [("Alpha", "alpha text"), ("Beta", "beta words")])
    db = store.db
    before = dict(db.execute("SELECT id, embedding FROM snippet_vectors"))
    with store.atomic():  # back to schema 9: the vectors in vec0, as that version wrote them
        db.execute("DROP TABLE snippet_vectors")
        db.execute("CREATE VIRTUAL TABLE snippet_vectors USING vec0(embedding float[384])")
        db.executemany(
            "INSERT INTO snippet_vectors (rowid, embedding) VALUES (?, ?)", before.items()
        )
        db.execute("DROP TABLE snippet_codes")  # m011's
        db.execute("DROP TABLE reference_points")  # m012's
        undo_m014(db)
        db.execute("PRAGMA user_version = 9")
    store.close()
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    schema = again.db.execute("SELECT sql FROM sqlite_schema WHERE name = 'snippet_vectors'")
    assert "vec0" not in schema.fetchone()[0]
    assert dict(again.db.execute("SELECT id, embedding FROM snippet_vectors")) == before
    assert again.load_vectors() == len(before) == 2
    for snippet_id, blob in before.items():
        vector = np.frombuffer(blob, dtype=np.float32)
        assert again.exact_vectors([snippet_id])[snippet_id] == pytest.approx(vector)
        best = again.vectors.search(vector, 1, again.exact_vectors).hits[0]
        assert (best.snippet_id, best.cosine) == (snippet_id, pytest.approx(1.0))


def test_a_schema_14_keyword_index_is_rebuilt_stemmed_with_every_section(
    tmp_path, embedder
) -> None:
    """Migration m015 makes the keyword index again with the stemmer, from the sections and
    their notes' titles: every row comes back and a word finds its other forms."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "b", "Backups", [("Backups", "restoring snapshots nightly")])
    add_note(store, embedder, "c", "Cooking", [("Cooking", "Bread"), ("Soup", "leeks, potatoes")])
    with store.atomic() as db:  # back to schema 14: FTS5's unicode61, no stemmer
        db.execute("DROP TABLE sections_vocab")
        db.execute("DROP TABLE sections_fts")
        db.execute(
            "CREATE VIRTUAL TABLE sections_fts USING fts5("
            "title, heading, body, tokenize = 'unicode61 remove_diacritics 2')"
        )
        db.execute(
            "INSERT INTO sections_fts (rowid, title, heading, body) SELECT s.id, n.title, "
            "s.heading, s.text FROM sections s JOIN notes n USING (instance, note_id)"
        )
        db.execute("CREATE VIRTUAL TABLE sections_vocab USING fts5vocab(sections_fts, 'row')")
        undo_m019(db)
        db.execute("PRAGMA user_version = 14")
    assert store.keyword_search('"snapshot"', 5) == []
    store.close()
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    (sql,) = again.db.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'sections_fts'"
    ).fetchone()
    assert "porter" in sql
    indexed = again.db.execute("SELECT rowid, title, heading, body FROM sections_fts").fetchall()
    stored = again.db.execute(
        "SELECT s.id, n.title, s.heading, s.text FROM sections s JOIN notes n "
        "USING (instance, note_id)"
    ).fetchall()
    assert sorted(indexed) == sorted(stored) and len(stored) == 3
    assert len(again.keyword_search('"snapshot"', 5)) == 1
    assert again.term_document_counts(["potato"]) == (3, {"potato": 1})


def test_schema_13_snippets_get_the_hash_of_the_text_they_embedded(tmp_path, embedder) -> None:
    """Migration m014 rebuilds each snippet's text from its span, also a section without text
    (an empty span: the prefix alone), and finds the vectors again by it."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    long_text = " ".join(f"Sentence {i} of the long section says something new." for i in range(30))
    sections = [("Mixed", "short text"), ("Mixed › Nothing", "  "), ("Mixed › Long", long_text)]
    add_note(store, embedder, "m", "Mixed", sections)
    wanted = {
        (ordinal, s.start, s.end): s.text
        for ordinal, (heading, text) in enumerate(sections)
        for s in split_snippets("Mixed", Section(ordinal, heading, text))
    }
    assert len(wanted) > 4 and ("Mixed › Nothing" in wanted.values())  # many, and the prefix alone
    with store.atomic() as db:
        undo_m014(db)
        db.execute("PRAGMA user_version = 13")
    store.close()
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    rows = again.db.execute(
        "SELECT s.ordinal, p.start, p.end, p.hash FROM snippets p "
        "JOIN sections s ON s.id = p.section_id"
    ).fetchall()
    assert {(o, a, b): h for o, a, b, h in rows} == {k: text_hash(t) for k, t in wanted.items()}
    found = again.cached_vectors([text_hash(t) for t in wanted.values()] + ["unknown"])
    assert found.keys() == {text_hash(t) for t in wanted.values()}
    for text in wanted.values():
        assert found[text_hash(text)] == pytest.approx(embedder.passages([text])[0])
    schema = again.db.execute("SELECT name FROM sqlite_schema WHERE name = 'embedding_cache'")
    assert schema.fetchall() == []
    again.close()


def test_migration_m018_marks_notes_of_several_sections_to_be_read_again(
    tmp_path, embedder
) -> None:
    """Their pieces now start at a whole line; one section was never split."""
    store = Store(tmp_path / "recall.sqlite3", VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "one", "One", [("One", "a single section")])
    add_note(store, embedder, "two", "Two", [("Two", "first piece"), ("Two", "second piece")])
    with store.atomic() as db:
        m018_resplit_with_whole_lines(db)
    rows = store.db.execute("SELECT note_id, blob_id, utc_modified FROM notes ORDER BY note_id")
    assert rows.fetchall() == [("one", "blob-one", "2026-01-01 00:00:00.000Z"), ("two", None, "")]
    store.close()


def test_schema_19_indexed_notes_are_read_and_split_again(tmp_path, embedder) -> None:
    """Migration m020: alt text, captions, invisible characters, blank notes."""
    store = Store(tmp_path / "recall.sqlite3", VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "one", "One", [("One", "a single section")])
    add_note(store, embedder, "two", "Two", [("Two", "first piece"), ("Two", "second piece")])
    again = reopened_at_schema(store, 19)
    rows = again.db.execute("SELECT note_id, blob_id, utc_modified FROM notes ORDER BY note_id")
    assert rows.fetchall() == [("one", None, ""), ("two", None, "")]
    assert again.db.execute("SELECT count(*) FROM sections").fetchone()[0] == 3  # kept meanwhile
    again.close()


def test_the_notes_filed_by_date_are_read_again_only_when_the_notes_change(
    tmp_path, embedder
) -> None:
    store = Store(tmp_path / "recall.sqlite3", VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "d", "21 - Thursday", [("Day", "a day")], path="Journal › 2021")
    add_note(store, embedder, "n", "Notes", [("Notes", "no digit")])
    first = store.filed_notes()
    assert [(n.note_id, n.title) for n in first] == [("d", "21 - Thursday")]
    store.ensure_instance("default", "http://trilium.test")

    def writes() -> int:
        return store.db.execute("SELECT count FROM notes_changes").fetchone()[0]

    counted = writes()
    with store.atomic():  # a sync tick's bookkeeping: no note written
        store.update_instance("default", last_sync="2026-12-06T03:00:00Z")
    assert writes() == counted and store.filed_notes() is first
    add_note(store, embedder, "e", "22 - Friday", [("Day", "another")], path="Journal › 2021")
    assert writes() > counted
    assert {n.note_id for n in store.filed_notes()} == {"d", "e"}
    store.delete_note("default", "e")
    assert {n.note_id for n in store.filed_notes()} == {"d"}


def test_one_keeper_holds_an_index_at_a_time_and_lets_go_when_closed(tmp_path: Path) -> None:
    path = tmp_path / "data" / "recall.sqlite3"
    first = hold_index(path)  # makes the missing data dir, 0700
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lock = path.with_name("recall.sqlite3.lock")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert lock.read_text() == f"{os.getpid()}\n"
    with pytest.raises(IndexInUse, match=rf"kept by another trilium-recall \(pid {os.getpid()}\)"):
        hold_index(path)  # a second keeper, even in this process
    first.close()
    hold_index(path).close()  # free again


def test_a_keeper_lock_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    in_the_way = tmp_path / "data"
    in_the_way.write_text("a file where the data dir should be")
    said = r"cannot open the index at .* \(Not a directory\): set RECALL_DATA_DIR to a folder"
    with pytest.raises(StoreError, match=said):
        hold_index(in_the_way / "recall.sqlite3")


def test_an_instance_row_is_written_only_when_new_or_moved(tmp_path) -> None:
    """Each sync run asks for its row, once a minute: asking again changes nothing."""
    store = Store(tmp_path / "recall.sqlite3")
    store.ensure_instance("work", "http://trilium.test")
    before = store.db.total_changes()
    store.ensure_instance("work", "http://trilium.test")
    assert store.db.total_changes() == before
    store.ensure_instance("work", "http://moved.test")
    assert store.db.total_changes() == before + 1
    assert store.recorded_instances() == {"work": "http://moved.test"}


def test_a_migrated_file_gives_back_its_free_pages(tmp_path, embedder) -> None:
    """Migrations that rebuild tables left their old pages free inside the file for good."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    with store.atomic() as db:  # pages a dropped table leaves free, as m014 left its cache
        db.execute("CREATE TABLE dropped (blob BLOB)")
        db.executemany("INSERT INTO dropped VALUES (zeroblob(4000))", [()] * 500)
    with store.atomic() as db:
        db.execute("DROP TABLE dropped")
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")  # m023 runs again harmlessly
    assert store.db.execute("PRAGMA freelist_count").get > 400
    store.close()
    size = path.stat().st_size
    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.db.execute("PRAGMA freelist_count").get == 0
    assert again.db.execute("PRAGMA user_version").get == len(MIGRATIONS)
    assert path.stat().st_size < size / 4
    wal = path.with_name(path.name + "-wal")  # the copy VACUUM wrote there is given back too
    assert not wal.exists() or wal.stat().st_size < size / 4
