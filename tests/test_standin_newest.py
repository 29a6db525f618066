"""The stand-in answering as Trilium 0.105 (recent changes, revisions, note types, imports with
old dates), and its answers checked against both OpenAPI specs (shared-marked through the
`etapi_spec` / `newest_spec` fixtures)."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from openapi_core import OpenAPI

from standin_edits import EditableTrilium
from test_fake_trilium import _spec_pair
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin.newest import HISTORY_LIMIT

TOKEN = "newestToken_secret"
OLD = datetime(2020, 2, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def newest() -> Iterator[EditableTrilium]:
    with EditableTrilium(TOKEN, version="0.105") as fake:
        fake.load_notebook_dir(NOTEBOOK_DIR)
        yield fake


@pytest.fixture
def old() -> Iterator[EditableTrilium]:
    with EditableTrilium(TOKEN) as fake:
        fake.load_notebook_dir(NOTEBOOK_DIR)
        yield fake


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False) as client:
        yield client


def get(http: httpx.Client, fake: EditableTrilium, path: str, **params: str) -> httpx.Response:
    return http.get(fake.url() + path, params=params, headers={"Authorization": TOKEN})


def history(http: httpx.Client, fake: EditableTrilium, **params: str) -> list[dict[str, Any]]:
    response = get(http, fake, "/etapi/notes/history", **params)
    assert response.status_code == 200, response.text
    return response.json()


def test_app_info_names_the_version(
    http: httpx.Client, old: EditableTrilium, newest: EditableTrilium
):
    assert get(http, old, "/etapi/app-info").json()["appVersion"] == "0.93.0"
    assert get(http, newest, "/etapi/app-info").json()["appVersion"] == "0.105.0"


def test_history_is_404_on_093(http: httpx.Client, old: EditableTrilium) -> None:
    old.add_note("someNoteAAAA", "Some")
    old.delete("someNoteAAAA")
    response = get(http, old, "/etapi/notes/history")
    assert response.status_code == 404 and response.json()["code"] == "NOTE_NOT_FOUND"


def test_history_lists_creations_revisions_and_deletions_newest_first(
    http: httpx.Client, newest: EditableTrilium
) -> None:
    newest.add_note("histNoteAAAA", "Kept", content="<p>one</p>")
    newest.set_content("histNoteAAAA", "<p>two</p>", revision=True)
    newest.set_content("histNoteAAAA", "<p>three</p>")  # a plain edit makes no row
    newest.add_note("histGoneAAAA", "Gone")
    newest.delete("histGoneAAAA")
    rows = history(http, newest)
    assert [r["utcDate"] for r in rows] == sorted((r["utcDate"] for r in rows), reverse=True)
    kept = [r for r in rows if r["noteId"] == "histNoteAAAA"]
    gone = [r for r in rows if r["noteId"] == "histGoneAAAA"]
    assert len(kept) == 2 and {r["current_isDeleted"] for r in kept} == {0}  # creation, revision
    assert len(gone) == 2 and {r["current_isDeleted"] for r in gone} == {1}  # creation, deletion
    assert all(r["canBeUndeleted"] for r in gone) and gone[0]["current_deleteId"]
    revisions = get(http, newest, "/etapi/notes/histNoteAAAA/revisions").json()
    assert len(revisions) == 1
    content = get(http, newest, f"/etapi/revisions/{revisions[0]['revisionId']}/content")
    assert content.text == "<p>one</p>"


def test_history_is_capped_and_deletions_vanish_once_erased(
    http: httpx.Client, newest: EditableTrilium
) -> None:
    for number in range(HISTORY_LIMIT + 20):
        newest.add_note(f"capNote{number:05d}", f"Cap {number}")
    assert len(history(http, newest)) == HISTORY_LIMIT
    newest.delete("capNote00000")
    assert any(r["noteId"] == "capNote00000" for r in history(http, newest))
    newest.erase_deleted(older_than=timedelta(days=7))  # too recent to erase
    assert history(http, newest)[0]["noteId"] == "capNote00000"
    newest.erase_deleted(older_than=timedelta(0))
    assert all(r["noteId"] != "capNote00000" for r in history(http, newest))


def test_history_under_an_ancestor_includes_its_deleted_notes(
    http: httpx.Client, newest: EditableTrilium
) -> None:
    newest.add_note("subRootAAAAA", "Sub")
    newest.add_note("subChildAAAA", "Child", parent_id="subRootAAAAA")
    newest.delete("subChildAAAA")
    rows = history(http, newest, ancestorNoteId="subRootAAAAA")
    assert {r["noteId"] for r in rows} == {"subChildAAAA"}
    assert history(http, newest, ancestorNoteId="noSuchNote12") == []


def test_undelete_brings_back_the_note_with_its_children(
    http: httpx.Client, newest: EditableTrilium
) -> None:
    newest.add_note("undelParentA", "Parent")
    newest.add_note("undelChildAA", "Child", parent_id="undelParentA")
    newest.delete("undelParentA")
    assert get(http, newest, "/etapi/notes/undelChildAA").status_code == 404
    newest.undelete("undelParentA")
    child = get(http, newest, "/etapi/notes/undelChildAA").json()
    assert child["parentNoteIds"] == ["undelParentA"]


def test_imports_keep_old_dates_only_on_the_newest(
    http: httpx.Client, old: EditableTrilium, newest: EditableTrilium
) -> None:
    for fake in (old, newest):
        fake.import_note("importedAAAA", "From Evernote", created=OLD, modified=OLD)
    stamp = "2020-02-02 12:00:00.000Z"
    assert get(http, newest, "/etapi/notes/importedAAAA").json()["utcDateModified"] == stamp
    assert get(http, old, "/etapi/notes/importedAAAA").json()["utcDateModified"] > stamp


def test_note_types_follow_the_version(old: EditableTrilium, newest: EditableTrilium) -> None:
    newest.add_note("sheetNoteAAA", "Budget", type="spreadsheet", mime="")
    old.add_note("geoNoteAAAAA", "Trip", type="geoMap", mime="")
    with pytest.raises(ValueError, match="no note type 'geoMap'"):
        newest.add_note("geoNoteAAAAA", "Trip", type="geoMap", mime="")
    with pytest.raises(ValueError, match="no note type 'llmChat'"):
        old.add_note("chatNoteAAAA", "Chat", type="llmChat", mime="")


def test_protected_titles_and_revisions(http: httpx.Client, newest: EditableTrilium) -> None:
    newest.add_note("lockedAAAAAA", "Bank", content="<p>secret</p>")
    newest.set_content("lockedAAAAAA", "<p>secret 2</p>", revision=True)
    newest.protect("lockedAAAAAA")
    assert get(http, newest, "/etapi/notes/lockedAAAAAA").json()["title"] == "[protected]"
    rows = [r for r in history(http, newest) if r["noteId"] == "lockedAAAAAA"]
    assert rows and {(r["title"], r["current_isProtected"]) for r in rows} == {("[protected]", 1)}


def test_standalone_process_speaks_the_newest(http: httpx.Client) -> None:
    command = [sys.executable, "-m", "trilium_recall.demo.standin", "--notebook", str(NOTEBOOK_DIR),
               "--token", TOKEN, "--trilium-version", "0.105"]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 20)  # bounded wait
            assert ready, "no READY line within 20 s"
            url = process.stdout.readline().strip().removeprefix("READY ")
            headers = {"Authorization": TOKEN}
            assert http.get(f"{url}/etapi/app-info", headers=headers).json()["appVersion"] == (
                "0.105.0"
            )
            assert http.get(f"{url}/etapi/notes/history", headers=headers).status_code == 200
        finally:
            process.terminate()
            process.wait(timeout=10)


# ---------------------------------------------------------------- the specs


@pytest.fixture(scope="module")
def newest_api(tmp_path_factory: pytest.TempPathFactory, newest_spec: Path) -> OpenAPI:
    """The newest spec plus what the server does that it does not say (ETAPI-NEWEST.md): the
    history's flags are SQLite's 0/1 integers, a live note's deleteId is null, and the note
    types added since (spreadsheet, llmChat) are missing from its enum."""
    document = yaml.safe_load(newest_spec.read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]
    change = schemas["RecentChange"]["properties"]
    for flag in ("current_isDeleted", "current_isProtected"):
        change[flag] = {"type": "integer", "enum": [0, 1]}
    change["current_deleteId"]["nullable"] = True
    schemas["Note"]["properties"]["type"]["enum"] += ["spreadsheet", "llmChat"]
    path = tmp_path_factory.mktemp("spec") / "etapi.newest.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return OpenAPI.from_file_path(path)


def test_newest_answers_match_the_newest_spec(
    http: httpx.Client, newest: EditableTrilium, newest_api: OpenAPI
) -> None:
    newest.add_note("specNoteAAAA", "Spec", content="<p>one</p>")
    newest.set_content("specNoteAAAA", "<p>two</p>", revision=True)
    newest.add_note("specSheetAAA", "Sheet", type="spreadsheet", mime="")
    newest.add_note("specGoneAAAA", "Gone")
    newest.delete("specGoneAAAA")
    revision_id = get(http, newest, "/etapi/notes/specNoteAAAA/revisions").json()[0]["revisionId"]
    for path, params, status in (
        ("/etapi/app-info", {}, 200),
        ("/etapi/notes/history", {}, 200),
        ("/etapi/notes/history", {"ancestorNoteId": "specNoteAAAA"}, 200),
        ("/etapi/notes/specNoteAAAA/revisions", {}, 200),
        (f"/etapi/revisions/{revision_id}", {}, 200),
        ("/etapi/notes/specSheetAAA", {}, 200),
        ("/etapi/notes", {"search": "note.noteId != ''", "includeArchivedNotes": "true"}, 200),
        ("/etapi/notes/specGoneAAAA", {}, 404),
    ):
        response = get(http, newest, path, **params)
        assert response.status_code == status, (path, response.text)
        newest_api.validate_response(*_spec_pair(response))


def test_093_answers_match_the_093_spec(
    http: httpx.Client, old: EditableTrilium, etapi_spec: Path
) -> None:
    spec = OpenAPI.from_file_path(etapi_spec)
    for path, status in (
        ("/etapi/app-info", 200),
        ("/etapi/notes/history", 404),  # read as a note id, as 0.93 does
        ("/etapi/notes/EHNWLmkEi2qa", 200),
    ):
        response = get(http, old, path)
        assert response.status_code == status
        spec.validate_response(*_spec_pair(response))
