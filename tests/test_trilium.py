"""The ETAPI client against the fake Trilium over real HTTP, and its GET-only guard."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from standin_faults import FaultyTrilium
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.errors import (
    ForbiddenRequest,
    NoteNotFound,
    NoteProtected,
    TriliumAuthError,
    TriliumBadResponse,
    TriliumError,
    TriliumUnavailable,
)
from trilium_recall.trilium.client import TriliumClient
from trilium_recall.trilium.records import AppInfo, Attribute, Note

TOKEN = "tok3nId_s3cretValueNeverShown"


SUMMARY = "sanjg8ULLnpg"  # "Summary — DB connection exhaustion postmortem (Sep 2026)"
TEMPLATE = "Cot5rlkoHdGL"  # "Summary page template"


@pytest.fixture
def fake() -> Iterator[FaultyTrilium]:
    """The built-in notebook, plus what it lacks: a clone, a template in use, a prefixed branch."""
    server = FaultyTrilium(token=TOKEN)
    server.load_notebook_dir(NOTEBOOK_DIR)
    server.clone(SUMMARY, "lllrD6ed6yVl")  # also under its incident's journal day
    server.set_label(TEMPLATE, "status", "draft")
    server.add_relation(SUMMARY, "template", TEMPLATE)
    server.add_note("followUp0001", "Follow-up actions", parent_id=SUMMARY, prefix="TODO")
    with server:
        yield server


@pytest.fixture
async def client(fake: FaultyTrilium) -> AsyncIterator[TriliumClient]:
    async with TriliumClient(fake.url(), TOKEN, retries=1, backoff=0.01) as trilium:
        yield trilium


def assert_no_token(exc: BaseException) -> None:
    assert TOKEN not in str(exc) and TOKEN not in repr(exc)


# ---------------------------------------------------------------- typed answers


async def test_note_is_parsed_into_typed_model(client: TriliumClient) -> None:
    note = await client.note(SUMMARY)
    assert isinstance(note, Note)
    title = "Summary — DB connection exhaustion postmortem (Sep 2026)"
    assert (note.title, note.type, note.mime) == (title, "text", "text/html")
    assert note.parent_note_ids == ("na1VknJuSo0x", "lllrD6ed6yVl")
    assert note.child_note_ids == ("followUp0001",)
    assert note.utc_date_modified == "2024-01-01 00:00:15.000Z"  # the 15th note seeded
    assert note.blob_id and not note.is_protected
    assert note.label("wikiLayer") == "summary"  # inherited from Summaries
    assert note.label("status") == "draft"  # from the template
    assert note.has_label("status") and not note.has_label("archived")
    template = note.relations("template")
    assert [(a.note_id, a.value) for a in template] == [(SUMMARY, TEMPLATE)]
    assert [a.value for a in note.relations("derivedFrom")] == ["9eSvnhyga2Ud"]
    assert all(isinstance(a, Attribute) for a in note.attributes)
    inherited = [a for a in note.attributes if a.note_id != note.note_id]
    assert inherited and set(note.owned_attributes).isdisjoint(inherited)


async def test_inherited_label_is_found_and_own_label_wins(
    client: TriliumClient, fake: FaultyTrilium
) -> None:
    fake.add_note("areaParent01", "Area", attributes=[
        {"type": "label", "name": "area", "value": "wiki", "inheritable": True}])  # fmt: skip
    fake.add_note("areaChild001", "Child", parent_id="areaParent01")
    assert (await client.note("areaChild001")).label("area") == "wiki"
    fake.set_label("areaChild001", "area", "journal")
    assert (await client.note("areaChild001")).label("area") == "journal"


async def test_app_info_and_content(client: TriliumClient) -> None:
    info = await client.app_info()
    assert isinstance(info, AppInfo)
    assert (info.app_version, info.db_version) == ("0.93.0", 229)
    html = await client.content("EHNWLmkEi2qa")  # "Backups (restic)"
    assert html == (NOTEBOOK_DIR / "homelab" / "restic.html").read_text(encoding="utf-8")
    assert html.startswith("<p>What: <code>/etc</code>")


async def test_all_notes_skips_hidden_and_keeps_archived(
    client: TriliumClient, fake: FaultyTrilium
) -> None:
    fake.set_label("JHq4u4adStj7", "archived", inheritable=True)  # "Homelab" and its subtree
    notes = {n.note_id: n for n in await client.all_notes()}
    assert "EHNWLmkEi2qa" in notes and notes["EHNWLmkEi2qa"].has_label("archived")
    assert "gZZ1nZwuqEwI" in notes and notes["gZZ1nZwuqEwI"].has_label("archived")  # in Archive
    assert not [n for n in notes if n.startswith("_")]
    unarchived = {n.note_id for n in await client.search("note.noteId != ''")}
    assert not {"EHNWLmkEi2qa", "gZZ1nZwuqEwI"} & unarchived and "wuHwYj7IBZt5" in unarchived
    assert len(await client.search("note.noteId != ''", limit=3)) == 3
    under_hidden = await client.search("note.noteId != ''", ancestor_note_id="_help")
    assert {n.note_id for n in under_hidden} == {
        "_help",
        "_help_HI6GBBIduIgv",
        "_help_Cq5X6iKQop6R",
    }


async def test_changed_since_returns_edited_notes_oldest_first(
    client: TriliumClient, fake: FaultyTrilium
) -> None:
    fake.set_content("wuHwYj7IBZt5", "<p>edited</p>")
    watermark = (await client.note("wuHwYj7IBZt5")).utc_date_modified
    fake.set_label("Nnl10TvQvQB5", "seen")  # attribute change: no bump, not listed
    fake.set_title("HHeq5hhZ0hf9", "Private")
    changed = await client.changed_since(watermark)
    assert [n.note_id for n in changed] == ["wuHwYj7IBZt5", "HHeq5hhZ0hf9"]


@pytest.mark.parametrize(
    "bad",
    [
        "2025-01-01",
        "2025-01-01T00:00:00.000Z",
        "2025-13-01 00:00:00.000Z",
        "2025-01-01 00:00:00.000Z' or note.title != '",
        "",
    ],
)
async def test_changed_since_rejects_malformed_timestamps(
    client: TriliumClient, fake: FaultyTrilium, bad: str
) -> None:
    fake.requests.clear()
    with pytest.raises(ValueError, match=r"timestamp|does not match|unconverted|month"):
        await client.changed_since(bad)
    assert fake.requests == []


async def test_protected_deleted_and_invalid_ids(
    client: TriliumClient, fake: FaultyTrilium
) -> None:
    with pytest.raises(NoteProtected, match="mLP0IgGSxH3Q") as protected:
        await client.content("mLP0IgGSxH3Q")  # the notebook's "Recovery codes"
    fake.delete("JHq4u4adStj7")
    with pytest.raises(NoteNotFound, match="JHq4u4adStj7") as deleted:
        await client.note("JHq4u4adStj7")
    fake.requests.clear()
    for bad_id in ("../app-info", "abc/def", "a?b=c", "", "x" * 200):
        with pytest.raises(NoteNotFound):
            await client.content(bad_id)
    assert fake.requests == []  # refused before sending
    for exc in (protected.value, deleted.value):
        assert fake.url() in str(exc)
        assert_no_token(exc)


# ---------------------------------------------------------------- GET only


async def test_every_request_of_a_full_read_is_a_get(
    client: TriliumClient, fake: FaultyTrilium
) -> None:
    fake.requests.clear()
    await client.app_info()
    notes = await client.all_notes()
    await client.changed_since("2024-01-01 00:00:00.000Z")
    for note in notes[:25]:
        await client.note(note.note_id)
        await client.content(note.note_id)
    assert len(fake.requests) == 3 + 2 * 25
    assert {method for method, _ in fake.requests} == {"GET"}
    assert not [p for _, p in fake.requests if "/calendar" in p or "/inbox" in p]


class _MustNotBeCalled(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        pytest.fail(f"the guard let {request.method} {request.url} through")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/create-note"),
        ("PUT", "/notes/abcdef/content"),
        ("PATCH", "/notes/abcdef"),
        ("DELETE", "/notes/abcdef"),
        ("HEAD", "/app-info"),
        ("GET", "/calendar/days/2025-01-01"),
        ("GET", "/inbox/2025-01-01"),
        ("GET", "/Calendar/days/2025-01-01"),
        ("GET", "/%63alendar/days/2025-01-01"),
        ("GET", "/%2563alendar/days/2025-01-01"),
        ("GET", "/notes/../calendar/days/2025-01-01"),
        ("GET", "/notes/%2e%2e/inbox/2025-01-01"),
    ],
)
async def test_guard_refuses_before_sending(method: str, path: str) -> None:
    trilium = TriliumClient("http://127.0.0.1:9", TOKEN, transport=_MustNotBeCalled())
    async with trilium:
        with pytest.raises(ForbiddenRequest) as refused:
            await trilium._http.request(method, path)  # the client's own HTTP stack
    assert "http://127.0.0.1:9" in str(refused.value)
    assert_no_token(refused.value)


async def test_guard_lets_ordinary_gets_through() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path} {request.headers['authorization']}")
        return httpx.Response(200, json={"appVersion": "0.93.0", "dbVersion": 229,
                                         "utcDateTime": "2025-01-01T00:00:00.000Z"})  # fmt: skip

    async with TriliumClient(
        "http://trilium.lan/", TOKEN, transport=httpx.MockTransport(answer)
    ) as c:
        await c.app_info()
    assert seen == [f"GET /etapi/app-info {TOKEN}"]


# ---------------------------------------------------------------- failures


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_unreachable_port_is_unavailable_after_bounded_retries() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    async with TriliumClient(url, TOKEN, retries=2, backoff=0.01) as trilium:
        with pytest.raises(TriliumUnavailable) as unavailable:
            await trilium.all_notes()
    assert url in str(unavailable.value) and "3 attempts" in str(unavailable.value)
    assert_no_token(unavailable.value)


async def test_wrong_token_is_an_auth_error(fake: FaultyTrilium) -> None:
    wrong = "wrongId_" + TOKEN[::-1]
    async with TriliumClient(fake.url(), wrong, retries=3, backoff=0.01) as trilium:
        with pytest.raises(TriliumAuthError) as denied:
            await trilium.app_info()
    assert fake.url() in str(denied.value) and wrong not in str(denied.value)
    assert len(fake.requests) == 1  # 401 is final: no retry


async def test_malformed_json_is_a_bad_response(client: TriliumClient, fake: FaultyTrilium) -> None:
    fake.malformed = True
    with pytest.raises(TriliumBadResponse, match="results, but not as ETAPI JSON") as bad:
        await client.all_notes()
    assert_no_token(bad.value)


@pytest.mark.parametrize(
    ("status", "content_type", "body"),
    [
        (200, "text/html", b"<!DOCTYPE html><html><body>Trilium login</body></html>"),
        (404, "text/html", b"<html><body>nginx: 404 Not Found</body></html>"),
        (200, "application/json", b'{"results": [{"noteId": 1}]}'),
        (200, "application/json", b'{"notes": []}'),
        (302, "text/html", b""),
        (403, "application/json", b'{"status": 403, "code": "FORBIDDEN", "message": "no"}'),
    ],
)
async def test_answers_that_are_not_etapi_json_are_bad_responses(
    status: int, content_type: str, body: bytes
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": content_type})

    transport = httpx.MockTransport(answer)
    async with TriliumClient("http://trilium.lan", TOKEN, transport=transport) as trilium:
        with pytest.raises(TriliumBadResponse) as bad:
            await trilium.all_notes()
    assert "http://trilium.lan" in str(bad.value)
    assert_no_token(bad.value)


async def test_a_title_with_half_an_emoji_is_mended_not_fatal(fake: FaultyTrilium) -> None:
    """JavaScript can write a lone surrogate escape; one such title must not fail a listing."""
    note_json = httpx.get(f"{fake.url()}/etapi/notes/root", headers={"Authorization": TOKEN}).json()
    note_json["title"] = "Trip \ud83c notes"
    broken = json.dumps(note_json).encode()  # ensure_ascii: the lone half stays a \\ud83c escape
    assert b"\\ud83c" in broken

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=broken, headers={"content-type": "application/json"})

    async with TriliumClient(
        "http://trilium.lan", TOKEN, transport=httpx.MockTransport(answer)
    ) as t:
        note = await t.note("root")
    assert note.title == "Trip \ufffd notes"
    note.title.encode("utf-8")  # storable and embeddable


class _RecoverAfterFirst(httpx.AsyncBaseTransport):
    """Real HTTP to the fake; the fake stops failing once its first answer came back."""

    def __init__(self, fake: FaultyTrilium) -> None:
        self.fake = fake
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.fake.fail_status = None
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_500_is_retried_then_succeeds(fake: FaultyTrilium) -> None:
    fake.fail_status = 500
    transport = _RecoverAfterFirst(fake)
    async with TriliumClient(fake.url(), TOKEN, retries=2, backoff=0.01, transport=transport) as c:
        info = await c.app_info()
    assert info.app_version == "0.93.0"
    assert fake.requests == [("GET", "/etapi/app-info"), ("GET", "/etapi/app-info")]


async def test_5xx_every_time_is_unavailable(fake: FaultyTrilium) -> None:
    fake.fail_status = 503
    async with TriliumClient(fake.url(), TOKEN, retries=2, backoff=0.01) as trilium:
        with pytest.raises(TriliumUnavailable, match="HTTP 503") as unavailable:
            await trilium.note("JHq4u4adStj7")
    assert len(fake.requests) == 3
    assert_no_token(unavailable.value)


async def test_slow_answer_past_the_timeout_is_unavailable(fake: FaultyTrilium) -> None:
    fake.delay = 60.0  # the client's 0.2 s timeout, not the answer, must end each attempt
    async with TriliumClient(fake.url(), TOKEN, timeout=0.2, retries=1, backoff=0.01) as trilium:
        with pytest.raises(TriliumUnavailable, match="Timeout") as unavailable:
            await trilium.all_notes()
    assert len(fake.requests) == 2  # one try and one retry, each given up on
    assert_no_token(unavailable.value)


async def test_url_forms_and_repr_hide_the_token(fake: FaultyTrilium) -> None:
    for url in (fake.url() + "/", fake.url() + "/etapi", fake.url() + "/etapi/"):
        async with TriliumClient(url, TOKEN) as trilium:
            assert (await trilium.app_info()).db_version == 229
            assert TOKEN not in repr(trilium) and fake.url() in repr(trilium)
    assert {path for _, path in fake.requests} == {"/etapi/app-info"}


def test_errors_are_trilium_errors() -> None:
    for error in (TriliumUnavailable, TriliumAuthError, TriliumBadResponse, NoteNotFound,
                  NoteProtected, ForbiddenRequest):  # fmt: skip
        assert issubclass(error, TriliumError)
