"""One sync suite against both stand-in versions (Trilium 0.93 and 0.105), over real HTTP into a
real SQLite index. Seeded from the project's own demo notebook: nothing from ../shared."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from change_kinds import KINDS, OLD, ChangeKind, finds, note_row, seed
from conftest import HashEmbedder
from standin_faults import FaultyTrilium
from test_sync import TOKEN, Harness
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin.etapi import Reply, error_reply
from trilium_recall.errors import TriliumUnavailable
from trilium_recall.server.overview import failed_notes

VERSIONS = ("0.93", "0.105")
TICKS = 3  # ticks tried before a change is left to the full comparison
FULL = None  # "seen at the next full comparison, not by the minute tick"
# Ticks until searchable, per version. Where the server tells nothing (moves and label edits
# leave the note's date alone; a date set back hides an edit) only the full comparison sees it;
# 0.105's recent changes bring deletions and revision snapshots into the minute, while its
# importers keep the old dates that hide imported notes from the minute query.
EXPECTED = {
    "create": (1, 1),
    "edit": (1, 1),
    "title edit": (1, 1),
    "move": (FULL, FULL),
    "label edit": (FULL, FULL),
    "delete": (FULL, 1),
    "delete of a second parent": (FULL, 1),
    "undelete": (1, 1),
    "protect": (1, 1),
    "import with old dates": (1, FULL),
    "content edit, date set back": (FULL, 1),
}


@pytest.fixture(params=VERSIONS)
def trilium(request: pytest.FixtureRequest) -> Iterator[FaultyTrilium]:
    fake = FaultyTrilium(token=TOKEN, version=request.param)
    fake.load_notebook_dir(NOTEBOOK_DIR)
    seed(fake)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
async def harness(trilium: FaultyTrilium, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(trilium, tmp_path, HashEmbedder())
    await h.syncer.full()
    yield h
    await h.close()


async def ticks_until_seen(h: Harness, kind: ChangeKind) -> int | None:
    for tick in range(1, TICKS + 1):
        await h.syncer.tick()
        if kind.seen(h.store):
            return tick
    return FULL


def test_the_table_covers_every_kind() -> None:
    assert {kind.name for kind in KINDS} == set(EXPECTED)


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
async def test_each_change_is_seen_by_the_tick_or_the_full_comparison(
    harness: Harness, trilium: FaultyTrilium, kind: ChangeKind
) -> None:
    if kind.before is not None:
        kind.before(trilium)
        await harness.syncer.full()
    assert not kind.seen(harness.store)
    kind.make(trilium)
    expected = EXPECTED[kind.name][VERSIONS.index(trilium.version)]
    assert await ticks_until_seen(harness, kind) == expected
    await harness.syncer.full()  # the authority: sees every kind on every version
    assert kind.seen(harness.store)


async def test_protected_titles_never_reach_the_index(harness: Harness, trilium: FaultyTrilium):
    trilium.add_note("chgChildAAAA", "Child of a protected note", parent_id="chgProtectAA",
                     content="<p>The child keeps its own words.</p>")  # fmt: skip
    trilium.protect("chgProtectAA")
    await harness.syncer.tick()
    await harness.syncer.full()
    db = harness.store.db
    texts = db.execute("SELECT group_concat(heading || text, ' ') FROM sections").fetchone()[0]
    paths = db.execute("SELECT group_concat(paths, ' ') FROM notes").fetchone()[0]
    assert "[protected]" not in texts and "[protected]" not in paths
    assert harness.indexed() >= {"chgChildAAAA"}


async def test_more_than_500_changes_in_a_minute(harness: Harness, trilium: FaultyTrilium) -> None:
    for number in range(520):
        trilium.add_note(f"bulkNote{number:04d}", f"Bulk {number}", content="<p>bulk</p>")
    trilium.delete("chgDeleteAAA")
    report = await harness.syncer.tick()
    assert {f"bulkNote{n:04d}" for n in range(520)} <= harness.indexed()
    # 0.105: 500 rows newer than the last tick, so the tick compared in full (and saw the
    # deletion); 0.93 has no recent changes: the deletion waits for the full comparison.
    assert report.full is (trilium.version == "0.105")
    assert (note_row(harness.store, "chgDeleteAAA") is None) is report.full


async def test_an_erased_deletion_is_left_to_the_full_comparison(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    trilium.delete("chgDeleteAAA")
    trilium.erase_deleted(older_than=timedelta(0))
    await harness.syncer.tick()
    assert note_row(harness.store, "chgDeleteAAA") is not None
    await harness.syncer.full()
    assert note_row(harness.store, "chgDeleteAAA") is None


async def test_quiet_tick_and_full_comparison_request_budget(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    budget = {"0.93": 1, "0.105": 2}[trilium.version]  # the minute query (+ recent changes)
    for more in (0, 300):  # the same with 300 more notes
        for number in range(more):
            trilium.add_note(f"moreNote{number:04d}", f"More {number}", content="<p>more</p>")
        await harness.syncer.full()
        before = len(trilium.requests)
        await harness.syncer.tick()
        assert len(trilium.requests) - before == budget
        before = len(trilium.requests)
        await harness.syncer.full()  # app-info, recent changes (404 on 0.93), the listing
        assert [path.split("?")[0] for _, path in trilium.requests[before:]] == [
            "/etapi/app-info",
            "/etapi/notes/history",
            "/etapi/notes",
        ]


async def test_content_is_read_only_for_a_new_blob_id_or_title(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    before = len(trilium.requests)
    trilium.set_title("chgEditAAAAA", "Renamed")
    trilium.set_content("chgLabelAAAA", "<p>The marmalade procedure, now shorter.</p>")
    await harness.syncer.tick()
    contents = [p for _, p in trilium.requests[before:] if p.endswith("/content")]
    # the title is part of every snippet, so a renamed note is read again; an unchanged one never
    assert sorted(contents) == ["/etapi/notes/chgEditAAAAA/content",
                                "/etapi/notes/chgLabelAAAA/content"]  # fmt: skip
    before = len(trilium.requests)
    await harness.syncer.full()
    assert not [p for _, p in trilium.requests[before:] if p.endswith("/content")]


async def test_features_are_detected_and_shown(harness: Harness, trilium: FaultyTrilium) -> None:
    features = harness.syncer.features
    assert features.version == {"0.93": "0.93.0", "0.105": "0.105.0"}[trilium.version]
    assert features.names() == (["history", "blobId"] if trilium.version == "0.105" else ["blobId"])
    state = harness.store.instance_state("default")
    assert (state["history_mark"] is not None) is features.history


# ---------------------------------------------------------------- bad input


def _warnings(caplog: pytest.LogCaptureFixture, needle: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and needle in r.getMessage()]  # fmt: skip


@pytest.mark.parametrize(
    "reply",
    [
        error_reply(500, "FAKE_FAILURE", "Injected failure."),
        Reply(200, b"<html><body>Trilium</body></html>", "text/html"),
    ],
    ids=["500", "html"],
)
@pytest.mark.parametrize("trilium", ["0.105"], indirect=True)  # 0.93 has no recent changes
async def test_a_broken_history_endpoint_is_logged_once_and_the_tick_carries_on(
    harness: Harness, trilium: FaultyTrilium, reply: Reply, caplog: pytest.LogCaptureFixture
) -> None:
    harness.client._backoff = 0.0  # the fault answers at once; the retries are not under test
    trilium.path_faults["/etapi/notes/history"] = reply
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    trilium.delete("chgDeleteAAA")
    await harness.syncer.tick()
    await harness.syncer.tick()
    assert finds(harness.store, "chgEditAAAAA", "hummingbird")  # the minute query still runs
    assert len(_warnings(caplog, "recent changes unreadable")) == 1
    del trilium.path_faults["/etapi/notes/history"]
    await harness.syncer.full()
    assert note_row(harness.store, "chgDeleteAAA") is None


@pytest.mark.parametrize("trilium", ["0.105"], indirect=True)  # 0.93 has no recent changes
async def test_a_history_row_for_a_note_that_404s(
    harness: Harness, trilium: FaultyTrilium, caplog: pytest.LogCaptureFixture
) -> None:
    trilium.set_content("chgBackAAAAA", "<p>The riverstone procedure.</p>", revision=True)
    trilium.backdate("chgBackAAAAA", OLD)
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    trilium.path_faults["/etapi/notes/chgBackAAAAA"] = error_reply(
        404, "NOTE_NOT_FOUND", "Note 'chgBackAAAAA' not found."
    )
    await harness.syncer.tick()
    await harness.syncer.tick()
    assert finds(harness.store, "chgEditAAAAA", "hummingbird")
    assert len(_warnings(caplog, "chgBackAAAAA")) == 1
    del trilium.path_faults["/etapi/notes/chgBackAAAAA"]
    await harness.syncer.full()
    assert finds(harness.store, "chgBackAAAAA", "riverstone")


async def test_one_note_whose_content_keeps_failing_does_not_stop_the_others(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    """A 500 for one note's content while Trilium answers otherwise is that note's failure:
    listed with its reason, tried again at the next full comparison."""
    trilium.path_faults["/etapi/notes/chgBackAAAAA/content"] = error_reply(500, "X", "boom")
    trilium.set_content("chgBackAAAAA", "<p>The riverstone procedure.</p>")
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    await harness.syncer.tick()
    assert finds(harness.store, "chgEditAAAAA", "hummingbird")
    failed = {row["note_id"]: row["reason"] for row in failed_notes(harness.store, "default")}
    assert "HTTP 500" in str(failed["chgBackAAAAA"])
    del trilium.path_faults["/etapi/notes/chgBackAAAAA/content"]
    await harness.syncer.full()
    assert finds(harness.store, "chgBackAAAAA", "riverstone")
    assert failed_notes(harness.store, "default") == []


async def test_a_note_answered_429_is_trilium_asking_to_slow_down_not_the_note_s_fault(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    trilium.path_faults["/etapi/notes/chgEditAAAAA/content"] = error_reply(429, "X", "slow")
    with pytest.raises(TriliumUnavailable):
        await harness.syncer.tick()
    assert failed_notes(harness.store, "default") == []
    assert note_row(harness.store, "chgEditAAAAA") is not None  # kept as it was
    del trilium.path_faults["/etapi/notes/chgEditAAAAA/content"]
    await harness.syncer.tick()
    assert finds(harness.store, "chgEditAAAAA", "hummingbird")


@pytest.mark.parametrize("app_info_answers", [True, False])
async def test_when_every_read_of_a_round_fails_trilium_s_app_info_decides(
    harness: Harness, trilium: FaultyTrilium, app_info_answers: bool
) -> None:
    """The only note read fails with a 500: Trilium answering its app info makes it the note's
    failure; Trilium not answering it either ends the run, blaming no note."""
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    trilium.path_faults["/etapi/notes/chgEditAAAAA/content"] = error_reply(500, "X", "boom")
    if not app_info_answers:
        trilium.path_faults["/etapi/app-info"] = error_reply(503, "X", "down")
    if app_info_answers:
        await harness.syncer.tick()
    else:
        with pytest.raises(TriliumUnavailable):
            await harness.syncer.tick()
    failed = [row["note_id"] for row in failed_notes(harness.store, "default")]
    assert failed == (["chgEditAAAAA"] if app_info_answers else [])


async def test_an_unparsable_app_version_is_logged_once(
    harness: Harness, trilium: FaultyTrilium, caplog: pytest.LogCaptureFixture
) -> None:
    trilium.app_version = "next-gen"
    trilium.set_content("chgEditAAAAA", "<p>The hummingbird procedure.</p>")
    await harness.syncer.full()
    await harness.syncer.full()
    assert finds(harness.store, "chgEditAAAAA", "hummingbird")
    assert len(_warnings(caplog, "'next-gen' is not a version")) == 1
    assert harness.syncer.features.version == "next-gen"
    assert harness.syncer.features.history is (trilium.version == "0.105")  # probed, not assumed


async def test_a_note_type_never_seen_before(
    harness: Harness, trilium: FaultyTrilium, caplog: pytest.LogCaptureFixture
) -> None:
    trilium.add_note("holoNoteAAAA", "Hologram", type="hologram", content="<p>beam</p>")
    trilium.add_note("holoNoteBBBB", "Hologram 2", type="hologram", content="<p>beam</p>")
    await harness.syncer.tick()
    await harness.syncer.full()
    assert harness.notes()["holoNoteAAAA"][1] == "unknown type"
    counts = harness.store.counts("default")["skipped"]
    assert isinstance(counts, dict) and counts["unknown type"] == 2
    assert len(_warnings(caplog, "unknown type 'hologram'")) == 1


async def test_a_note_without_blob_id_is_reread_by_the_full_comparison(
    harness: Harness, trilium: FaultyTrilium, caplog: pytest.LogCaptureFixture
) -> None:
    trilium.drop_blob_id("chgBackAAAAA")
    trilium.set_content("chgBackAAAAA", "<p>The riverstone procedure.</p>")
    trilium.backdate("chgBackAAAAA", OLD)
    await harness.syncer.tick()
    await harness.syncer.full()
    await harness.syncer.full()
    assert finds(harness.store, "chgBackAAAAA", "riverstone")
    assert len(_warnings(caplog, "chgBackAAAAA is listed without a blobId")) == 1


async def test_unwrapped_divs_are_read_again_but_not_embedded_again(
    harness: Harness, trilium: FaultyTrilium
) -> None:
    """0.105 unwraps an old text note's <div>s on its next edit: a new blobId, the same text."""
    trilium.set_content("chgEditAAAAA", "<div><p>The quillfeather procedure, kept.</p></div>")
    await harness.syncer.tick()
    harness.embedder.passage_calls.clear()
    before = len(trilium.requests)
    trilium.set_content("chgEditAAAAA", "<p>The quillfeather procedure, kept.</p>")
    report = await harness.syncer.tick()
    assert report.indexed == 1  # the blobId moved: the content was read again…
    assert any(p.endswith("/chgEditAAAAA/content") for _, p in trilium.requests[before:])
    assert harness.embedder.passage_calls == []  # …and its text was already embedded
