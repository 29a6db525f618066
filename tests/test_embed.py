"""The real model's thread: a prompt runs on the full OpenMP team alone and on one thread beside
another prompt, and the team's size never changes a vector."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from pydantic import SecretStr

from conftest import health_when, make_settings
from standin_edits import EditableTrilium
from trilium_recall.config import Instance
from trilium_recall.index import embed
from trilium_recall.index.embed import BESIDE_ANOTHER_PROMPT, E5Embedder
from trilium_recall.search.answers import RecallRequest
from trilium_recall.server import engine as engine_module

PROMPTS = [
    "how do I restore a single file from a restic snapshot",
    "wie verschiebe ich eine Notiz in einen anderen Ordner",
    "ModuleNotFoundError: No module named 'yaml' after pip install",
]

pytestmark = pytest.mark.slow


def _recorded_team_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The team size of every call on the model's thread from now on (None: every core)."""
    sizes: list[int | None] = []
    use = embed._OpenMPTeams.use

    def recorded(teams: embed._OpenMPTeams, size: int | None) -> None:
        sizes.append(size)
        use(teams, size)

    monkeypatch.setattr(embed._OpenMPTeams, "use", recorded)
    return sizes


def test_a_prompt_runs_on_one_thread_only_beside_another_prompt(monkeypatch) -> None:
    """The team splits the rows of each product among threads, never a sum: a prompt's vector
    is the same on any team (compared within the tolerance that holds across CPUs)."""
    sizes = _recorded_team_sizes(monkeypatch)
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


async def test_the_engine_embeds_a_prompt_on_one_thread_while_it_answers_another(
    tmp_path, monkeypatch
) -> None:
    """The engine's own model asks how many prompts are being answered: a prompt that arrives
    while another is still in the pipeline gets one thread; alone, every core."""
    sizes = _recorded_team_sizes(monkeypatch)
    parked, release = threading.Event(), threading.Event()
    real_recall = engine_module.recall

    def recall_parking_the_first(store, embedder, generic, settings, request, **kwargs):
        if request.prompt == PROMPTS[0]:  # held before its embedding, still being answered
            parked.set()
            assert release.wait(60)
        return real_recall(store, embedder, generic, settings, request, **kwargs)

    monkeypatch.setattr(engine_module, "recall", recall_parking_the_first)
    fake = EditableTrilium(token="tok")
    fake.add_note("noteAAAAAAAA", "Backups", content="<p>restic snapshots every night</p>")
    fake.start()
    instance = Instance("default", fake.url(), SecretStr("tok"))
    settings = make_settings(tmp_path, instances={"default": instance}, tick_seconds=3600)
    engine = engine_module.Engine(settings)  # no embedder given: the engine's own model
    await engine.start()
    try:
        await health_when(engine, lambda health: health["status"] == "ok", 120)
        sizes.clear()
        first = asyncio.create_task(engine.recall(RecallRequest(PROMPTS[0])))
        assert await asyncio.to_thread(parked.wait, 60)
        await engine.recall(RecallRequest(PROMPTS[1]))  # beside the parked one
        release.set()
        await first  # now alone
        await engine.recall(RecallRequest(PROMPTS[2]))  # alone
    finally:
        release.set()
        await engine.stop()
        fake.stop()
    assert sizes == [BESIDE_ANOTHER_PROMPT, None, None]
