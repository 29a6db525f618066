"""The running engine: the index, the embedder, one syncer per instance, and timed recalls.

Searches run on a small thread pool, each thread with its own read connection (WAL lets them
read while the syncer writes), so a long build never stalls /recall.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, TypeVar

from threadpoolctl import threadpool_limits

from ..config import Settings
from ..errors import IndexDamaged, IndexUnusable, RecallError, StoreError, TriliumError
from ..index.embed import E5Embedder, Embedder
from ..index.file import hold_index, index_errors
from ..index.store import Store
from ..index.vectors import VectorIndex
from ..notes.classify import Rules
from ..search.answers import RecallRequest, RecallResult, building, with_failed_builds
from ..search.calibration import calibrate
from ..search.gate import GateThresholds
from ..search.hybrid import gate_thresholds
from ..search.null_bank import GenericPrompts
from ..search.recall import recall
from ..sync.removed import drop_instances
from ..sync.run_status import RunReport, SyncStatus
from ..sync.schedule import run_forever
from ..sync.syncer import Syncer
from ..trilium.client import TriliumClient
from .admission import SearchLine
from .bank import measured_bank, read_bank
from .health import instance_health, overall_health
from .index_file import IndexFile

log = logging.getLogger(__name__)
T = TypeVar("T")

# Two search threads: while one waits for the model (its own thread, queries first), the other
# runs keyword search, vector scoring and the gate (bench/RESULTS.md, concurrent clients).
SEARCH_THREADS = 2
WAITING_SEARCHES = 10  # beside them: ~0.5 s of searches at ~20 a second (admission.py)
WARM_SEARCHES_PER_THREAD = 2
# The answer may take this long past the budget before it is dropped as late (thread hand-off).
BUDGET_GRACE_S = 0.1
BUILD_CALIBRATION_POLL_S = 5.0
BUILD_CALIBRATION_MIN_VECTORS = 200  # below this a notebook's reference points mean little
# numpy's OpenBLAS starts a thread per core for each matrix-vector product of a search; those
# threads spin after the call and take the cores the model's OpenMP team needs next. One BLAS
# thread halved the engine's CPU per request on the demo index (92 → 47 ms) and cut /recall
# p99 from 120 to 40 ms (bench/RESULTS.md § 10).
BLAS_THREADS = 1
# How long a thread may keep the interpreter while another waits for it. A search gives it up
# at every SQLite step and waits up to this long to get it back whenever the sync's Python
# work (a full comparison's listing and plan) runs beside it: at 100,000 notes /recall's
# search p99 during a comparison was 277-294 ms at Python's 5 ms, 130-142 ms at 1 ms, 13-14 ms
# idle either way (bench/RESULTS.md, issue 26).
SWITCH_INTERVAL_S = 0.001


class Engine:
    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        gate: GateThresholds | None = None,
        reading: bool = False,
    ) -> None:
        """`reading`: for a command that answers from the index and never syncs (search,
        explain): it takes no keeper lock, and reports a file it cannot use rather than move it
        aside (the file may be a newer `serve`'s)."""
        self.settings = settings
        self.reading = reading
        # First: a start refused for a running engine loads no model.
        self._keeper: IO[str] | None = None if reading else hold_index(settings.db_path)
        threadpool_limits(BLAS_THREADS, user_api="blas")  # process-wide: the engine owns it
        sys.setswitchinterval(SWITCH_INTERVAL_S)  # so is this
        self._own_model: E5Embedder | None = None  # the model this engine made; stop() ends it
        try:
            if embedder is None:
                embedder = self._own_model = E5Embedder()
            self.embedder: Embedder = embedder
            self.gate = gate or gate_thresholds(settings)
            self.index = IndexFile(settings.db_path, self.embedder, reading)
            self.store = self.index.open()
        except BaseException:
            for held in (self._keeper, self._own_model):
                if held is not None:
                    held.close()
            raise
        self.generic: GenericPrompts | None = None  # loaded by warm(), before /health is ok
        self.damaged: str | None = None  # a search found the file damaged (record_damage)
        self.syncers = self._syncers()
        self._forgetting: set[str] = set()  # instances being dropped (_forget_unconfigured)
        self._local = threading.local()
        self._readers: list[Store] = []
        self._pool = ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="recall")
        self.line = SearchLine(SEARCH_THREADS + WAITING_SEARCHES)
        self._tasks: list[asyncio.Task[None]] = []
        # Awaited after each full sync (app.py: the MCP instructions from the index).
        self.after_full: list[Callable[[], Awaitable[None]]] = []
        # Instances whose index is built and whose first build's after-full work is done: an
        # index built by an earlier run is, one still building is not (yet).
        self._settled = {name for name, sync in self.syncers.items() if sync.build_complete}

    def _syncers(self) -> dict[str, Syncer]:
        rules = Rules.from_settings(self.settings)
        return {
            name: Syncer(
                instance,
                TriliumClient(instance.url, instance.token.get_secret_value()),
                self.store,
                self.embedder,
                rules,
            )
            for name, instance in self.settings.instances.items()
        }

    async def _begin_again(self, exc: IndexUnusable) -> None:
        """The warm-up's searches found the file damaged: before any sync or answer, move it
        aside and begin a fresh one, as opening does with damage found there."""
        for reader in self._readers:
            reader.close()
        self._readers.clear()
        self._local = threading.local()  # each search thread opens the fresh file
        for syncer in self.syncers.values():
            await syncer.client.aclose()
        self.store.close()
        self.store = self.index.begin_again(exc)
        self.syncers = self._syncers()
        self._settled = set()

    @property
    def vectors(self) -> VectorIndex:
        return self.index.vectors

    @property
    def moved_aside(self) -> tuple[Path, str] | None:
        return self.index.moved_aside

    async def start(self) -> None:
        """Warm up (well under a second with the shipped bank vectors), then sync in the
        background; the last index serves meanwhile."""
        s = self.settings
        try:
            await self.warm()
        except IndexUnusable as exc:  # pages the opening never read
            if self.reading:
                raise
            await self._begin_again(exc)
            await self.warm()
        # With every instance built already; else after the builds.
        self._tasks.append(asyncio.create_task(self._forget_unconfigured()))
        for name, syncer in self.syncers.items():
            after_full = functools.partial(self._after_full, name)
            task = asyncio.create_task(
                run_forever(syncer, s.tick_seconds, s.full_seconds, after_full, self._found_damage)
            )
            self._tasks.append(task)
        if self.building:
            self._tasks.append(asyncio.create_task(self._calibrate_while_building()))

    async def stop(self) -> None:
        try:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks.clear()
            for syncer in self.syncers.values():
                await syncer.client.aclose()
            self._pool.shutdown(wait=True, cancel_futures=True)
            for reader in self._readers:
                reader.close()
            self.store.close()
            if self._own_model is not None:
                self._own_model.close()
        finally:
            if self._keeper is not None:
                self._keeper.close()  # last: a next engine may start as this one ends

    async def warm(self) -> None:
        """What the first searches would otherwise pay, paid before /health says ok: the
        generic-prompt bank and its calibration, then a few searches so each search thread
        opens its index connection and the model, SQLite's pages, FTS5 and the vector mirror
        have had their first, slow use (the first two answers after a restart took ~640 ms
        against 40-100 ms later, bench/RESULTS.md)."""
        generic, stale = await asyncio.to_thread(self._read_generic)
        self.generic = generic
        loop = asyncio.get_running_loop()
        prompts = generic.prompts[: WARM_SEARCHES_PER_THREAD * SEARCH_THREADS]
        searched = await asyncio.gather(
            *(loop.run_in_executor(self._pool, self._warm_search, p) for p in prompts),
            return_exceptions=True,  # all ended before a failure is raised: none holds a reader
        )
        if failed := next((e for e in searched if isinstance(e, BaseException)), None):
            raise failed
        if stale and not self.reading:  # kept from an index of another size: measured again
            self._tasks.append(asyncio.create_task(self.recalibrate()))

    def _warm_search(self, prompt: str) -> None:
        assert self.generic is not None
        recall(
            self._reader(),
            self.embedder,
            self.generic,
            self.settings,
            RecallRequest(prompt),
            gate=self.gate,
        )

    def _read_generic(self) -> tuple[GenericPrompts, bool]:
        """The calibrated bank, and whether its reference points are stale (bank.py)."""
        return self._own_connection(lambda store: read_bank(store, self.vectors, self.embedder))

    def _measure_before_building(self) -> None:
        self._own_connection(lambda store: measured_bank(store, self.vectors, self.embedder))

    async def recalibrate(self) -> None:
        """After a full sync: the notebook's reference points as the index is now."""
        if self.generic is not None:
            self.generic = await asyncio.to_thread(self._recalibrated, self.generic)

    def _recalibrated(self, generic: GenericPrompts) -> GenericPrompts:
        return self._own_connection(
            lambda store: calibrate(generic, self.vectors, store, self.embedder)
        )

    def _own_connection(self, work: Callable[[Store], T]) -> T:
        """`work` on a connection of its own, off the event loop: the syncer uses self.store
        there."""
        store = self.index.connect()
        try:
            return work(store)
        finally:
            store.close()

    async def _after_full(self, instance: str) -> None:
        try:
            await self._forget_unconfigured()
            await self.recalibrate()
            for listener in self.after_full:
                await listener()
        finally:  # a failed refresh keeps the last reference points: no reason to stay "building"
            self._settled.add(instance)

    async def _forget_unconfigured(self) -> None:
        """Instances no longer configured leave the index (sync/removed.py) once every configured
        one is built: not before, so that a renamed instance's first build reuses the vectors of
        the same text (`Store.cached_vectors`)."""
        if self.building:
            return
        gone = set(self.store.recorded_instances()) - set(self.syncers) - self._forgetting
        self._forgetting |= gone  # dropped once when a start and a full sync overlap
        await drop_instances(self.store, sorted(gone))

    async def _calibrate_while_building(self) -> None:
        """The first build's reference points move as notes arrive: measured on the empty index
        at start they are the shipped defaults, not this notebook's. So partial answers are
        judged by points recalibrated each time the index has doubled (a few times in a whole
        build), until the build ends and `_after_full` takes over."""
        calibrated_at = len(self.vectors)
        while self.building:
            await asyncio.sleep(BUILD_CALIBRATION_POLL_S)
            if len(self.vectors) >= max(2 * calibrated_at, BUILD_CALIBRATION_MIN_VECTORS):
                calibrated_at = len(self.vectors)
                await self.recalibrate()

    async def build(
        self, on_progress: Callable[[str, SyncStatus], None] | None = None
    ) -> dict[str, RunReport | RecallError]:
        """One full sync of each instance, now, in turn (the `index` and `demo` commands), each
        snippet's hubness measured as it is stored: each instance's report, or why its build
        failed (one Trilium down is no reason not to build the others)."""
        await asyncio.to_thread(self._measure_before_building)
        reports: dict[str, RunReport | RecallError] = {}
        for name, syncer in self.syncers.items():
            if on_progress is not None:
                syncer.on_progress = functools.partial(on_progress, name)
            try:
                reports[name] = await syncer.full()
            except (TriliumError, StoreError) as exc:
                if isinstance(exc, IndexDamaged):
                    self._found_damage(exc)
                reports[name] = exc
        await self._forget_unconfigured()
        generic, stale = await asyncio.to_thread(self._read_generic)  # kept: no start redoes it
        self.generic = await asyncio.to_thread(self._recalibrated, generic) if stale else generic
        return reports

    async def recall(self, request: RecallRequest) -> RecallResult:
        """The recall pipeline under the time budget: status "late" when the budget ran out,
        "starting" before warm(); during the first build the answer comes from what is indexed
        so far, flagged partial ("building" for silence while nothing is indexed yet)."""
        budget = request.budget_s(self.settings.time_budget_ms / 1000)
        deadline = time.monotonic() + budget
        generic = self.generic
        if generic is None:
            return RecallResult("starting", skipped="starting")
        if not self.line.admit():
            return RecallResult("late")  # its budget would run out in the line
        search = functools.partial(recall, deadline=deadline, gate=self.gate)
        task = self._pool.submit(  # (a shut pool raises: the engine and its line are done)
            lambda: search(self._reader(), self.embedder, generic, self.settings, request)
        )
        self.line.leave_when_done(task, asyncio.get_running_loop())
        future = asyncio.wrap_future(task)
        # Asked of one instance, its own first build: "silent" would say its notes hold nothing
        # about the prompt. (Once built, the state is read from memory.)
        asked = [request.instance] if request.instance in self.syncers else list(self.syncers)
        unbuilt = [name for name in asked if not self.syncers[name].build_complete]
        try:
            result = await asyncio.wait_for(future, budget + BUDGET_GRACE_S)
        except IndexDamaged as exc:
            self._found_damage(exc)
            raise
        except TimeoutError:
            log.warning("recall ran past its %.0f ms budget; answered nothing", budget * 1000)
            if not len(self.vectors) and unbuilt:  # there was nothing to find anyway
                return self._waiting(RecallResult("building", took_ms=budget * 1000), unbuilt)
            # from part of the notes, as an answer in time would have been
            return RecallResult("late", took_ms=budget * 1000, partial=bool(unbuilt))
        if not unbuilt:
            return result
        indexed = any(self.store.holds_notes(name) for name in asked)
        return self._waiting(building(result, indexed), unbuilt)

    def _found_damage(self, exc: IndexDamaged) -> None:
        """Found by a search or a sync: in /health until a restart moves the file aside."""
        if self.damaged is None and not self.reading:
            self.index.found_damage(exc)
        self.damaged = str(exc)

    def _waiting(self, result: RecallResult, unbuilt: list[str]) -> RecallResult:
        """A "building" or partial answer names the first builds that failed, if any did."""
        if result.status != "building" and not result.partial:
            return result
        failed = {name: error for name in unbuilt if (error := self._last_error(name))}
        if not failed:
            return result
        retry = None if self.reading else self.settings.tick_seconds  # a reading one never does
        return with_failed_builds(result, failed, retry)

    def _last_error(self, name: str) -> str | None:
        """Why this instance's last sync failed: this run's, else the one the index recorded
        (a reading command runs none of its own)."""
        if error := self.syncers[name].status.error:
            return error
        recorded = self.store.instance_state(name).get("error") if self.reading else None
        return str(recorded) if recorded else None

    async def read(self, read: Callable[[Store], T]) -> T:
        """`read` on a search thread's connection: the status page reads the index through the
        pool /recall uses instead of opening a connection per request, and the event loop (whose
        connection belongs to the syncer) stays free."""
        loop = asyncio.get_running_loop()

        def run() -> T:
            store = self._reader()
            with index_errors(store.path):  # `read` may query store.db itself
                return read(store)

        try:
            return await loop.run_in_executor(self._pool, run)
        except IndexDamaged as exc:
            self._found_damage(exc)
            raise

    def _reader(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = self.index.connect(self.vectors)
            self._readers.append(store)
        return store

    @property
    def building(self) -> bool:
        """Some instance has not finished its first full build yet."""
        return not all(syncer.build_complete for syncer in self.syncers.values())

    def health(self) -> dict[str, object]:
        states = {
            name: instance_health(
                syncer.status,
                self.store.instance_state(name),
                self.store.counts(name),
                name in self._settled,
            )
            for name, syncer in self.syncers.items()
        }
        return overall_health(states, warmed=self.generic is not None, damaged=self.damaged)
