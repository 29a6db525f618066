"""Helpers for the reliability tests: a small notebook, engines on it, polling, latency stats."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import httpx

from conftest import PASSWORD, HashEmbedder, make_settings
from engine_process import EngineProcess
from standin_faults import FaultyTrilium
from trilium_recall.config import Instance
from trilium_recall.index.store import Store
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.notes.classify import Rules
from trilium_recall.sync.syncer import Syncer
from trilium_recall.trilium.client import TriliumClient

TOKEN = "reliability_token"
HEADERS = {"Authorization": f"Bearer {PASSWORD}"}

# One short note per topic: each is one section, so a build embeds len(TOPICS) passages
# (~3-9 a second with the real model here). 25 notes make two rounds (sync.NOTES_PER_ROUND
# is 16), so /health can show 0 < done < total.
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("noteWireguar", "Wireguard tunnel", "The wireguard tunnel listens on UDP port 51820."),
    ("noteResticBk", "Restic backups", "Nightly restic backup to the NAS at 02:00."),
    ("noteSourdoug", "Sourdough starter", "Feed the sourdough starter rye flour twice a day."),
    ("notePostgres", "Postgres upgrade", "Upgrade postgres with pg_upgrade --link in place."),
    ("noteBikeTyre", "Bike tyre pressure", "Road bike tyres run at 5.5 bar, gravel at 3 bar."),
    ("noteZfsScrub", "ZFS scrub schedule", "The ZFS pool tank is scrubbed every first Sunday."),
    ("noteDentistA", "Dentist appointment", "Dentist Dr. Okafor, checkup every six months."),
    ("noteCaddyPro", "Caddy reverse proxy", "Caddy proxies grafana.home to port 3000."),
    ("noteTomatoes", "Tomato seedlings", "Sow tomato seeds indoors in early March."),
    ("noteTaxRetur", "Tax return checklist", "Collect the pension statement before filing taxes."),
    ("noteKayakTri", "Kayak trip plan", "Kayak trip on the Danube, pack the dry bags."),
    ("notePiholeDn", "Pi-hole DNS", "Pi-hole blocks ads; upstream DNS is quad9."),
    ("noteGuitarSt", "Guitar strings", "Guitar takes 10-46 nickel strings, restring monthly."),
    ("noteRouterFw", "Router firmware", "OpenWrt router firmware is flashed with sysupgrade."),
    ("noteCoffeeGr", "Coffee grinder", "Espresso grind setting 12 on the burr grinder."),
    ("noteSshKeysR", "SSH key rotation", "Rotate ed25519 SSH keys every year in January."),
    ("noteBookClub", "Book club", "Book club meets on Thursdays; next read is Dune."),
    ("noteBoilerSv", "Boiler service", "Gas boiler service is due every October."),
    ("noteNginxTls", "Certificate renewal", "Certbot renews the TLS certificates weekly."),
    ("noteRunPlanA", "Half marathon plan", "Half marathon training: long run on Sundays."),
    ("noteHomeInsu", "Home insurance", "Home insurance renews in May; policy with Allianz."),
    ("noteVimConfi", "Vim config", "Vim uses relativenumber and a leader key of space."),
    ("noteSolarPan", "Solar panels", "The solar inverter reports to the home assistant."),
    ("notePassport", "Passport renewal", "Passport expires 2029; renew six months before."),
    ("noteKubeClus", "Kubernetes cluster", "The k3s cluster runs on three Raspberry Pis."),
)
PROMPT = "which UDP port does my wireguard tunnel listen on?"
PROMPT_NOTE = "noteWireguar"
PROMPTS = (  # (prompt, the note it is about)
    (PROMPT, PROMPT_NOTE),
    ("how often is the ZFS pool scrubbed?", "noteZfsScrub"),
    ("what pressure for my road bike tyres?", "noteBikeTyre"),
    ("which grind setting for espresso on my grinder?", "noteCoffeeGr"),
    ("when should I sow the tomato seeds?", "noteTomatoes"),
)
# Two notes that must be skipped, so skipped counts are compared too.
ARCHIVED, PROTECTED = "noteArchived", "noteProtectd"

T = TypeVar("T")


# Enough notes for three build rounds: the syncer fetches the next round while one embeds, so a
# fault must land in a build of more than two rounds to catch it half done.
ROUNDS_OF_TOPICS = TOPICS + tuple(
    (f"noteFill{i:04d}", f"Filler note {i}", f"Filler note number {i} about nothing much.")
    for i in range(3 * 16 - len(TOPICS) + 1)
)


def small_notebook(topics: Sequence[tuple[str, str, str]] = TOPICS) -> FaultyTrilium:
    """A fake Trilium (not started) with one short note per topic plus two skipped notes."""
    fake = FaultyTrilium(token=TOKEN)
    for note_id, title, text in topics:
        fake.add_note(note_id, title, content=f"<p>{text}</p>")
    archived = [{"type": "label", "name": "archived", "value": ""}]
    fake.add_note(ARCHIVED, "Old flat lease", content="<p>lease</p>", attributes=archived)
    fake.add_note(PROTECTED, "Bank PINs", content="<p>secret</p>", is_protected=True)
    return fake


def engine_env(trilium: FaultyTrilium, **extra: str) -> dict[str, str]:
    """Env for an engine on `trilium`: quick ticks so faults show and heal within seconds.

    The gate is made as lenient as the setting allows: these tests are about staying up, not
    about relevance.
    """
    return {
        "TRILIUM_URL": trilium.url(),
        "TRILIUM_ETAPI_TOKEN": TOKEN,
        "RECALL_LOGIN_PASSWORD": PASSWORD,
        "RECALL_TICK_SECONDS": "1",
        "RECALL_FULL_SECONDS": "3600",
        "RECALL_GATE_STRICTNESS": "-5",
        **extra,
    }


def start_engine(data_dir: Path, trilium: FaultyTrilium, **extra: str) -> EngineProcess:
    data_dir.mkdir(parents=True, exist_ok=True)
    return EngineProcess(data_dir, engine_env(trilium, **extra)).start()


def wait_until(what: str, probe: Callable[[], T], timeout: float, interval: float = 0.05) -> T:
    """Poll `probe` until it returns something truthy; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")


