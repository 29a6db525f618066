"""The real model's thread: a prompt runs on the full OpenMP team alone and on one thread beside
another prompt, and the team's size never changes a vector."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from trilium_recall.index import embed
from trilium_recall.index.embed import BESIDE_ANOTHER_PROMPT, E5Embedder

PROMPTS = [
    "how do I restore a single file from a restic snapshot",
    "wie verschiebe ich eine Notiz in einen anderen Ordner",
    "ModuleNotFoundError: No module named 'yaml' after pip install",
]

pytestmark = pytest.mark.slow


def test_a_prompt_runs_on_one_thread_only_beside_another_prompt(monkeypatch) -> None:
    """The team splits the rows of each product among threads, never a sum: a prompt's vector
    is the same on any team (compared within the tolerance that holds across CPUs)."""
    sizes: list[int | None] = []
    use = embed._OpenMPTeams.use

    def recorded(teams: embed._OpenMPTeams, size: int | None) -> None:
        sizes.append(size)
        use(teams, size)

    monkeypatch.setattr(embed._OpenMPTeams, "use", recorded)
    busy = threading.Event()
    embedder = E5Embedder(busy=busy.is_set)
    try:
        alone = np.stack([embedder.query(p) for p in PROMPTS])
        busy.set()
        beside = np.stack([embedder.query(p) for p in PROMPTS])
        batch = embedder.passages(PROMPTS)  # a build batch: every core, busy or not
    finally:
        embedder.close()
    n = len(PROMPTS)
    assert sizes[: 3 * n] == [None] * n + [BESIDE_ANOTHER_PROMPT] * n + [None]
    np.testing.assert_allclose(alone, beside, atol=2e-3)
    assert np.allclose(np.linalg.norm(beside, axis=1), 1.0, atol=1e-3)
    assert batch.shape == (n, embedder.dim)
