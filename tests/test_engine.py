"""The engine with several Trilium instances: independent syncs, health and filtering."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Iterator

import httpx
from pydantic import SecretStr

from conftest import OPEN, HashEmbedder, add_note, health_when, make_settings
from engine_process import serve_in_thread
from faults import wait_until
from standin_edits import EditableTrilium
from trilium_recall.config import Instance, Settings
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.search.answers import RecallRequest
from trilium_recall.search.candidates import Reference
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import SEARCH_THREADS, Engine


def _trilium(token: str, title: str, text: str) -> EditableTrilium:
    fake = EditableTrilium(token=token)
    fake.add_note("noteAAAAAAAA", title, content=f"<p>{text}</p>")
    fake.start()
    return fake


@contextlib.contextmanager
def _work_and_home() -> Iterator[tuple[EditableTrilium, EditableTrilium, dict[str, Instance]]]:
    """Two stand-in Triliums of a note each, as the instances "work" and "home"."""
    work = _trilium("work_token", "Deploy runbook", "kubectl rollout restart for the api")
    home = _trilium("home_token", "Garden", "tomatoes need six hours of sun")
    try:
        yield (
            work,
            home,
            {
                "work": Instance("work", work.url(), SecretStr("work_token")),
                "home": Instance("home", home.url(), SecretStr("home_token")),
            },
        )
    finally:
        work.stop()
        home.stop()


async def test_two_instances_sync_search_and_fail_independently(tmp_path) -> None:
    with _work_and_home() as (work, home, instances):
        settings = make_settings(tmp_path, instances=instances, tick_seconds=0.2)
        engine = Engine(settings, embedder=HashEmbedder(), gate=OPEN)
        await engine.start()
        try:
            health = await health_when(engine, lambda h: h["status"] == "ok")
            assert {n: health["instances"][n]["notes"] for n in ("work", "home")} == {
                "work": 1,
                "home": 1,
            }

            both = await engine.recall(RecallRequest("kubectl rollout restart tomatoes sun"))
            assert {p.instance for p in both.passages} == {"work", "home"}
            only_home = await engine.recall(
                RecallRequest("kubectl rollout restart tomatoes sun", instance="home")
            )
            assert [(p.instance, p.title) for p in only_home.passages] == [("home", "Garden")]
            assert only_home.passages[0].url == f"{home.url()}/#root/noteAAAAAAAA"

            home.stop()  # one instance down: that one degrades, the other keeps syncing
            down = await health_when(engine, lambda h: h["instances"]["home"]["error"] is not None)
            assert down["status"] == "degraded" and down["instances"]["work"]["error"] is None
            work.set_content("noteAAAAAAAA", "<p>helm rollback to revision 41</p>")
            await health_when(engine, lambda h: _has(engine, "helm rollback revision"))
            still = await engine.recall(RecallRequest("tomatoes sun", instance="home"))
            assert [p.title for p in still.passages] == ["Garden"]  # the last index keeps serving
        finally:
            await engine.stop()


async def test_an_instance_taken_out_of_the_configuration_leaves_the_index(
    tmp_path, caplog
) -> None:
    with _work_and_home() as (_, _, both):
        settings = make_settings(tmp_path, instances=both, tick_seconds=0.2)
        async with _running(settings) as first:
            await health_when(first, lambda h: h["status"] == "ok")
            kept = len(first.store.known_notes("home"))
            assert kept > 0
        only_work = settings.model_copy(update={"instances": {"work": both["work"]}})
        # `search` and `explain` read the index a serving engine keeps: they drop nothing.
        reader = Engine(only_work, embedder=HashEmbedder(), gate=OPEN, reading=True)
        await reader.warm()
        await reader.recall(RecallRequest("tomatoes need six hours of sun"))
        await reader.stop()
        index = Store(settings.db_path)
        assert len(index.known_notes("home")) == kept
        index.close()
        async with _running(only_work) as again:
            # Dropped off the event loop, once every configured instance is built.
            recorded = again.store.recorded_instances
            health = await health_when(
                again, lambda h: h["status"] == "ok" and len(recorded()) == 1
            )
            assert set(health["instances"]) == set(recorded()) == {"work"}
            assert again.store.known_notes("home") == {}
            assert again.store.counts("home")["sections"] == 0
            garden = await again.recall(RecallRequest("tomatoes need six hours of sun"))
            assert "Garden" not in [p.title for p in garden.passages]  # the gate is open
            runbook = await again.recall(RecallRequest("kubectl rollout restart"))
            assert [p.title for p in runbook.passages] == ["Deploy runbook"]
        assert f"instance home is no longer configured: {kept} notes left" in caplog.text


@contextlib.asynccontextmanager
async def _running(settings: Settings) -> AsyncIterator[Engine]:
    engine = Engine(settings, embedder=HashEmbedder(), gate=OPEN)
    await engine.start()
    try:
        yield engine
    finally:
        await engine.stop()


def _reference(engine: Engine) -> Reference:
    assert engine.generic is not None
    return engine.generic.reference


async def test_a_restart_reads_the_reference_points_the_last_calibration_kept(tmp_path) -> None:
    trilium = _trilium("work_token", "Deploy runbook", "kubectl rollout restart for the api")
    instance = Instance("work", trilium.url(), SecretStr("work_token"))
    settings = make_settings(tmp_path, instances={"work": instance}, tick_seconds=0.2)
    try:
        async with _running(settings) as first:
            await health_when(first, lambda h: h["status"] == "ok")
            measured = _reference(first)
            assert not measured.reason.startswith("kept")
        async with _running(settings) as again:
            await health_when(again, lambda h: h["status"] == "ok")
            kept = _reference(again)
            assert kept.reason == f"kept from the last calibration: {measured.reason}"
            assert (kept.generic_level, kept.about_level) == (
                measured.generic_level,
                measured.about_level,
            )
        # Kept from an index of another size: used at once, measured again in the background
        # (Trilium is down, so no full comparison measures them instead).
        store = Store(settings.db_path, VectorIndex(HashEmbedder.dim, HashEmbedder.name))
        add_note(store, HashEmbedder(), "extra", "Extra", [("Extra", "a note written meanwhile")])
        store.close()
        trilium.stop()
        async with _running(settings) as third:
            assert _reference(third).reason.startswith("kept from the last calibration")
            await health_when(third, lambda h: not _reference(third).reason.startswith("kept"))
    finally:
        trilium.stop()


def _has(engine: Engine, words: str) -> bool:
    rows = engine.store.keyword_search(" AND ".join(f'"{w}"' for w in words.split()), 1)
    return bool(rows)


class QueryHeldEmbedder(HashEmbedder):
    """Embeds passages at once; each prompt's query waits for `release` (set until cleared)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.release.set()
        self.held = 0

    def query(self, text: str):
        self.held += 1
        self.release.wait(120)
        return super().query(text)


