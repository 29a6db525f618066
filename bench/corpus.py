"""Benchmark inputs: realistic prompts, the texts the build embeds, real Trilium exports, and
synthetic index files.

The synthetic index is written straight through `Store.save_note` with random unit vectors:
embedding 50k sections (~270k snippets) would take hours, and /recall latency depends on the
index size, not on what the vectors mean. Each synthetic section copies the shape of a real one
(its sentences' lengths, drawn from the exports and the demo notebook) and is cut into snippets
by `split_snippets`, so it gets as many snippets as a real section of that length.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1] / "tests")
)  # the request-counting stand-in
from standin_faults import FaultyTrilium
from trilium_recall.demo.mode import NOTEBOOK_DIR
from trilium_recall.demo.standin.export import SeedNote, read_export_zip, read_notebook_dir
from trilium_recall.index.embed import E5Embedder
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.records import NoteRecord, SectionInput, SnippetInput, text_hash
from trilium_recall.notes.sections import Section, estimate_tokens, split_note
from trilium_recall.notes.snippets import _sentences, split_snippets
from trilium_recall.sync.plan import length_sorted_batches

SHARED = Path("/work/shared/trilium")
# Real Trilium exports: the developer guide and release notes, and Trilium's demo notebook.
EXPORTS = (SHARED / "devdocs.zip", SHARED / "demo.zip")
PASSAGE_TOKENS = 250  # a long section: sections are capped near 350 tokens (notes/sections.py)
AREAS = ("wiki", "sources", "journal", "other")
AREA_SHARES = (0.2, 0.2, 0.3, 0.3)
SECTIONS_PER_NOTE = (1, 7)  # uniform, so ~4 sections a note
DEMO_WORD_SHARE = 0.85  # the rest comes from a long tail of made-up words
TAIL_VOCABULARY = 20_000
SUMMARY_SHARE = 0.2  # wiki notes that summarise an earlier sources note (derivedFrom link)
WRITE_CHUNK = 500  # notes per transaction while writing a synthetic index
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)

# ~30 prompts of the kind a developer types into Claude Code, most about the demo notebook.
PROMPTS = (
    "how do I restore my restic backup to a new disk?",
    "which port does wireguard listen on and how do I add a new peer",
    "what did we decide in the postmortem about booking-api connection exhaustion",
    "set up pgbouncer transaction pooling for the booking service",
    "how should I handle stripe webhook retries and idempotency keys",
    "autovacuum is not keeping up on our biggest postgres table, what settings do we use?",
    "what is the on-call runbook step when the database is at max connections",
    "write a helm upgrade command with a values override for staging",
    "why did we move background jobs from celery to dramatiq",
    "nginx reverse proxy config for a new service in the LXC container",
    "proxmox host pve1: how much RAM is left for another VM",
    "how do I cut a release, which tags and changelog steps",
    "git workflow: should I rebase or merge feature branches",
    "how do we publish the python package to the internal index",
    "show me the pg diagnostics query for long running transactions",
    "what shared_buffers and work_mem did we set on db-prod-1",
    "who is Priya Raman and what does she own",
    "kubectl command to see why a pod is in CrashLoopBackOff",
    "fix this TypeError: unsupported operand type(s) for +: 'int' and 'str' in my script",
    "refactor this function to use a dataclass instead of a dict",
    "what did I write in my journal about the architecture sync in October",
    "recipe for käsespätzle like my grandmother makes",
    "plan for the Valencia half marathon training week 6",
    "what is left to do for the 2025 tax return",
    "Kyoto trip in April: which temples did I want to see",
    "Lyon weekend in November, where are we staying",
    "how do I rotate the WireGuard keys on the old raspberry pi setup",
    "celery worker concurrency settings we used before it was retired",
    "add retries with exponential backoff to this httpx client",
    "explain the difference between a summary page and its raw source in the wiki",
)


# -- what the build embeds ---------------------------------------------------------------------


def demo_seeds() -> list[SeedNote]:
    return read_notebook_dir(NOTEBOOK_DIR, "root")


def export_seeds() -> list[SeedNote]:
    return [seed for path in EXPORTS for seed in read_export_zip(path, "root", ())]


def seed_sections(seeds: list[SeedNote]) -> Iterator[tuple[str, Section]]:
    """(note title, section) for every text note, split as the build splits it."""
    for seed in seeds:
        if isinstance(seed.content, str):
            for section in split_note(seed.title, seed.type, seed.mime, seed.content):
                yield seed.title, section


def snippet_texts(seeds: list[SeedNote]) -> list[str]:
    """The texts the build hands the embedder: every snippet of every section."""
    return [
        s.text for title, section in seed_sections(seeds) for s in split_snippets(title, section)
    ]


def sorted_batches(texts: list[str], size: int) -> list[list[str]]:
    """`texts` in batches of `size`, similar lengths together, as the build batches them."""
    return [[texts[i] for i in batch] for batch in length_sorted_batches(texts, size)]


def packed_texts(seeds: list[SeedNote], tokens: int = PASSAGE_TOKENS) -> list[str]:
    """Consecutive sections joined into ~`tokens`-token passages (the last one dropped if
    short): real prose of a fixed, long length for the raw embedder rate."""
    passages, current = [], ""
    for _, section in seed_sections(seeds):
        text = f"{section.heading}\n{section.text}"
        current = f"{current}\n\n{text}" if current else text
        if estimate_tokens(current) >= tokens:
            passages.append(current)
            current = ""
    return passages


def export_trilium(token: str, exports: tuple[Path, ...] = EXPORTS) -> FaultyTrilium:
    """The fake Trilium holding the real exports, listening on 127.0.0.1."""
    fake = FaultyTrilium(token=token)
    for path in exports:
        fake.load_export_zip(path)
    fake.start()
    return fake


# -- synthetic indexes -------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticIndex:
    path: Path
    notes: int
    sections: int
    snippets: int
    generate_s: float
    write_s: float


def real_shapes() -> list[tuple[int, ...]]:
    """Each real section (exports and demo notebook) as the estimated token counts of its
    sentences, as `split_snippets` cuts them."""
    return [
        tuple(estimate_tokens(section.text[a:b]) for a, b in _sentences(section.text))
        for _, section in seed_sections(export_seeds() + demo_seeds())
    ]


def real_snippets_per_section() -> float:
    sections = list(seed_sections(export_seeds() + demo_seeds()))
    return sum(len(split_snippets(t, s)) for t, s in sections) / len(sections)


def demo_word_counts() -> Counter[str]:
    counts: Counter[str] = Counter()
    for _, section in seed_sections(demo_seeds()):
        counts.update(w.casefold() for w in _WORD.findall(f"{section.heading} {section.text}"))
    return counts


class WordSource:
    """Draws words: mostly the demo notebook's (by their frequency), plus a Zipf tail."""

    def __init__(self, rng: np.random.Generator) -> None:
        counts = demo_word_counts()
        tail_weights = 1 / np.arange(1, TAIL_VOCABULARY + 1, dtype=np.float64)
        demo_weights = np.array(list(counts.values()), dtype=np.float64)
        self.rng = rng
        self.vocabulary = list(counts) + [_made_up_word(i) for i in range(TAIL_VOCABULARY)]
        weights = np.concatenate(
            [
                demo_weights / demo_weights.sum() * DEMO_WORD_SHARE,
                tail_weights / tail_weights.sum() * (1 - DEMO_WORD_SHARE),
            ]
        )
        self.cdf = np.cumsum(weights) / weights.sum()

    def words(self, n: int) -> list[str]:
        picks = np.searchsorted(self.cdf, self.rng.random(n), side="right")
        return [self.vocabulary[min(i, len(self.vocabulary) - 1)] for i in picks]


