"""The fake Trilium behaves like the real server (TRILIUM-FACTS.md) and matches the ETAPI spec."""

from __future__ import annotations

import base64
import json
import select
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
from openapi_schema_validator import OAS30Validator
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from trilium_recall.standin import FakeTrilium

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
def demo(demo_zip: Path) -> Iterator[FakeTrilium]:
    """Read-only fake seeded from demo.zip; tests that edit make their own."""
    with FakeTrilium.from_export_zip(demo_zip) as fake:
        yield fake


@pytest.fixture
def fake() -> Iterator[FakeTrilium]:
    with FakeTrilium() as fresh:
        yield fresh


# One client for the module: httpx.get() builds an SSL context per call (~40 ms each).
HTTP = httpx.Client(trust_env=False)


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    HTTP.close()


def get(fake: FakeTrilium, path: str, auth: str | None = TOKEN, **params: str) -> httpx.Response:
    headers = {"Authorization": auth} if auth is not None else {}
    return HTTP.get(fake.url() + path, params=params, headers=headers)


def listing(fake: FakeTrilium, **params: str) -> list[dict[str, Any]]:
    response = get(fake, "/etapi/notes", search=params.pop("search", ALL), **params)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def ids(notes: list[dict[str, Any]]) -> list[str]:
    return [n["noteId"] for n in notes]


# ---------------------------------------------------------------- seeding


def test_every_note_of_the_zip_is_served_and_reachable_from_root(
    demo: FakeTrilium, demo_zip: Path
) -> None:
    expected = zip_note_ids(demo_zip)
    assert len(expected) > 150
    reached, queue = set(), ["root"]
    while queue:
        note = get(demo, f"/etapi/notes/{queue.pop()}").json()
        reached.add(note["noteId"])
        queue += [c for c in note["childNoteIds"] if c not in reached]
    assert expected <= reached
    assert expected <= set(ids(listing(demo, includeArchivedNotes="true")))


def test_clones_become_extra_parents_with_their_branch(demo: FakeTrilium) -> None:
    note = get(demo, "/etapi/notes/RNf8bX9CdR1k").json()
    assert note["parentNoteIds"] == ["JvGlcvRf2Lu8", "5t7iAUBdEndw"]
    assert note["parentBranchIds"] == ["JvGlcvRf2Lu8_RNf8bX9CdR1k", "5t7iAUBdEndw_RNf8bX9CdR1k"]
    branch = get(demo, "/etapi/branches/5t7iAUBdEndw_RNf8bX9CdR1k").json()
    assert (branch["noteId"], branch["parentNoteId"], branch["prefix"]) == (
        "RNf8bX9CdR1k",
        "5t7iAUBdEndw",
        "28. 11. 2017",
    )


def test_exported_links_are_turned_back_into_trilium_paths(demo: FakeTrilium) -> None:
    html = get(demo, "/etapi/notes/Fb7eMY46lT6k/content").text
    assert '<a href="#root/Fb7eMY46lT6k/vHpMd49rAUWn/qP9UEZ4kQ0NK">tables</a>' in html
    assert ".html" not in html and "ck-content" not in html and "<body" not in html
    assert 'src="api/attachments/96nFd7uePoSp/image/icon-color.svg"' in html


def test_code_notes_keep_their_text(demo: FakeTrilium, demo_zip: Path) -> None:
    member = "root/Trilium Demo/Scripting examples/Custom request handler.js"
    expected = zipfile.ZipFile(demo_zip).read(member).decode()
    assert get(demo, "/etapi/notes/IPifAXM3cyRS/content").text == expected


def test_seeded_dates_and_blob_ids_are_deterministic(demo: FakeTrilium, demo_zip: Path) -> None:
    again = FakeTrilium.from_export_zip(demo_zip)
    with again:
        first, second = listing(demo), listing(again)
    assert first == second
    assert first[2]["utcDateModified"] == "2024-01-01 00:00:08.000Z"
    assert first[2]["dateModified"] == "2024-01-01 02:00:08.000+0200"


def test_export_loaded_under_another_parent_links_through_it(
    fake: FakeTrilium, demo_zip: Path
) -> None:
    fake.add_note("imports0001", "Imports")
    fake.load_export_zip(demo_zip, parent_id="imports0001")
    assert get(fake, "/etapi/notes/Fb7eMY46lT6k").json()["parentNoteIds"] == ["imports0001"]
    html = get(fake, "/etapi/notes/Fb7eMY46lT6k/content").text
    assert 'href="#root/imports0001/Fb7eMY46lT6k/vHpMd49rAUWn/8DORylN1bL6J"' in html


def test_notebook_dir_manifest(tmp_path: Path, fake: FakeTrilium) -> None:
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


def test_inherited_attributes_are_listed_with_their_owner(demo: FakeTrilium) -> None:
    to_read = get(demo, "/etapi/notes/Mzby9GxzBFl1").json()  # child of Books (#wordCount)
    assert [(a["noteId"], a["name"]) for a in to_read["attributes"]] == [
        ("L2NrzQACw0in", "wordCount")
    ]
    # ~template=Book template brings the template's attributes, but not its #template marker.
    book = get(demo, "/etapi/notes/NhSSbIObzEsM").json()
    from_template = {a["name"] for a in book["attributes"] if a["noteId"] == "ODEzxhfMalvQ"}
    assert from_template and "template" not in from_template


def test_inheritance_follows_every_parent_but_not_into_hidden(fake: FakeTrilium) -> None:
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


