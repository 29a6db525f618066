"""The fake Trilium behaves like the real server (TRILIUM-FACTS.md) and matches the ETAPI spec."""

from __future__ import annotations

import base64
import json
import posixpath
import re
import select
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
from openapi_schema_validator import OAS30Validator
from selectolax.lexbor import LexborHTMLParser
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from export_zip import write_export_zip
from standin_faults import FaultyTrilium
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.demo.standin.export import SeedAttribute, SeedNote

TOKEN = "fakeTokenId_fakeSecret"
ALL = "note.noteId != ''"


def zip_note_ids(export: Path) -> set[str]:
    meta = json.loads(zipfile.ZipFile(export).read("!!!meta.json"))
    found: set[str] = set()

    def walk(files: list[dict[str, Any]]) -> None:
        for entry in files:
            if entry.get("noteId"):
                found.add(entry["noteId"])
            walk(entry.get("children", []))

    walk(meta["files"])
    return found


@pytest.fixture(scope="module")
def notebook(notebook_zip: Path) -> Iterator[FakeTrilium]:
    """Read-only fake seeded from the built-in notebook's export; tests that edit make their own."""
    with FakeTrilium.from_export_zip(notebook_zip) as fake:
        yield fake


@pytest.fixture(scope="module")
def demo(demo_zip: Path) -> Iterator[FakeTrilium]:
    """Read-only fake seeded from Trilium's demo.zip (shared-marked)."""
    with FakeTrilium.from_export_zip(demo_zip) as fake:
        yield fake


@dataclass(frozen=True)
class Export:
    """An export zip served by a read-only fake, and facts the seeding tests check in it."""

    zip: Path
    fake: FaultyTrilium
    top: tuple[str, str]  # a note at the top of the export, and its title
    min_notes: int  # the zip holds at least this many notes
    clone: tuple[str, list[str], str | None]  # a note in two places: parents, 2nd prefix
    link: tuple[str, str]  # a note, and the path below root its stored link must name
    code: tuple[str, str]  # a code note, and its member in the zip
    inherited: tuple[str, list[tuple[str, str]]]  # a note, and its attributes (owner, name)


EXPORT_FACTS: dict[str, dict[str, Any]] = {
    "notebook": {
        "top": ("wuHwYj7IBZt5", "LLM Wiki"),
        "min_notes": 61,
        "clone": ("bop7A2W2tvX0", ["JHq4u4adStj7", "Gcrtr2XhaGeD"], None),
        "link": ("YNY1bQmDpMPV", "wuHwYj7IBZt5/ZwaqahWKE8Sb/na1VknJuSo0x/sanjg8ULLnpg"),
        "code": ("3KuZbB1SI2Nr", "root/Homelab/Backups (restic)/restic-backup.sh"),
        "inherited": ("9eSvnhyga2Ud", [("CBrpdS1CTuQG", "wikiLayer")]),
    },
    "demo": {
        "top": ("Fb7eMY46lT6k", "Trilium Demo"),
        "min_notes": 150,
        "clone": ("RNf8bX9CdR1k", ["JvGlcvRf2Lu8", "5t7iAUBdEndw"], "28. 11. 2017"),
        "link": ("Fb7eMY46lT6k", "Fb7eMY46lT6k/vHpMd49rAUWn/qP9UEZ4kQ0NK"),
        "code": (
            "IPifAXM3cyRS",
            "root/Trilium Demo/Scripting examples/Custom request handler.js",
        ),
        "inherited": ("Mzby9GxzBFl1", [("L2NrzQACw0in", "wordCount")]),  # a child of Books
    },
}


@pytest.fixture(scope="module", params=["notebook", pytest.param("demo", marks=pytest.mark.shared)])
def export(request: pytest.FixtureRequest) -> Export:
    """The project's own export (the built-in notebook), then Trilium's demo.zip where present."""
    name = request.param
    path = request.getfixturevalue(f"{name}_zip")
    return Export(path, request.getfixturevalue(name), **EXPORT_FACTS[name])


