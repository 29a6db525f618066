"""Matrix products of float32 vectors, without floating-point warnings that are not real.

OpenBLAS's SME kernels (Apple M4 and other Armv9 CPUs with SME) set the divide, overflow and
invalid flags on float32 matrix products whose results are right (numpy issues 28687 and 29820),
and numpy turns the flags into RuntimeWarnings: noise in the log, and errors under pytest's
filterwarnings. The vectors multiplied here are unit length (or int8 codes scaled back), so no
product can overflow, and the flags are ignored.
"""

from __future__ import annotations

import numpy as np


def products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` with the floating-point flags ignored (see the module doc)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return a @ b