def test_hidden_subtree_is_excluded_unless_searching_under_it(demo: FakeTrilium) -> None:
    listed = ids(listing(demo, includeArchivedNotes="true"))
    assert "root" in listed and not [n for n in listed if n.startswith("_")]
    assert not [n for n in ids(listing(demo, ancestorNoteId="root")) if n.startswith("_")]
    under_hidden = ids(listing(demo, ancestorNoteId="_hidden"))
    assert {"_hidden", "_options", "_help", "_help_HI6GBBIduIgv"} <= set(under_hidden)
    assert "Fb7eMY46lT6k" not in under_hidden


def test_a_clone_outside_hidden_makes_a_note_visible(fake: FakeTrilium) -> None:
    assert "_help_HI6GBBIduIgv" not in ids(listing(fake))
    fake.clone("_help_HI6GBBIduIgv", "root")
    assert "_help_HI6GBBIduIgv" in ids(listing(fake))


def test_archived_notes_are_excluded_unless_asked(fake: FakeTrilium) -> None:
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


def test_search_parameter_is_required(demo: FakeTrilium) -> None:
    for params in ({}, {"search": ""}, {"search": "   "}):
        response = HTTP.get(f"{demo.url()}/etapi/notes", params=params,
                            headers={"Authorization": TOKEN})  # fmt: skip
        assert response.status_code == 400
        assert response.json()["code"] == "SEARCH_QUERY_PARAM_MANDATORY"


def test_unsupported_query_is_refused_with_a_clear_message(demo: FakeTrilium) -> None:
    response = get(demo, "/etapi/notes", search="towers tolkien")
    assert response.status_code == 400
    assert "towers tolkien" in response.json()["message"]


def test_changed_since_ordering_and_limit(fake: FakeTrilium) -> None:
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


def test_protected_note_content_is_refused_and_title_masked(fake: FakeTrilium) -> None:
    fake.add_note("secretNote01", "Bank codes", content="<p>1234</p>", is_protected=True)
    response = get(fake, "/etapi/notes/secretNote01/content")
    assert response.status_code == 400
    assert response.json()["code"] == "NOTE_IS_PROTECTED"
    assert get(fake, "/etapi/notes/secretNote01").json()["title"] == "[protected]"
    listed = {n["noteId"]: n for n in listing(fake)}
    assert (
        listed["secretNote01"]["title"] == "[protected]" and listed["secretNote01"]["isProtected"]
    )


def test_deleted_note_and_orphaned_children_answer_404(fake: FakeTrilium) -> None:
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


def test_which_edits_bump_utc_date_modified(fake: FakeTrilium) -> None:
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


def test_auth_header_forms(demo: FakeTrilium) -> None:
    basic = base64.b64encode(f"etapi:{TOKEN}".encode()).decode()
    wrong_user = base64.b64encode(f"admin:{TOKEN}".encode()).decode()
    for auth in (TOKEN, f"Bearer {TOKEN}", f"Basic {basic}"):
        assert get(demo, "/etapi/app-info", auth=auth).status_code == 200, auth
    for auth in (None, "", "nope", f"Bearer {TOKEN}x", f"Basic {wrong_user}", "Basic !!"):
        response = get(demo, "/etapi/app-info", auth=auth)
        assert (response.status_code, response.json()["code"]) == (401, "NOT_AUTHENTICATED")


def test_other_methods_and_paths_get_error_json(demo: FakeTrilium) -> None:
    with httpx.Client(base_url=demo.url(), headers={"Authorization": TOKEN}, trust_env=False) as c:
        deleted = c.delete("/etapi/notes/Fb7eMY46lT6k")
        posted = c.post("/etapi/create-note", json={"title": "x"})
        calendar = c.get("/etapi/calendar/days/2025-01-01")
    assert (deleted.status_code, deleted.json()["code"]) == (405, "METHOD_NOT_ALLOWED")
    assert (posted.status_code, posted.json()["code"]) == (404, "NOT_FOUND")
    assert (calendar.status_code, calendar.json()["status"]) == (404, 404)
    assert get(demo, "/etapi/notes/Fb7eMY46lT6k").status_code == 200
    assert ("DELETE", "/etapi/notes/Fb7eMY46lT6k") in demo.requests


def test_fault_injection(fake: FakeTrilium) -> None:
    fake.fail_status = 503
    assert get(fake, "/etapi/app-info").status_code == 503
    fake.fail_status, fake.malformed = None, True
    response = get(fake, "/etapi/notes", search=ALL)
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()
    fake.malformed, fake.delay = False, 0.3
    started = time.monotonic()
    assert get(fake, "/etapi/app-info").status_code == 200
    assert time.monotonic() - started >= 0.3
    assert fake.requests[-3:] == [
        ("GET", "/etapi/app-info"),
        ("GET", "/etapi/notes?search=note.noteId+%21%3D+%27%27"),
        ("GET", "/etapi/app-info"),
    ]


def test_restart_on_the_same_port(fake: FakeTrilium) -> None:
    url = fake.url()
    fake.stop()
    with pytest.raises(httpx.ConnectError):
        get(fake, "/etapi/app-info")
    assert fake.start() == url
    assert get(fake, "/etapi/app-info").status_code == 200
    assert "fakeSecret" not in repr(fake)


def test_standalone_process_prints_ready_and_serves(demo_zip: Path) -> None:
    command = [sys.executable, "-m", "trilium_recall.standin", "--zip", str(demo_zip),
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
            response = HTTP.get(f"{url}/etapi/notes/Fb7eMY46lT6k", headers=headers)
            assert response.json()["title"] == "Trilium Demo"
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


def test_error_bodies_match_the_spec(fake: FakeTrilium, spec: OpenAPI, etapi_spec: Path) -> None:
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