@pytest.fixture
def fake() -> Iterator[FaultyTrilium]:
    """An empty stand-in, with the tests' fault switches and request log."""
    with FaultyTrilium() as fresh:
        yield fresh


# One client for the module: httpx.get() builds an SSL context per call (~40 ms each).
HTTP = httpx.Client(trust_env=False)


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    HTTP.close()


def get(fake: FaultyTrilium, path: str, auth: str | None = TOKEN, **params: str) -> httpx.Response:
    headers = {"Authorization": auth} if auth is not None else {}
    return HTTP.get(fake.url() + path, params=params, headers=headers)


def listing(fake: FaultyTrilium, **params: str) -> list[dict[str, Any]]:
    response = get(fake, "/etapi/notes", search=params.pop("search", ALL), **params)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def ids(notes: list[dict[str, Any]]) -> list[str]:
    return [n["noteId"] for n in notes]


# ---------------------------------------------------------------- seeding


def test_every_note_of_the_zip_is_served_and_reachable_from_root(export: Export) -> None:
    expected = zip_note_ids(export.zip) - {"root"}
    assert len(expected) >= export.min_notes
    reached, queue = set(), ["root"]
    while queue:
        note = get(export.fake, f"/etapi/notes/{queue.pop()}").json()
        reached.add(note["noteId"])
        queue += [c for c in note["childNoteIds"] if c not in reached]
    assert expected <= reached
    assert expected <= set(ids(listing(export.fake, includeArchivedNotes="true")))


def test_clones_become_extra_parents_with_their_branch(export: Export) -> None:
    note_id, parents, prefix = export.clone
    note = get(export.fake, f"/etapi/notes/{note_id}").json()
    assert note["parentNoteIds"] == parents
    assert note["parentBranchIds"] == [f"{parent}_{note_id}" for parent in parents]
    branch = get(export.fake, f"/etapi/branches/{parents[1]}_{note_id}").json()
    assert (branch["noteId"], branch["parentNoteId"], branch["prefix"]) == (
        note_id,
        parents[1],
        prefix,
    )


def test_exported_links_are_turned_back_into_trilium_paths(export: Export) -> None:
    note_id, path = export.link
    html = get(export.fake, f"/etapi/notes/{note_id}/content").text
    assert f'href="#root/{path}"' in html
    assert ".html" not in html and "ck-content" not in html and "<body" not in html


def test_exported_images_point_at_their_attachment(demo: FakeTrilium) -> None:
    html = get(demo, "/etapi/notes/Fb7eMY46lT6k/content").text
    assert 'src="api/attachments/96nFd7uePoSp/image/icon-color.svg"' in html


def test_the_notebook_export_links_by_relative_paths(notebook_zip: Path) -> None:
    """As Trilium's exporter does: each `#root/…` link becomes the path of the target's file."""
    with zipfile.ZipFile(notebook_zip) as archive:
        members = set(archive.namelist())
        pages = {m: archive.read(m).decode() for m in members if m.endswith(".html")}
    targets = [
        posixpath.normpath(posixpath.join(posixpath.dirname(member), unquote(href)))
        for member, page in pages.items()
        for href in re.findall(r'<a [^>]*href="([^"#:]+)"', page)
        if not member.endswith(".clone.html")
    ]
    written = [f.read_text("utf-8") for f in NOTEBOOK_DIR.rglob("*.html")]
    assert len(targets) == sum(page.count('href="#root/') for page in written) > 30
    assert targets and set(targets) <= members
    assert not [page for page in pages.values() if "#root/" in page]


