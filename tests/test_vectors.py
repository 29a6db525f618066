"""The int8 mirror: its search against exact float32 search, kept in step with the index file,
and the migration that gives an older index its codes."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import add_note, undo_m014
from trilium_recall.index import vectors as vectors_module
from trilium_recall.index.migrations import MIGRATIONS
from trilium_recall.index.products import products
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex, quantise

DIM = 384


def _clustered(rows: int, seed: int) -> np.ndarray:
    """Unit vectors in 40 tight clusters around a shared direction, as e5's are (every cosine
    high, neighbours close together): the hard case for rounding."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=DIM)
    centres = common + 0.6 * rng.normal(size=(40, DIM))
    vectors = centres[rng.integers(40, size=rows)] + 0.35 * rng.normal(size=(rows, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def _exact_sections(vectors: np.ndarray, sections: np.ndarray, query: np.ndarray) -> list[int]:
    """The exact top-40 sections by their best snippet, over every row."""
    best: dict[int, float] = {}
    for section, score in zip(sections.tolist(), (vectors @ query).tolist(), strict=True):
        best[section] = max(best.get(section, -2.0), score)
    return sorted(best, key=best.__getitem__, reverse=True)[:40]


@pytest.mark.parametrize("sample_rows", [16_384, 1_000])
def test_quantised_search_finds_the_exact_top_40_sections_with_exact_cosines(
    sample_rows, monkeypatch
) -> None:
    """With every row in the sample the z-score's mean and spread are the float32 ones; with
    a sample of 1 row in 6, those of the sampled rows, estimated from their codes."""
    monkeypatch.setattr(vectors_module, "SAMPLE_ROWS", sample_rows)
    drawn = _clustered(6030, seed=3)  # queries from the same clusters as the rows
    vectors, queries = drawn[:6000], drawn[6000:]
    sections = np.arange(6000) // 5
    index = VectorIndex(DIM)
    index.add(list(zip(range(6000), sections.tolist(), strict=True)), vectors)
    floats = dict(enumerate(vectors))

    def exact(ids):
        return {i: floats[i] for i in ids}

    recall = []
    for query in queries:
        hits = index.search(query, 40, exact).hits
        want = _exact_sections(vectors, sections, query)
        recall.append(len({h.section_id for h in hits} & set(want)) / 40)
        for hit in hits:  # every cosine is the float one, not the codes'
            assert hit.cosine == pytest.approx(float(vectors[hit.snippet_id] @ query), abs=1e-6)
        scores = vectors @ query
        neighbours = index.search(query, 40, exact)
        # The sample: every row, or every 6th; its spread from the floats, or from the codes.
        sample = scores[:: -(-len(vectors) // sample_rows)]
        exact_spread = sample_rows >= len(vectors)
        assert neighbours.mean == pytest.approx(sample.mean(), abs=1e-6 if exact_spread else 2e-4)
        assert neighbours.std == pytest.approx(sample.std(), rel=1e-5 if exact_spread else 5e-3)
    assert np.mean(recall) >= 0.99


@pytest.mark.parametrize("sample_rows", [16_384, 2])
def test_the_mirror_follows_saves_edits_and_deletes_as_a_reload_would(
    store, embedder, sample_rows, monkeypatch
) -> None:
    """Also past SAMPLE_ROWS (2), where both mirrors let their float rows go (the live one as
    it grows, the reloaded one as it loads): the same hits, the spread then estimated from
    each one's own sample of slots (the live one has free slots) so not compared."""
    monkeypatch.setattr(vectors_module, "SAMPLE_ROWS", sample_rows)
    add_note(store, embedder, "a", "Alpha", [("Alpha", "apples and pears"), ("Alpha › b", "bees")])
    add_note(store, embedder, "b", "Beta", [("Beta", "boats on the river")])
    add_note(store, embedder, "a", "Alpha", [("Alpha", "cherries now")])  # an edit
    store.delete_note("default", "b")
    add_note(store, embedder, "c", "Gamma", [("Gamma", "gardens"), ("Gamma › d", "dogs")])
    assert len(store.vectors) == 3

    reloaded = Store(store.path, VectorIndex(store.vectors.dim, store.vectors.model))
    assert reloaded.load_vectors() == 3
    for prompt in ("Alpha\ncherries now", "Beta\nboats on the river", "Gamma › d\ndogs"):
        query = embedder.query(prompt)
        live = store.vectors.search(query, 5, store.exact_vectors)
        again = reloaded.vectors.search(query, 5, reloaded.exact_vectors)
        assert live.hits == again.hits
        if sample_rows > len(store.vectors):
            assert (live.mean, live.std) == pytest.approx((again.mean, again.std))
        notes = store.section_hits([h.section_id for h in live.hits])
        assert sorted(hit.note_id for hit in notes.values()) == ["a", "c", "c"]
    reloaded.close()


def test_an_index_from_schema_10_gets_its_codes_from_its_vectors(tmp_path, embedder) -> None:
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    for i in range(5):
        add_note(store, embedder, f"n{i}", f"Note {i}", [(f"N{i}", f"text {i}"), ("x", f"y {i}")])
    query = embedder.query("N3\ntext 3")
    before = store.vectors.search(query, 4, store.exact_vectors)
    with store.atomic() as db:  # back to schema 10, as that version wrote it: no codes
        db.execute("DROP TABLE snippet_codes")
        db.execute("DROP TABLE reference_points")  # m012's
        undo_m014(db)
        db.execute("PRAGMA user_version = 10")
    store.close()

    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    assert again.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    rows = again.db.execute(
        "SELECT c.id, c.section_id, c.code, s.section_id, v.embedding FROM snippet_codes c "
        "JOIN snippets s ON s.id = c.id JOIN snippet_vectors v ON v.id = c.id"
    ).fetchall()
    assert len(rows) == again.db.execute("SELECT count(*) FROM snippets").fetchone()[0] == 10
    for _, section_id, code, snippet_section, blob in rows:
        assert section_id == snippet_section
        assert code == quantise(np.frombuffer(blob, dtype=np.float32)).tobytes()
    assert again.load_vectors() == 10
    assert again.vectors.search(query, 4, again.exact_vectors) == before
    again.close()


def test_a_scan_in_blocks_finds_what_one_scan_of_every_slot_finds(monkeypatch) -> None:
    """The mirror scores SCAN_BLOCK slots at a time and keeps each block's best: the same
    hits, cosines and spread as a single block over every slot, free slots included."""
    drawn = _clustered(6030, seed=5)
    vectors, queries = drawn[:6000], drawn[6000:]
    index = VectorIndex(DIM)
    index.add([(i, i // 5) for i in range(6000)], vectors)
    index.remove_sections(list(range(0, 1200, 7)))  # free slots in every block
    floats = dict(enumerate(vectors))

    def exact(ids):
        return {i: floats[i] for i in ids}

    def both(query):
        monkeypatch.setattr(vectors_module, "SCAN_BLOCK", 1_000_000)
        whole = index.search(query, 40, exact), index.best_cosines(query[None], exact)
        monkeypatch.setattr(vectors_module, "SCAN_BLOCK", 700)  # 9 blocks, the last short
        return whole, (index.search(query, 40, exact), index.best_cosines(query[None], exact))

    for query in queries:
        (whole, whole_best), (blocks, blocks_best) = both(query)
        assert blocks == whole
        assert blocks_best.tolist() == whole_best.tolist()


def test_a_scan_keeps_exactly_the_best_slots_of_all(monkeypatch) -> None:
    """Each block keeps only rows at or above the best-so-far floor: the scores kept are the
    `count` best of every live slot's, whatever the block size."""
    drawn = _clustered(5030, seed=9)
    vectors, queries = drawn[:5000], drawn[5000:]
    index = VectorIndex(DIM)
    index.add([(i, i // 4) for i in range(5000)], vectors)
    index.remove_sections(list(range(0, 1250, 5)))
    live = index._ids[: index._used] >= 0
    for block in (300, 1_000_000):
        monkeypatch.setattr(vectors_module, "SCAN_BLOCK", block)
        for query in queries:
            every = vectors_module._cosines(query, index._codes[: index._used])[live]
            slots, scores = index._top(query, 400)
            assert len(set(slots.tolist())) == 400
            assert np.all(index._ids[slots] >= 0)
            assert sorted(scores.tolist()) == sorted(np.sort(every)[-400:].tolist())


def test_matrix_products_ignore_the_floating_point_flags() -> None:
    """OpenBLAS's SME kernels (Apple M4) set overflow and invalid flags on right float32
    results; numpy's warnings then failed the suite there. Flags raised here are ignored."""
    huge = np.full((2, 2), 3e38, dtype=np.float32)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            huge @ huge
        assert np.isinf(products(huge, huge)).all()
