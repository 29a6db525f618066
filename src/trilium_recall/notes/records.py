"""The records the index stores and returns: a note, a section ready to write with its
embedded snippets, and a stored section as search sees it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NoteRecord:
    """What the index keeps about one note, indexed or skipped."""

    instance: str
    note_id: str
    title: str
    type: str
    mime: str
    area: str
    paths: tuple[str, ...]
    parents: tuple[str, ...]
    blob_id: str | None
    content_hash: str | None
    utc_modified: str
    attr_fingerprint: str
    skip_reason: str | None = None
    # Its journal labels' dates, comma-separated ("2026-10-21", "2026-10"; classify.py)
    calendar: str | None = None


@dataclass(frozen=True)
class SnippetInput:
    """One embedded snippet of a section: its span in the section text, the hash of its embedded
    text (`text_hash`: later syncs find its vector by it; None for a vector that is not the
    model's for that text, as a benchmark's synthetic ones) and its vector."""

    start: int
    end: int
    hash: str | None
    vector: np.ndarray


@dataclass(frozen=True)
class SectionInput:
    """A section ready to write: text plus its embedded snippets."""

    ordinal: int
    heading: str
    text: str
    hash: str
    snippets: Sequence[SnippetInput]


@dataclass(frozen=True)
class SectionHit:
    """A stored section with the note facts a passage needs."""

    section_id: int
    instance: str
    note_id: str
    title: str
    area: str
    paths: tuple[str, ...]  # its breadcrumbs, one per place it is filed (clones)
    heading: str
    text: str
    calendar: str | None = None  # where its journal labels file it (NoteRecord.calendar)
    ordinal: int = 0  # its place in its note

    @property
    def path(self) -> str:
        """The breadcrumb a passage shows."""
        return self.paths[0] if self.paths else ""

    @property
    def title_only(self) -> bool:
        """Its note holds nothing but its title (notes/sections.py indexes such a note by it)."""
        return self.text.strip() == self.title.strip()


@dataclass(frozen=True)
class FiledNote:
    """An indexed note as where it is filed: its title, breadcrumbs and journal labels."""

    instance: str
    note_id: str
    title: str
    paths: tuple[str, ...]
    calendar: str | None = None


def text_hash(text: str) -> str:
    """A text's SHA-256 in 32 hex digits: how a stored snippet's vector is found again for the
    same text (`Store.cached_vectors`), and a note's content hash."""
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
