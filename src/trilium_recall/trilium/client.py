"""Async ETAPI client: typed notes, bounded retries, and a transport that lets only GET through.

Trilium's ETAPI tokens cannot be made read-only, so the guarantee that the engine never changes
anything lives in `getonly.ReadOnlyTransport`, below every line of client code.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, RootModel, TypeAdapter, ValidationError

from ..engine_address import shown_url, trilium_base
from ..errors import (
    NoteNotFound,
    NoteProtected,
    TriliumAuthError,
    TriliumBadResponse,
    TriliumUnavailable,
)
from ..textclean import counted, valid_utf8
from . import listing
from .getonly import ReadOnlyTransport
from .records import NOTE_ID, AppInfo, Attribute, Change, Note

ALL_NOTES_QUERY = "note.noteId != ''"  # expression only: no content scan on the server
_UTC_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$")
# Trilium answers a search once it has built the whole result: listing every note may take 6x
# a single request's limit (the stand-in took over 10 s at 100,000 notes).
LISTING_TIMEOUT_FACTOR = 6
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_NOT_FOUND_CODES = frozenset({"NOTE_NOT_FOUND", "BRANCH_NOT_FOUND"})


# ---------------------------------------------------------------- wire models (ETAPI JSON)


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _AttributeWire(_Wire):
    attributeId: str
    noteId: str
    type: Literal["label", "relation"]
    name: str
    value: str = ""
    position: int = 0
    isInheritable: bool = False


class _NoteWire(_Wire):
    noteId: str
    title: str
    type: str
    mime: str = ""
    isProtected: bool
    blobId: str | None = None  # absent before Trilium 0.61
    utcDateModified: str
    parentNoteIds: list[str]
    childNoteIds: list[str]
    attributes: list[_AttributeWire]

    def to_note(self) -> Note:
        attributes = tuple(
            Attribute(a.attributeId, a.noteId, a.type, a.name, a.value, a.position, a.isInheritable)
            for a in self.attributes
        )
        return Note(
            self.noteId, self.title, self.type, self.mime, self.isProtected, self.blobId,
            self.utcDateModified, tuple(self.parentNoteIds), tuple(self.childNoteIds), attributes,
        )  # fmt: skip


class _SearchWire(_Wire):
    results: list[object]  # each validated as a _NoteWire, a slice at a time (_notes_from)


_NoteSlice = TypeAdapter(list[_NoteWire])
# Notes validated per call: one call over a 100,000-note listing held the interpreter for
# seconds, and the engine's searches wait for it (bench/bench_full_stall.py).
VALIDATE_SLICE = 500


class _ChangeWire(_Wire):
    noteId: str
    utcDate: str
    current_isDeleted: bool = False  # 0/1 from SQLite on real servers: pydantic takes both
    current_isProtected: bool = False


_HistoryWire = RootModel[list[_ChangeWire]]


class _AppInfoWire(_Wire):
    appVersion: str
    dbVersion: int
    utcDateTime: str
    syncVersion: int | None = None
    buildDate: str | None = None
    buildRevision: str | None = None


_Model = TypeVar("_Model", bound=BaseModel)


# ---------------------------------------------------------------- the client


class TriliumClient:
    """Reads one Trilium instance over ETAPI. Errors name the instance, never the token."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.25,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._url = shown_url(url)
        self._token = token
        self._listing_timeout = timeout * LISTING_TIMEOUT_FACTOR
        self._retries = max(0, retries)
        self._backoff = backoff
        self._http = httpx.AsyncClient(
            base_url=trilium_base(url) + "/etapi",
            transport=ReadOnlyTransport(transport or httpx.AsyncHTTPTransport()),
            headers={"Authorization": token, "Accept": "application/json"},  # works on all versions
            timeout=timeout,
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"TriliumClient(url={self._url!r})"

    async def __aenter__(self) -> TriliumClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------ endpoints

    async def app_info(self) -> AppInfo:
        wire = self._parse(await self._get("/app-info", "app info"), _AppInfoWire, "app info")
        return AppInfo(
            wire.appVersion, wire.dbVersion, wire.utcDateTime, wire.syncVersion,
            wire.buildDate, wire.buildRevision,
        )  # fmt: skip

    async def search(
        self,
        query: str,
        *,
        include_archived: bool = False,
        ancestor_note_id: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> list[Note]:
        """Run a search (`timeout`: seconds, the client's own limit if None). Beware: a query
        Trilium cannot parse matches every note."""
        if not query.strip():
            raise ValueError("search query must not be empty")
        params = {"search": query}
        if include_archived:
            params["includeArchivedNotes"] = "true"
        if ancestor_note_id is not None:
            params["ancestorNoteId"] = _checked_id(ancestor_note_id)
        if limit is not None:
            if limit < 1:
                raise ValueError(f"limit must be positive, not {limit}")
            params["limit"] = str(limit)
        response = await self._get("/notes", "search results", params, timeout)
        return await asyncio.to_thread(self._notes_from, response)

    def _notes_from(self, response: httpx.Response) -> list[Note]:
        """The results as notes: parsed off the event loop, validated a slice at a time."""
        results = self._parse(response, _SearchWire, "search results").results
        notes: list[Note] = []
        for start in range(0, len(results), VALIDATE_SLICE):
            part = results[start : start + VALIDATE_SLICE]
            try:
                notes += [wire.to_note() for wire in _NoteSlice.validate_python(part)]
            except ValidationError as exc:
                raise self._bad_response(response, "search results", exc, start) from None
        return notes

    async def all_notes(self) -> list[Note]:
        """Every note outside the hidden subtree, archived ones included."""
        return await self.search(
            ALL_NOTES_QUERY, include_archived=True, timeout=self._listing_timeout
        )

    async def changed_since(self, utc: str) -> list[Note]:
        """Notes whose utcDateModified >= `utc` (`2025-04-19 10:12:33.456Z`), oldest first."""
        if not _UTC_STAMP.match(utc):
            raise ValueError(f"not a Trilium UTC timestamp (YYYY-MM-DD HH:MM:SS.mmmZ): {utc!r}")
        datetime.strptime(utc, "%Y-%m-%d %H:%M:%S.%fZ")  # rejects month 13 and the like
        # orderDirection is broken server-side; ordering inside the query works.
        query = f"note.utcDateModified >= '{utc}' orderBy note.utcDateModified asc"
        return await self.search(query, include_archived=True)

    async def recent_changes(self) -> list[Change]:
        """`GET /notes/history` (0.102+), newest first, ≤ 500 rows; NoteNotFound before 0.102."""
        response = await self._get("/notes/history", "recent changes")
        rows = self._parse(response, _HistoryWire, "recent changes").root
        flags = [(r.noteId, r.utcDate, r.current_isDeleted, r.current_isProtected) for r in rows]
        return [Change(*row) for row in flags]

    async def note(self, note_id: str) -> Note:
        path = f"/notes/{quote(_checked_id(note_id), safe='')}"
        what = f"note {note_id}"
        return self._parse(await self._get(path, what), _NoteWire, what).to_note()

    async def content(self, note_id: str) -> str:
        """The stored content (HTML for text notes). Protected notes raise NoteProtected."""
        path = f"/notes/{quote(_checked_id(note_id), safe='')}/content"
        response = await self._get(path, f"content of note {note_id}")
        return response.text

    # ------------------------------------------------------------ plumbing

    async def _get(
        self,
        path: str,
        what: str,
        params: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """GET with bounded retries (exponential backoff) on connection errors, timeouts, 5xx."""
        limit = httpx.USE_CLIENT_DEFAULT if timeout is None else timeout
        for attempt in range(self._retries + 1):
            status = None
            try:
                response = await self._http.get(path, params=params, timeout=limit)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                if response.status_code not in _RETRY_STATUSES:
                    self._raise_for_status(response, what)
                    return response
                status = response.status_code
                problem = f"HTTP {status}"
            if attempt < self._retries:
                await asyncio.sleep(self._backoff * 2**attempt)
        tries = counted(attempt + 1, "attempt")
        message = f"Trilium at {self._url} is unavailable ({problem}) after {tries}"
        raise TriliumUnavailable(self._scrub(message), status)

    def _raise_for_status(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if status < 300:
            return
        code, detail = _error_fields(response)
        where = f"Trilium at {self._url}"
        if status == 401:
            message = f"{where} rejected the ETAPI token (401): create a new one in Options → ETAPI"
            raise TriliumAuthError(message)
        if status == 404 and code in _NOT_FOUND_CODES:
            raise NoteNotFound(self._scrub(f"{what} not found on {where}"))
        if status == 400 and code == "NOTE_IS_PROTECTED":
            raise NoteProtected(self._scrub(f"{what} is protected on {where}: skipped"))
        if code is None:
            kind = response.headers.get("content-type", "no content type")
            message = f"{where} answered {status} ({kind}) for {what}, not ETAPI JSON"
            hint = (
                " — is the URL that of the Trilium server?" if status < 400 or status == 404 else ""
            )
            raise TriliumBadResponse(self._scrub(message + hint))
        raise TriliumBadResponse(
            self._scrub(f"{where} answered {status} {code} for {what}: {detail}")
        )

    def _parse(self, response: httpx.Response, model: type[_Model], what: str) -> _Model:
        try:
            # Python's parser (a value at a time: listing.py), then the model: it keeps a title's
            # lone surrogate (half an emoji, which JavaScript can write) for valid_utf8 to mend;
            # pydantic's would refuse the whole listing over it.
            return model.model_validate(valid_utf8(listing.decode(response.content)))
        except ValidationError as exc:
            raise self._bad_response(response, what, exc) from None
        except (ValueError, RecursionError):  # after ValidationError, a ValueError subclass
            kind = response.headers.get("content-type", "no content type")
            message = f"Trilium at {self._url} sent {what}, but not as ETAPI JSON ({kind}; no JSON)"
            raise TriliumBadResponse(self._scrub(message)) from None

    def _bad_response(
        self, response: httpx.Response, what: str, exc: ValidationError, start: int | None = None
    ) -> TriliumBadResponse:
        """Names the first invalid field (`start`: the first index of a validated slice)."""
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = (
            first["loc"]
            if start is None
            else ("results", start + int(first["loc"][0]), *first["loc"][1:])
        )
        kind = response.headers.get("content-type", "no content type")
        problem = f"{kind}; {'.'.join(map(str, loc)) or 'body'}: {first['msg']}"
        message = f"Trilium at {self._url} sent {what}, but not as ETAPI JSON ({problem})"
        return TriliumBadResponse(self._scrub(message))

    def _scrub(self, message: str) -> str:
        """Belt and braces: a server could echo the header back in an error message."""
        if len(self._token) < 4:
            return message
        # As written, and as a str's or bytes' repr quotes it (httpx's header errors do).
        for form in {self._token, repr(self._token)[1:-1], repr(self._token.encode())[2:-1]}:
            message = message.replace(form, "[token]")
        return message


def _checked_id(entity_id: str) -> str:
    if not NOTE_ID.fullmatch(entity_id):
        raise NoteNotFound(f"{entity_id!r} is not a Trilium id (letters, digits, _)")
    return entity_id


def _error_fields(response: httpx.Response) -> tuple[str | None, str]:
    """(code, message) of an ETAPI error body, (None, "") when the body is not one."""
    try:
        body = response.json()
    except ValueError:
        return None, ""
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return body["code"], str(body.get("message", ""))[:300]
    return None, ""