def test_the_notebook_survives_its_export(notebook: FakeTrilium) -> None:
    """Exported and read back, every note of the built-in notebook is served as the notebook has
    it: same title, type, places and attributes, links back in their `#root/…` form."""
    manifest = json.loads((NOTEBOOK_DIR / "notebook.json").read_text(encoding="utf-8"))
    for entry in manifest["notes"]:
        note = get(notebook, f"/etapi/notes/{entry['id']}").json()
        title = "[protected]" if entry["protected"] else entry["title"]
        assert (note["title"], note["type"], note["mime"], note["isProtected"]) == (
            title, entry["type"], entry["mime"], entry["protected"]
        )  # fmt: skip
        parents = [entry["parent"], *entry["extra_parents"]]
        assert sorted(note["parentNoteIds"]) == sorted(parents), entry["id"]
        owned = [(a["type"], a["name"], a["value"], a["isInheritable"])
                 for a in note["attributes"] if a["noteId"] == entry["id"]]  # fmt: skip
        assert owned == [(a["type"], a["name"], a["value"], a.get("inheritable", False))
                         for a in entry["attributes"]]  # fmt: skip
        if entry["protected"]:
            continue
        original = (NOTEBOOK_DIR / entry["file"]).read_text("utf-8") if entry.get("file") else ""
        served = get(notebook, f"/etapi/notes/{entry['id']}/content").text
        assert served == (_parsed(original) if entry["type"] == "text" else original), entry["id"]


def _members(export: Path, suffix: str) -> list[str]:
    with zipfile.ZipFile(export) as archive:
        return [m for m in archive.namelist() if m.endswith(suffix)]


def _parsed(html: str) -> str:
    """HTML as the reader re-serialises it (quotes, entities): the round trip's fixed point."""
    body = LexborHTMLParser(f'<div class="ck-content">{html}</div>').css_first("div")
    assert body is not None
    return (body.inner_html or "").strip()


def test_written_export_keeps_prefixes_positions_and_inheritable_attributes(
    tmp_path: Path, fake: FaultyTrilium
) -> None:
    label = SeedAttribute("label", "area", "wiki", inheritable=True, position=10)
    seeds = [
        SeedNote("folderNote01", "Folder", attributes=[label], parents=[("root", None, 30)]),
        SeedNote("datedNote001", "Minutes", content="<p>kept</p>",
                 parents=[("folderNote01", "2026-10-07", 20), ("root", "Pinned", 40)]),
        SeedNote("datedNote002", "Minutes", parents=[("folderNote01", None, 10)]),
        SeedNote("datedNote003", "minutes", parents=[("folderNote01", None, 15)]),
    ]  # fmt: skip
    zip_path = write_export_zip(seeds, tmp_path / "small.zip")
    assert _members(zip_path, ".html") == [
        "root/Folder.html",
        "root/Folder/Minutes.html",
        "root/Folder/1_minutes.html",  # Trilium's exporter keeps names unique, ignoring case
        "root/Folder/2026-10-07 - Minutes.html",
        "root/Pinned - Minutes.clone.html",
    ]
    fake.load_export_zip(zip_path)
    branch = get(fake, "/etapi/branches/folderNote01_datedNote001").json()
    assert (branch["prefix"], branch["notePosition"]) == ("2026-10-07", 20)
    assert get(fake, "/etapi/branches/root_datedNote001").json()["prefix"] == "Pinned"
    children = get(fake, "/etapi/notes/folderNote01").json()["childNoteIds"]
    assert children == ["datedNote002", "datedNote003", "datedNote001"]
    inherited = get(fake, "/etapi/notes/datedNote002").json()["attributes"]
    assert [(a["noteId"], a["name"], a["isInheritable"]) for a in inherited] == [
        ("folderNote01", "area", True)
    ]
    assert get(fake, "/etapi/notes/datedNote001/content").text == "<p>kept</p>"


def test_code_notes_keep_their_text(export: Export) -> None:
    note_id, member = export.code
    with zipfile.ZipFile(export.zip) as archive:
        expected = archive.read(member).decode()
    assert expected and get(export.fake, f"/etapi/notes/{note_id}/content").text == expected


