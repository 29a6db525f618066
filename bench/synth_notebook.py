"""Synthetic notebooks of 50k-250k sections made of real text, for the scale benchmarks.

    python bench/synth_notebook.py index --sections 50000 --out /tmp/syn50k/recall.sqlite3
    python bench/synth_notebook.py notebook --sections 50000 --out /tmp/syn50k-notebook

The material is the seven eval corpora as their cached indexes hold them (`eval/.index/<corpus>/`,
built by `python eval/evaluate.py` from ../shared/corpora, ../shared/trilium and the built-in demo
notebook): every real section's text, cut into sentences, and the real e5 vector of every real
snippet. A synthetic note is a real note's sections in order, each sentence kept or (often)
swapped for a sentence of another section of the same corpus; journal notes gather sections of
any corpus under a date; some wiki notes summarise (keep half of each section of) an earlier
sources note and point at it with `derivedFrom`. Areas follow `AREA_SHARES`.

Vectors are derived, not embedded: a sentence carries the mean vector of the real snippets it
sat in, and each synthetic snippet (cut by the product's `split_snippets`) gets the
length-weighted mean of its sentences' vectors plus a little noise, renormalised. Embedding the
~850k snippets of 250k sections with the real model would take days on two cores.

Everything is deterministic for a seed. `index` writes through the product's `Store` (so the
code under test writes its own format: run it with `PYTHONPATH=<other src>` for another tree);
`notebook` writes a `notebook.json` folder the stand-in serves for a first build.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trilium_recall.index.embed import E5Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.records import NoteRecord, SectionInput, SnippetInput, text_hash
from trilium_recall.notes.sections import Section
from trilium_recall.notes.snippets import split_snippets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth_material import CORPORA, REAL_INDEXES, Material, RealNote, RealSection, load_material

AREAS = ("wiki", "sources", "journal", "other")
AREA_SHARES = (0.2, 0.2, 0.3, 0.3)
VERBATIM_SHARE = 0.25  # sections copied as they are (notes are copied and clipped in real life)
SWAP_SHARE = 0.3  # otherwise, each sentence is swapped for one of another section this often
JOURNAL_SECTIONS = (1, 4)  # a journal day gathers this many sections of any corpus
SUMMARY_SHARE = 0.2  # wiki notes that summarise an earlier sources note (derivedFrom)
NOISE = 0.2  # norm of the noise added to a mixed vector (before renormalising)
WRITE_CHUNK = 500  # notes per transaction
INSTANCE = "default"  # the name `trilium-recall serve` gives a single TRILIUM_URL instance
FOLDERS = {"wiki": "LLM Wiki › Wiki", "sources": "LLM Wiki › Raw", "journal": "Journal"}
GROUP = 100  # notes per folder note ("Work › Group 12")

# A synthetic vector is not the model's for its text: no hash, so no sync takes it for one.
# (Trees older than the field, which bench/scale.py also runs, have no hash to give.)
NO_HASH: dict[str, None] = (
    {"hash": None} if "hash" in {f.name for f in dataclasses.fields(SnippetInput)} else {}
)


# -- synthetic notes ------------------------------------------------------------------------


@dataclass
class SynthSection:
    heading: str
    sentences: list[str]
    vector_ids: list[int]
    fallback: int


@dataclass
class SynthNote:
    number: int
    area: str
    title: str
    sections: list[SynthSection]
    derived_from: str | None = None
    links: list[tuple[str, str]] = field(default_factory=list)

    @property
    def note_id(self) -> str:
        return note_id(self.number)


def note_id(number: int) -> str:
    return f"syn{number:09d}"  # 12 characters, as Trilium's note ids


def synthesize(material: Material, target: int, seed: int) -> Iterator[SynthNote]:
    """Notes until `target` sections, deterministic for `seed`."""
    rng = np.random.default_rng(seed)
    titles: Counter[str] = Counter()
    sources: list[tuple[str, RealNote]] = []  # sources notes not summarised yet
    total = number = 0
    while total < target:
        area = str(rng.choice(AREAS, p=AREA_SHARES))
        note: SynthNote
        if area == "journal":
            note = _journal(rng, material, number)
        elif area == "wiki" and sources and rng.random() < SUMMARY_SHARE:
            source_id, real = sources.pop(int(rng.integers(len(sources))))
            note = _summary(real, number, source_id)
        else:
            real = material.notes[int(rng.integers(len(material.notes)))]
            pool = material.by_corpus[real.corpus]
            sections = [_recombine(rng, s, pool) for s in real.sections]
            note = SynthNote(number, area, real.title, sections)
            if area == "sources":
                sources.append((note.note_id, real))
        titles[note.title] += 1
        if titles[note.title] > 1:  # the same real note again: tell the two apart
            pool = material.by_corpus[int(rng.integers(len(CORPORA)))]
            note.title += f" · {pool[int(rng.integers(len(pool)))].heading}"
        note.sections = note.sections[: target - total]
        total += len(note.sections)
        number += 1
        yield note


def _recombine(
    rng: np.random.Generator, real: RealSection, pool: list[RealSection]
) -> SynthSection:
    sentences, ids = list(real.sentences), list(real.vector_ids)
    if rng.random() >= VERBATIM_SHARE:
        for i in np.flatnonzero(rng.random(len(sentences)) < SWAP_SHARE):
            other = pool[int(rng.integers(len(pool)))]
            if other.sentences:
                j = int(rng.integers(len(other.sentences)))
                sentences[i], ids[i] = other.sentences[j], other.vector_ids[j]
    return SynthSection(real.heading, sentences, ids, real.fallback)


def _journal(rng: np.random.Generator, material: Material, number: int) -> SynthNote:
    day = np.datetime64("2020-01-01") + int(rng.integers(0, 7 * 365))
    sections = []
    for _ in range(int(rng.integers(*JOURNAL_SECTIONS, endpoint=True))):
        pool = material.by_corpus[int(rng.integers(len(CORPORA)))]
        sections.append(_recombine(rng, pool[int(rng.integers(len(pool)))], pool))
    sections[0].heading = ""  # the day's first section sits under the note title
    return SynthNote(number, "journal", f"{day} — {sections[-1].heading or 'notes'}", sections)


def _summary(real: RealNote, number: int, source_id: str) -> SynthNote:
    """The first half of each section of a real note that a sources note copied."""
    sections = [
        SynthSection(
            s.heading,
            s.sentences[: (len(s.sentences) + 1) // 2],
            s.vector_ids[: (len(s.vector_ids) + 1) // 2],
            s.fallback,
        )
        for s in real.sections
    ]
    note = SynthNote(number, "wiki", f"Summary — {real.title}", sections)
    note.links.append((source_id, "derivedFrom"))
    return note


def section_text(section: SynthSection) -> str:
    """Sentences joined so that `_sentences` cuts them where they came from: a line break after
    one without a closing stop (a list item, a code line)."""
    parts = []
    for sentence in section.sentences:
        parts.append(sentence)
        parts.append(" " if sentence[-1:] in ".!?;:" else "\n")
    return "".join(parts[:-1])


def section_input(
    rng: np.random.Generator, material: Material, title: str, ordinal: int, section: SynthSection
) -> SectionInput:
    """The section as the build would store it: `split_snippets` cuts it, and each snippet gets
    the length-weighted mean of its sentences' vectors, plus noise, renormalised. No snippet
    hash: a vector made up here must never stand for its text in a real sync."""
    heading = title if ordinal == 0 or not section.heading else f"{title} › {section.heading}"
    text = section_text(section)
    spans, position = [], 0
    for sentence in section.sentences:
        spans.append((position, position + len(sentence)))
        position += len(sentence) + 1
    snippets = split_snippets(title, Section(ordinal, heading, text))
    mixed = np.empty((len(snippets), E5Embedder.dim), dtype=np.float32)
    for row, snippet in enumerate(snippets):
        weights = [
            (min(b, snippet.end) - max(a, snippet.start), section.vector_ids[i])
            for i, (a, b) in enumerate(spans)
            if a < snippet.end and b > snippet.start
        ]
        if weights:
            share = np.array([w for w, _ in weights], dtype=np.float32)
            mixed[row] = share @ material.vectors[[v for _, v in weights]] / share.sum()
        else:
            mixed[row] = material.vectors[section.fallback]
    noise = rng.standard_normal(mixed.shape).astype(np.float32)
    mixed += noise / np.linalg.norm(noise, axis=1, keepdims=True) * NOISE
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    return SectionInput(
        ordinal,
        heading,
        text,
        text_hash(f"{heading}\n{text}"),
        [
            SnippetInput(start=s.start, end=s.end, vector=v, **NO_HASH)
            for s, v in zip(snippets, mixed, strict=True)
        ],
    )


# -- writing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    path: Path
    notes: int
    sections: int
    snippets: int
    seconds: float  # material read + generation + writing
    real_snippets_per_section: float


def write_index(path: Path, target: int, seed: int, url: str, real: Path = REAL_INDEXES) -> Written:
    """A complete index of `target` sections, marked fully built, in a new file at `path`."""
    started = time.perf_counter()
    material = load_material(real)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the product wants it private
    Store(path, VectorIndex(E5Embedder.dim)).close()  # makes the vector table
    store = Store(path)  # no mirror: this process need not hold every vector
    store.ensure_instance(INSTANCE, url)
    rng = np.random.default_rng(seed + 1)  # the noise
    notes = synthesize(material, target, seed)
    while chunk := [note for _, note in zip(range(WRITE_CHUNK), notes, strict=False)]:
        with store.atomic():
            for note in chunk:
                inputs = [
                    section_input(rng, material, note.title, i, s)
                    for i, s in enumerate(note.sections)
                ]
                store.save_note(_record(note), inputs, note.links)
    store.update_instance(INSTANCE, build_complete=1, last_full="2026-01-01T00:00:00+00:00")
    count = store.counts(INSTANCE)
    snippets = int(store.db.execute("SELECT count(*) FROM snippets").fetchone()[0])
    store.close()
    return Written(
        path,
        int(count["notes"]),
        int(count["sections"]),
        snippets,
        time.perf_counter() - started,
        material.snippets / material.sections,
    )


def _folder(note: SynthNote) -> tuple[str, str]:
    """(breadcrumb, parent id) of the folder note it lives under."""
    group = note.number // GROUP
    return f"{FOLDERS.get(note.area, 'Work')} › Group {group}", f"grp{note.area[:2]}{group:07d}"


def _record(note: SynthNote) -> NoteRecord:
    path, parent = _folder(note)
    return NoteRecord(
        instance=INSTANCE,
        note_id=note.note_id,
        title=note.title,
        type="text",
        mime="text/html",
        area=note.area,
        paths=(path,),
        parents=(parent,),
        blob_id=f"blob{note.number:09d}",
        content_hash=f"hash{note.number:09d}",
        utc_modified="2026-01-01 00:00:00.000Z",
        attr_fingerprint=json.dumps([]),
    )


def write_notebook(out: Path, target: int, seed: int, real: Path = REAL_INDEXES) -> int:
    """A `notebook.json` folder (read_notebook_dir) with the same notes: returns the note count.
    Folders: LLM Wiki › Raw (sources) and › Wiki (wiki), Journal (#calendarRoot), Work; each
    with group notes of `GROUP` notes."""
    material = load_material(real)
    (out / "notes").mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, object]] = [
        _entry("synwiki00000", "LLM Wiki", "root"),
        _entry("synraw000000", "Raw", "synwiki00000", [_label("wikiLayer", "raw")]),
        _entry("synwikiw0000", "Wiki", "synwiki00000"),
        _entry("synjournal00", "Journal", "root", [_label("calendarRoot", "")]),
        _entry("synwork00000", "Work", "root"),
    ]
    tops = {"sources": "synraw000000", "wiki": "synwikiw0000", "journal": "synjournal00"}
    groups: set[str] = set()
    count = 0
    for note in synthesize(material, target, seed):
        path, parent = _folder(note)
        if parent not in groups:
            groups.add(parent)
            manifest.append(
                _entry(parent, path.rsplit(" › ", 1)[-1], tops.get(note.area, "synwork00000"))
            )
        name = f"notes/{note.note_id}.html"
        (out / name).write_text(_html(note), encoding="utf-8")
        attributes = [
            {"type": "relation", "name": kind, "value": target} for target, kind in note.links
        ]
        manifest.append(_entry(note.note_id, note.title, parent, attributes, name))
        count += 1
    (out / "notebook.json").write_text(json.dumps({"notes": manifest}), encoding="utf-8")
    return count


def _entry(
    id_: str, title: str, parent: str, attributes: list | None = None, file: str | None = None
) -> dict[str, object]:
    return {
        "id": id_,
        "title": title,
        "parent": parent,
        "attributes": attributes or [],
        "file": file,
    }


def _label(name: str, value: str) -> dict[str, str]:
    return {"type": "label", "name": name, "value": value}


def _html(note: SynthNote) -> str:
    parts = []
    for ordinal, section in enumerate(note.sections):
        if ordinal and section.heading:
            parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        parts += [f"<p>{html.escape(line)}</p>" for line in section_text(section).split("\n")]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("index", "notebook"))
    parser.add_argument("--sections", type=int, default=50_000)
    parser.add_argument("--out", type=Path, required=True, help="index file or notebook folder")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--url", default="http://127.0.0.1:9", help="Trilium URL to record")
    parser.add_argument("--real", type=Path, default=REAL_INDEXES, help="the eval indexes")
    args = parser.parse_args()
    if args.what == "notebook":
        started = time.perf_counter()
        notes = write_notebook(args.out, args.sections, args.seed, args.real)
        print(json.dumps({"notes": notes, "seconds": round(time.perf_counter() - started, 1)}))
        return
    if args.out.exists():
        sys.exit(f"synth_notebook: {args.out} exists; give a new path")
    written = write_index(args.out, args.sections, args.seed, args.url, args.real)
    print(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(written).items()}))


if __name__ == "__main__":
    main()