def test_prompts_past_the_line_are_answered_late_at_once(tmp_path) -> None:
    """50 clients at once each waited out its budget in an unbounded line: 94 % late."""
    trilium = FakeTrilium(token="line_token")
    trilium.add_note("resticNote01", "Restic", content="<p>restore a restic backup</p>")
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("line_token"))
    embedder = QueryHeldEmbedder()
    engine = Engine(make_settings(tmp_path, instances={"default": instance}), embedder, OPEN)
    answers: list[dict] = []
    try:
        with serve_in_thread(create_app(engine)) as url:
            wait_until(
                "the notes indexed", lambda: httpx.get(f"{url}/health").json()["status"] == "ok", 60
            )
            embedder.release.clear()
            embedder.held = 0
            body = {"prompt": "how do I restore a restic backup"}
            admitted = [
                threading.Thread(
                    target=lambda: answers.append(
                        httpx.post(f"{url}/recall", json=body, timeout=120).json()
                    )
                )
                for _ in range(engine.line.limit)
            ]
            for thread in admitted:
                thread.start()
            wait_until("the line full", lambda: engine.line.waiting == engine.line.limit, 60)
            turned_away = httpx.post(f"{url}/recall", json=body, timeout=60).json()
            assert turned_away["status"] == "late" and turned_away["passages"] == []
            assert embedder.held == SEARCH_THREADS  # the rest wait for a thread, not the model
            embedder.release.set()
            for thread in admitted:
                thread.join(120)
            assert engine.line.waiting == 0
            again = httpx.post(f"{url}/recall", json=body, timeout=60).json()
    finally:
        embedder.release.set()
        trilium.stop()
    assert [a["status"] for a in answers] == ["sent"] * engine.line.limit
    assert again["status"] == "sent"


def test_a_search_past_its_budget_keeps_its_place_in_the_line_until_its_thread_is_free(
    tmp_path,
) -> None:
    """The place was given back when the caller stopped waiting, while the search went on
    taking a thread: the line let in more than the threads could take."""
    trilium = FakeTrilium(token="line_token")
    trilium.add_note("resticNote01", "Restic", content="<p>restore a restic backup</p>")
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("line_token"))
    embedder = QueryHeldEmbedder()
    settings = make_settings(tmp_path, instances={"default": instance}, time_budget_ms=300.0)
    engine = Engine(settings, embedder, OPEN)
    try:
        with serve_in_thread(create_app(engine)) as url:
            wait_until(
                "the notes indexed", lambda: httpx.get(f"{url}/health").json()["status"] == "ok", 60
            )
            embedder.release.clear()
            late = httpx.post(f"{url}/recall", json={"prompt": "restic restore"}, timeout=60)
            assert late.json()["status"] == "late"
            assert engine.line.waiting == 1  # its search still holds a thread
            embedder.release.set()
            wait_until("the search ended", lambda: engine.line.waiting == 0, 60)
    finally:
        embedder.release.set()
        trilium.stop()
