"""The generic-prompt bank: shipped vectors that match the model, the closest prompt, and the
calibration that says how near generic prompts come to an index."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import HashEmbedder, add_note
from trilium_recall.index.embed import E5Embedder
from trilium_recall.notes.records import text_hash
from trilium_recall.search.null_bank import (
    GenericPrompts,
    bank_prompts,
    query_vectors,
    shipped_vectors,
)


def test_the_shipped_vectors_are_for_this_bank_and_this_model() -> None:
    prompts = bank_prompts()
    vectors = shipped_vectors(prompts, E5Embedder.name)
    assert vectors is not None and vectors.shape == (len(prompts), E5Embedder.dim)
    assert shipped_vectors([*prompts, "one more prompt"], E5Embedder.name) is None
    assert shipped_vectors(prompts, "another-model") is None


@pytest.mark.slow
def test_the_shipped_vectors_equal_what_the_model_makes() -> None:
    prompts = bank_prompts()
    shipped = shipped_vectors(prompts, E5Embedder.name)
    assert shipped is not None
    sample = list(range(0, len(prompts), 97))
    fresh = E5Embedder().queries([prompts[i] for i in sample])
    # The 4-bit model's kernels differ between AVX2 and AVX-512 in the 3rd decimal (measured: the
    # largest component difference 0.0024, the lowest cosine 0.99993 over 101 prompts): compare
    # directions, not floats. Staleness is the content hash's job (the test above).
    cosines = (fresh * shipped[sample]).sum(axis=1)
    assert cosines.min() >= 0.999, cosines.min()


def test_another_model_embeds_the_bank_once_then_reads_the_cache(store, embedder) -> None:
    first = GenericPrompts.load(embedder, store)
    assert len(first.prompts) == len(bank_prompts()) > 1000

    class Counting(HashEmbedder):
        def queries(self, texts):
            raise AssertionError("the second load must come from the cache")

    again = GenericPrompts.load(Counting(), store)
    assert np.array_equal(again.vectors, first.vectors)


def test_closest_names_the_nearest_generic_prompt(embedder) -> None:
    prompts = ["fix the failing unit test", "best pasta recipe for two"]
    bank = GenericPrompts(prompts, embedder.queries(prompts))
    match = bank.closest(embedder.query("pasta recipe"))
    assert match.prompt == "best pasta recipe for two" and 0.5 < match.cosine < 1.0


def test_calibration_is_the_margin_generic_prompts_reach_on_this_index(store, embedder) -> None:
    prompts = ["restic backup schedule", "restic backup retention", "tomato seedlings"]
    bank = GenericPrompts(prompts, embedder.queries(prompts))
    assert bank.calibrated(store.vectors).offset == 0.0  # an empty index: nothing to measure
    add_note(store, embedder, "n1", "Backups", [("Backups", "restic backup schedule")])
    calibrated = bank.calibrated(store.vectors, store)  # exact cosines from the index file
    vectors = embedder.queries(prompts)
    note = embedder.passages(["Backups\nrestic backup schedule"])[0]
    best = vectors @ note
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -1)
    assert calibrated.offset == pytest.approx(float(np.mean(best - sims.max(axis=1))), abs=1e-6)
    assert calibrated.prompts == prompts and bank.offset == 0.0  # a copy


def test_query_vectors_keep_only_the_prompts_of_their_last_use(store, embedder) -> None:
    first = query_vectors(store, embedder, ["alpha prompt", "beta prompt"], "pseudo-prompts")
    query_vectors(store, embedder, ["bank prompt"], "bank")
    again = query_vectors(store, embedder, ["beta prompt", "gamma prompt"], "pseudo-prompts")
    assert np.array_equal(again[0], first[1])
    kept = store.db.execute("SELECT purpose, hash FROM query_cache ORDER BY 1, 2").fetchall()
    assert kept == sorted(
        [
            (f"{embedder.name}/bank", text_hash("bank prompt")),
            (f"{embedder.name}/pseudo-prompts", text_hash("beta prompt")),
            (f"{embedder.name}/pseudo-prompts", text_hash("gamma prompt")),
        ]
    )