def _made_up_word(i: int) -> str:
    syllables = ("ka", "lo", "mi", "ter", "sun", "vex", "dra", "pol", "qui", "zen", "ba", "rh")
    word = ""
    while True:
        word += syllables[i % len(syllables)]
        i //= len(syllables)
        if i == 0:
            return word + "x"


def build_synthetic(path: Path, target_sections: int, instance: str, url: str) -> SyntheticIndex:
    """A complete index of about `target_sections` sections, marked as fully built."""
    started = time.perf_counter()
    rng = np.random.default_rng(target_sections)
    notes = _synthetic_notes(rng, target_sections, instance)
    generated = time.perf_counter()
    Store(path, VectorIndex(E5Embedder.dim)).close()  # makes the vector table
    store = Store(path)  # no mirror: the bench process need not hold every vector
    store.ensure_instance(instance, url)
    for start in range(0, len(notes), WRITE_CHUNK):
        with store.atomic():
            for note, sections, links in notes[start : start + WRITE_CHUNK]:
                store.save_note(note, sections, links)
    store.update_instance(instance, build_complete=1, last_full="2026-01-01T00:00:00+00:00")
    count = store.counts(instance)
    snippets = int(store.db.execute("SELECT count(*) FROM snippets").fetchone()[0])
    store.close()
    written = time.perf_counter()
    return SyntheticIndex(
        path,
        int(count["notes"]),
        int(count["sections"]),
        snippets,
        generated - started,
        written - generated,
    )


