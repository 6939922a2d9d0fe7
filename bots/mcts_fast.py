"""The compiled back end of :mod:`bots.mcts`: the same tree search, through numba.

Importing this module fails (ImportError) when numba is missing; the bot then
stays on its pure-Python tree. It serves boards whose bitboard fits in 64 bits
(``width * (height + 1) <= 64``), with or without gravity, any connect value.
Functions are compiled with ``cache=True``: the first use on a machine compiles
for some seconds, later processes load the machine code from ``__pycache__``
(:func:`warm_up` does either, from the bot's ``new_game``, before any clock runs).

It is a twin of :class:`bots.mcts.PythonTree`, step for step: the same candidate
moves in the same order, the same UCT arithmetic, the same playout policy drawing
from the same random generator, the same proofs. With a playout budget and the
same random state both make the same tree, so the same move.

The tree is a pool of nodes in preallocated arrays, one row per node:

* ``bits`` (uint64): the stones of the side to move and of the other side, their
  threat cells, and the cell of the move that led here;
* ``stats`` (float64): visits and the summed reward of the side that moved in;
* ``res`` (float64): the proven reward for that side, or -1 while unproven;
* ``links`` (int32): the first child, the number of candidate moves (-1 until
  listed), how many of them are expanded, the move, and whether the candidates
  are exact (every move left out is lost).

A node's candidates get a block of consecutive rows when first listed, in centre
order, and are expanded in that order. When the pool is full the search first
keeps only the subtree under the root (copied, in breadth-first order, into a
fresh pool), then doubles the pool, up to ``max_nodes``; a pool full of the
root's own subtree at ``max_nodes`` ends the search of that move early (the move
is chosen from what was searched, and the next move starts from its subtree).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode
from numpy.typing import NDArray

from arena.engine.game import Board, Rules

# The bit helpers the solver's back end uses too. (numba's cache of a function does not notice a
# change in another file: these are inlined here, so a change to them wants __pycache__ cleared.)
from bots.bitboard import ALL, U0, U1, _popcount, _shl, _shr
from bots.search_shared import LCG_ADD, LCG_MUL, RootMove

U32 = np.uint64(32)
MUL = np.uint64(LCG_MUL)
ADD = np.uint64(LCG_ADD)

# bits[] columns (uint64): the stones of the side to move, of the other side, their threats, the move
MINE, THEIRS, WA, WO, BIT = 0, 1, 2, 3, 4
# stats[] columns (float64)
VISITS, VALUE = 0, 1
# links[] columns (int32)
FIRST, COUNT, EXPANDED, MOVE, EXACT = 0, 1, 2, 3, 4

# st[] (int64): the rules, then the search state shared with Python.
WIDTH, STRIDE, GRAVITY, CONNECT, NMOVES, FAST4, USED, FULL_POOL = 0, 1, 2, 3, 4, 5, 6, 7
SHIFT = 8  # four line directions
ST_SIZE = 12
# cw[] (uint64): masks, then the candidate bits in centre order, the column masks
# (by column) and the cell bits (by cell number).
FULL, BOTTOM, TOP, NOT_TOP, NOT_BOTTOM, ORDER = 0, 1, 2, 3, 4, 5
# mv[] (int64): the candidate moves in centre order, then the move of each bit position.
MOVE_AT_BIT = 64  # offset of the bit -> move table, after the centre order (at most 64 moves)

#: Iterations between looks at the clock.
CHECK_EVERY = 16
#: A fresh pool's rows, and the most a pool may grow to (about 84 bytes a row:
#: 5.5 MB to start, 176 MB at most).
START_NODES = 1 << 16
MAX_NODES = 1 << 21
#: The iteration budget standing for "none" (the clock decides).
NO_BUDGET = 1 << 62


@njit(cache=True, inline="always")
def _bit_index(bit: np.uint64) -> int:
    """The position of the single set bit of ``bit`` (the bits below it, counted)."""
    return int(_popcount(bit - U1))


@njit(cache=True)
def threats(x: np.uint64, st: NDArray[np.int64], cw: NDArray[np.uint64]) -> np.uint64:
    """Every cell that completes a line with the stones ``x`` (as bots.mcts.threat_source)."""
    gravity = st[GRAVITY]
    k = st[CONNECT]
    t = U0
    for d in range(4):
        s = st[SHIFT + d]
        if gravity and s == 1:  # vertical: an empty cell has nothing above it
            dn = ALL
            for j in range(1, k):
                dn &= _shl(x, j * s)
            t |= dn
        elif st[FAST4]:  # connect 4, every shift below 64: the terms written out
            u = np.uint64(s)
            dn2 = (x << u) & (x << (u + u))
            up2 = (x >> u) & (x >> (u + u))
            t |= dn2 & ((x << (3 * u)) | (x >> u))
            t |= up2 & ((x >> (3 * u)) | (x << u))
        else:
            # the cell is the (j+1)-th of a line: own stones j cells up, k-1-j down
            for j in range(k):
                up = ALL
                for i in range(1, j + 1):
                    up &= _shr(x, i * s)
                dn = ALL
                for i in range(1, k - j):
                    dn &= _shl(x, i * s)
                t |= up & dn
    full: np.uint64 = cw[FULL]
    return t & full


@njit(cache=True, inline="always")
def _draw(rng: NDArray[np.uint64], n: int) -> int:
    """A number below ``n`` from the shared generator (bots.search_shared.LCG_MUL)."""
    s = rng[0] * MUL + ADD
    rng[0] = s
    return int(((s >> U32) * np.uint64(n)) >> U32)


@njit(cache=True)
def playout(
    a: np.uint64, o: np.uint64, wa: np.uint64, wo: np.uint64,
    st: NDArray[np.int64], cw: NDArray[np.uint64], rng: NDArray[np.uint64], scratch: NDArray[np.uint64],
) -> float:  # fmt: skip
    """Play on to the end: 1 if the side to move now wins, 0 if it loses, 0.5 a draw
    (bots.mcts.Kit.playout, drawing the same numbers)."""
    full = cw[FULL]
    gravity = st[GRAVITY]
    stride = st[STRIDE]
    top_row = cw[TOP]
    columns = ORDER + st[NMOVES]
    mask = a | o
    turn = 0
    # scratch: the columns not full (with gravity, in order), or the free cells
    n = 0
    if gravity:
        free = (mask + cw[BOTTOM]) & full
        for c in range(st[WIDTH]):
            if free & cw[columns + c]:
                scratch[n] = c
                n += 1
    else:
        free = full & ~mask
        for i in range(st[NMOVES]):
            cell = cw[columns + st[WIDTH] + i]
            if not cell & mask:
                scratch[n] = cell
                n += 1
    while free:
        if wa & free:
            return 1.0 - turn
        block = wo & free
        if block:
            if block & (block - U1):
                return float(turn)  # two threats: the side to move loses
            bit = block
        elif gravity:
            unsafe = (wo & ~mask) >> U1
            bit = free & cw[columns + scratch[_draw(rng, n)]]
            if free & unsafe and free & ~unsafe:
                while bit & unsafe:  # never under the opponent's threat, while there is a choice
                    bit = free & cw[columns + scratch[_draw(rng, n)]]
        else:
            # pick and remove; cells filled by forced moves are dropped when drawn
            while True:
                i = _draw(rng, n)
                bit = scratch[i]
                n -= 1
                scratch[i] = scratch[n]
                if bit & free:
                    break
        a |= bit
        mask |= bit
        free ^= bit
        if gravity:
            if bit & top_row:
                gone = _bit_index(bit) // stride
                i = 0
                while scratch[i] != gone:
                    i += 1
                for j in range(i, n - 1):  # keep the order, as list.remove does
                    scratch[j] = scratch[j + 1]
                n -= 1
            else:
                free |= bit << U1
        a, o, wa, wo = o, a, wo, threats(a, st, cw)
        turn ^= 1
    return 0.5


@njit(cache=True)
def _list_candidates(
    node: int, st: NDArray[np.int64], cw: NDArray[np.uint64], mv: NDArray[np.int64],
    bits: NDArray[np.uint64], stats: NDArray[np.float64], res: NDArray[np.float64], links: NDArray[np.int32],
) -> None:  # fmt: skip
    """Give ``node`` its block of candidate rows (bots.mcts.Kit.candidates, in the
    order the Python tree expands them); the caller made room for NMOVES rows."""
    a, o, wa, wo = bits[node, MINE], bits[node, THEIRS], bits[node, WA], bits[node, WO]
    mask = a | o
    full = cw[FULL]
    gravity = st[GRAVITY]
    nm = st[NMOVES]
    if gravity:
        free = (mask + cw[BOTTOM]) & full
    else:
        free = full & ~mask
    first = st[USED]
    n = 0
    exact = 1
    forced = wa & free
    if not forced:
        forced = wo & free
    if forced:
        bit = forced & (~forced + U1)
        bits[first, BIT] = bit
        links[first, MOVE] = mv[MOVE_AT_BIT + _bit_index(bit)]
        n = 1
    else:
        if gravity:
            unsafe = (wo & ~mask) >> U1
            if free & ~unsafe:
                free &= ~unsafe
        elif mask:
            stride = np.uint64(st[STRIDE])
            near = mask | ((mask & cw[NOT_TOP]) << U1) | ((mask & cw[NOT_BOTTOM]) >> U1)
            near = (near | (near << stride) | (near >> stride)) & free
            if near != free:
                exact = 0
            if near:
                free = near
        else:
            nm = 1  # an empty board without gravity: the centre only
            exact = 0
        for i in range(nm):
            bit = free & cw[ORDER + i]
            if bit:
                bits[first + n, BIT] = bit
                links[first + n, MOVE] = mv[i]
                n += 1
    for row in range(first, first + n):
        stats[row, VISITS] = 0.0
        stats[row, VALUE] = 0.0
        res[row] = -1.0
        links[row, FIRST] = 0
        links[row, COUNT] = -1
        links[row, EXPANDED] = 0
        links[row, EXACT] = 1
    links[node, FIRST] = first
    links[node, COUNT] = n
    links[node, EXACT] = exact
    st[USED] = first + n


@njit(cache=True)
def _iterate(
    root: int, c: float, st: NDArray[np.int64], cw: NDArray[np.uint64], mv: NDArray[np.int64],
    rng: NDArray[np.uint64], bits: NDArray[np.uint64], stats: NDArray[np.float64], res: NDArray[np.float64],
    links: NDArray[np.int32], path: NDArray[np.int64], scratch: NDArray[np.uint64],
) -> None:  # fmt: skip
    """One selection, expansion, playout and backup; proves what it can
    (bots.mcts.PythonTree._iterate)."""
    node = root
    depth = 0
    path[0] = root
    reward = 0.5
    while True:
        if res[node] >= 0.0:
            reward = res[node]
            break
        if links[node, COUNT] < 0:
            _list_candidates(node, st, cw, mv, bits, stats, res, links)
        first = links[node, FIRST]
        count = links[node, COUNT]
        expanded = links[node, EXPANDED]
        if expanded < count:
            child = first + expanded
            links[node, EXPANDED] = expanded + 1
            bit = bits[child, BIT]
            a = bits[node, THEIRS]
            o = bits[node, MINE] | bit
            bits[child, MINE] = a
            bits[child, THEIRS] = o
            depth += 1
            path[depth] = child
            if bit & bits[node, WA]:
                res[child] = 1.0
                reward = 1.0
            elif a | o == cw[FULL]:
                res[child] = 0.5
                reward = 0.5
            else:
                wa = bits[node, WO]
                wo = threats(o, st, cw)
                bits[child, WA] = wa
                bits[child, WO] = wo
                reward = 1.0 - playout(a, o, wa, wo, st, cw, rng, scratch)
            break
        # every candidate expanded: descend by UCT
        scale = c * np.sqrt(np.log(stats[node, VISITS]))
        best = first
        best_score = -1.0
        for child in range(first, first + count):
            n = stats[child, VISITS]
            score = stats[child, VALUE] / n + scale / np.sqrt(n)
            if score > best_score:
                best = child
                best_score = score
        node = best
        depth += 1
        path[depth] = node
    # back up, proving wins and losses on the way
    for i in range(depth, -1, -1):
        node = path[i]
        stats[node, VISITS] += 1.0
        stats[node, VALUE] += reward
        reward = 1.0 - reward
    for i in range(depth, 0, -1):
        node = path[i]
        parent = path[i - 1]
        if res[node] < 0.0 or res[parent] >= 0.0:
            break
        if res[node] == 1.0:  # the side to move in parent wins by this move
            res[parent] = 0.0
            stats[parent, VALUE] = 0.0
        elif res[node] == 0.0 and links[parent, EXACT] and links[parent, EXPANDED] == links[parent, COUNT]:
            first = links[parent, FIRST]
            lost = True
            for child in range(first, first + links[parent, COUNT]):
                if res[child] != 0.0:
                    lost = False
                    break
            if not lost:
                break
            res[parent] = 1.0  # every move loses: the side that moved in wins
            stats[parent, VALUE] = stats[parent, VISITS]
        else:
            break


@njit(cache=True)
def _now() -> float:
    # perf_counter, the bot's clock for its deadline (the solver's search uses monotonic)
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True)
def think(
    root: int, budget: int, deadline: float, c: float,
    st: NDArray[np.int64], cw: NDArray[np.uint64], mv: NDArray[np.int64], rng: NDArray[np.uint64],
    bits: NDArray[np.uint64], stats: NDArray[np.float64], res: NDArray[np.float64], links: NDArray[np.int32],
    path: NDArray[np.int64], scratch: NDArray[np.uint64],
) -> int:  # fmt: skip
    """Iterate from ``root`` (whose candidates are listed) until it is proven,
    ``budget`` iterations ran, ``deadline`` (time.perf_counter) comes, or the pool
    has no room for another block of candidates (then st[FULL_POOL] is 1). The
    clock is read every CHECK_EVERY iterations; the search stops when the next
    batch would likely end past the deadline. Returns the iterations run."""
    st[FULL_POOL] = 0
    count = links[root, COUNT]
    if count <= 1:  # a single candidate (a win or a forced block): expand it once
        if links[root, EXPANDED] < count and res[root] < 0.0:
            _iterate(root, c, st, cw, mv, rng, bits, stats, res, links, path, scratch)
            return 1
        return 0
    rows = bits.shape[0]
    done = 0
    last = _now()
    if last > deadline:
        return 0
    while res[root] < 0.0 and done < budget:
        if done and done % CHECK_EVERY == 0:
            now = _now()
            span = now - last  # the last batch's time: is there time for another?
            last = now
            if now + span > deadline:
                break
        if st[USED] + st[NMOVES] > rows:
            st[FULL_POOL] = 1
            break
        _iterate(root, c, st, cw, mv, rng, bits, stats, res, links, path, scratch)
        done += 1
    return done


@njit(cache=True)
def copy_subtree(
    root: int, st: NDArray[np.int64],
    bits: NDArray[np.uint64], stats: NDArray[np.float64], res: NDArray[np.float64], links: NDArray[np.int32],
    new_bits: NDArray[np.uint64], new_stats: NDArray[np.float64], new_res: NDArray[np.float64],
    new_links: NDArray[np.int32], origin: NDArray[np.int64],
) -> int:  # fmt: skip
    """Copy the subtree under ``root`` into the new arrays, breadth first, the
    root at row 0 and each block of candidates kept together; the rows used."""
    origin[0] = root
    used = 1
    i = 0
    while i < used:
        old = origin[i]
        new_bits[i] = bits[old]
        new_stats[i] = stats[old]
        new_res[i] = res[old]
        new_links[i] = links[old]
        count = links[old, COUNT]
        if count > 0:
            first = links[old, FIRST]
            new_links[i, FIRST] = used
            for j in range(count):
                origin[used + j] = first + j
            used += count
        i += 1
    st[USED] = used
    return used


def _rules_words(rules: Rules) -> tuple[NDArray[np.int64], NDArray[np.uint64], NDArray[np.int64]]:
    """st, cw and mv for ``rules`` (see the offsets above)."""
    g = rules.geometry
    if rules.gravity:
        order = [g.column[m] for m in g.centre_order]
    else:
        order = [g.cell_bit[m] for m in g.centre_order]
    st = np.zeros(ST_SIZE, dtype=np.int64)
    st[WIDTH] = rules.width
    st[STRIDE] = g.stride
    st[GRAVITY] = rules.gravity
    st[CONNECT] = rules.connect
    st[NMOVES] = len(order)
    st[FAST4] = rules.connect == 4 and 3 * (g.stride + 1) < 64
    st[SHIFT : SHIFT + 4] = g.shifts
    full = g.full
    cw = np.array(
        [full, sum(g.bottom), sum(g.top), full & ~sum(g.top), full & ~sum(g.bottom), *order, *g.column, *g.cell_bit],
        dtype=np.uint64,
    )
    mv = np.zeros(MOVE_AT_BIT + 64, dtype=np.int64)
    mv[: len(order)] = g.centre_order
    for move in range(rules.move_count):
        bit = g.column[move] if rules.gravity else g.cell_bit[move]
        while bit:  # every cell of a column is that column's move
            low = bit & -bit
            mv[MOVE_AT_BIT + low.bit_length() - 1] = move
            bit ^= low
    return st, cw, mv


class NumbaTree:
    """The tree in numpy arrays, searched by compiled code (see :class:`bots.mcts.SearchTree`)."""

    name = "numba"

    def __init__(self, rules: Rules, c: float, state: int, max_nodes: int = MAX_NODES) -> None:
        if rules.width * (rules.height + 1) > 64:
            raise ValueError(f"{rules.describe()} does not fit in 64 bits")
        if max_nodes < 2 * (rules.move_count + 1):
            raise ValueError(f"max_nodes={max_nodes} cannot hold a root and its moves")
        self.rules = rules
        self.c = float(c)
        self.max_nodes = max_nodes
        self.st, self.cw, self.mv = _rules_words(rules)
        self.rng = np.array([state], dtype=np.uint64)
        self.path = np.zeros(rules.cells + 2, dtype=np.int64)
        self.scratch = np.zeros(64, dtype=np.uint64)
        self._allocate(min(START_NODES, max_nodes))
        self.root = 0
        self.history: list[int] | None = None  # the root's moves; None: no tree yet
        #: True when the last search stopped because the pool was full at max_nodes.
        self.full = False

    @property
    def state(self) -> int:
        return int(self.rng[0])

    @state.setter
    def state(self, value: int) -> None:
        self.rng[0] = value

    @property
    def nodes(self) -> int:
        """The rows in use (the kept subtree, the rows left behind by earlier roots)."""
        return int(self.st[USED])

    @property
    def memory(self) -> int:
        """Bytes held by the pool."""
        return self.bits.nbytes + self.stats.nbytes + self.res.nbytes + self.links.nbytes

    def _allocate(self, rows: int) -> None:
        self.bits = np.zeros((rows, 5), dtype=np.uint64)
        self.stats = np.zeros((rows, 2), dtype=np.float64)
        self.res = np.full(rows, -1.0, dtype=np.float64)
        self.links = np.zeros((rows, 5), dtype=np.int32)

    def set_root(self, board: Board, reuse: bool) -> bool:
        history, known = board.history, self.history
        node = -1
        if reuse and known is not None and len(history) >= len(known) and history[: len(known)] == known:
            node = self.root
            links = self.links
            for move in history[len(known):]:
                first = int(links[node, FIRST])
                found = -1
                for child in range(first, first + int(links[node, EXPANDED])):
                    if links[child, MOVE] == move:
                        found = child
                        break
                node = found
                if node < 0:
                    break
        reused = node >= 0 and bool(self.stats[node, VISITS] > 0)
        if not reused:
            node = self._fresh_root(board)
        if self.links[node, COUNT] < 0:
            if self.st[USED] + self.st[NMOVES] > len(self.res):
                node = self._make_room(node)
            _list_candidates(node, self.st, self.cw, self.mv, self.bits, self.stats, self.res, self.links)
        self.root, self.history = node, list(history)
        return reused

    def _fresh_root(self, board: Board) -> int:
        """Forget the tree; row 0 becomes ``board``."""
        me = board.to_move
        a, o = board.stones(me), board.stones(1 - me)
        st, cw = self.st, self.cw
        self.bits[0] = (a, o, threats(np.uint64(a), st, cw), threats(np.uint64(o), st, cw), 0)
        self.stats[0] = 0.0
        self.res[0] = -1.0
        self.links[0] = (0, -1, 0, -1, 1)
        st[USED] = 1
        return 0

    def _make_room(self, root: int) -> int:
        """Keep only the subtree under ``root``, in a pool twice its size or more
        (up to max_nodes); the root's new row (0)."""
        live = self._subtree_size(root)
        rows = len(self.res)
        if live * 2 > rows and rows < self.max_nodes:
            rows = min(rows * 2, self.max_nodes)
        old = (self.bits, self.stats, self.res, self.links)
        self._allocate(rows)
        origin = np.empty(rows, dtype=np.int64)
        copy_subtree(root, self.st, *old, self.bits, self.stats, self.res, self.links, origin)
        return 0

    def _subtree_size(self, root: int) -> int:
        links = self.links
        size, todo = 1, [root]
        while todo:
            node = todo.pop()
            count = int(links[node, COUNT])
            if count > 0:
                first = int(links[node, FIRST])
                size += count
                todo.extend(range(first, first + count))
        return size

    def think(self, deadline: float, budget: int | None) -> int:
        left = NO_BUDGET if budget is None else budget
        done = 0
        self.full = False
        while True:
            done += think(
                self.root, left - done, deadline, self.c, self.st, self.cw, self.mv, self.rng,
                self.bits, self.stats, self.res, self.links, self.path, self.scratch,
            )  # fmt: skip
            if not self.st[FULL_POOL]:
                return done
            rows = len(self.res)
            self.root = self._make_room(self.root)
            if self.st[USED] + self.st[NMOVES] > len(self.res) or (
                len(self.res) == rows == self.max_nodes and self.st[USED] * 4 > rows * 3
            ):
                self.full = True  # the root's own subtree fills the pool: stop here
                return done

    def root_visits(self) -> int:
        return int(self.stats[self.root, VISITS])

    def root_moves(self) -> list[RootMove]:
        first = int(self.links[self.root, FIRST])
        moves: list[RootMove] = []
        for row in range(first, first + int(self.links[self.root, EXPANDED])):
            result = float(self.res[row])
            moves.append((
                int(self.links[row, MOVE]), int(self.stats[row, VISITS]), float(self.stats[row, VALUE]),
                None if result < 0.0 else result,
            ))  # fmt: skip
        return moves

    def first_candidate(self) -> int:
        return int(self.links[int(self.links[self.root, FIRST]), MOVE])


def warm_up(rules: Rules) -> None:
    """Load (or compile) the compiled functions: a few iterations on the empty board,
    a full pool's copy included."""
    tree = NumbaTree(rules, 1.0, 1)
    tree.set_root(Board(rules), reuse=False)
    tree.think(time.perf_counter() + 60.0, 4)
    tree.root = tree._make_room(tree.root)
