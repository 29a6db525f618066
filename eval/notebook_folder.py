"""A documentation notebook as a folder the fake Trilium loads (`load_notebook_dir`):
`notebook.json` listing every note and `notes/<id>-<slug>.html` holding each body. Shared by the
builders of the developer's-notebook corpora (`pydocs.py`, `nodedocs.py`, `gitdocs.py`), which
follow ../shared/corpora/README.md: one note per page, a page over MAX_WORDS words has its top
sections of MIN_SPLIT_WORDS or more cut out as child notes.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MAX_WORDS = 3000  # a page longer than this is split into its h2 sections
MIN_SPLIT_WORDS = 80  # a shorter section stays inside its page note


@dataclass
class Note:
    title: str
    html: str
    slug: str
    children: list[Note] = field(default_factory=list)


def words(s: str) -> int:
    return len(html.unescape(re.sub(r"<[^>]+>", " ", s)).split())


def manifest(top: Note, prefix: str) -> list[tuple[dict, str, int]]:
    """(notebook.json entry, body, depth) of every note, numbered depth-first, parents first:
    `<prefix>_0001`, …"""
    rows: list[tuple[dict, str, int]] = []

    def visit(note: Note, parent: str, depth: int) -> None:
        note_id = f"{prefix}_{len(rows) + 1:04d}"
        stem = re.sub(r"[^a-z0-9]+", "-", note.slug.lower()).strip("-")[:60] or "note"
        entry = {
            "id": note_id,
            "title": note.title,
            "parent": parent,
            "extra_parents": [],
            "type": "text",
            "mime": "text/html",
            "attributes": [],
            "file": f"notes/{note_id}-{stem}.html",
            "protected": False,
        }
        rows.append((entry, note.html, depth))
        for child in note.children:
            visit(child, note_id, depth + 1)

    visit(top, "root", 0)
    return rows


def write_folder(target: Path, rows: list[tuple[dict, str, int]]) -> list[tuple[dict, str, int]]:
    """Rewrite `target` from scratch: notebook.json and one HTML file a note."""
    if target.exists():
        shutil.rmtree(target)
    (target / "notes").mkdir(parents=True)
    for entry, body, _ in rows:
        (target / entry["file"]).write_text(body + ("\n" if body else ""), encoding="utf-8")
    entries = [entry for entry, _, _ in rows]
    (target / "notebook.json").write_text(
        json.dumps({"notes": entries}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return rows


def tree_listing(rows: list[tuple[dict, str, int]]) -> list[str]:
    """One line a note: id, title and word count, indented by depth."""
    return [
        f"{'  ' * depth}{e['id']}  {e['title']}  ({words(body)} words)" for e, body, depth in rows
    ]


def report(rows: list[tuple[dict, str, int]], target: Path) -> None:
    """The note tree on stdout, the totals on stderr."""
    total = sum(words(body) for _, body, _ in rows)
    print("\n".join(tree_listing(rows)))
    print(f"{len(rows)} notes, {total} words → {target}", file=sys.stderr)


def build_from_argv(
    argv: list[str], default: Path, write: Callable[[Path], list[tuple[dict, str, int]]]
) -> None:
    """A builder's command line: write the notebook to the folder named, or `default`."""
    parser = argparse.ArgumentParser(description=f"Write the notebook folder (default {default}).")
    parser.add_argument("folder", nargs="?", type=Path, default=default, help="where to write it")
    target = parser.parse_args(argv).folder
    report(write(target), target)