NoteRows = tuple[NoteRecord, list[SectionInput], list[tuple[str, str]]]


def _synthetic_notes(rng: np.random.Generator, target: int, instance: str) -> list[NoteRows]:
    source = WordSource(rng)
    shapes = real_shapes()
    rows: list[NoteRows] = []
    total, sources = 0, []
    while total < target:
        number = len(rows)
        note_id = f"syn{number:09d}"
        area = str(rng.choice(AREAS, p=AREA_SHARES))
        title = " ".join(source.words(int(rng.integers(2, 6)))).capitalize()
        count = min(int(rng.integers(*SECTIONS_PER_NOTE, endpoint=True)), target - total)
        sections = [
            _section(rng, source, title, ordinal, shapes[int(rng.integers(len(shapes)))])
            for ordinal in range(count)
        ]
        links: list[tuple[str, str]] = []
        if area == "sources":
            sources.append(note_id)
        elif area == "wiki" and sources and rng.random() < SUMMARY_SHARE:
            links.append((sources.pop(int(rng.integers(len(sources)))), "derivedFrom"))
        rows.append((_record(instance, note_id, title, area, number), sections, links))
        total += count
    return rows


def _section(
    rng: np.random.Generator,
    source: WordSource,
    title: str,
    ordinal: int,
    shape: tuple[int, ...],
) -> SectionInput:
    """Made-up sentences as long (in estimated tokens) as the real section's, split into
    snippets as the build splits them, each snippet with a random unit vector."""
    # estimate_tokens counts each word and the full stop, × 1.3.
    sentences = [
        " ".join(source.words(max(1, round(tokens / 1.3) - 1))).capitalize() + "."
        for tokens in shape
    ]
    heading = title if ordinal == 0 else f"{title} › {' '.join(source.words(3)).capitalize()}"
    text = " ".join(sentences)
    snippets = split_snippets(title, Section(ordinal, heading, text))
    vectors = rng.standard_normal((len(snippets), E5Embedder.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return SectionInput(
        ordinal,
        heading,
        text,
        text_hash(f"{heading}\n{text}"),
        [SnippetInput(s.start, s.end, v) for s, v in zip(snippets, vectors, strict=True)],
    )


def _record(instance: str, note_id: str, title: str, area: str, number: int) -> NoteRecord:
    folder = {"wiki": "Wiki", "sources": "Wiki › Raw", "journal": "Journal", "other": "Work"}[area]
    return NoteRecord(
        instance=instance,
        note_id=note_id,
        title=title,
        type="text",
        mime="text/html",
        area=area,
        paths=(f"{folder} › Group {number % 97}",),
        parents=(f"group{number % 97:05d}",),
        blob_id=f"blob{number:09d}",
        content_hash=f"hash{number:09d}",
        utc_modified="2026-01-01 00:00:00.000Z",
        attr_fingerprint=json.dumps([]),
    )
