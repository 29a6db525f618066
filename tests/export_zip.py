"""Write a Trilium export zip (format 2, html) from seed notes, as Trilium's exporter does.

The project's own stand-in for Trilium's demo.zip: `write_notebook_zip` exports the built-in demo
notebook, so the tests of the zip reader, the client and the syncer need no third-party file.
The shape follows Trilium's `services/export/zip.ts` and its demo.zip: `!!!meta.json` with one
entry per placement in tree order (the first met is the note, later ones are `isClone` entries
with no position), a `.html` page per text note with the body inside `div.ck-content`, code
notes as their raw text, `dirFileName` folders for children, and `href="#root/…/noteId"` links
rewritten to relative file paths.
"""

from __future__ import annotations

import json
import posixpath
import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from trilium_recall.demo.standin.export import SeedAttribute, SeedNote, read_notebook_dir

# Trilium's exporter finds links with regular expressions, not a parser; so does this writer.
_LINK = re.compile(r'href="[^"]*#root[a-zA-Z0-9_/]*/([a-zA-Z0-9_]+)/?"')
_UNSAFE = re.compile(r'[/\\?<>:*|"\x00-\x1f]')  # what sanitize-filename drops
_EXTENSIONS = {
    "text/markdown": "md",
    "text/x-markdown": "md",
    "text/x-gfm": "md",
    "text/x-sh": "sh",
    "text/x-sql": "sql",
    "text/x-nginx-conf": "conf",
    "text/css": "css",
    "text/javascript": "js",
    "application/javascript": "js",
    "application/json": "json",
    "text/plain": "txt",
}
_PAGE = """<html>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{css}">
<base target="_parent">
<title data-trilium-title>{title}</title>
</head>
<body>
<div class="content">
<h1 data-trilium-h1>{title}</h1>
<div class="ck-content">{body}</div>
</div>
</body>
</html>
"""


@dataclass
class _Placed:
    """One entry of meta.json: a note, or a clone of one, at one place in the tree."""

    seed: SeedNote
    path: tuple[str, ...]  # Trilium note path, root first
    directory: str  # zip folder holding the data file
    prefix: str | None
    position: int
    is_clone: bool
    data_file: str = ""
    dir_file: str = ""
    children: list[_Placed] = field(default_factory=list)


def write_notebook_zip(notebook_dir: Path, path: Path) -> Path:
    """The `notebook.json` notebook in `notebook_dir` exported from root to `path`."""
    return write_export_zip(read_notebook_dir(notebook_dir, "root"), path)


def write_export_zip(seeds: Sequence[SeedNote], path: Path) -> Path:
    """Export the tree the seeds make under `root` (every seed must be reachable from it)."""
    top = _Placed(SeedNote("root", "root"), ("root",), "", None, 10, False, dir_file="root")
    _place(top, {s.note_id: s for s in seeds}, _children_of(seeds), set())
    entries = {p.seed.note_id: p for p in _walk(top) if not p.is_clone}
    missing = {s.note_id for s in seeds} - set(entries)
    if missing:
        raise ValueError(f"notes not reachable from root: {sorted(missing)}")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        meta = {"formatVersion": 2, "appVersion": "0.92.5-beta", "files": [_meta(top)]}
        archive.writestr("!!!meta.json", json.dumps(meta, ensure_ascii=False, indent=2))
        archive.writestr("style.css", "/* Trilium's export stylesheet */\n")
        for placed in _walk(top):
            if placed.data_file:
                member = posixpath.join(placed.directory, placed.data_file)
                archive.writestr(member, _data(placed, entries))
    return path


def _children_of(seeds: Sequence[SeedNote]) -> dict[str, list[tuple[int, str | None, str]]]:
    """Parent id -> (position, prefix, child id), in the parent's order."""
    children: dict[str, list[tuple[int, str | None, str]]] = {}
    for seed in seeds:
        for parent_id, prefix, position in seed.parents:
            children.setdefault(parent_id, []).append((position, prefix, seed.note_id))
    for placements in children.values():
        placements.sort(key=lambda placement: placement[0])  # stable: ties keep seed order
    return children