def test_seeded_dates_and_blob_ids_are_deterministic(export: Export) -> None:
    with FakeTrilium.from_export_zip(export.zip) as again:
        first, second = listing(export.fake), listing(again)
    assert first == second
    assert first[2]["utcDateModified"] == "2024-01-01 00:00:08.000Z"  # the 8th note seeded
    assert first[2]["dateModified"] == "2024-01-01 02:00:08.000+0200"


def test_export_loaded_under_another_parent_links_through_it(
    fake: FaultyTrilium, export: Export
) -> None:
    fake.add_note("imports0001", "Imports")
    fake.load_export_zip(export.zip, parent_id="imports0001")
    top = export.top[0]
    assert get(fake, f"/etapi/notes/{top}").json()["parentNoteIds"] == ["imports0001"]
    note_id, path = export.link
    html = get(fake, f"/etapi/notes/{note_id}/content").text
    assert f'href="#root/imports0001/{path}"' in html


def test_notebook_dir_manifest(tmp_path: Path, fake: FaultyTrilium) -> None:
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "pg.html").write_text("<p>Postgres vacuum</p>", encoding="utf-8")
    notes = [
        {"id": "wikiRoot0001", "title": "Wiki", "parent": "root",
         "attributes": [{"type": "label", "name": "wikiLayer", "value": "summary",
                         "inheritable": True}]},
        {"id": "sourceNote01", "title": "Source", "type": "code", "mime": "text/markdown"},
        {"id": "pgSummary001", "title": "Postgres", "parent": "wikiRoot0001",
         "extra_parents": ["sourceNote01"], "file": "wiki/pg.html",
         "attributes": [{"type": "relation", "name": "derivedFrom", "value": "sourceNote01"},
                        {"type": "label", "name": "draft"}]},
        {"id": "secretNote01", "title": "Secret", "protected": True},
    ]  # fmt: skip
    (tmp_path / "notebook.json").write_text(json.dumps({"notes": notes}), encoding="utf-8")
    fake.load_notebook_dir(tmp_path)
    summary = get(fake, "/etapi/notes/pgSummary001").json()
    assert summary["parentNoteIds"] == ["wikiRoot0001", "sourceNote01"]
    assert (summary["type"], summary["mime"]) == ("text", "text/html")
    attrs = [(a["noteId"], a["type"], a["name"], a["value"], a["isInheritable"])
             for a in summary["attributes"]]  # fmt: skip
    assert attrs == [
        ("pgSummary001", "relation", "derivedFrom", "sourceNote01", False),
        ("pgSummary001", "label", "draft", "", False),
        ("wikiRoot0001", "label", "wikiLayer", "summary", True),
    ]
    assert get(fake, "/etapi/notes/pgSummary001/content").text == "<p>Postgres vacuum</p>"
    source = get(fake, "/etapi/notes/sourceNote01")
    assert (source.json()["mime"], get(fake, "/etapi/notes/sourceNote01/content").text) == (
        "text/markdown",
        "",
    )
    assert get(fake, "/etapi/notes/secretNote01/content").status_code == 400


# ---------------------------------------------------------------- attributes and filtering


def test_inherited_attributes_are_listed_with_their_owner(export: Export) -> None:
    note_id, attributes = export.inherited
    note = get(export.fake, f"/etapi/notes/{note_id}").json()
    assert [(a["noteId"], a["name"]) for a in note["attributes"]] == attributes


def test_a_template_passes_on_its_attributes_but_not_its_marker(fake: FaultyTrilium) -> None:
    fake.add_note("bookTempl001", "Book", attributes=[
        {"type": "label", "name": "template"}, {"type": "label", "name": "author"}])  # fmt: skip
    fake.add_note("someBook0001", "Dune", attributes=[
        {"type": "relation", "name": "template", "value": "bookTempl001"}])  # fmt: skip
    note = get(fake, "/etapi/notes/someBook0001").json()
    assert [(a["noteId"], a["type"], a["name"]) for a in note["attributes"]] == [
        ("someBook0001", "relation", "template"),
        ("bookTempl001", "label", "author"),
    ]


