"""The garbage collector kept out of a full comparison's way (issue 26: answers during it)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


class CollectorPause:
    """No cyclic garbage collection while a listing is read and planned. The listing's ~10
    objects a note, alive until the plan is made, set off collection after collection, each
    walking every object the process holds while holding the interpreter, and every search
    waits: at 100,000 notes parsing took 3.9 s with holds of up to 715 ms, 1.7 s with 60 ms at
    most without (bench/RESULTS.md, issue 26). Nothing it pauses piles up: a comparison leaves
    ~200 objects of cyclic garbage (notes/classify.py keeps its walk free of cycles). Runs of
    several instances may overlap (all on the event loop): the last one out resumes."""

    def __init__(self) -> None:
        self._inside = 0
        self._resume = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        if not self._inside:
            self._resume = gc.isenabled()
            gc.disable()
        self._inside += 1
        try:
            yield
        finally:
            self._inside -= 1
            if not self._inside and self._resume:
                gc.enable()


collector_paused = CollectorPause()  # one for the process: the collector is the process's


async def to_thread_paused(function: Callable[..., T], /, *args: object, **kwargs: object) -> T:
    """`asyncio.to_thread` with the collector paused until it returns."""
    with collector_paused():
        return await asyncio.to_thread(function, *args, **kwargs)
