"""The garbage collector during a full comparison: paused while the listing is read and
planned, resumed after, and a comparison leaves (almost) nothing only it could free."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from conftest import HashEmbedder
from test_sync import Harness, trilium  # noqa: F401  (the notebook served as Trilium)
from trilium_recall.notes.classify import Rules, classify
from trilium_recall.sync.collector import CollectorPause


@pytest.fixture
def collector_on() -> Iterator[None]:
    """Every test starts with collection on and leaves it as it was."""
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_nested_pauses_resume_collection_when_the_last_one_ends(collector_on) -> None:
    paused = CollectorPause()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer run still reads its listing
    assert gc.isenabled()


def test_a_pause_ending_in_an_error_resumes_collection(collector_on) -> None:
    paused = CollectorPause()
    with pytest.raises(RuntimeError), paused():
        raise RuntimeError("the listing was cut off")
    assert gc.isenabled()


def test_a_pause_leaves_collection_off_when_it_was_off(collector_on) -> None:
    gc.disable()
    with CollectorPause()():
        pass
    assert not gc.isenabled()


async def test_a_full_comparison_reads_its_listing_with_the_collector_paused(
    trilium,  # noqa: F811
    tmp_path,
    collector_on,
) -> None:
    h = Harness(trilium, tmp_path, HashEmbedder())
    listed = h.client.all_notes
    seen: list[bool] = []

    async def all_notes():
        notes = await listed()
        seen.append(gc.isenabled())
        return notes

    h.client.all_notes = all_notes  # type: ignore[method-assign]
    try:
        await h.syncer.full()
        await h.syncer.full()
    finally:
        await h.close()
    assert seen == [False, False]
    assert gc.isenabled()


async def test_classifying_every_note_leaves_no_cyclic_garbage(
    trilium,  # noqa: F811
    tmp_path,
    collector_on,
) -> None:
    """What only the collector frees piles up between its passes; a note's classification
    (its ancestor chains walked depth first) must be freed as soon as it is dropped."""
    h = Harness(trilium, tmp_path, HashEmbedder())
    try:
        await h.syncer.full()
        tree, rules = h.syncer.tree, Rules.from_settings(h.settings)
    finally:
        await h.close()
    assert len(tree) > 20
    gc.collect()
    gc.disable()
    for note in tree.values():
        classify(note, tree, rules)
    # A nested walk calling itself left 7 objects a note; a stray object of another thread's
    # is not a note's worth.
    assert gc.collect() < len(tree)