def test_demo_book_template_passes_on_its_attributes(demo: FakeTrilium) -> None:
    # ~template=Book template brings the template's attributes, but not its #template marker.
    book = get(demo, "/etapi/notes/NhSSbIObzEsM").json()
    from_template = {a["name"] for a in book["attributes"] if a["noteId"] == "ODEzxhfMalvQ"}
    assert from_template and "template" not in from_template


def test_inheritance_follows_every_parent_but_not_into_hidden(fake: FaultyTrilium) -> None:
    fake.add_note("areaWiki0001", "Wiki", attributes=[
        {"type": "label", "name": "area", "value": "wiki", "inheritable": True}])  # fmt: skip
    fake.add_note("otherPlace01", "Elsewhere")
    fake.add_note("childNote001", "Child", parent_id="otherPlace01")
    assert get(fake, "/etapi/notes/childNote001").json()["attributes"] == []
    fake.clone("childNote001", "areaWiki0001")
    inherited = get(fake, "/etapi/notes/childNote001").json()["attributes"]
    assert [(a["noteId"], a["name"], a["value"]) for a in inherited] == [
        ("areaWiki0001", "area", "wiki")
    ]
    fake.set_label("root", "rootWide", inheritable=True)
    assert "rootWide" in {
        a["name"] for a in get(fake, "/etapi/notes/areaWiki0001").json()["attributes"]
    }
    assert get(fake, "/etapi/notes/_options").json()["attributes"] == []


def test_hidden_subtree_is_excluded_unless_searching_under_it(notebook: FakeTrilium) -> None:
    listed = ids(listing(notebook, includeArchivedNotes="true"))
    assert "root" in listed and not [n for n in listed if n.startswith("_")]
    assert not [n for n in ids(listing(notebook, ancestorNoteId="root")) if n.startswith("_")]
    under_hidden = ids(listing(notebook, ancestorNoteId="_hidden"))
    assert {"_hidden", "_options", "_help", "_help_HI6GBBIduIgv"} <= set(under_hidden)
    assert "wuHwYj7IBZt5" not in under_hidden


def test_a_clone_outside_hidden_makes_a_note_visible(fake: FaultyTrilium) -> None:
    assert "_help_HI6GBBIduIgv" not in ids(listing(fake))
    fake.clone("_help_HI6GBBIduIgv", "root")
    assert "_help_HI6GBBIduIgv" in ids(listing(fake))


def test_archived_notes_are_excluded_unless_asked(fake: FaultyTrilium) -> None:
    fake.add_note("oldProject01", "Old project")
    fake.add_note("oldChild0001", "Old child", parent_id="oldProject01")
    fake.add_note("soloNote0001", "Solo")
    fake.set_label("oldProject01", "archived", inheritable=True)
    fake.set_label("soloNote0001", "archived")
    visible = ids(listing(fake))
    assert not {"oldProject01", "oldChild0001", "soloNote0001"} & set(visible)
    everything = ids(listing(fake, includeArchivedNotes="true"))
    assert {"oldProject01", "oldChild0001", "soloNote0001"} <= set(everything)
    fake.remove_label("oldProject01", "archived")
    assert {"oldProject01", "oldChild0001"} <= set(ids(listing(fake)))


# ---------------------------------------------------------------- search parameters


def test_search_parameter_is_required(notebook: FakeTrilium) -> None:
    for params in ({}, {"search": ""}, {"search": "   "}):
        response = HTTP.get(f"{notebook.url()}/etapi/notes", params=params,
                            headers={"Authorization": TOKEN})  # fmt: skip
        assert response.status_code == 400
        assert response.json()["code"] == "SEARCH_QUERY_PARAM_MANDATORY"


