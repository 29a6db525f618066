"""The pure half of a sync run: what to do with each listed note, and a note's content turned
into what the index stores. No I/O here, so the syncer, the tests and the benchmarks share it.

plan: classify each note against the tree and compare it with the stored copy → skip it, update
its metadata only, or read its content. prepare: content → sections (split by headings) →
snippets (the embedded unit) with their text hashes, and the note's links — each hash computed
once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..notes.classify import Rules, Verdict, attribute_fingerprint, classify
from ..notes.records import NoteRecord, SectionInput, SnippetInput, text_hash
from ..notes.sections import INCLUDE, LINK, TEXT_LINK_KINDS, Section, extract_links, split_note
from ..notes.snippets import Snippet, split_snippets
from ..trilium.records import Note

# Trilium mirrors links as relations; these are kept as plain link kinds, the rest by name.
LINK_RELATIONS = {"internalLink": LINK, "includeNoteLink": INCLUDE}  # mirror the text's links
IGNORED_RELATIONS = {"imageLink", "relationMapLink", "template", "inherit"}


@dataclass
class Plan:
    """One run's decisions: write these skipped or metadata-only records, read these notes."""

    skipped: list[NoteRecord] = field(default_factory=list)  # changed, now (or still) skipped
    unchanged_skips: int = 0
    # Sections stay as stored; the note's named relations (derivedFrom…) are written anew.
    metadata: list[tuple[NoteRecord, list[tuple[str, str]]]] = field(default_factory=list)
    to_read: list[tuple[Note, NoteRecord]] = field(default_factory=list)
    kept: int = 0  # indexed notes whose sections stay: as stored, or with new metadata


@dataclass(frozen=True)
class PreparedSection:
    section: Section
    hash: str
    snippets: tuple[Snippet, ...]
    snippet_hashes: tuple[str, ...]


@dataclass(frozen=True)
class PreparedNote:
    """A note ready to embed and write: its record, sections with snippets, and links."""

    record: NoteRecord
    sections: tuple[PreparedSection, ...]
    links: tuple[tuple[str, str], ...]

    def snippet_texts(self) -> dict[str, str]:
        """Hash → text of every snippet: stored snippets' vectors are found by these keys."""
        return {
            h: s.text
            for section in self.sections
            for h, s in zip(section.snippet_hashes, section.snippets, strict=True)
        }


def plan(
    notes: Iterable[Note],
    tree: Mapping[str, Note],
    known: Mapping[str, NoteRecord],
    rules: Rules,
    instance: str,
    *,
    full: bool = False,
) -> Plan:
    """`full`: a full comparison, which also re-reads the notes listed without a blobId."""
    decided = Plan()
    for note in notes:
        verdict = classify(note, tree, rules)
        previous = known.get(note.note_id)
        record = note_record(instance, note, verdict, previous)
        if verdict.skip_reason is not None:
            if previous != record:
                decided.skipped.append(record)
            else:
                decided.unchanged_skips += 1
        elif needs_content(previous, record) or (full and record.blob_id is None):
            decided.to_read.append((note, record))
        else:
            decided.kept += 1
            if previous != record:
                decided.metadata.append((record, named_relations(note)))
    in_build_order(decided.to_read)
    return decided


def in_build_order(to_read: list[tuple[Note, NoteRecord]]) -> None:
    """What people ask about most is read first: wiki notes, then the rest, each part most
    recently edited first, so a first build answers from the notes that matter early."""
    to_read.sort(key=lambda item: item[1].utc_modified, reverse=True)
    to_read.sort(key=lambda item: item[1].area != "wiki")  # stable: keeps the time order


def note_record(
    instance: str, note: Note, verdict: Verdict, previous: NoteRecord | None
) -> NoteRecord:
    return NoteRecord(
        instance=instance,
        note_id=note.note_id,
        title=note.title,
        type=note.type,
        mime=note.mime,
        area=verdict.area,
        paths=verdict.paths,
        parents=tuple(sorted(note.parent_note_ids)),
        blob_id=note.blob_id,
        content_hash=previous.content_hash if previous else None,
        utc_modified=note.utc_date_modified,
        attr_fingerprint=attribute_fingerprint(note),
        skip_reason=verdict.skip_reason,
        calendar=verdict.calendar,
    )


def needs_content(previous: NoteRecord | None, record: NoteRecord) -> bool:
    if previous is None or previous.skip_reason is not None:
        return True
    # The same text splits otherwise as another type or language (markdown headings in code).
    if (previous.title, previous.type, previous.mime) != (record.title, record.type, record.mime):
        return True
    if record.blob_id is not None:
        return previous.blob_id != record.blob_id
    return previous.utc_modified != record.utc_modified


def prepare(note: Note, record: NoteRecord, content: str) -> PreparedNote:
    """Split the content, find its links, hash every section and snippet once."""
    sections = split_note(note.title, note.type, note.mime, content)
    links = [
        (link.target_note_id, link.kind) for link in extract_links(note.type, note.mime, content)
    ]
    links += relation_links(note)
    content_hash = text_hash(content)
    return PreparedNote(
        replace(record, content_hash=content_hash),
        tuple(_prepared_section(note.title, section) for section in sections),
        tuple(links),
    )


def _prepared_section(title: str, section: Section) -> PreparedSection:
    snippets = tuple(split_snippets(title, section))
    return PreparedSection(
        section,
        text_hash(f"{section.heading}\n{section.text}"),
        snippets,
        tuple(text_hash(snippet.text) for snippet in snippets),
    )


def named_relations(note: Note) -> list[tuple[str, str]]:
    """Its relations that no text makes: a summary's derivedFrom, a source's… (internal links
    and includes mirror the text, and change with it)."""
    return [(target, kind) for target, kind in relation_links(note) if kind not in TEXT_LINK_KINDS]


def relation_links(note: Note) -> list[tuple[str, str]]:
    return [
        (attribute.value, LINK_RELATIONS.get(attribute.name, attribute.name))
        for attribute in note.owned_attributes
        if attribute.type == "relation" and attribute.name not in IGNORED_RELATIONS
    ]


def length_sorted_batches(texts: Sequence[str], size: int) -> list[list[int]]:
    """Indices of `texts` in batches of `size`, similar lengths together: a batch is padded to
    its longest text, so mixing a heading-only snippet with a long one wastes most of a call."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[start : start + size] for start in range(0, len(order), size)]


def section_inputs(note: PreparedNote, vectors: dict[str, np.ndarray]) -> list[SectionInput]:
    """What the store writes for a prepared note, given every snippet's vector."""
    return [
        SectionInput(
            prepared.section.ordinal,
            prepared.section.heading,
            prepared.section.text,
            prepared.hash,
            [
                SnippetInput(snippet.start, snippet.end, snippet_hash, vectors[snippet_hash])
                for snippet, snippet_hash in zip(
                    prepared.snippets, prepared.snippet_hashes, strict=True
                )
            ],
        )
        for prepared in note.sections
    ]