def _place(
    parent: _Placed,
    seeds: dict[str, SeedNote],
    children: dict[str, list[tuple[int, str | None, str]]],
    exported: set[str],
) -> None:
    """Depth first, as Trilium: the first placement met is the note, every later one a clone."""
    taken: set[str] = set()  # lower-cased names in the folder, as Trilium keeps them unique
    directory = posixpath.join(parent.directory, parent.dir_file)
    for position, prefix, note_id in children.get(parent.seed.note_id, []):
        seed = seeds[note_id]
        placed = _Placed(seed, (*parent.path, note_id), directory, prefix, position,
                         note_id in exported)  # fmt: skip
        exported.add(note_id)
        base = _file_name(f"{prefix} - {seed.title}" if prefix else seed.title)
        if placed.is_clone:
            placed.data_file = _unique(f"{base}.clone.html", taken)
        else:
            placed.data_file = _unique(_with_extension(base, seed), taken)
            if children.get(note_id):
                placed.dir_file = _unique(base, taken)
                _place(placed, seeds, children, exported)
        parent.children.append(placed)


def _file_name(title: str) -> str:
    return _UNSAFE.sub("", title).strip().rstrip(".") or "note"


def _with_extension(base: str, seed: SeedNote) -> str:
    if seed.type == "text":
        return f"{base}.html"
    if posixpath.splitext(base)[1]:  # "restic-backup.sh" keeps its own extension
        return base
    return f"{base}.{_EXTENSIONS.get(seed.mime, 'dat')}"


def _unique(name: str, taken: set[str]) -> str:
    """Trilium's getUniqueFilename: a repeated name gets a counter in front."""
    candidate, counter = name, 0
    while candidate.lower() in taken:
        counter += 1
        candidate = f"{counter}_{name}"
    taken.add(candidate.lower())
    return candidate


def _walk(placed: _Placed) -> Iterator[_Placed]:
    yield placed
    for child in placed.children:
        yield from _walk(child)


def _meta(placed: _Placed) -> dict[str, Any]:
    seed = placed.seed
    meta: dict[str, Any] = {
        "isClone": placed.is_clone,
        "noteId": seed.note_id,
        "notePath": list(placed.path),
        "title": seed.title,
    }
    if placed.is_clone:  # Trilium writes no position, attributes or children for a clone
        meta |= {"prefix": placed.prefix, "dataFileName": placed.data_file, "type": seed.type,
                 "format": "html"}  # fmt: skip
        return meta
    meta |= {
        "notePosition": placed.position,
        "prefix": placed.prefix,
        "isExpanded": False,
        "type": seed.type,
        "mime": seed.mime,
        "attributes": [_attribute(a) for a in seed.attributes],
    }
    if seed.is_protected:
        meta["isProtected"] = True
    if seed.type == "text":
        meta["format"] = "html"
    if placed.data_file:
        meta["dataFileName"] = placed.data_file
    meta["attachments"] = []
    if placed.dir_file:
        meta["dirFileName"] = placed.dir_file
        meta["children"] = [_meta(child) for child in placed.children]
    return meta


def _attribute(attribute: SeedAttribute) -> dict[str, Any]:
    return {
        "type": attribute.type,
        "name": attribute.name,
        "value": attribute.value,
        "isInheritable": attribute.inheritable,
        "position": attribute.position,
    }


def _data(placed: _Placed, entries: dict[str, _Placed]) -> str | bytes:
    """A text note's page (links made relative), a clone's pointer page, or a code note's text."""
    member = posixpath.join(placed.directory, placed.data_file)
    if placed.is_clone:
        primary = _relative(member, entries[placed.seed.note_id])
        link = f'<a href="{primary}">primary location</a>'
        body = f"<p>This is a clone of a note. Go to its {link}.</p>"
    elif placed.seed.type == "text":
        body = _LINK.sub(lambda link: _link(link, member, entries), str(placed.seed.content))
    else:
        return placed.seed.content
    css = "../" * (len(placed.path) - 1) + "style.css"
    return _PAGE.format(css=css, title=_escape(placed.seed.title), body=body)


def _link(link: re.Match[str], member: str, entries: dict[str, _Placed]) -> str:
    target = entries.get(link.group(1))
    return f'href="{_relative(member, target)}"' if target else link.group(0)


def _relative(member: str, target: _Placed) -> str:
    """The target's data file seen from `member`'s folder, each segment URI-encoded."""
    target_member = posixpath.join(target.directory, target.data_file)
    relative = posixpath.relpath(target_member, posixpath.dirname(member) or ".")
    return "/".join(quote(part, safe="!*'()") for part in relative.split("/"))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