def test_unsupported_query_is_refused_with_a_clear_message(notebook: FakeTrilium) -> None:
    response = get(notebook, "/etapi/notes", search="towers tolkien")
    assert response.status_code == 400
    assert "towers tolkien" in response.json()["message"]


def test_changed_since_ordering_and_limit(fake: FaultyTrilium) -> None:
    for n in range(3):
        fake.add_note(f"changeNote{n:02d}", f"Note {n}")
    before = get(fake, "/etapi/notes/changeNote01").json()["utcDateModified"]
    fake.set_content("changeNote01", "<p>new</p>")
    fake.set_content("changeNote00", "<p>newer</p>")
    query = f"note.utcDateModified >= '{before}' orderBy note.utcDateModified asc"
    changed = listing(fake, search=query)
    assert ids(changed) == ["changeNote02", "changeNote01", "changeNote00"]
    stamp = changed[1]["utcDateModified"]  # the first content edit
    unordered = ids(listing(fake, search=f"note.utcDateModified >= '{stamp}'"))
    assert unordered == ["changeNote00", "changeNote01"]
    assert ids(listing(fake, search=query, limit="2")) == ["changeNote02", "changeNote01"]


# ---------------------------------------------------------------- edits


def test_protected_note_content_is_refused_and_title_masked(fake: FaultyTrilium) -> None:
    fake.add_note("secretNote01", "Bank codes", content="<p>1234</p>", is_protected=True)
    response = get(fake, "/etapi/notes/secretNote01/content")
    assert response.status_code == 400
    assert response.json()["code"] == "NOTE_IS_PROTECTED"
    assert get(fake, "/etapi/notes/secretNote01").json()["title"] == "[protected]"
    listed = {n["noteId"]: n for n in listing(fake)}
    assert (
        listed["secretNote01"]["title"] == "[protected]" and listed["secretNote01"]["isProtected"]
    )


def test_deleted_note_and_orphaned_children_answer_404(fake: FaultyTrilium) -> None:
    fake.add_note("parentNote01", "Parent")
    fake.add_note("onlyChild001", "Only child", parent_id="parentNote01")
    fake.add_note("clonedKid001", "Cloned", parent_id="parentNote01")
    fake.clone("clonedKid001", "root")
    fake.add_relation("root", "pointsAt", "parentNote01")
    fake.delete("parentNote01")
    for gone in ("parentNote01", "onlyChild001"):
        for path in (f"/etapi/notes/{gone}", f"/etapi/notes/{gone}/content"):
            response = get(fake, path)
            assert (response.status_code, response.json()["code"]) == (404, "NOTE_NOT_FOUND")
    survivor = get(fake, "/etapi/notes/clonedKid001").json()
    assert survivor["parentNoteIds"] == ["root"]
    assert get(fake, "/etapi/notes/root").json()["attributes"] == []
    assert not {"parentNote01", "onlyChild001"} & set(ids(listing(fake)))


def test_which_edits_bump_utc_date_modified(fake: FaultyTrilium) -> None:
    fake.add_note("editedNote01", "Edited", content="<p>v1</p>")
    fake.add_note("otherParent1", "Other parent")

    def state() -> tuple[str, str]:
        note = get(fake, "/etapi/notes/editedNote01").json()
        return note["utcDateModified"], note["blobId"]

    start = state()
    fake.set_label("editedNote01", "status", "draft")
    fake.add_relation("editedNote01", "seeAlso", "otherParent1")
    fake.clone("editedNote01", "otherParent1")
    fake.move("editedNote01", "root", "_hidden")
    fake.remove_label("editedNote01", "status")
    assert state() == start
    fake.set_title("editedNote01", "Renamed")
    after_title = state()
    assert after_title[0] > start[0] and after_title[1] == start[1]
    fake.set_content("editedNote01", "<p>v2</p>")
    after_content = state()
    assert after_content[0] > after_title[0] and after_content[1] != start[1]


# ---------------------------------------------------------------- protocol


