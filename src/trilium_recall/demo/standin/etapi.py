"""The fake Trilium's note tree and the ETAPI answers computed from it.

`server.FakeTrilium` owns one `NoteTree`, guards it with a lock and serves `answer()` over
HTTP. The behaviours reproduced are those of shared/trilium/TRILIUM-FACTS.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

LOCAL_OFFSET = timedelta(hours=2)  # the fake's "local" zone, so local and UTC dates differ
JSON_TYPE = "application/json; charset=utf-8"
_TEMPLATE_RELATIONS = ("template", "inherit")
_TEMPLATE_MARKERS = ("template", "workspaceTemplate")
# The real server parses the whole search language; the fake knows only the engine's queries.
_ORDER = r"(?: orderBy note\.utcDateModified (?P<direction>asc|desc))?"
_QUERY_ALL = re.compile(r"note\.noteId != ''" + _ORDER)
_QUERY_SINCE = re.compile(r"note\.utcDateModified >= '(?P<since>[^']*)'" + _ORDER)
_ORDER_PARAMS = ("utcDateModified", "dateModified", "utcDateCreated", "dateCreated", "title")


def utc_text(moment: datetime) -> str:
    """Trilium's UTC form: `2025-04-19 10:12:33.456Z`."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def local_text(moment: datetime) -> str:
    """Trilium's local form: `2025-04-19 12:12:33.456+0200`."""
    local = moment + LOCAL_OFFSET
    hours, minutes = divmod(int(LOCAL_OFFSET.total_seconds()) // 60, 60)
    stamp = local.strftime("%Y-%m-%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"
    return f"{stamp}+{hours:02d}{minutes:02d}"


def blob_id(content: str | bytes) -> str:
    """A content hash, like Trilium's blobId (0.61+)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()[:20]


@dataclass
class AttributeRecord:
    attribute_id: str
    note_id: str  # the owner
    type: str
    name: str
    value: str
    position: int
    inheritable: bool
    modified: datetime


@dataclass
class NoteRecord:
    note_id: str
    title: str
    type: str
    mime: str
    content: str | bytes
    is_protected: bool
    created: datetime
    modified: datetime
    attributes: list[AttributeRecord] = field(default_factory=list)


@dataclass
class BranchRecord:
    branch_id: str
    note_id: str
    parent_id: str
    prefix: str | None
    position: int
    modified: datetime


class NoteTree:
    """Notes and branches with parent/child indexes. Not thread-safe: the owner locks."""

    def __init__(self) -> None:
        self.notes: dict[str, NoteRecord] = {}
        self.branches: dict[str, BranchRecord] = {}
        self._parents_of: dict[str, list[str]] = {}  # note id -> branch ids to its parents
        self._children_of: dict[str, list[str]] = {}  # note id -> branch ids to its children

    def add_branch(
        self, note_id: str, parent_id: str, prefix: str | None, position: int | None, at: datetime
    ) -> None:
        """Place a note under a parent; branchId is `<parentId>_<noteId>` as in Trilium."""
        branch_id = f"{parent_id}_{note_id}"
        if branch_id in self.branches:
            return
        if position is None:
            position = self.next_position(parent_id)
        self.branches[branch_id] = BranchRecord(branch_id, note_id, parent_id, prefix, position, at)
        self._parents_of.setdefault(note_id, []).append(branch_id)
        self._children_of.setdefault(parent_id, []).append(branch_id)

    def remove_branch(self, branch_id: str) -> BranchRecord:
        branch = self.branches.pop(branch_id)
        self._parents_of[branch.note_id].remove(branch_id)
        self._children_of[branch.parent_id].remove(branch_id)
        return branch

    def next_position(self, parent_id: str) -> int:
        return max((b.position for b in self.child_branches(parent_id)), default=0) + 10

    def parent_branches(self, note_id: str) -> list[BranchRecord]:
        return [self.branches[b] for b in self._parents_of.get(note_id, ())]

    def child_branches(self, note_id: str) -> list[BranchRecord]:
        children = [self.branches[b] for b in self._children_of.get(note_id, ())]
        return sorted(children, key=lambda b: b.position)

    def parents(self, note_id: str) -> list[str]:
        return [b.parent_id for b in self.parent_branches(note_id) if b.parent_id in self.notes]

    def ancestors(self, note_id: str) -> set[str]:
        seen: set[str] = set()
        stack = self.parents(note_id)
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self.parents(current))
        return seen

    def note_path(self, note_id: str) -> tuple[str, ...]:
        """The first path from root, e.g. `("root", "abc", note_id)`."""
        path = [note_id]
        while path[-1] != "root":
            parents = self.parents(path[-1])
            if not parents or parents[0] in path:
                break
            path.append(parents[0])
        return tuple(reversed(path))


class _Views:
    """Derived facts of one tree state, memoised for one request."""

    def __init__(self, tree: NoteTree) -> None:
        self.tree = tree
        self._attributes: dict[str, list[AttributeRecord]] = {}
        self._hidden: dict[str, bool] = {}

    def attributes(self, note_id: str, path: tuple[str, ...] = ()) -> list[AttributeRecord]:
        """Own, then inheritable ones of every parent, then those of ~template/~inherit targets."""
        if note_id in path:
            return []
        if note_id in self._attributes:
            return self._attributes[note_id]
        collected = sorted(self.tree.notes[note_id].attributes, key=lambda a: a.position)
        inner = (*path, note_id)
        # Trilium keeps root's inheritable attributes out of the hidden subtree.
        if note_id not in ("root", "_hidden"):
            for parent in self.tree.parents(note_id):
                collected += [a for a in self.attributes(parent, inner) if a.inheritable]
        templates = [
            a.value
            for a in collected
            if a.type == "relation" and a.name in _TEMPLATE_RELATIONS and a.value in self.tree.notes
        ]
        for template_id in templates:  # a template's own #template marker is not passed on
            collected += [
                a
                for a in self.attributes(template_id, inner)
                if not (a.type == "label" and a.name in _TEMPLATE_MARKERS)
            ]
        first: dict[str, AttributeRecord] = {}
        for attr in collected:  # the first occurrence wins, as in Trilium
            first.setdefault(attr.attribute_id, attr)
        unique = list(first.values())
        self._attributes[note_id] = unique
        return unique

    def is_hidden(self, note_id: str) -> bool:
        """Hidden when every path to the note goes through `_hidden`."""
        if note_id not in self._hidden:
            parents = self.tree.parents(note_id)
            self._hidden[note_id] = note_id == "_hidden" or (
                bool(parents) and all(self.is_hidden(p) for p in parents)
            )
        return self._hidden[note_id]

    def is_archived(self, note_id: str) -> bool:
        return any(a.type == "label" and a.name == "archived" for a in self.attributes(note_id))

    def note_json(self, note_id: str) -> dict[str, Any]:
        note = self.tree.notes[note_id]
        parents = self.tree.parent_branches(note_id)
        children = self.tree.child_branches(note_id)
        fields = {
            "noteId": note.note_id,
            "isProtected": note.is_protected,
            "title": "[protected]" if note.is_protected else note.title,
            "type": note.type,
            "mime": note.mime,
            "blobId": blob_id(note.content),
            "dateCreated": local_text(note.created),
            "dateModified": local_text(note.modified),
            "utcDateCreated": utc_text(note.created),
            "utcDateModified": utc_text(note.modified),
            "parentNoteIds": [b.parent_id for b in parents],
            "childNoteIds": [b.note_id for b in children],
            "parentBranchIds": [b.branch_id for b in parents],
            "childBranchIds": [b.branch_id for b in children],
            "attributes": [_attribute_json(a) for a in self.attributes(note_id)],
        }
        return fields


def _attribute_json(attr: AttributeRecord) -> dict[str, Any]:
    return {
        "attributeId": attr.attribute_id,
        "noteId": attr.note_id,
        "type": attr.type,
        "name": attr.name,
        "value": attr.value,
        "position": attr.position,
        "isInheritable": attr.inheritable,
        "utcDateModified": utc_text(attr.modified),
    }


def _branch_json(branch: BranchRecord) -> dict[str, Any]:
    return {
        "branchId": branch.branch_id,
        "noteId": branch.note_id,
        "parentNoteId": branch.parent_id,
        "prefix": branch.prefix,
        "notePosition": branch.position,
        "isExpanded": False,
        "utcDateModified": utc_text(branch.modified),
    }


# ---------------------------------------------------------------- answers


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = JSON_TYPE


def error_reply(status: int, code: str, message: str) -> Reply:
    """Trilium's error body: `{"status", "code", "message"}`."""
    body = {"status": status, "code": code, "message": message}
    return Reply(status, json.dumps(body).encode())


def _ok(payload: Any) -> Reply:
    return Reply(200, json.dumps(payload, ensure_ascii=False).encode())


_ROUTES = (
    ("app-info", re.compile(r"/etapi/app-info")),
    ("search", re.compile(r"/etapi/notes")),
    ("note", re.compile(r"/etapi/notes/(?P<id>[^/]+)")),
    ("content", re.compile(r"/etapi/notes/(?P<id>[^/]+)/content")),
    ("branch", re.compile(r"/etapi/branches/(?P<id>[^/]+)")),
)


def answer(
    tree: NoteTree,
    method: str,
    path: str,
    query: dict[str, list[str]],
    app_info: dict[str, Any],
) -> Reply:
    """The reply of an authenticated request (the caller holds the tree's lock)."""
    for name, pattern in _ROUTES:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if method != "GET":
            return error_reply(405, "METHOD_NOT_ALLOWED", f"Method '{method}' not allowed here.")
        if name == "app-info":
            return _ok(app_info)
        if name == "search":
            return _search(_Views(tree), query)
        return _one(_Views(tree), name, match["id"])
    return error_reply(404, "NOT_FOUND", f"Method '{method}' and URL '{path}' not found.")


def _one(views: _Views, kind: str, item_id: str) -> Reply:
    tree = views.tree
    if kind == "branch":
        branch = tree.branches.get(item_id)
        if branch is None:
            return error_reply(404, "BRANCH_NOT_FOUND", f"Branch '{item_id}' not found.")
        return _ok(_branch_json(branch))
    note = tree.notes.get(item_id)
    if note is None:
        return error_reply(404, "NOTE_NOT_FOUND", f"Note '{item_id}' not found.")
    if kind == "note":
        return _ok(views.note_json(item_id))
    if note.is_protected:
        message = f"Note '{item_id}' is protected and cannot be read through ETAPI."
        return error_reply(400, "NOTE_IS_PROTECTED", message)
    body = note.content.encode("utf-8") if isinstance(note.content, str) else note.content
    mime = note.mime or "application/octet-stream"
    return Reply(200, body, f"{mime}; charset=utf-8" if mime.startswith("text/") else mime)


def _search(views: _Views, query: dict[str, list[str]]) -> Reply:
    search = _param(query, "search").strip()
    if not search:
        message = "'search' query parameter is mandatory."
        return error_reply(400, "SEARCH_QUERY_PARAM_MANDATORY", message)
    match = _QUERY_ALL.fullmatch(search) or _QUERY_SINCE.fullmatch(search)
    if match is None:
        # The real server would run it as a full-text search (and an unparsable query matches
        # everything); the fake refuses, so no test passes on a query the fake does not model.
        message = f"The fake Trilium only understands the engine's queries, not {search!r}."
        return error_reply(400, "SEARCH_QUERY_NOT_SUPPORTED", message)
    limit, order_by = _param(query, "limit"), _param(query, "orderBy")
    if limit and not limit.isdigit():
        return error_reply(400, "LIMIT_INVALID", f"'limit' must be an integer, not {limit!r}.")
    if order_by and order_by not in _ORDER_PARAMS:
        return error_reply(400, "ORDER_BY_NOT_SUPPORTED", f"The fake cannot order by {order_by!r}.")
    note_ids = _candidates(views, query)
    since = match.groupdict().get("since")
    if since is not None:  # Trilium compares the strings
        note_ids = [n for n in note_ids if utc_text(views.tree.notes[n].modified) >= since]
    results = [views.note_json(n) for n in note_ids]
    if match["direction"]:
        results.sort(
            key=lambda n: (n["utcDateModified"], n["noteId"]), reverse=match["direction"] == "desc"
        )
    if order_by:  # the orderDirection parameter is broken in Trilium: always descending
        results.sort(key=lambda n: n[order_by], reverse=True)
    if limit:
        results = results[: int(limit)]
    return _ok({"results": results})


def _param(query: dict[str, list[str]], name: str) -> str:
    return (query.get(name) or [""])[0]


def _candidates(views: _Views, query: dict[str, list[str]]) -> list[str]:
    """Notes a search may return, hidden and archived ones filtered as Trilium does."""
    tree = views.tree
    ancestor = _param(query, "ancestorNoteId")
    note_ids = list(tree.notes)
    if ancestor and ancestor != "root":  # a non-root ancestor lets hidden notes through
        if ancestor not in tree.notes:
            return []
        note_ids = [n for n in note_ids if n == ancestor or ancestor in tree.ancestors(n)]
    else:
        note_ids = [n for n in note_ids if not views.is_hidden(n)]
    if _param(query, "includeArchivedNotes") != "true":
        note_ids = [n for n in note_ids if not views.is_archived(n)]
    return note_ids
