from __future__ import annotations

import numpy as np
import pytest

from conftest import add_note
from trilium_recall.errors import StoreError
from trilium_recall.migrations import MIGRATIONS
from trilium_recall.store import Store
from trilium_recall.vectors import VectorIndex


def _unit(*values: float) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def test_vector_index_search_upsert_remove() -> None:
    index = VectorIndex()
    index.upsert([10, 11, 12], np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 1)]))
    assert [i for i, _ in index.search(_unit(1, 0), 2).hits] == [10, 12]
    index.remove([10])
    assert [i for i, _ in index.search(_unit(1, 0), 3).hits] == [12, 11]
    index.upsert([13], np.stack([_unit(1, 0.01)]))  # reuses the freed slot
    assert index.search(_unit(1, 0), 1).hits[0][0] == 13
    assert len(index) == 3
    assert index.similarity([11, 99], _unit(0, 1)) == pytest.approx({11: 1.0})


def test_vector_index_grows_past_its_first_capacity() -> None:
    index = VectorIndex()
    ids = list(range(3000))
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.upsert(ids, vectors)
    neighbours = index.search(vectors[2999], 1)
    assert neighbours.hits[0][0] == 2999
    assert neighbours.zscore(1.0) > 10  # random unit vectors barely correlate


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
    assert db.execute("SELECT count(*) FROM section_vectors").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM links").fetchone()[0] == 0
    assert len(store.vectors) == 1


def test_reopen_keeps_data_and_schema_version(tmp_path, embedder) -> None:
    path = tmp_path / "recall.sqlite3"
    first = Store(path)
    add_note(first, embedder, "a", "Alpha", [("Alpha", "alpha text")])
    first.close()
    again = Store(path)
    assert again.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert again.load_vectors() == 1
    assert again.keyword_search('"alpha"', 5)[0][0] > 0


@pytest.mark.parametrize("where", ["file-in-the-way", "read-only-filesystem"])
def test_unwritable_data_dir_is_a_clear_store_error(tmp_path, where) -> None:
    if where == "file-in-the-way":
        (tmp_path / "data").write_text("not a directory")
        path = tmp_path / "data" / "recall.sqlite3"
    else:
        path = __import__("pathlib").Path(
            "/proc/self/recall-data/recall.sqlite3"
        )  # EROFS/ENOENT even for root
    with pytest.raises(StoreError, match="cannot open the index at"):
        Store(path)


def test_load_vectors_in_chunks_restores_every_vector(tmp_path, embedder) -> None:
    path = tmp_path / "recall.sqlite3"
    first = Store(path)
    for i in range(7):
        add_note(first, embedder, f"n{i}", f"Note {i}", [(f"Note {i}", f"words number {i}")])
    first.close()
    again = Store(path)
    assert again.load_vectors(chunk=3) == 7
    assert len(again.vectors) == 7
    query = embedder.query("Note 5\nwords number 5")
    assert again.vectors.search(query, 1).hits[0][1] > 0.99


def test_sent_notes_expire_after_the_session_ttl(store) -> None:
    store.mark_sent("s1", [("default", "a"), ("default", "b")], ttl_seconds=3600)
    assert store.already_sent("s1", 3600) == {("default", "a"), ("default", "b")}
    store.db.execute("UPDATE sent SET sent_at = sent_at - 7200 WHERE note_id = 'a'")
    assert store.already_sent("s1", 3600) == {("default", "b")}
    store.mark_sent("s2", [("default", "c")], ttl_seconds=3600)  # writing prunes expired rows
    assert store.db.execute("SELECT note_id FROM sent ORDER BY note_id").fetchall() == [
        ("b",),
        ("c",),
    ]
    assert store.already_sent("other", 3600) == set()
