"""glibc's allocator, told to give back the big blocks a search frees.

Each search allocates a few arrays of one number per snippet (2.8 MiB each at 370k snippets)
and frees them. glibc serves blocks past its mmap threshold (128 KiB) straight from the kernel
and returns them on free, but by default it raises that threshold to the size of each such
block freed (up to 32 MiB): after the first search every later one is served from the heap of
its thread's arena, which keeps the freed pages. With the engine's threads (search pool,
model, event loop, to_thread workers) that held ~45 MiB at 50k sections (bench/RESULTS.md,
issue 26 memory). A fixed threshold turns the raising off: blocks of MMAP_THRESHOLD or more
go back to the kernel when freed, smaller ones stay on the heap as before.
"""

from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
# Above the blocks of ordinary work (rows, pages, small arrays), below one number per snippet
# of any index worth the trouble (~130k snippets); 128 KiB measured the same at 50k sections.
MMAP_THRESHOLD = 1 << 20


def return_big_blocks() -> bool:
    """Fix glibc's mmap threshold (process-wide); False where the C library is not glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the process already runs
    except (OSError, AttributeError):  # another libc (macOS has no mallopt)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
