"""The real model's thread: how large a team a prompt runs on, and that the team's size never
changes a vector."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from trilium_recall.index import embed
from trilium_recall.index.embed import E5Embedder, others_running, query_team

PROMPTS = [
    "how do I restore a single file from a restic snapshot",
    "wie verschiebe ich eine Notiz in einen anderen Ordner",
    "ModuleNotFoundError: No module named 'yaml' after pip install",
]


def test_a_lone_prompt_on_an_idle_machine_gets_the_full_team() -> None:
    assert query_team(2, busy=False, others=0, cores=2) == 2
    assert query_team(4, busy=False, others=1, cores=8) == 4


def test_a_prompt_beside_another_prompt_runs_on_one_thread() -> None:
    assert query_team(2, busy=True, others=0, cores=2) == 1
    assert query_team(8, busy=True, others=None, cores=8) == 1


def test_a_prompt_gets_only_the_cores_other_running_threads_leave() -> None:
    assert query_team(2, busy=False, others=1, cores=2) == 1
    assert query_team(2, busy=False, others=5, cores=2) == 1  # never none
    assert query_team(4, busy=False, others=6, cores=8) == 2


def test_without_a_running_count_the_team_follows_the_engine_alone() -> None:
    assert query_team(2, busy=False, others=None, cores=2) == 2


def test_the_running_count_is_read_where_the_system_gives_it(tmp_path, monkeypatch) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.52 0.58 0.59 3/741 12345\n")
    monkeypatch.setattr(embed, "LOADAVG", loadavg)
    assert others_running() == 2  # the caller is one of the three
    loadavg.write_text("garbled\n")
    assert others_running() is None
    monkeypatch.setattr(embed, "LOADAVG", tmp_path / "missing")
    assert others_running() is None


@pytest.mark.slow
def test_one_thread_and_the_full_team_embed_the_same_vectors(monkeypatch) -> None:
    """The team splits rows of each product among threads, never a sum: a prompt's vector is
    the same on any team (compared within the tolerance that holds across CPUs)."""
    busy = threading.Event()
    embedder = E5Embedder(busy=busy.is_set)
    chosen: list[int] = []
    monkeypatch.setattr(
        embed, "query_team", lambda *args: chosen.append(query_team(*args)) or chosen[-1]
    )
    try:
        busy.set()
        alone = np.stack([embedder.query(p) for p in PROMPTS])
        monkeypatch.setattr(embed, "others_running", lambda: 0)  # as if the machine were idle
        busy.clear()
        team = np.stack([embedder.query(p) for p in PROMPTS])
        batch = embedder.passages(PROMPTS)  # a build batch after them: the full team again
    finally:
        embedder.close()
    full = max(chosen)
    assert chosen == [1] * len(PROMPTS) + [full] * len(PROMPTS)
    np.testing.assert_allclose(alone, team, atol=2e-3)
    assert np.allclose(np.linalg.norm(team, axis=1), 1.0, atol=1e-3)
    assert batch.shape == (len(PROMPTS), embedder.dim)
