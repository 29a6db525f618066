"""The real model's thread: a prompt runs on one OpenMP thread, a build batch on every core, and
the team's size never changes a vector."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import SecretStr

from conftest import health_when, make_settings
from standin_edits import EditableTrilium
from trilium_recall.config import Instance
from trilium_recall.index import embed
from trilium_recall.index.embed import QUERY_THREADS, E5Embedder
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


def test_a_prompt_runs_on_one_thread_and_a_build_batch_on_every_core(monkeypatch) -> None:
    """The team splits the rows of each product among threads, never a sum: a prompt's vector
    is the same on any team (compared within the tolerance that holds across CPUs)."""
    sizes = _recorded_team_sizes(monkeypatch)
    embedder = E5Embedder()
    try:
        one = np.stack([embedder.query(p) for p in PROMPTS])
        batch = embedder.passages(PROMPTS)
    finally:
        embedder.close()
    n = len(PROMPTS)
    assert QUERY_THREADS == 1 and sizes[: n + 1] == [QUERY_THREADS] * n + [None]
    every_core = E5Embedder(query_threads=None)
    try:
        sizes.clear()
        full = np.stack([every_core.query(p) for p in PROMPTS])
    finally:
        every_core.close()
    assert sizes == [None] * n
    np.testing.assert_allclose(one, full, atol=2e-3)
    assert np.allclose(np.linalg.norm(one, axis=1), 1.0, atol=1e-3)
    assert batch.shape == (n, embedder.dim)


async def test_the_engine_embeds_every_prompt_on_one_thread(tmp_path, monkeypatch) -> None:
    """The engine's own model: a prompt alone gets one thread too (a team of two spins at every
    layer and took 1.6 s beside another program's threads)."""
    sizes = _recorded_team_sizes(monkeypatch)
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
        for prompt in PROMPTS:
            await engine.recall(RecallRequest(prompt))
    finally:
        await engine.stop()
        fake.stop()
    assert sizes == [QUERY_THREADS] * len(PROMPTS)


def test_a_query_is_cut_to_the_tokens_a_thousand_characters_of_english_take() -> None:
    """Chinese, or a pasted table, packs up to four times the tokens into the same characters,
    and embedding time goes with tokens: each is cut to MAX_QUERY_TOKENS; a long English
    prompt is not."""
    embedder = E5Embedder()
    try:
        model = embedder._model  # the cut runs on the model's thread with the model itself
        chinese = "如何在节点中逐行读取文件而不把整个文件载入内存" * 40
        table = "| Ctrl+Shift+A | select none |\n" * 40
        english = "how do I restore a single file from a restic snapshot " * 12
        for dense in (chinese, table):
            cut = embed._clip(model, dense)
            assert dense.startswith(cut) and len(cut) < embed.MAX_QUERY_CHARS
            tokens = model.token_count(cut, is_query=True)
            assert embed.MAX_QUERY_TOKENS - 16 <= tokens <= embed.MAX_QUERY_TOKENS
            np.testing.assert_allclose(embedder.query(dense), embedder.query(cut), atol=2e-3)
        assert embed._clip(model, english) == english  # 660 characters, under the limit
        for mixed in (chinese[:200] + english, english[:600] + chinese):  # density changes
            cut = embed._clip(model, mixed)
            assert mixed.startswith(cut) and model.token_count(cut, is_query=True) <= 256
    finally:
        embedder.close()
