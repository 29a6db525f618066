"""The real material of the synthetic notebooks (synth_notebook.py): every section of the seven
eval corpora as their cached indexes hold it (`eval/.index/<corpus>/recall.sqlite3`, built by
`python eval/evaluate.py` from ../shared and the built-in demo notebook), cut into sentences,
each sentence with the mean real e5 vector of the snippets that hold it.
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trilium_recall.notes.snippets import _sentences

REPO = Path(__file__).resolve().parents[1]
REAL_INDEXES = REPO / "eval" / ".index"
CORPORA = ("demo_zip", "notebook", "devdocs", "gnucash", "gimp", "handbook", "skycultures")


@dataclass
class RealSection:
    heading: str  # its own heading, without the note title trail
    sentences: list[str]
    vector_ids: list[int]  # one row of Material.vectors per sentence
    fallback: int  # the row of its first snippet, for a section without sentences


@dataclass
class RealNote:
    corpus: int
    title: str
    sections: list[RealSection]


@dataclass
class Material:
    notes: list[RealNote]
    by_corpus: list[list[RealSection]]
    vectors: np.ndarray  # float32, one unit row per real sentence (and per fallback snippet)
    sections: int
    snippets: int


def missing_indexes(index_dir: Path = REAL_INDEXES) -> str | None:
    """Why no synthetic notebook can be made here, or None: the eval indexes it draws on."""
    absent = [c for c in CORPORA if not (index_dir / c / "recall.sqlite3").is_file()]
    if not absent:
        return None
    return (
        f"no eval index for {', '.join(absent)} in {index_dir}: build them with "
        "`python eval/evaluate.py` (needs ../shared or SHARED_DIR, about an hour)"
    )


def load_material(index_dir: Path = REAL_INDEXES) -> Material:
    """Every real section and snippet vector of the seven eval indexes (opened read-only)."""
    if why := missing_indexes(index_dir):
        sys.exit(f"synth_notebook: {why}, or pass --real")
    notes: list[RealNote] = []
    rows: list[np.ndarray] = []
    sections = snippets = 0
    for number, corpus in enumerate(CORPORA):
        uri = f"file:{index_dir / corpus / 'recall.sqlite3'}?mode=ro&immutable=1"
        db = sqlite3.connect(uri, uri=True)
        try:
            found = _read_corpus(db, number, rows)
            snippets += int(db.execute("SELECT count(*) FROM snippets").fetchone()[0])
        finally:
            db.close()
        notes += found
        sections += sum(len(n.sections) for n in found)
    by_corpus = [
        [s for n in notes if n.corpus == c for s in n.sections] for c in range(len(CORPORA))
    ]
    return Material(notes, by_corpus, np.stack(rows), sections, snippets)


def _read_corpus(db: sqlite3.Connection, corpus: int, rows: list[np.ndarray]) -> list[RealNote]:
    spans: dict[int, list[tuple[int, int, np.ndarray]]] = {}
    query = (
        "SELECT s.section_id, s.start, s.end, v.embedding "
        "FROM snippets s JOIN snippet_vectors v ON v.id = s.id ORDER BY s.id"
    )
    for section_id, start, end, blob in db.execute(query):
        spans.setdefault(section_id, []).append((start, end, np.frombuffer(blob, np.float32)))
    notes: dict[str, RealNote] = {}
    query = (
        "SELECT s.id, n.note_id, n.title, s.heading, s.text FROM sections s "
        "JOIN notes n USING (instance, note_id) ORDER BY s.id"
    )
    for section_id, note_id, title, heading, text in db.execute(query):
        if section_id not in spans:
            continue
        note = notes.setdefault(note_id, RealNote(corpus, title, []))
        note.sections.append(_real_section(heading, text, spans[section_id], rows))
    return list(notes.values())


def _real_section(
    heading: str, text: str, snippets: list[tuple[int, int, np.ndarray]], rows: list[np.ndarray]
) -> RealSection:
    """Each sentence with the mean vector of the snippets that hold it."""
    sentences, ids = [], []
    for start, end in _sentences(text):
        held = [v for a, b, v in snippets if a < end and b > start] or [snippets[0][2]]
        mean = np.mean(held, axis=0)
        rows.append((mean / np.linalg.norm(mean)).astype(np.float32))
        sentences.append(text[start:end].strip())
        ids.append(len(rows) - 1)
    rows.append(snippets[0][2])
    return RealSection(heading.rsplit(" › ", 1)[-1], sentences, ids, len(rows) - 1)