def test_auth_header_forms(notebook: FakeTrilium) -> None:
    basic = base64.b64encode(f"etapi:{TOKEN}".encode()).decode()
    wrong_user = base64.b64encode(f"admin:{TOKEN}".encode()).decode()
    for auth in (TOKEN, f"Bearer {TOKEN}", f"Basic {basic}"):
        assert get(notebook, "/etapi/app-info", auth=auth).status_code == 200, auth
    for auth in (None, "", "nope", f"Bearer {TOKEN}x", f"Basic {wrong_user}", "Basic !!"):
        response = get(notebook, "/etapi/app-info", auth=auth)
        assert (response.status_code, response.json()["code"]) == (401, "NOT_AUTHENTICATED")


def test_other_methods_and_paths_get_error_json(fake: FaultyTrilium) -> None:
    fake.add_note("keptNote0001", "Kept")
    with httpx.Client(base_url=fake.url(), headers={"Authorization": TOKEN}, trust_env=False) as c:
        deleted = c.delete("/etapi/notes/keptNote0001")
        posted = c.post("/etapi/create-note", json={"title": "x"})
        calendar = c.get("/etapi/calendar/days/2025-01-01")
    assert (deleted.status_code, deleted.json()["code"]) == (405, "METHOD_NOT_ALLOWED")
    assert (posted.status_code, posted.json()["code"]) == (404, "NOT_FOUND")
    assert (calendar.status_code, calendar.json()["status"]) == (404, 404)
    assert get(fake, "/etapi/notes/keptNote0001").status_code == 200
    assert ("DELETE", "/etapi/notes/keptNote0001") in fake.requests


def test_fault_injection(fake: FaultyTrilium) -> None:
    fake.fail_status = 503
    assert get(fake, "/etapi/app-info").status_code == 503
    fake.fail_status, fake.malformed = None, True
    response = get(fake, "/etapi/notes", search=ALL)
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()
    fake.malformed, fake.delay = False, 60.0  # held far past the client's 0.5 s
    with pytest.raises(httpx.ReadTimeout):
        HTTP.get(fake.url() + "/etapi/app-info", headers={"Authorization": TOKEN}, timeout=0.5)
    assert fake.requests[-3:] == [
        ("GET", "/etapi/app-info"),
        ("GET", "/etapi/notes?search=note.noteId+%21%3D+%27%27"),
        ("GET", "/etapi/app-info"),
    ]


def test_restart_on_the_same_port(fake: FaultyTrilium) -> None:
    url = fake.url()
    fake.stop()
    with pytest.raises(httpx.ConnectError):
        get(fake, "/etapi/app-info")
    assert fake.start() == url
    assert get(fake, "/etapi/app-info").status_code == 200
    assert "fakeSecret" not in repr(fake)


def test_standalone_process_prints_ready_and_serves(export: Export) -> None:
    command = [sys.executable, "-m", "trilium_recall.demo.standin", "--zip", str(export.zip),
               "--token", "cliToken_secret"]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 20)  # bounded wait
            assert ready, "no READY line within 20 s"
            line = process.stdout.readline().strip()
            assert line.startswith("READY http://127.0.0.1:")
            headers = {"Authorization": "cliToken_secret"}
            url = line.removeprefix("READY ")
            note_id, title = export.top
            response = HTTP.get(f"{url}/etapi/notes/{note_id}", headers=headers)
            assert response.json()["title"] == title
        finally:
            process.terminate()
            process.wait(timeout=10)


# ---------------------------------------------------------------- the ETAPI spec


@dataclass
class _SpecResponse:
    """openapi-core's response protocol, keeping the content type's charset (the spec has it)."""

    status_code: int
    content_type: str
    headers: dict[str, str]
    data: bytes


