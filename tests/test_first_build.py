"""The first build: read in the order people ask, answered from while it runs (issue 26)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import numpy as np
from pydantic import SecretStr

from conftest import HashEmbedder, make_settings
from engine_process import serve_in_thread
from faults import wait_until
from procs import scrubbed_env
from test_hook import added_context, on_time, payload, run_hook
from test_mcp import mcp_session
from trilium_recall.config import Instance
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.search.answers import PARTIAL_NOTE, RecallResult
from trilium_recall.server.app import create_app
from trilium_recall.server.engine import BUILD_CALIBRATION_MIN_VECTORS, Engine

HELD_WORD = "zzheld"  # passages holding this word wait until the test lets them through
FIRST = 16  # one round of the syncer: the notes read first
HELD = 144  # read later: the first round is 10 % of the build
HOOK_PROMPT = "do tomatoes need full sun"


class HeldEmbedder(HashEmbedder):
    """Embeds at once, except passages with HELD_WORD: those wait for `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if any(HELD_WORD in text for text in texts):
            self.release.wait(120)
        return super().passages(texts)


def health_once(url: str, done: Callable[[dict], bool], what: str) -> dict:
    """/health as soon as `done` holds for it (a generous deadline, not a timing)."""

    def probe() -> dict | None:
        health = httpx.get(f"{url}/health").json()
        return health if done(health) else None

    return wait_until(what, probe, 60)


async def ask_the_tool(url: str, query: str) -> str:
    async with mcp_session(url) as mcp:
        answer = await mcp.session.call_tool("recall", {"query": query})
    return answer.content[0].text


def test_recall_answers_partially_while_the_first_build_runs(tmp_path: Path) -> None:
    trilium = FakeTrilium(token="build_token")
    # Added first, so edited longest ago: the build reads these last.
    for n in range(HELD):
        trilium.add_note(f"held{n:08d}", f"Archive {n}", content=f"<p>{HELD_WORD} old box {n}</p>")
    trilium.add_note("tomato000001", "Tomato beds", content="<p>tomatoes need full sun</p>")
    for n in range(FIRST - 1):
        trilium.add_note(f"fresh{n:07d}", f"Garden {n}", content=f"<p>seedling tray {n}</p>")
    embedder = HeldEmbedder()
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("build_token"))
    settings = make_settings(tmp_path, instances={"default": instance})
    try:
        with serve_in_thread(create_app(Engine(settings, embedder))) as url:
            health = health_once(url, lambda h: h.get("notes_done") == FIRST, "round 1 indexed")
            assert health["status"] == "building"
            assert health["notes_total"] == FIRST + HELD
            assert health["eta_seconds"] is not None and health["eta_seconds"] >= 0
            progress = health["instances"]["default"]
            assert (progress["notes_done"], progress["notes_total"]) == (FIRST, FIRST + HELD)
            page = httpx.get(f"{url}/ui/status").json()  # what the status page draws
            assert page["status"] == "building" and page["notes_done"] == FIRST
            # Nothing indexed since: the same rate over a longer time, so no less time left.
            assert page["instances"]["default"]["eta_seconds"] >= progress["eta_seconds"]

            asked = httpx.post(f"{url}/recall", json={"prompt": "do tomatoes need full sun"})
            assert asked.status_code == 200, asked.text
            answer = asked.json()
            assert answer["partial"] is True and answer["status"] == "sent"
            assert answer["passages"][0]["title"] == "Tomato beds"

            # The Claude Code hook (the real command) passes a partial answer's passages on;
            # a run a busy machine made late proves nothing and is tried again, in a new
            # session (a session is sent a note once).
            sessions = iter(range(5))
            hooked = on_time(
                lambda: run_hook(
                    payload(HOOK_PROMPT, session_id=f"first-build-{next(sessions)}"),
                    scrubbed_env(RECALL_URL=url, RECALL_HOOK_DEBUG="1"),
                    [sys.executable, "-m", "trilium_recall.cli", "hook"],
                )
            )
            context = added_context(hooked)
            assert "Tomato beds" in context and "full sun" in context

            # The MCP tool (the official client) says where its answer comes from.
            tool_text = asyncio.run(ask_the_tool(url, "do tomatoes need full sun"))
            assert "Tomato beds" in tool_text and tool_text.endswith(PARTIAL_NOTE)

            # The gate keeps its shipped defaults on a part-built index: no noise.
            unrelated = {"prompt": "how do I reverse a linked list in rust"}
            quiet = httpx.post(f"{url}/recall", json=unrelated).json()
            assert quiet["partial"] is True and quiet["passages"] == []

            embedder.release.set()
            health_once(url, lambda h: h["status"] == "ok", "the build finish")
            done = httpx.post(f"{url}/recall", json={"prompt": "do tomatoes need full sun"}).json()
            assert done["partial"] is False and done["passages"][0]["title"] == "Tomato beds"
            assert "notes_done" not in httpx.get(f"{url}/health").json()
    finally:
        embedder.release.set()
        trilium.stop()


class FailingEmbedder(HashEmbedder):
    """Embeds at once, except passages with HELD_WORD: those fail the run."""

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if any(HELD_WORD in text for text in texts):
            raise RuntimeError("the embedder failed")
        return super().passages(texts)


def test_a_resumed_build_counts_the_notes_an_earlier_run_indexed(tmp_path: Path) -> None:
    """It said "0 of 144 notes" where 16 of 160 were built, and the page and `doctor` too."""
    trilium = FakeTrilium(token="build_token")
    for n in range(HELD):
        trilium.add_note(f"held{n:08d}", f"Archive {n}", content=f"<p>{HELD_WORD} old box {n}</p>")
    for n in range(FIRST):
        trilium.add_note(f"fresh{n:07d}", f"Garden {n}", content=f"<p>seedling tray {n}</p>")
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("build_token"))
    settings = make_settings(tmp_path, instances={"default": instance})
    try:
        with serve_in_thread(create_app(Engine(settings, FailingEmbedder()))) as url:
            failed = health_once(url, lambda h: h["status"] == "degraded", "round 2 failed")
        assert failed["instances"]["default"]["notes"] == FIRST
        embedder = HeldEmbedder()
        with serve_in_thread(create_app(Engine(settings, embedder))) as url:
            health = health_once(url, lambda h: h.get("notes_total"), "the resumed build planned")
            assert health["status"] == "building"
            assert (health["notes_done"], health["notes_total"]) == (FIRST, FIRST + HELD)
            assert health["eta_seconds"] is None  # no note read by this run yet: no rate
            checks = httpx.get(f"{url}/ui/doctor", timeout=60).json()["checks"]
            index = next(c for c in checks if c["name"] == "index default")
            assert (
                f"first build running ({FIRST} of {FIRST + HELD} notes indexed)" in index["detail"]
            )
            embedder.release.set()
            health_once(url, lambda h: h["status"] == "ok", "the build finish")
    finally:
        trilium.stop()


def test_reference_points_are_recalibrated_while_the_first_build_runs(tmp_path: Path) -> None:
    """Measured at start the reference points are the shipped defaults (an empty index); once
    the part-built index holds enough vectors they are this notebook's, while still building."""
    trilium = FakeTrilium(token="build_token")
    for n in range(HELD):
        trilium.add_note(f"held{n:08d}", f"Archive {n}", content=f"<p>{HELD_WORD} old box {n}</p>")
    for n in range(FIRST):  # long notes: the first round alone passes the vectors calibration needs
        sentences = " ".join(
            f"Bed {n} row {k} gets compost and mulch in spring." for k in range(60)
        )
        trilium.add_note(f"fresh{n:07d}", f"Garden bed {n}", content=f"<p>{sentences}</p>")
    embedder = HeldEmbedder()
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("build_token"))
    settings = make_settings(tmp_path, instances={"default": instance})
    engine = Engine(settings, embedder)
    try:
        with serve_in_thread(create_app(engine)) as url:
            health_once(url, lambda h: h.get("notes_done") == FIRST, "round 1 indexed")
            assert len(engine.vectors) >= BUILD_CALIBRATION_MIN_VECTORS

            def calibrated() -> dict | None:
                answer = httpx.post(f"{url}/recall?explain=1", json={"prompt": "compost beds"})
                points = answer.json()["explain"]["reference_points"]
                return points if points["pseudo_prompts"] else None

            points = wait_until("reference points from the part-built index", calibrated, 60)
            assert "pseudo-prompts" in points["why"] and points["about_level"] is not None
            assert httpx.get(f"{url}/health").json()["status"] == "building"
    finally:
        embedder.release.set()
        trilium.stop()


def test_a_partial_answer_says_so_in_its_text() -> None:
    assert PARTIAL_NOTE in RecallResult("silent", partial=True).text
    assert PARTIAL_NOTE not in RecallResult("silent").text


def test_health_answers_while_a_note_is_being_split(tmp_path: Path, monkeypatch) -> None:
    """Splitting ran on the event loop: a 10 MB note took 6 s, and /health and /recall
    waited for it. Here the split is held until /health has answered beside it."""
    from trilium_recall.sync import syncer as syncer_module

    splitting, answered = threading.Event(), threading.Event()
    real_prepare = syncer_module.prepare

    def held_prepare(note, record, content):
        if note.note_id == "bigNote00001":
            splitting.set()
            answered.wait(60)
        return real_prepare(note, record, content)

    monkeypatch.setattr(syncer_module, "prepare", held_prepare)
    trilium = FakeTrilium(token="build_token")
    trilium.add_note("bigNote00001", "Huge manual", content="<p>every command</p>")
    trilium.start()
    instance = Instance("default", trilium.url(), SecretStr("build_token"))
    settings = make_settings(tmp_path, instances={"default": instance})
    try:
        with serve_in_thread(create_app(Engine(settings, HashEmbedder()))) as url:
            assert splitting.wait(60), "the note was never split"
            health = httpx.get(f"{url}/health", timeout=30).json()
            answered.set()
            assert health["status"] in ("starting", "building")
            health_once(url, lambda h: h["status"] == "ok", "the build finish")
    finally:
        answered.set()
        trilium.stop()
