"""The compiled back end of :mod:`bots.solver`: the same search, through numba.

Importing this module fails (ImportError) when numba is missing; the solver then
stays on its pure-Python back end. It serves boards whose bitboard fits in 64 bits
(``width * (height + 1) <= 64``), with or without gravity, any connect value.
Functions are compiled with ``cache=True``: the first use on a machine compiles
for a few seconds, later processes load the machine code from ``__pycache__``
(:meth:`bots.solver.Solver.warm_up` does either before a timed search).

Everything is on unsigned 64-bit words; the transposition table is one array of
two words per entry (the key, and ``epoch << 32 | ply << 24 | move << 16 |
bound``: the move that refuted the position, tried first when it comes back;
without gravity a third word holds all stones, as the key is then only the side
to move's stones). Entries go in buckets of two: the first keeps the entry
nearest the root (the most work to redo), the second takes the rest (fewer
nodes by a fifth on cold 8-stone solves, at no extra cache miss). Emptying it
is a new epoch, not a memset. It lives on huge pages where the
system allows, and each node prefetches its children's entries: the table is
probed at random, and its cache misses are most of the cost of a node.
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np
from llvmlite import ir
from numba import njit, objmode, types
from numba.core import cgutils
from numba.core.base import BaseContext
from numba.core.typing.context import BaseContext as TypingContext
from numba.core.typing.templates import Signature
from numba.extending import intrinsic
from numpy.typing import NDArray

from arena.engine.game import Rules

# The bit helpers (numba's cache of a function does not notice a change in another
# file: these are inlined here, so a change to them wants __pycache__ cleared).
from bots.bitboard import ALL, U0, U1, _popcount, _shl, _shr
from bots.search_shared import CHECK_EVERY, ETC_EMPTY_CELLS, SearchAborted

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX = np.uint64(0xC2B2AE3D27D4EB4F)
NO_DEADLINE = np.inf  # the deadline passed when there is none

# st[] (int64): the search state shared with Python, then the rules.
NODES, NEXT_CHECK, BUDGET, ABORTED, EPOCH = 0, 1, 2, 3, 4
CELLS, HALF, GRAVITY, CONNECT, NMOVES, FAST4, TABLE_BITS = 5, 6, 7, 8, 9, 10, 11
STRIDE, CHECK = 12, 13  # words per table entry; nodes between looks at the clock
SHIFT, FITS = 14, 18  # four line directions each
ETC = 22  # empty cells from which a node looks for an enhanced transposition cutoff
ST_SIZE = 23
# cw[] (uint64): the board mask, the bottom row, then the moves in centre order.
FULL, BOTTOM, ORDER = 0, 1, 2
DEFAULT_TABLE_BITS = 20  # 1M entries: 16 MiB with gravity, 24 MiB without
# An entry's second word: epoch << EPOCH_SHIFT | ply << PLY_SHIFT | move << MOVE_SHIFT | bound.
MOVE_SHIFT = np.uint64(16)
PLY_SHIFT = np.uint64(24)
EPOCH_SHIFT = np.uint64(32)
NO_MOVE = 0xFF  # the move of an entry that proved no move better than the others
MOVE_BITS = np.uint64(0xFF)
# A child's sort key: winning cells << 8 | 255 - its rank in centre order, so
# that among equals the nearer the centre comes first; the table's move first.
TABLE_MOVE_FIRST = np.uint64(1 << 16)

#: A score or bound: an int64 in compiled code; run as Python, a Python int, or a
#: numpy int64 once a bound read from the table (``np.int64``) is taken.
I64 = int | np.int64


#: The IR generator of an intrinsic: (context, builder, signature, argument values).
Codegen = Callable[[BaseContext, ir.IRBuilder, Signature, Sequence[ir.Value]], ir.Value]


@intrinsic
def _address_intrinsic(typingctx: TypingContext, array: types.Array) -> tuple[Signature, Codegen]:
    """The address of an array's first element, as a pointer that compiled code
    indexes like the (flat) array."""
    sig = types.CPointer(array.dtype)(array)  # type: ignore[no-untyped-call]

    def codegen(
        context: BaseContext, builder: ir.IRBuilder, signature: Signature, args: Sequence[ir.Value]
    ) -> ir.Value:
        # The ignores below: numba's lowering API (BaseContext, cgutils) has no
        # annotations, so mypy counts each call to it as untyped.
        ary = context.make_array(signature.args[0])(context, builder, args[0])  # type: ignore[no-untyped-call]
        return ary.data

    return sig, codegen


@intrinsic
def _prefetch_intrinsic(
    typingctx: TypingContext, pointer: types.CPointer, index: types.Integer
) -> tuple[Signature, Codegen]:
    """Ask the CPU to start loading ``pointer[index]`` into the cache (a hint)."""
    sig = types.void(pointer, index)

    def codegen(
        context: BaseContext, builder: ir.IRBuilder, signature: Signature, args: Sequence[ir.Value]
    ) -> ir.Value:
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")  # type: ignore[no-untyped-call]
        # read, high temporal locality, data cache
        element = builder.gep(args[0], [args[1]])
        builder.call(fn, [builder.bitcast(element, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()  # type: ignore[no-untyped-call]

    return sig, codegen


#: ``_address(array)`` and ``_prefetch(pointer, index)``, as compiled code calls
#: the intrinsics (numba passes the typing context itself; numba's stub would
#: have callers pass it, and says the call never returns, as it does when called
#: from Python).
_address = cast("Callable[[NDArray[Any]], Any]", _address_intrinsic)
_prefetch = cast("Callable[[Any, np.int64], None]", _prefetch_intrinsic)


# --- the kernel -----------------------------------------------------------------------------
# From here to the end of the kernel, the search: bots/kernel_c4.py is this section
# with 7x6 connect 4's geometry written in as constants (bots/kernel_source.py).


@njit(cache=True, inline="always")
def _win(p: np.uint64, empty: np.uint64, st: NDArray[np.int64]) -> np.uint64:
    """Cells of ``empty`` that complete a line with the stones ``p``."""
    if st[FAST4]:
        # Pons' formulas for connect 4 with gravity (all shifts below 64).
        r = (p << U1) & (p << np.uint64(2)) & (p << np.uint64(3))
        for d in range(1, 4):
            s = np.uint64(st[SHIFT + d])
            s2 = s + s
            s3 = s2 + s
            t = (p << s) & (p << s2)
            r |= t & (p << s3)
            r |= t & (p >> s)
            t = (p >> s) & (p >> s2)
            r |= t & (p << s)
            r |= t & (p >> s3)
        return r & empty
    k = st[CONNECT]
    r = U0
    for d in range(4):
        if not st[FITS + d]:
            continue
        s = st[SHIFT + d]
        if d == 0 and st[GRAVITY]:
            t = ALL
            for i in range(1, k):
                t &= _shl(p, s * i)
            r |= t
            continue
        left = ALL
        for a in range(k):
            if a:
                left &= _shl(p, s * a)
            right = ALL
            for b in range(1, k - a):
                right &= _shr(p, s * b)
            r |= left & right
    return r & empty


@njit(cache=True)
def _now() -> float:
    with objmode(t="float64"):
        t = time.monotonic()
    return t


@njit(cache=True)
def _must_stop(st: NDArray[np.int64], deadline: float) -> bool:
    if st[BUDGET] >= 0 and st[NODES] > st[BUDGET]:
        return True
    if deadline < NO_DEADLINE and _now() > deadline:
        return True
    nxt = st[NODES] + st[CHECK]
    if st[BUDGET] >= 0 and nxt > st[BUDGET] + 1:
        nxt = st[BUDGET] + 1
    st[NEXT_CHECK] = nxt
    return False


@njit(cache=True, inline="always")
def _slot(cur: np.uint64, mask: np.uint64, st: NDArray[np.int64]) -> np.int64:
    """The first word of the position's bucket: two entries, side by side (one
    cache line with gravity), the first kept for the nearer the root."""
    if st[GRAVITY]:
        h = cur + mask
    else:
        h = cur ^ (mask * MIX)
    stride: int = st[STRIDE]
    return np.int64((h * GOLDEN) >> np.uint64(65 - st[TABLE_BITS])) * (2 * stride)


@njit(cache=True, inline="always")
def _holds(tt: NDArray[np.uint64], entry: np.int64, key: np.uint64, mask: np.uint64, st: NDArray[np.int64]) -> bool:
    """Does the table entry at word ``entry`` hold this position, from this epoch?"""
    return bool(
        (tt[entry + 1] >> EPOCH_SHIFT) == np.uint64(st[EPOCH])
        and tt[entry] == key
        and (st[GRAVITY] or tt[entry + 2] == mask)
    )


@njit(cache=True, inline="always")
def _store(
    tt: NDArray[np.uint64], slot: np.int64, key: np.uint64, mask: np.uint64, meta: np.uint64, st: NDArray[np.int64]
) -> None:
    """Write the entry into its bucket: the first entry when it is stale, the same
    position, or from a ply as deep or deeper (a smaller search to redo), else the second."""
    first = tt[slot + 1]
    if (
        (first >> EPOCH_SHIFT) == (meta >> EPOCH_SHIFT)
        and ((first >> PLY_SHIFT) & MOVE_BITS) < ((meta >> PLY_SHIFT) & MOVE_BITS)
        and not _holds(tt, slot, key, mask, st)
    ):
        slot += st[STRIDE]
    tt[slot] = key
    tt[slot + 1] = meta
    if not st[GRAVITY]:
        tt[slot + 2] = mask


@njit(cache=True, inline="always")
def _possible(mask: np.uint64, st: NDArray[np.int64], cw: NDArray[np.uint64]) -> np.uint64:
    full: np.uint64 = cw[FULL]
    if st[GRAVITY]:
        bottom: np.uint64 = cw[BOTTOM]
        return (mask + bottom) & full
    return full ^ mask


SearchFunction = TypeVar("SearchFunction", bound=Callable[..., object])


def _uncounted(function: SearchFunction) -> SearchFunction:
    """``njit`` without numba's reference counting: the search allocates nothing.
    With counting, each array a call is given is counted in and out, two atomic
    operations a node for each (when the search took its four arrays so, a tenth
    of its time, by perf; it now takes their addresses). ``_nrt`` is missing
    from numba's type stubs, hence the options as a dict."""
    options: dict[str, Any] = {"cache": True, "_nrt": False}
    return cast(SearchFunction, njit(**options)(function))


