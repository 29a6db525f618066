"""Seed records for the fake Trilium, read from a Trilium export zip or a notebook.json manifest.

This module only parses; `server.FakeTrilium` inserts what it returns.
"""

from __future__ import annotations

import json
import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from ...trilium.records import NOTE_ID

_TEXT_MIMES = ("text/", "application/javascript", "application/json", "application/x-")


@dataclass
class SeedAttribute:
    type: str  # "label" | "relation"
    name: str
    value: str = ""
    inheritable: bool = False
    position: int = 0


@dataclass
class SeedNote:
    note_id: str
    title: str
    type: str = "text"
    mime: str = "text/html"
    content: str | bytes = ""
    attributes: list[SeedAttribute] = field(default_factory=list)
    is_protected: bool = False
    # (parent id, prefix, position); the first is where the note "lives", the rest are clones.
    parents: list[tuple[str, str | None, int]] = field(default_factory=list)


def seed_attribute(raw: dict[str, Any], position: int) -> SeedAttribute:
    """One attribute from meta.json or a manifest (keys `inheritable` or `isInheritable`)."""
    kind = raw.get("type", "label")
    if kind not in ("label", "relation"):
        raise ValueError(f"attribute type must be label or relation, not {kind!r}")
    inheritable = raw.get("inheritable", raw.get("isInheritable", False))
    return SeedAttribute(
        type=kind,
        name=str(raw["name"]),
        value=str(raw.get("value") or ""),
        inheritable=bool(inheritable),
        position=int(raw.get("position") or position),
    )


# ---------------------------------------------------------------- notebook.json manifest


def read_notebook_dir(path: str | Path, parent_id: str) -> list[SeedNote]:
    """Notes of a `notebook.json` manifest, parents listed before their children."""
    root = Path(path)
    manifest = json.loads((root / "notebook.json").read_text(encoding="utf-8"))
    seeds: list[SeedNote] = []
    for index, raw in enumerate(manifest["notes"]):
        note_id = str(raw["id"])
        if not NOTE_ID.fullmatch(note_id):
            raise ValueError(f"notebook.json: invalid note id {note_id!r}")
        content = _manifest_file(root, raw["file"]) if raw.get("file") else ""
        position = (index + 1) * 10
        parents = [(_parent(raw.get("parent"), parent_id), raw.get("prefix"), position)]
        parents += [
            (_parent(extra, parent_id), None, position) for extra in raw.get("extra_parents", [])
        ]
        attributes = [
            seed_attribute(attr, (i + 1) * 10) for i, attr in enumerate(raw.get("attributes", []))
        ]
        seeds.append(
            SeedNote(
                note_id=note_id,
                title=str(raw["title"]),
                type=raw.get("type") or "text",
                mime=raw.get("mime") or "text/html",
                content=content,
                attributes=attributes,
                is_protected=bool(raw.get("protected", False)),
                parents=parents,
            )
        )
    return seeds


def _manifest_file(root: Path, name: str) -> str:
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise ValueError(f"notebook.json: file {name!r} is outside the notebook directory")
    return path.read_text(encoding="utf-8")


def _parent(named: str | None, parent_id: str) -> str:
    """A manifest's "root" (or no parent) means the note the notebook is loaded under."""
    return parent_id if named in (None, "", "root") else named


# ---------------------------------------------------------------- export zip


@dataclass
class _Entry:
    meta: dict[str, Any]
    parent_id: str
    data_path: str | None  # zip member holding the content
    note_path: tuple[str, ...]  # Trilium path of this placement, for links


def read_export_zip(path: str | Path, parent_id: str, base_path: tuple[str, ...]) -> list[SeedNote]:
    """Notes of a Trilium export (format 1 or 2), links turned back into `#root/…/noteId`.

    `base_path` is the Trilium path of `parent_id` (e.g. `("root",)`). An export whose top entry
    is `root` itself is merged into `parent_id`.
    """
    with zipfile.ZipFile(path) as archive:
        meta = json.loads(archive.read("!!!meta.json"))
        entries = list(_walk(meta.get("files", []), "", parent_id, base_path))
        file_to_note, file_to_attachment = _file_maps(entries)
        paths = {e.meta["noteId"]: e.note_path for e in entries if not e.meta.get("isClone")}
        seeds: dict[str, SeedNote] = {}
        for entry in entries:
            note_id = entry.meta["noteId"]
            if note_id not in seeds and not entry.meta.get("isClone"):
                seeds[note_id] = _seed_from_entry(
                    entry, archive, paths, file_to_note, file_to_attachment
                )
        # Placements second: a clone entry may come before the note's full entry in the walk.
        for entry in entries:
            if entry.meta["noteId"] in seeds:
                position = int(entry.meta.get("notePosition") or 10)
                placement = (entry.parent_id, entry.meta.get("prefix"), position)
                seeds[entry.meta["noteId"]].parents.append(placement)
    return list(seeds.values())