def health(engine: EngineProcess) -> dict:
    answer = httpx.get(f"{engine.url}/health", timeout=5)
    assert answer.status_code == 200
    return answer.json()


def instance_health(engine: EngineProcess) -> dict:
    return health(engine)["instances"]["default"]


def recall(client: httpx.Client, engine: EngineProcess, prompt: str) -> httpx.Response:
    return client.post(f"{engine.url}/recall", json={"prompt": prompt}, headers=HEADERS)


def assert_answers(engine: EngineProcess, prompt: str = PROMPT, note: str = PROMPT_NOTE) -> dict:
    """/recall answers 200 with passages, the expected note among them."""
    with httpx.Client(timeout=10) as client:
        answer = recall(client, engine, prompt)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert note in [p["note_id"] for p in body["passages"]], body
    return body


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p99 of 100 values is the 99th smallest)."""
    ordered = sorted(values)
    rank = max(1, -(-int(fraction * 1000) * len(ordered) // 1000))
    return ordered[min(rank, len(ordered)) - 1]


def latency_summary(latencies: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(latencies),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        "max_ms": round(max(latencies) * 1000, 1),
    }


def clean_counts(trilium: FaultyTrilium, data_dir: Path) -> dict:
    """/health-style counts of a clean build of `trilium` in `data_dir`.

    Counts depend on classification and splitting only, not on the vectors, so the
    deterministic hash embedder stands in for e5 here (a second real build would cost ~5 s).
    """

    async def build() -> dict:
        settings = make_settings(data_dir)
        instance = Instance("default", trilium.url(), settings.instances["default"].token)
        store = Store(settings.db_path, VectorIndex(HashEmbedder.dim))
        client = TriliumClient(trilium.url(), TOKEN)
        try:
            syncer = Syncer(instance, client, store, HashEmbedder(), Rules.from_settings(settings))
            await syncer.full()
            return store.counts("default")
        finally:
            await client.aclose()
            store.close()

    return asyncio.run(build())
