"""The bit helpers both compiled back ends share (:mod:`bots.solver_fast` and
:mod:`bots.mcts_fast`): unsigned 64-bit constants, a population count and shifts
that give 0 past the word, compiled by numba and inlined into their callers.

It imports nothing of the bots, so the back ends that use it import no bot back.
Importing it fails (ImportError) when numba is missing, as theirs does. numba's
cache of a function does not notice a change in another file: a change here wants
the ``__pycache__`` of both back ends cleared.
"""

from __future__ import annotations

import numpy as np
from numba import njit

U0 = np.uint64(0)
U1 = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
M1 = np.uint64(0x5555555555555555)
M2 = np.uint64(0x3333333333333333)
M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)
U56 = np.uint64(56)
U64 = 64


@njit(cache=True, inline="always")
def _popcount(x: np.uint64) -> np.int64:
    x = x - ((x >> U1) & M1)
    x = (x & M2) + ((x >> np.uint64(2)) & M2)
    x = (x + (x >> np.uint64(4))) & M4
    return np.int64((x * H01) >> U56)


@njit(cache=True, inline="always")
def _shl(x: np.uint64, n: int) -> np.uint64:
    if n >= U64:
        return U0
    return x << np.uint64(n)


@njit(cache=True, inline="always")
def _shr(x: np.uint64, n: int) -> np.uint64:
    if n >= U64:
        return U0
    return x >> np.uint64(n)
