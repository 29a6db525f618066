"""Per-notebook reference points, computed at index time and refreshed after each full sync.

Absolute scores move with the notebook, so the gate reads them against this notebook's own
reference points:

- *not about these notes*: the mean margin the generic-prompt bank reaches here
  (`GenericPrompts.calibrated`, the `offset` the gate subtracts; `calibrate` adds the rest);
- *about these notes*: the median margin of deterministic pseudo-prompts made from the notes
  themselves (a note's title and one of its headings, as a person would name the topic);
- the languages the notebook is written in (`languages.py`), so a prompt in another one is
  told apart;
- the technologies it is about (`technologies.py`), so a question about another stack is.

A notebook too small to give reference points (fewer than MIN_NOTES notes) keeps the shipped
defaults, and `reason` says so; `explain` and the page show all of it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

import numpy as np

from ..errors import StoreError
from ..index import note_stats, reference_points
from ..index.embed import Embedder
from ..index.products import products
from ..index.store import Store
from ..index.terms import FTS_TOKENIZER, tokenize_option
from ..index.vectors import VectorIndex
from ..notes.records import text_hash
from .candidates import Reference
from .languages import NOTEBOOK_MARKERS, notebook_languages
from .null_bank import TWIN_COSINE, GenericPrompts, bank_key, query_vectors
from .technologies import (
    NAMES,
    SYMBOL_NAMES,
    holds_symbol,
    notebook_technologies,
    without_links,
)

# Raised when how the points are measured changes, so a start measures them again: 2, a
# notebook's technologies read outside its links (stop 47); 3, a twin in the bank counted at
# null_bank.TWIN_COSINE (stop 48).
CALIBRATION_VERSION = 3
PSEUDO_PROMPTS = 64  # a median needs no more; ~1 s of embedding on 2 cores
MIN_NOTES = 5


def pseudo_prompts(store: Store, count: int = PSEUDO_PROMPTS) -> tuple[list[str], int]:
    """(prompts, notes): a note's title with the heading of its longest section, for every
    n-th note in id order (deterministic, spread over the whole notebook)."""
    rows = note_stats.titles_with_longest_heading(store.db)
    step = max(1, len(rows) // count)
    prompts: list[str] = []
    for title, heading in rows[::step][:count]:
        last = str(heading or "").rsplit(" › ", 1)[-1]
        prompts.append(str(title) if last in ("", title) else f"{title}: {last}")
    return prompts, len(rows)


def reference(
    store: Store,
    embedder: Embedder,
    vectors: VectorIndex,
    generic_vectors: np.ndarray,
    generic_level: float,
) -> Reference:
    """This notebook's reference points (see the module doc)."""
    languages = notebook_languages(store.term_document_counts)
    technologies = notebook_technologies(
        lambda names: _as_written(store, names),
        lambda literals: note_stats.sections_containing(store.db, literals, holds_symbol),
        lambda names: note_stats.titles_naming(store.db, names),
    )
    prompts, notes = pseudo_prompts(store)
    if notes < MIN_NOTES or not len(vectors):
        reason = f"{notes} notes (fewer than {MIN_NOTES}): shipped defaults for the about-level"
        return Reference(generic_level, None, languages, 0, reason, technologies)
    queries = query_vectors(store, embedder, prompts, "pseudo-prompts")
    closest = np.minimum(products(queries, generic_vectors.T).max(axis=1), TWIN_COSINE)
    margins = vectors.best_cosines(queries, store.exact_vectors) - closest
    about = float(np.median(margins))
    reason = f"{len(prompts)} pseudo-prompts from {notes} notes"
    return Reference(generic_level, about, languages, len(prompts), reason, technologies)


def _as_written(store: Store, names: Sequence[str]) -> tuple[int, dict[str, int]]:
    """(sections, sections holding each name as written): names are told by words, not stems."""
    total, counts = store.term_document_counts(names)
    return total, note_stats.as_written(store.db, counts, without_links)


def calibration_key(generic: GenericPrompts, embedder: Embedder) -> str:
    """What kept reference points were measured with: the bank and model, the keyword index's
    tokenizer and the words the notebook's languages and technologies are told by (a release
    that changes any of them measures again rather than read a notebook's technologies from
    names or counts it no longer has)."""
    told_by = [tokenize_option(FTS_TOKENIZER), f"calibration {CALIBRATION_VERSION}"]
    told_by += [*sorted(NAMES), *(literal for _, literal in SYMBOL_NAMES.values())]
    told_by += [" ".join(markers) for markers in NOTEBOOK_MARKERS.values()]
    return text_hash("\n".join([bank_key(generic.prompts, embedder.name), *told_by]))


def calibrate(
    generic: GenericPrompts, vectors: VectorIndex, store: Store, embedder: Embedder
) -> GenericPrompts:
    """The bank calibrated on this index (its `offset`) with this notebook's reference points,
    kept in the index for the next start (`last_calibration`)."""
    calibrated = generic.calibrated(vectors, store)
    if not generic.measurable(vectors):
        return calibrated
    points = reference(store, embedder, vectors, generic.vectors, calibrated.offset)
    row = {**dataclasses.asdict(points), "snippets": len(vectors)}
    with contextlib.suppress(StoreError):  # a full disk costs the next start time, not the points
        reference_points.save(store, calibration_key(generic, embedder), row)
    return GenericPrompts(generic.prompts, generic.vectors, calibrated.offset, points)


def last_calibration(
    generic: GenericPrompts, store: Store, embedder: Embedder
) -> tuple[GenericPrompts, int] | None:
    """The bank with the reference points the index's last calibration measured with this
    bank, model and tokenizer (`calibration_key`), and how many snippets the index held then;
    None if never calibrated (or with anything else)."""
    try:
        row = reference_points.load(store, calibration_key(generic, embedder))
        if row is None:
            return None
        snippets = int(row.pop("snippets"))  # type: ignore[call-overload]
        kept = Reference(**{**row, "languages": tuple(row["languages"])})  # type: ignore[arg-type]
        held = kept.technologies  # a list from JSON
        points = dataclasses.replace(
            kept,
            technologies=None if held is None else tuple(held),
            reason=f"kept from the last calibration: {kept.reason}",
        )
    except (KeyError, TypeError, ValueError):  # a row this code cannot read: measure again
        return None
    return GenericPrompts(generic.prompts, generic.vectors, points.generic_level, points), snippets