@_uncounted
def _negamax(
    cur: np.uint64, mask: np.uint64, opp_win: np.uint64, p: int, alpha: I64, beta: I64,
    tt: NDArray[np.uint64], st: NDArray[np.int64], cw: NDArray[np.uint64], buf: NDArray[np.uint64], deadline: float,
) -> I64:  # fmt: skip
    """Pons' fail-hard negamax; the side to move (``cur``) cannot win at once.
    ``opp_win``: the empty cells where the opponent would complete a line (the
    parent has them already: it counted them to order its moves). ``tt``, ``st``,
    ``cw`` and ``buf`` are the arrays' addresses (``_address``; ``buf`` flat, a
    row of ``2 * NMOVES`` words a ply): a call passes four words, where numba
    passes each array as seven or nine (a tenth of the time of a search)."""
    st[NODES] += 1
    if st[NODES] >= st[NEXT_CHECK] and _must_stop(st, deadline):
        st[ABORTED] = 1
        return 0
    half: int = st[HALF]
    empty = cw[FULL] ^ mask
    possible = _possible(mask, st, cw)
    forced = possible & opp_win
    if forced:
        if forced & (forced - U1):
            return -(half - (p + 1) // 2)  # two threats: the opponent wins next
        possible = forced
    if st[GRAVITY]:
        possible &= ~(opp_win >> U1)  # never fill the cell under a threat
    if possible == U0:
        return -(half - (p + 1) // 2)
    if p >= st[CELLS] - 2:
        return 0
    low: I64 = -(half - (p + 3) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high: I64 = half - (p + 2) // 2
    table_move: I64 = NO_MOVE
    # With gravity cur + mask tells the position; without, cur and mask are kept.
    key = cur + mask if st[GRAVITY] else cur
    slot = _slot(cur, mask, st)
    entry = slot if _holds(tt, slot, key, mask, st) else slot + st[STRIDE]
    if entry == slot or _holds(tt, entry, key, mask, st):
        word = tt[entry + 1]
        enc = np.int64(word & np.uint64(0xFFFF))
        table_move = np.int64((word >> MOVE_SHIFT) & MOVE_BITS)
        bound = (enc >> 1) - 1024
        if enc & 1:
            if bound > low:
                low = bound
                if alpha < low:
                    alpha = low
                    if alpha >= beta:
                        return alpha
        elif bound < high:
            high = bound
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    # Children: the move that refuted this position last time first (the table's),
    # then most winning cells first, centre first among equals.
    # The ply's row of buf: the sort keys, which end in the move's rank, best
    # first; from column nm, each move's winning cells by its rank.
    nm = st[NMOVES]
    row = p * (2 * nm)
    n = 0
    child = cur ^ mask
    # The children's table entries are cache misses in waiting: start them all
    # before counting any child's winning cells, so they load meanwhile.
    for i in range(nm):
        m = possible & cw[ORDER + i]
        if m:
            _prefetch(tt, _slot(child, mask | m, st))
    for i in range(nm):
        m = possible & cw[ORDER + i]
        if m:
            w = _win(cur | m, empty ^ m, st)
            buf[row + nm + i] = w
            sc = (np.uint64(_popcount(w)) << np.uint64(8)) | np.uint64(255 - i)
            if i == table_move:
                sc |= TABLE_MOVE_FIRST
            j = n
            while j > 0 and buf[row + j - 1] < sc:
                buf[row + j] = buf[row + j - 1]
                j -= 1
            buf[row + j] = sc
            n += 1
    epoch = (np.uint64(st[EPOCH]) << EPOCH_SHIFT) | (np.uint64(p) << PLY_SHIFT)
    if st[CELLS] - p >= st[ETC]:
        # Enhanced transposition cutoff: a child whose entry already proves the
        # cutoff saves searching the children before it (worth its cache misses
        # only far from the end, where a child's search is large).
        for k in range(n):
            rank = 255 - np.int64(buf[row + k] & MOVE_BITS)
            cm = mask | (possible & cw[ORDER + rank])
            ckey = child + cm if st[GRAVITY] else child
            at = _slot(child, cm, st)
            if not _holds(tt, at, ckey, cm, st):
                at += st[STRIDE]
                if not _holds(tt, at, ckey, cm, st):
                    continue
            enc = np.int64(tt[at + 1] & np.uint64(0xFFFF))
            if enc & 1:
                continue  # the child's lower bound: no cutoff here
            proven: I64 = 1024 - (enc >> 1)
            if proven >= beta:
                meta = epoch | (np.uint64(rank) << MOVE_SHIFT) | np.uint64(((proven + 1024) << 1) | 1)
                _store(tt, slot, key, mask, meta, st)
                return proven
    for k in range(n):
        rank = 255 - np.int64(buf[row + k] & MOVE_BITS)
        m = possible & cw[ORDER + rank]
        score = -_negamax(child, mask | m, buf[row + nm + rank], p + 1, -beta, -alpha, tt, st, cw, buf, deadline)
        if st[ABORTED]:
            return 0
        if score >= beta:
            meta = epoch | (np.uint64(rank) << MOVE_SHIFT) | np.uint64(((score + 1024) << 1) | 1)
            _store(tt, slot, key, mask, meta, st)
            return score
        if score > alpha:
            alpha = score
    # No move beat alpha: the refutation found earlier (if any) stays the first to try.
    meta = epoch | (np.uint64(table_move) << MOVE_SHIFT) | np.uint64((alpha + 1024) << 1)
    _store(tt, slot, key, mask, meta, st)
    return alpha


@njit(cache=True)
def _half(x: I64) -> I64:
    if x < 0:
        return -((-x) // 2)
    return x // 2


@njit(cache=True)
def _search(
    cur: np.uint64, mask: np.uint64, p: int, a: I64, b: I64, mode: int,
    tt: NDArray[np.uint64], st: NDArray[np.int64], cw: NDArray[np.uint64], buf: NDArray[np.uint64], deadline: float,
) -> I64:  # fmt: skip
    """mode 0: one probe of [a, b]; 1: narrow [a, b] to the exact score by
    null-window probes; 2: the exact score of any open position (a and b unused)."""
    st[NODES] = 0
    st[NEXT_CHECK] = 0
    st[ABORTED] = 0
    opp_win = _win(cur ^ mask, cw[FULL] ^ mask, st)
    tp, sp, cp, bp = _address(tt), _address(st), _address(cw), _address(buf)
    if mode == 0:
        return _negamax(cur, mask, opp_win, p, a, b, tp, sp, cp, bp, deadline)
    lo = a
    hi = b
    if mode == 2:
        if mask == cw[FULL]:
            return 0
        st[NODES] = 1
        if _win(cur, cw[FULL] ^ mask, st) & _possible(mask, st, cw):
            half: int = st[HALF]
            return half - p // 2
        st[NODES] = 0
        lo = -(st[HALF] - (p + 1) // 2)
        hi = st[HALF] - (p + 2) // 2
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and _half(lo) < med:
            med = _half(lo)
        elif med >= 0 and _half(hi) > med:
            med = _half(hi)
        r = _negamax(cur, mask, opp_win, p, med, med + 1, tp, sp, cp, bp, deadline)
        if st[ABORTED]:
            return 0
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


# --- end of the kernel ------------------------------------------------------------------------


def _table(words: int) -> NDArray[np.uint64]:
    """A zeroed array of ``words`` uint64, on huge pages where the system allows
    (the table is probed at random: fewer TLB misses), with every page touched
    now rather than in the middle of a timed search."""
    size = words * 8
    try:
        area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            area.madvise(mmap.MADV_HUGEPAGE)
        table = np.frombuffer(area, dtype=np.uint64)  # keeps ``area`` alive
    except (OSError, ValueError, AttributeError):  # pragma: no cover - other systems
        table = np.empty(words, dtype=np.uint64)
    table.fill(0)
    return table


class NumbaCore:
    """The compiled search for one set of rules (see :class:`bots.solver.PythonCore`)."""

    name = "numba"

    def __init__(self, rules: Rules, table_bits: int = DEFAULT_TABLE_BITS) -> None:
        if rules.width * (rules.height + 1) > 64:
            raise ValueError(f"{rules.describe()} does not fit in 64 bits")
        if not 4 <= table_bits <= 30:
            raise ValueError(f"table_bits must be 4..30, got {table_bits}")
        g = rules.geometry
        w, h, k = rules.width, rules.height, rules.connect
        self.rules = rules
        self.nodes = 0
        stride = 2 if rules.gravity else 3
        self.tt = _table(stride << table_bits)
        if rules.gravity:
            order = [g.column[c] for c in g.centre_order]
        else:
            order = [g.cell_bit[m] for m in g.centre_order]
        st = np.zeros(ST_SIZE, dtype=np.int64)
        st[EPOCH] = 1
        st[CELLS] = rules.cells
        st[HALF] = (rules.cells + 1) // 2
        st[GRAVITY] = rules.gravity
        st[CONNECT] = k
        st[NMOVES] = len(order)
        st[FAST4] = k == 4 and rules.gravity and 3 * (h + 2) < 64
        st[TABLE_BITS] = table_bits
        st[STRIDE] = stride
        st[CHECK] = CHECK_EVERY  # run-time values: numba's cache does not see bots/search_shared.py
        st[ETC] = ETC_EMPTY_CELLS
        st[SHIFT : SHIFT + 4] = g.shifts
        st[FITS : FITS + 4] = [h >= k, w >= k, w >= k and h >= k, w >= k and h >= k]
        self.st = st
        self.cw = np.array([g.full, sum(g.bottom), *order], dtype=np.uint64)
        self.buf = np.zeros((rules.cells + 2, 2 * len(order)), dtype=np.uint64)
        # The search the core runs: the generic kernel, or one written for these
        # rules (bots.kernel_c4, which bots.solver hands over: it imports this module).
        self.search: Callable[..., I64] = _search

    def reset(self) -> None:
        """Forget the transposition table (a new epoch; the memory is reused)."""
        self.st[EPOCH] += 1
        if self.st[EPOCH] >= 1 << 31:  # pragma: no cover - not in this universe
            self.tt[:] = 0
            self.st[EPOCH] = 1

    def probe(
        self, cur: int, mask: int, ply: int, alpha: int, beta: int,
        deadline: float | None = None, budget: int | None = None,
    ) -> int:  # fmt: skip
        return self._run(cur, mask, ply, alpha, beta, deadline, budget, 0)

    def root(
        self, cur: int, mask: int, ply: int, lo: int, hi: int, deadline: float | None = None, budget: int | None = None
    ) -> int:
        return self._run(cur, mask, ply, lo, hi, deadline, budget, 1)

    def solve(self, cur: int, mask: int, ply: int, deadline: float | None = None, budget: int | None = None) -> int:
        return self._run(cur, mask, ply, 0, 0, deadline, budget, 2)

    def _run(
        self, cur: int, mask: int, ply: int, a: int, b: int, deadline: float | None, budget: int | None, mode: int
    ) -> int:
        st = self.st
        st[BUDGET] = -1 if budget is None else budget
        value = self.search(
            np.uint64(cur), np.uint64(mask), ply, a, b, mode, self.tt, st, self.cw, self.buf,
            NO_DEADLINE if deadline is None else float(deadline),
        )  # fmt: skip
        self.nodes = int(st[NODES])
        if st[ABORTED]:
            raise SearchAborted
        return int(value)
