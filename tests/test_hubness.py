"""Hubness (index/hubness.py): a snippet close to every prompt is ranked down by meaning search,
measured once and kept in the index file against the key of the prompts it was measured by."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import add_note, reopened_at_schema
from trilium_recall.index import hubness as hubness_module
from trilium_recall.index import vector_rows
from trilium_recall.index.hubness import HUB_NEIGHBOURS, hubness
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import SCALE, VectorIndex, quantise

DIM = 384


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def _reference(seed: int = 2, count: int = 120) -> np.ndarray:
    return _unit(np.random.default_rng(seed).normal(size=(count, DIM)))


def test_hubness_is_the_mean_cosine_with_the_closest_reference_prompts(monkeypatch) -> None:
    rng = np.random.default_rng(11)
    rows, reference = _unit(rng.normal(size=(40, DIM))), _reference()
    monkeypatch.setattr(hubness_module, "HUB_BLOCK", 7)  # in blocks, the last one short
    found = hubness(rows, reference)
    closest = np.sort(rows @ reference.T, axis=1)[:, -HUB_NEIGHBOURS:]
    assert found == pytest.approx(closest.mean(axis=1), abs=1e-5)
    # From the codes, within their rounding; no reference, no hubness.
    assert hubness(quantise(rows), reference, SCALE) == pytest.approx(found, abs=0.005)
    assert not hubness(rows, reference[:0]).any()


def test_a_snippet_close_to_every_prompt_ranks_below_one_close_to_this_prompt_only() -> None:
    """A hub (the centre of the reference prompts) is a little closer to the query than a
    snippet close to this query only: by cosine the hub is first, once the reference is set
    the other one is, each hit still carries its exact cosine, and rows added after the
    reference is set rank as rows it was set over."""
    rng = np.random.default_rng(4)
    e1, e2, e3 = np.linalg.qr(rng.normal(size=(DIM, 3)))[0].T
    reference = _unit(e1 + rng.normal(scale=0.5 / np.sqrt(DIM), size=(200, DIM)))
    query = _unit((e1 + e2) / np.sqrt(2))
    hub, specific = e1, 0.99 * e2 + np.sqrt(1 - 0.99**2) * e3  # cosines 0.707 and 0.700
    rows = np.stack([hub, specific]).astype(np.float32)
    floats = dict(enumerate(rows))

    def exact(ids):
        return {i: floats[i] for i in ids}

    def order(index: VectorIndex, **weight: float) -> list[int]:
        hits = index.search(query, 2, exact, **weight).hits
        for hit in hits:
            assert hit.cosine == pytest.approx(float(rows[hit.snippet_id] @ query), abs=1e-6)
        return [hit.section_id for hit in hits]

    before = VectorIndex(DIM)
    before.add([(0, 0), (1, 1)], rows)
    assert order(before) == [0, 1]
    before.set_reference(reference)
    after = VectorIndex(DIM)
    after.set_reference(reference)
    after.add([(0, 0), (1, 1)], rows)
    assert order(before) == order(after) == [1, 0]
    assert order(after, hub_weight=0.0) == [0, 1]  # weighed at nothing: by cosine alone
    assert [hit.hubness > 0.5 for hit in before.search(query, 2, exact).hits] == [False, True]


def _kept(store: Store) -> dict[int, float | None]:
    return dict(store.db.execute("SELECT id, hubness FROM snippet_codes"))


def test_hubness_is_kept_in_the_index_and_measured_again_only_when_missing_or_stale(
    tmp_path, embedder
) -> None:
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "a", "Alpha", [("Alpha", "apples and pears"), ("Alpha › b", "bees")])
    assert set(_kept(store).values()) == {None}  # stored before any reference: not measured
    reference = _reference()
    assert store.measure_hubness(store.vectors, reference, "bank-1") == 2
    add_note(store, embedder, "c", "Gamma", [("Gamma", "gardens and dogs")])  # measured as stored
    kept = _kept(store)
    assert None not in kept.values() and len(kept) == 3
    # Each from its codes, whether measured as it was stored or when the reference was set: a
    # ranking does not depend on which (the test embedder's vectors clip in codes, e5's do not).
    floats = store.exact_vectors(list(kept))
    for snippet_id, value in kept.items():
        want = hubness(quantise(floats[snippet_id][None]), reference, SCALE)
        assert value == pytest.approx(float(want[0]), abs=1e-6)
    query = embedder.query("gardens")
    live = store.vectors.search(query, 3, store.exact_vectors)
    store.close()

    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    again.load_vectors()
    assert again.measure_hubness(again.vectors, reference, "bank-1") == 0  # all kept
    assert again.vectors.search(query, 3, again.exact_vectors) == live
    assert again.measure_hubness(again.vectors, reference[:60], "bank-2") == 3  # another bank
    assert _kept(again) != kept
    again.close()


def test_a_full_disk_costs_the_keeping_not_the_hubness(tmp_path, embedder) -> None:
    """Every write of a measured value fails, as on a full disk (SQLite says why): the search
    ranks with the hubness all the same, and the next start measures it again."""
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "a", "Alpha", [("Alpha", "apples and pears"), ("Alpha › b", "bees")])
    store.db.execute(
        "CREATE TRIGGER no_room BEFORE UPDATE ON snippet_codes "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    reference = _reference()
    assert store.measure_hubness(store.vectors, reference, "bank-1") == 2
    hits = store.vectors.search(embedder.query("bees"), 2, store.exact_vectors).hits
    floats = store.exact_vectors([hit.snippet_id for hit in hits])
    for hit in hits:  # ranked with it
        want = hubness(quantise(floats[hit.snippet_id][None]), reference, SCALE)
        assert hit.hubness == pytest.approx(float(want[0]), abs=1e-6) and hit.hubness != 0
    assert set(_kept(store).values()) == {None}  # nothing kept ...
    assert vector_rows.hubness_key(store.db) is None  # ... not even that it was measured
    store.db.execute("DROP TRIGGER no_room")
    store.close()

    again = Store(path, VectorIndex(embedder.dim, embedder.name))
    again.load_vectors()
    assert again.measure_hubness(again.vectors, reference, "bank-1") == 2  # measured again
    assert None not in _kept(again).values()
    again.close()


def test_an_index_from_schema_18_gets_its_hubness_measured_at_start(tmp_path, embedder) -> None:
    store = Store(tmp_path / "recall.sqlite3", VectorIndex(embedder.dim, embedder.name))
    add_note(store, embedder, "a", "Alpha", [("Alpha", "apples"), ("Alpha › b", "bees")])
    again = reopened_at_schema(store, 18)
    assert set(_kept(again).values()) == {None}
    again.load_vectors()
    assert again.measure_hubness(again.vectors, _reference(), "bank-1") == 2
    assert None not in _kept(again).values()
    again.close()


def _mirror(rows: np.ndarray) -> VectorIndex:
    index = VectorIndex(DIM)
    index.add([(i, i) for i in range(len(rows))], rows)
    return index


def test_a_row_not_measured_yet_ranks_as_a_typical_one_not_first() -> None:
    """Loaded beside measured rows, or added before any reference, a row without hubness ranks
    with their mean: a zero would lift it above every measured row for every query."""
    rng = np.random.default_rng(7)
    rows, reference = _unit(rng.normal(size=(60, DIM))), _reference()
    measured = hubness(quantise(rows), reference, SCALE)
    kept = measured.copy()
    kept[5] = np.nan  # one row's hubness missing from the file
    index = VectorIndex(DIM)
    index.load(len(rows), [(np.arange(60), np.arange(60), quantise(rows), kept)])
    floats = dict(enumerate(rows))
    for query in _unit(rng.normal(size=(20, DIM))):
        hits = index.search(query, 60, lambda ids: {i: floats[i] for i in ids}).hits
        score = {h.section_id: h.cosine - 0.5 * h.hubness for h in hits}
        typical = float(np.delete(measured, 5).mean())
        assert hits[0].section_id == max(score, key=score.__getitem__)  # ranked by the score
        assert [h.hubness for h in hits if h.section_id == 5] == [pytest.approx(typical)]
    # Measured when the reference is set: only that row, then as any other.
    kept_rows: list[tuple[list[int], np.ndarray]] = []
    assert (
        index.set_reference(reference, keep=lambda i, c, h: kept_rows.append((i.tolist(), h))) == 1
    )
    assert kept_rows[0][0] == [5] and kept_rows[0][1] == pytest.approx(measured[5:6], abs=1e-6)


def test_a_freed_slot_reused_before_any_reference_is_not_taken_for_measured() -> None:
    rng = np.random.default_rng(8)
    rows, reference = _unit(rng.normal(size=(4, DIM))), _reference()
    index = _mirror(rows)
    index.set_reference(reference)
    index.remove_sections([3])
    fresh = VectorIndex(DIM)  # same rows, no reference: the reused slot stays unmeasured
    fresh.add([(i, i) for i in range(3)], rows[:3])
    fresh.remove_sections([2])
    fresh.add([(9, 9)], rows[3:])
    assert fresh.set_reference(reference) == 3  # all three live rows, the reused one too
    # A row added with a None among given hubs, after the reference: measured, not zero.
    index.add([(7, 7)], rows[3:], [None])
    floats = {0: rows[0], 1: rows[1], 2: rows[2], 7: rows[3]}
    hits = index.search(rows[3], 4, lambda ids: {i: floats[i] for i in ids}).hits
    want = float(hubness(quantise(rows[3:]), reference, SCALE)[0])
    assert [h.hubness for h in hits if h.snippet_id == 7] == [pytest.approx(want)]


def test_hubness_is_kept_only_where_the_row_still_holds_the_codes_it_was_measured_from(
    store, embedder
) -> None:
    add_note(store, embedder, "a", "Alpha", [("Alpha", "apples and pears")])
    ((snippet_id, code),) = store.db.execute("SELECT id, code FROM snippet_codes")
    codes = np.frombuffer(code, np.int8)[None]
    with store.atomic() as db:
        other = quantise(embedder.passages(["something else entirely"]))
        vector_rows.keep_hubness(db, np.array([snippet_id]), other, np.array([0.5]), "k")
        assert _kept(store) == {snippet_id: None}  # another row under a reused id: left
        vector_rows.keep_hubness(db, np.array([snippet_id]), codes, np.array([0.5]), "k")
    assert _kept(store) == {snippet_id: 0.5}
