"""Questions about the indexed notes as a whole, answered in SQL: how many per area, per
top-level breadcrumb, and a title with its longest section's heading per note.
Asked by the status page and the MCP instructions (server/overview.py) and by calibration, on
a `Store`'s connection; and which notes have notes under them (`Store.has_children`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import apsw

from .terms import fts_query, words

Row = tuple[Any, ...]  # columns as each docstring lists them
WORD_SAMPLE = 50  # sections read to tell a word from the other forms of its stem


def parents(db: apsw.Connection) -> frozenset[tuple[str, str]]:
    """(instance, note_id) of each note an indexed note is filed under."""
    return frozenset(
        db.execute(
            "SELECT n.instance, p.value FROM notes n, json_each(n.parents) p "
            "WHERE n.skip_reason IS NULL"
        )
    )


def per_area(db: apsw.Connection, instance: str) -> dict[str, int]:
    """Indexed (not skipped) notes per area; an area without notes is absent."""
    return dict(
        db.execute(
            "SELECT area, count(*) FROM notes WHERE instance = ? AND skip_reason IS NULL "
            "GROUP BY area",
            (instance,),
        )
    )


def per_breadcrumb(db: apsw.Connection, instance: str, separator: str) -> list[Row]:
    """(first breadcrumb, title, area, notes) of indexed notes, grouped; the title only for
    notes whose breadcrumb has no `separator` (the top two levels), else None."""
    return db.execute(
        "SELECT path, CASE WHEN instr(path, ?) = 0 THEN title END, area, count(*) "
        "FROM (SELECT title, area, json_extract(paths, '$[0]') AS path FROM notes "
        "WHERE instance = ? AND skip_reason IS NULL) GROUP BY 1, 2, 3",
        (separator, instance),
    ).fetchall()


def titles_with_longest_heading(db: apsw.Connection) -> list[Row]:
    """(title, heading of its longest section) of every note with sections, in id order."""
    return db.execute(
        "SELECT n.title, (SELECT s.heading FROM sections s WHERE s.instance = n.instance "
        "AND s.note_id = n.note_id ORDER BY length(s.text) DESC LIMIT 1) "
        "FROM notes n WHERE EXISTS (SELECT 1 FROM sections s WHERE s.instance = n.instance "
        "AND s.note_id = n.note_id) ORDER BY n.instance, n.note_id"
    ).fetchall()


def sections_containing(
    db: apsw.Connection,
    fragments: Sequence[str],
    holds: Callable[[str, str], bool],
    at_most: int = 20_000,
) -> tuple[int, list[int]]:
    """(sections read, how many of them hold each literal fragment, ASCII case ignored, as
    `holds(fragment, lower-cased text)` reads it there): for names the keyword index cannot hold
    (C#, C++, .NET; not ".net" in a link's host). Every n-th section, at most `at_most` of them:
    a share needs no more (250,000 sections whole took 1.2 s warm, 7.7 s cold)."""
    (total,) = db.execute("SELECT count(*) FROM sections").fetchone() or (0,)
    step = max(1, -(-total // at_most))
    sampled = "SELECT count(*) FROM sections WHERE id % ? = 0"
    (read,) = db.execute(sampled, (step,)).fetchone() or (0,)
    query = "SELECT lower(text) FROM sections WHERE id % ? = 0 AND instr(lower(text), ?) > 0"
    counts = [
        sum(holds(fragment, text) for (text,) in db.execute(query, (step, fragment.lower())))
        for fragment in fragments
    ]
    return int(read or 0), counts


def titles_naming(db: apsw.Connection, names: Sequence[str]) -> set[str]:
    """The names (single words) some note's title holds as written. The keyword index finds the
    titles holding any form of a name's stem; each distinct one is read for the name itself
    ("excel" is not in "Excellent results")."""
    query = "SELECT DISTINCT title FROM sections_fts WHERE sections_fts MATCH ?"
    return {
        name
        for name in names
        if any(name in words(t) for (t,) in db.execute(query, ("title : " + fts_query([name]),)))
    }


def as_written(
    db: apsw.Connection,
    counts: dict[str, int],
    readable: Callable[[str], str] = lambda text: text,
    sample: int = WORD_SAMPLE,
) -> dict[str, int]:
    """Sections holding each word as written, from the sections holding any form of its stem
    (`Store.term_document_counts`): those counts scaled by the share that hold the word itself
    (in their `readable` text) in about `sample` of them, every n-th by id, so one long note
    does not speak for the rest (Python's "io" module is not about iOS, "ios" and "io" share a
    stem)."""
    query = (
        "SELECT title, heading, body FROM sections_fts WHERE sections_fts MATCH ? "
        "AND rowid % ? = 0 LIMIT ?"
    )
    written = {}
    for word, count in counts.items():
        step = max(1, count // sample)
        rows = db.execute(query, (fts_query([word]), step, 2 * sample)).fetchall() if count else []
        if count and not rows:  # no id among them divisible by the step: read them all
            rows = db.execute(query, (fts_query([word]), 1, 2 * sample)).fetchall()
        held = sum(word in words(readable(" ".join(map(str, row)))) for row in rows)
        written[word] = round(count * held / len(rows)) if rows else 0
    return written
