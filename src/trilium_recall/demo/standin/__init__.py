"""A stand-in for Trilium — not part of the engine.

An ETAPI server on 127.0.0.1, seeded from a Trilium export zip or a notebook manifest, that
behaves as ../shared/trilium/TRILIUM-FACTS.md says the real one does (inherited attributes,
hidden and archived notes, protected notes…). It only seeds and serves reads: the demo needs no
more. The tests, the benchmarks, the eval and the demo notebook run against it; the tests bring
their own edits (tests/standin_edits.py) and fault switches (tests/standin_faults.py). The
engine itself only ever talks to it through the same ETAPI client as to a real Trilium.

    python -m trilium_recall.demo.standin --zip demo.zip     # serve an export on a free port
    python -m trilium_recall.demo.standin --notebook DIR --trilium-version 0.105   # as the newest
"""

from .server import FakeTrilium

__all__ = ["FakeTrilium"]