def _walk(
    files: list[dict[str, Any]], directory: str, parent_id: str, parent_path: tuple[str, ...]
) -> Iterator[_Entry]:
    for meta in files:
        note_id = meta.get("noteId")
        if meta.get("noImport") or not note_id or not NOTE_ID.fullmatch(note_id):
            continue
        data_name = meta.get("dataFileName")
        data_path = posixpath.join(directory, data_name) if data_name else None
        child_dir = posixpath.join(directory, meta.get("dirFileName") or "")
        if note_id == "root":  # merge the exported root into the target note
            yield from _walk(meta.get("children", []), child_dir, parent_id, parent_path)
            continue
        note_path = (*parent_path, note_id)
        yield _Entry(meta, parent_id, data_path, note_path)
        if not meta.get("isClone"):
            yield from _walk(meta.get("children", []), child_dir, note_id, note_path)


def _file_maps(entries: list[_Entry]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Zip member → note id (clone files too); zip member → (attachmentId, title)."""
    notes: dict[str, str] = {}
    attachments: dict[str, tuple[str, str]] = {}
    for entry in entries:
        if entry.data_path:
            notes[entry.data_path] = entry.meta["noteId"]
        directory = posixpath.dirname(entry.data_path or "")
        for attachment in entry.meta.get("attachments") or []:
            name = attachment.get("dataFileName")
            if name and attachment.get("attachmentId"):
                member = posixpath.join(directory, name)
                attachments[member] = (attachment["attachmentId"], attachment.get("title") or name)
    return notes, attachments


def _seed_from_entry(
    entry: _Entry,
    archive: zipfile.ZipFile,
    paths: dict[str, tuple[str, ...]],
    file_to_note: dict[str, str],
    file_to_attachment: dict[str, tuple[str, str]],
) -> SeedNote:
    meta = entry.meta
    note_type = meta.get("type") or "text"
    mime = meta.get("mime") or ("text/html" if note_type == "text" else "")
    raw = _read_member(archive, entry.data_path)
    content: str | bytes = raw
    if note_type == "text" and meta.get("format", "html") == "html":
        html = raw.decode("utf-8", errors="replace")
        context = _LinkContext(entry.data_path or "", paths, file_to_note, file_to_attachment)
        content = _stored_html(html, context)
    elif _is_text(note_type, mime):
        content = raw.decode("utf-8", errors="replace")
    attributes = [
        seed_attribute(attr, (i + 1) * 10) for i, attr in enumerate(meta.get("attributes") or [])
    ]
    return SeedNote(
        note_id=meta["noteId"],
        title=str(meta.get("title") or ""),
        type=note_type,
        mime=mime,
        content=content,
        attributes=attributes,
        is_protected=bool(meta.get("isProtected", False)),
    )


def _read_member(archive: zipfile.ZipFile, member: str | None) -> bytes:
    if not member:
        return b""
    try:
        return archive.read(member)
    except KeyError:  # meta names a file the zip lacks: tolerate, as Trilium's import does
        return b""


def _is_text(note_type: str, mime: str) -> bool:
    return note_type in ("code", "mermaid", "canvas", "mindMap", "geoMap", "relationMap") or (
        note_type != "image" and mime.startswith(_TEXT_MIMES)
    )


@dataclass
class _LinkContext:
    file_path: str
    paths: dict[str, tuple[str, ...]]
    file_to_note: dict[str, str]
    file_to_attachment: dict[str, tuple[str, str]]

    def resolve(self, reference: str) -> str | None:
        """Zip member a relative href/src points at, or None for external/anchor links."""
        parts = urlsplit(reference)
        if parts.scheme or parts.netloc or not parts.path or reference.startswith(("#", "/")):
            return None
        joined = posixpath.join(posixpath.dirname(self.file_path), unquote(parts.path))
        return posixpath.normpath(joined)


def _stored_html(exported: str, context: _LinkContext) -> str:
    """Inner HTML of the exported page's `.ck-content`, with links in Trilium's stored form."""
    tree = LexborHTMLParser(exported)
    body = tree.css_first("div.ck-content")
    if body is None:
        return ""
    for anchor in body.css("a[href]"):
        member = context.resolve(anchor.attrs.get("href") or "")
        note_id = context.file_to_note.get(member or "")
        if note_id:
            path = context.paths.get(note_id, ("root", note_id))
            anchor.attrs["href"] = "#" + "/".join(path)
    for image in body.css("img[src]"):
        member = context.resolve(image.attrs.get("src") or "") or ""
        if member in context.file_to_note:
            note_id = context.file_to_note[member]
            image.attrs["src"] = f"api/images/{note_id}/{quote(posixpath.basename(member))}"
        elif member in context.file_to_attachment:
            attachment_id, title = context.file_to_attachment[member]
            image.attrs["src"] = f"api/attachments/{attachment_id}/image/{quote(title)}"
    return (body.inner_html or "").strip()