def _spec_pair(response: httpx.Response) -> tuple[WerkzeugOpenAPIRequest, _SpecResponse]:
    # The spec's server is localhost:37740/etapi; only the path and query matter here.
    builder = EnvironBuilder(
        method=response.request.method,
        base_url="http://localhost:37740",
        path=response.request.url.path,
        query_string=response.request.url.query.decode(),
        headers={k: v for k, v in response.request.headers.items() if k.lower() != "host"},
    )
    reply = _SpecResponse(response.status_code, response.headers["content-type"],
                          dict(response.headers), response.content)  # fmt: skip
    return WerkzeugOpenAPIRequest(Request(builder.get_environ())), reply


@pytest.fixture(scope="module")
def spec(etapi_spec: Path) -> OpenAPI:
    return OpenAPI.from_file_path(etapi_spec)


@pytest.fixture(scope="module")
def current_spec(tmp_path_factory: pytest.TempPathFactory, etapi_spec: Path) -> OpenAPI:
    """The spec plus two facts of current servers it lags behind: newer note types (canvas,
    mindMap, geoMap … in demo.zip) and `prefix: null` on branches without a prefix."""
    document = yaml.safe_load(etapi_spec.read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]
    schemas["Note"]["properties"]["type"]["enum"] += ["canvas", "mindMap", "geoMap", "aiChat"]
    schemas["Branch"]["properties"]["prefix"]["nullable"] = True
    path = tmp_path_factory.mktemp("spec") / "etapi.current.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return OpenAPI.from_file_path(path)


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/etapi/notes/NhSSbIObzEsM", {}, 200),
        ("/etapi/notes/root", {}, 200),
        ("/etapi/notes", {"search": ALL, "ancestorNoteId": "vHpMd49rAUWn"}, 200),
        ("/etapi/notes", {"search": ALL, "ancestorNoteId": "_hidden"}, 200),
        ("/etapi/notes/Fb7eMY46lT6k/content", {}, 200),
        ("/etapi/app-info", {}, 200),
        ("/etapi/branches/S9e1O6walQlq_vH389HhCX3to", {}, 200),
        ("/etapi/notes/noSuchNote1", {}, 404),
        ("/etapi/branches/noSuchBranch", {}, 404),
        ("/etapi/notes", {"search": ""}, 400),
    ],
)
def test_responses_match_the_etapi_spec(
    demo: FakeTrilium, spec: OpenAPI, path: str, params: dict[str, str], status: int
) -> None:
    response = get(demo, path, **params)
    assert response.status_code == status
    spec.validate_response(*_spec_pair(response))


def test_error_bodies_match_the_spec(fake: FaultyTrilium, spec: OpenAPI, etapi_spec: Path) -> None:
    fake.add_note("secretNote01", "Secret", is_protected=True)
    unauthorized = get(fake, "/etapi/app-info", auth="wrong")
    assert unauthorized.status_code == 401
    spec.validate_response(*_spec_pair(unauthorized))
    # The spec declares no error responses for .../content: check those bodies against Error.
    error_schema = yaml.safe_load(etapi_spec.read_text(encoding="utf-8"))["components"]["schemas"][
        "Error"
    ]
    for path, status in (
        ("/etapi/notes/secretNote01/content", 400),
        ("/etapi/notes/gone0001/content", 404),
    ):
        response = get(fake, path)
        assert response.status_code == status
        assert response.headers["content-type"] == "application/json; charset=utf-8"
        OAS30Validator(error_schema).validate(response.json())
        assert response.json()["status"] == status


def test_full_listing_and_every_branch_match_the_current_spec(
    demo: FakeTrilium, current_spec: OpenAPI
) -> None:
    response = get(demo, "/etapi/notes", search=ALL, includeArchivedNotes="true")
    current_spec.validate_response(*_spec_pair(response))
    branch_ids = {b for n in response.json()["results"] for b in n["parentBranchIds"]}
    for branch_id in sorted(branch_ids)[:40]:
        current_spec.validate_response(*_spec_pair(get(demo, f"/etapi/branches/{branch_id}")))
