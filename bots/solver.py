"""A perfect connect-k solver, and the bot that plays by it.

Scores follow Pascal Pons' convention (the one of the shared test data), for the
side to move: positive wins, 0 draws, negative loses, and the size tells how soon
the game ends. A player who wins with its ``n``-th stone scores
``(cells + 1) // 2 + 1 - n``, so on 7x6 a win scores 22 minus the winner's stone
count, and the latest possible win scores 1 (see :mod:`arena.engine.scores`).

:class:`Solver` is the arena's solver plug-in: the entry point ``perfect`` of
the group ``arena.solvers`` (see :mod:`arena.engine.solvers`).

The search is Pons' solver, generalised to every board and connect value of
:mod:`arena.engine.game` (with or without gravity):

- negamax with alpha-beta on raw bitboards (``cur``: stones of the side to move,
  ``mask``: all stones), never on :class:`~arena.engine.game.Board` objects;
- an immediate-win check before searching, and only *non-losing* moves searched:
  a single opponent threat must be blocked, two lose at once, and with gravity
  the cell under an opponent's threat is never filled;
- moves ordered by how many winning cells they leave the mover, centre first
  among equals;
- a transposition table of upper and lower bounds (exact keys, so entries stay
  valid from one search to the next), each with the move that refuted the
  position, tried first when the position comes back (in the next null-window
  probe most often); far from the end, a child whose entry already proves the
  cutoff is taken before any child is searched (enhanced transposition cutoff);
- at the root, iterative deepening by null-window probes that narrow the
  [min, max] window (Pons' parts 7 and later).

Two back ends run the same search: pure Python (always there) and, when numba is
importable and the board fits in 64 bits, a compiled one in
:mod:`bots.solver_fast`. ``backend="python"``/``"numba"``/``"auto"`` picks one;
the environment variable ``CONNECTK_SOLVER_BACKEND`` sets the default.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from arena.bot import Bot, BotOptionError, Choice, Option
from arena.engine.game import MAX_SIZE, Board, Rules
from arena.engine.scores import score_of_win
from arena.errors import ArenaError
from bots.mcts import MctsBot
from bots.minimax import MinimaxBot
from bots.opening_book import book_for
from bots.search_shared import CHECK_EVERY, ETC_EMPTY_CELLS, SearchAborted

if TYPE_CHECKING:
    from bots.solver_fast import NumbaCore

#: Environment variable naming the default back end: auto, numba or python.
BACKEND_ENV = "CONNECTK_SOLVER_BACKEND"
BACKENDS = ("auto", "numba", "python")
#: The pure-Python table is emptied when it holds more entries than this (about
#: 100 MB of dict).
PY_TABLE_LIMIT = 1 << 20
#: The pure-Python search reads the clock about this often (seconds).
CLOCK_SECONDS = 0.002
#: A table entry is ``(bound << 1 | lower) << TABLE_MOVE_BITS | rank``: the rank in
#: centre order of the move that refuted the position (enough bits for 40x40).
TABLE_MOVE_BITS = 12
#: The rank an entry holds when no move refuted the position.
TABLE_NO_MOVE = (1 << TABLE_MOVE_BITS) - 1
#: The ordering score given to the table's move: more than any count of winning cells.
TABLE_MOVE_FIRST = 1 << 16
#: Frames left for whoever calls the solver (test runners, the CLI, a referee).
CALLER_FRAMES = 1000


class SolverError(ArenaError):
    """Rules or a back end the solver cannot serve."""


def _allow_deep_searches() -> None:
    """The pure-Python search recurses once per stone still to come: up to 1600
    frames on 40x40, past Python's default limit of 1000 (a Python-to-Python call
    uses no C stack in 3.11+, so a higher limit is safe). The limit is raised when
    the first pure-Python search core is made (not when the plug-in is merely
    listed), for the largest board, and never lowered: changing it during a
    search would pull it from under a search running in another thread."""
    if sys.getrecursionlimit() < MAX_SIZE * MAX_SIZE + CALLER_FRAMES:
        sys.setrecursionlimit(MAX_SIZE * MAX_SIZE + CALLER_FRAMES)


#: ``win(p, empty)``: the cells of ``empty`` that complete a line with the stones ``p``.
WinFunction = Callable[[int, int], int]


class SearchCore(Protocol):
    """What :class:`Solver` asks of a back end (:class:`PythonCore`, ``NumbaCore``)."""

    #: Node count of the last search.
    nodes: int

    def reset(self) -> None: ...

    def probe(
        self,
        cur: int,
        mask: int,
        ply: int,
        alpha: int,
        beta: int,
        deadline: float | None = None,
        budget: int | None = None,
    ) -> int: ...

    def root(
        self,
        cur: int,
        mask: int,
        ply: int,
        lo: int,
        hi: int,
        deadline: float | None = None,
        budget: int | None = None,
    ) -> int: ...

    def solve(self, cur: int, mask: int, ply: int, deadline: float | None = None, budget: int | None = None) -> int: ...


# --- the pure-Python back end ---------------------------------------------------------


def winning_cells_source(rules: Rules) -> str:
    """Python source of ``win(p, empty)``: the cells of ``empty`` that complete a
    line of ``rules.connect`` with the stones ``p``.

    For a direction with shift ``s``, ``l_a`` marks the cells with stones of ``p``
    on the ``a`` cells below them (``x - s`` .. ``x - a*s``), ``r_b`` those with
    stones on the ``b`` cells above; a cell completes a line when some
    ``l_a & r_(k-1-a)`` holds it. The empty top bit of each column stops runs
    from wrapping into the next column. With gravity the cell above a vertical
    run has nothing on top of it, so only ``l_(k-1)`` counts vertically.
    """
    k = rules.connect
    g = rules.geometry
    lines = ["def win(p, empty):", "    r = 0"]
    for d, s in enumerate(g.shifts):
        # A direction whose lines cannot fit on the board contributes nothing.
        if d == 0:
            fits = rules.height >= k
        elif d == 1:
            fits = rules.width >= k
        else:
            fits = rules.width >= k and rules.height >= k
        if not fits:
            continue
        if d == 0 and rules.gravity:
            terms = " & ".join(f"(p << {s * i})" for i in range(1, k))
            lines.append(f"    r |= {terms}")
            continue
        for i in range(1, k):
            prev_l = f"l{i - 1} & " if i > 1 else ""
            prev_r = f"r{i - 1} & " if i > 1 else ""
            lines.append(f"    l{i} = {prev_l}(p << {s * i})")
            lines.append(f"    r{i} = {prev_r}(p >> {s * i})")
        parts = [f"r{k - 1}", f"l{k - 1}"]
        parts += [f"(l{a} & r{k - 1 - a})" for a in range(1, k - 1)]
        lines.append("    r |= " + " | ".join(parts))
    lines.append("    return r & empty")
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=64)
def winning_cells_function(rules: Rules) -> WinFunction:
    """The compiled ``win(p, empty)`` of :func:`winning_cells_source`."""
    namespace: dict[str, Any] = {}  # exec's globals: whatever the source defines
    exec(compile(winning_cells_source(rules), f"<winning cells {rules.describe()}>", "exec"), namespace)
    win: WinFunction = namespace["win"]
    return win


class _SearchFunction(Protocol):
    """The search closure of :meth:`PythonCore._build`, with the node count of its
    last call as an attribute."""

    nodes: int

    def __call__(
        self,
        cur: int,
        mask: int,
        p: int,
        a: int,
        b: int,
        deadline: float | None,
        budget: int | None,
        narrow: bool,
    ) -> int: ...


class _ClockState(TypedDict):
    """When the pure-Python search last looked at the clock, and its limits."""

    deadline: float | None
    budget: int | None
    every: int
    seen: int
    at: float


class PythonCore:
    """Pons' search in pure Python for one set of rules; keeps its table between calls.

    ``root(cur, mask, ply, lo, hi)`` narrows [lo, hi] by null-window probes and
    returns the exact score; ``probe(cur, mask, ply, alpha, beta)`` is one
    fail-hard negamax. Both need a position where the side to move cannot win
    at once. They raise :class:`SearchAborted` when ``deadline`` (a
    ``time.monotonic()`` value) or ``budget`` (nodes) runs out.
    """

    name = "python"

    def __init__(self, rules: Rules) -> None:
        _allow_deep_searches()
        self.rules = rules
        self.table: dict[int, int] = {}
        self.nodes = 0
        self._full = rules.geometry.full
        self._bottom_row = sum(rules.geometry.bottom)
        self._win = winning_cells_function(rules)
        self._search = self._build()

    def reset(self) -> None:
        """Forget the transposition table."""
        self.table.clear()

    def probe(
        self,
        cur: int,
        mask: int,
        ply: int,
        alpha: int,
        beta: int,
        deadline: float | None = None,
        budget: int | None = None,
    ) -> int:
        return self._run(cur, mask, ply, alpha, beta, deadline, budget, False)

    def root(
        self,
        cur: int,
        mask: int,
        ply: int,
        lo: int,
        hi: int,
        deadline: float | None = None,
        budget: int | None = None,
    ) -> int:
        return self._run(cur, mask, ply, lo, hi, deadline, budget, True)

    def solve(self, cur: int, mask: int, ply: int, deadline: float | None = None, budget: int | None = None) -> int:
        """Exact score of any open position: full board, immediate win, or search."""
        rules = self.rules
        full = self._full
        self.nodes = 0
        if mask == full:
            return 0
        self.nodes = 1
        wins = self._win(cur, full ^ mask)
        if rules.gravity:
            wins &= (mask + self._bottom_row) & full
        if wins:
            return score_of_win(rules, ply)
        lo, hi = -score_of_win(rules, ply + 1), score_of_win(rules, ply + 2)
        return self._run(cur, mask, ply, lo, hi, deadline, budget, True)

    def _run(
        self,
        cur: int,
        mask: int,
        ply: int,
        a: int,
        b: int,
        deadline: float | None,
        budget: int | None,
        narrow: bool,
    ) -> int:
        if len(self.table) > PY_TABLE_LIMIT:
            self.table.clear()
        self.nodes = 0
        try:
            return self._search(cur, mask, ply, a, b, deadline, budget, narrow)
        finally:
            self.nodes = self._search.nodes

    def _build(self) -> _SearchFunction:
        rules = self.rules
        g = rules.geometry
        cells = rules.cells
        full = g.full
        gravity = rules.gravity
        bottom_row = sum(g.bottom)
        key_shift = g.stride * rules.width
        half = (cells + 1) // 2
        # win_at[p]: score_of_win at ply p (a little past the end, for the bounds).
        win_at = [half - p // 2 for p in range(cells + 4)]
        if gravity:
            order = [g.column[c] for c in g.centre_order]
        else:
            order = [g.cell_bit[m] for m in g.centre_order]
        ranked = [(-i, bits) for i, bits in enumerate(order)]
        win = winning_cells_function(rules)
        table = self.table
        table_get = table.get
        monotonic = time.monotonic
        state: _ClockState = {"deadline": None, "budget": None, "every": 1, "seen": 0, "at": 0.0}

        def check(count: int) -> int:
            # Called at node ``count``; returns the node of the next look. The
            # interval adapts so that the clock is read about every CLOCK_SECONDS
            # (a node costs microseconds on 7x6, milliseconds on 40x40).
            deadline, budget = state["deadline"], state["budget"]
            if budget is not None and count > budget:
                raise SearchAborted
            if len(table) > PY_TABLE_LIMIT:
                table.clear()  # bounds forgotten are only work to redo
            every = CHECK_EVERY
            if deadline is not None:
                now = monotonic()
                if now > deadline:
                    raise SearchAborted
                elapsed = now - state["at"]
                done = count - state["seen"]
                every = 2 * state["every"]
                if elapsed > 0:
                    every = min(every, int(done * CLOCK_SECONDS / elapsed))
                every = max(1, min(CHECK_EVERY, every))
                state["every"], state["seen"], state["at"] = every, count, now
            nxt = count + every
            if budget is not None and nxt > budget + 1:
                nxt = budget + 1
            return nxt

        nodes = 0
        next_check = 0

        def negamax(cur: int, mask: int, p: int, alpha: int, beta: int) -> int:
            # The side to move (stones ``cur``) cannot win at once.
            nonlocal nodes, next_check
            nodes += 1
            if nodes >= next_check:
                next_check = check(nodes)
            empty = full ^ mask
            opp_win = win(cur ^ mask, empty)
            if gravity:
                possible = (mask + bottom_row) & full
                forced = possible & opp_win
                if forced:
                    if forced & (forced - 1):
                        return -win_at[p + 1]  # two threats: the opponent wins next
                    possible = forced
                possible &= ~(opp_win >> 1)  # never fill the cell under a threat
            else:
                possible = empty
                if opp_win:
                    if opp_win & (opp_win - 1):
                        return -win_at[p + 1]
                    possible = opp_win
            if not possible:
                return -win_at[p + 1]
            if p >= cells - 2:
                return 0  # no one can win in the last two cells any more
            low = -win_at[p + 3]  # the opponent cannot win on its next move
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    return alpha
            high = win_at[p + 2]  # nor can we on this one
            if gravity:
                key = cur + mask
            else:
                key = cur | (mask << key_shift)
            entry = table_get(key)
            table_move = TABLE_NO_MOVE
            if entry is not None:
                table_move = entry & TABLE_NO_MOVE
                entry >>= TABLE_MOVE_BITS
                bound = entry >> 1
                if entry & 1:  # a lower bound
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
            # Children: the move that refuted this position last time first
            # (the table's), then most winning cells first, centre first among
            # equals (rank: higher nearer the centre). A single move needs no order.
            moves: list[tuple[int, int, int]] | tuple[tuple[int, int, int]]
            if possible & (possible - 1):
                moves = []
                for rank, column in ranked:
                    move = possible & column
                    if move:
                        threats = win(cur | move, empty ^ move).bit_count()
                        if -rank == table_move:
                            threats = TABLE_MOVE_FIRST
                        moves.append((threats, rank, move))
                moves.sort(reverse=True)
            else:
                moves = ((0, -TABLE_NO_MOVE, possible),)
            child_cur = cur ^ mask
            if cells - p >= ETC_EMPTY_CELLS:
                for _score, rank, move in moves:
                    child_mask = mask | move
                    child_key = child_cur + child_mask if gravity else child_cur | (child_mask << key_shift)
                    child_entry = table_get(child_key)
                    if child_entry is None or (child_entry >> TABLE_MOVE_BITS) & 1:
                        continue  # no entry, or the child's lower bound: no cutoff here
                    score = -(child_entry >> (TABLE_MOVE_BITS + 1))
                    if score >= beta:
                        table[key] = (((score << 1) | 1) << TABLE_MOVE_BITS) | -rank
                        return score
            for _score, rank, move in moves:
                score = -negamax(child_cur, mask | move, p + 1, -beta, -alpha)
                if score >= beta:
                    table[key] = (((score << 1) | 1) << TABLE_MOVE_BITS) | -rank
                    return score
                if score > alpha:
                    alpha = score
            # No move beat alpha: the refutation found earlier (if any) stays the first to try.
            table[key] = (alpha << (TABLE_MOVE_BITS + 1)) | table_move
            return alpha

        def search(
            cur: int,
            mask: int,
            p: int,
            a: int,
            b: int,
            deadline: float | None,
            budget: int | None,
            narrow: bool,
        ) -> int:
            nonlocal nodes, next_check
            nodes = 0
            state.update({"deadline": deadline, "budget": budget, "every": 1, "seen": 0, "at": monotonic()})
            next_check = 0
            try:
                if not narrow:
                    return negamax(cur, mask, p, a, b)
                lo, hi = a, b
                while lo < hi:
                    med = lo + (hi - lo) // 2
                    if med <= 0 and _half(lo) < med:
                        med = _half(lo)
                    elif med >= 0 and _half(hi) > med:
                        med = _half(hi)
                    r = negamax(cur, mask, p, med, med + 1)
                    if r <= med:
                        hi = r
                    else:
                        lo = r
                return lo
            finally:
                searcher.nodes = nodes

        # A function with an attribute: mypy cannot type one from its def.
        searcher = cast(_SearchFunction, search)
        searcher.nodes = 0
        return searcher


def _half(x: int) -> int:
    """x / 2 rounded toward zero, as C does (Pons' window split)."""
    return -((-x) // 2) if x < 0 else x // 2


# --- choosing a back end ---------------------------------------------------------------


def fast_available() -> bool:
    """True if the compiled back end (numba) can be imported."""
    return _fast_module() is not None


class _FastModule(Protocol):
    """What the solver takes from :mod:`bots.solver_fast` (the module itself)."""

    DEFAULT_TABLE_BITS: int

    @property
    def NumbaCore(self) -> type[NumbaCore]: ...  # the module's class


@lru_cache(maxsize=1)
def _fast_module() -> _FastModule | None:
    try:
        from bots import solver_fast
    except Exception:  # numba missing, or it cannot build/cache here: stay pure
        return None
    return solver_fast


def solvable(rules: Rules) -> bool:
    """Can the solver serve ``rules``? (Line scoring: the first line wins; not
    the count-scoring variant, whose value is decided on the full board.)"""
    return not getattr(rules, "counts_windows", False)


def fits_fast(rules: Rules) -> bool:
    """Does the board fit the compiled back end (64-bit bitboards)?"""
    return rules.width * (rules.height + 1) <= 64


def resolve_backend(rules: Rules, backend: str | None = None) -> str:
    """The back end that will serve ``rules``: "numba" or "python"."""
    wanted = (backend or os.environ.get(BACKEND_ENV) or "auto").strip().lower()
    if wanted not in BACKENDS:
        raise SolverError(f"unknown solver backend {wanted!r}; choose from {', '.join(BACKENDS)}")
    if wanted == "python":
        return "python"
    usable = fits_fast(rules) and fast_available()
    if wanted == "numba" and not usable:
        why = "numba is not importable" if fits_fast(rules) else "the board needs more than 64 bits"
        raise SolverError(f"the numba solver backend cannot serve {rules.describe()}: {why}")
    return "numba" if usable else "python"


def _make_core(rules: Rules, backend: str, table_bits: int | None) -> SearchCore:
    if backend == "numba":
        module = _fast_module()
        if module is None:  # resolve_backend picks numba only when it is importable
            raise SolverError("the numba solver backend is not importable")
        if not table_bits:
            # No more entries than a small board has positions (about 3 ** cells).
            table_bits = min(module.DEFAULT_TABLE_BITS, max(10, rules.cells + 2))
        core = module.NumbaCore(rules, table_bits)
        from bots import kernel_c4

        if rules == kernel_c4.RULES:  # the game nearly everyone plays: its geometry written in
            core.search = kernel_c4._search
        return core
    return PythonCore(rules)


# --- the solver ------------------------------------------------------------------------


class Solver:
    """Exact values of positions under one set of rules.

    The transposition table is kept between calls (its entries are bounds that
    hold in any search), so solving a game's positions in turn gets cheaper;
    :meth:`reset` empties it. ``nodes`` is the node count of the last call.
    """

    def __init__(self, rules: Rules, backend: str | None = None, table_bits: int | None = None) -> None:
        if not solvable(rules):
            raise SolverError(f"the solver plays line scoring only, not {rules.describe()}")
        self.rules = rules
        self.backend = resolve_backend(rules, backend)
        self.core: SearchCore = _make_core(rules, self.backend, table_bits)
        g = rules.geometry
        self._full = g.full
        self._bottom_row = sum(g.bottom)
        self._win = winning_cells_function(rules)
        self.nodes = 0

    def reset(self) -> None:
        self.core.reset()

    def warm_up(self) -> None:
        """Load (or compile) the back end: a short search of the empty board,
        stopped by its node budget after one look at the clock."""
        if self.backend != "numba":
            return  # nothing to load
        lo, hi = self._bounds(0)
        try:
            self.core.root(0, 0, 0, lo, hi, time.monotonic() + 60.0, CHECK_EVERY + 10)
        except SearchAborted:
            pass

    # --- raw positions --------------------------------------------------------------

    def _wins_now(self, cur: int, mask: int) -> int:
        """Cells where the side to move wins at once (playable ones only)."""
        empty = self._full ^ mask
        cells = self._win(cur, empty)
        if self.rules.gravity:
            cells &= (mask + self._bottom_row) & self._full
        return cells

    def _bounds(self, ply: int) -> tuple[int, int]:
        """[min, max] of a position at ``ply`` where the mover cannot win at once."""
        return -score_of_win(self.rules, ply + 1), score_of_win(self.rules, ply + 2)

    def solve_raw(
        self, cur: int, mask: int, ply: int, deadline: float | None = None, nodes: int | None = None
    ) -> int | None:
        """Exact score of the open position (cur, mask) at ``ply``, or None on timeout."""
        try:
            return self.core.solve(cur, mask, ply, deadline, nodes)
        except SearchAborted:
            return None
        finally:
            self.nodes = self.core.nodes

    def at_least_raw(
        self, cur: int, mask: int, ply: int, value: int, deadline: float | None = None, nodes: int | None = None
    ) -> bool | None:
        """Is the score of (cur, mask) at least ``value``? None on timeout."""
        self.nodes = 0
        if mask == self._full:
            return value <= 0
        if self._wins_now(cur, mask):
            return score_of_win(self.rules, ply) >= value
        lo, hi = self._bounds(ply)
        if value <= lo:
            return True
        if value > hi:
            return False
        try:
            return self.core.probe(cur, mask, ply, value - 1, value, deadline, nodes) >= value
        except SearchAborted:
            return None
        finally:
            self.nodes += self.core.nodes

    # --- boards ---------------------------------------------------------------------

    def _check_rules(self, board: Board) -> None:
        if board.rules != self.rules:
            raise ValueError(f"this solver is for {self.rules.describe()}, not {board.rules.describe()}")

    def solve(self, board: Board, deadline: float | None = None, nodes: int | None = None) -> int | None:
        """Exact score of ``board`` for the side to move (see :func:`score_of_win`),
        or None if ``deadline`` (``time.monotonic()``) or ``nodes`` runs out.
        A finished game scores as it ended: 0 drawn, negative won by the last mover."""
        if board.rules is not self.rules:
            self._check_rules(board)
        if board.winner is not None:
            self.nodes = 0
            return -score_of_win(self.rules, board.ply - 1)
        cur, mask = board.key()
        try:
            return self.core.solve(cur, mask, board.ply, deadline, nodes)
        except SearchAborted:
            return None
        finally:
            self.nodes = self.core.nodes

    def known(self, board: Board) -> int | None:
        """The exact score of ``board`` from the opening book, or None where the book
        does not hold it: a look-up, no search (see :func:`arena.engine.solvers.prove`)."""
        book = book_for(self.rules)
        found = book.lookup(board) if book is not None else None
        return None if found is None else found[1]

    def _children(self, board: Board) -> list[tuple[int, int, int, bool]]:
        """(move, cur, mask, immediate win) for each legal move of ``board``."""
        me = board.to_move
        cur, mask = board.stones(me), board.occupied
        g = self.rules.geometry
        wins = self._wins_now(cur, mask)
        out: list[tuple[int, int, int, bool]] = []
        for move in board.legal_moves():
            if self.rules.gravity:
                bit = (mask + g.bottom[move]) & g.column[move]
            else:
                bit = g.cell_bit[move]
            # The child from the opponent's side: its stones, all stones.
            out.append((move, cur ^ mask, mask | bit, bool(wins & bit)))
        return out

    def solve_moves(
        self, board: Board, deadline: float | None = None, nodes: int | None = None
    ) -> dict[int, int | None]:
        """Score of each legal move for the side to move (``-solve(child)``); None
        for the moves not solved before ``deadline`` or the ``nodes`` budget."""
        self._check_rules(board)
        result: dict[int, int | None] = {}
        total = 0
        ply = board.ply
        for move, cur, mask, wins in self._children(board):
            if wins:
                result[move] = score_of_win(self.rules, ply)
                continue
            left = None if nodes is None else nodes - total
            if left is not None and left <= 0:
                result[move] = None
                continue
            value = self.solve_raw(cur, mask, ply + 1, deadline, left)
            total += self.nodes
            result[move] = None if value is None else -value
        self.nodes = total
        return result

    def solve_from(
        self, board: Board, floor: int, deadline: float | None = None, nodes: int | None = None
    ) -> int | None:
        """Exact score of the open ``board``, known elsewhere to be at least ``floor``,
        or None on timeout: one null-window probe settles it when it is ``floor``
        (a position after the best reply to a best move), the search narrows from
        ``floor + 1`` otherwise."""
        self._check_rules(board)
        cur, mask = board.key()
        ply = board.ply
        above = self.at_least_raw(cur, mask, ply, floor + 1, deadline, nodes)
        total = self.nodes
        if above is None or not above:
            return None if above is None else floor
        lo, hi = self._bounds(ply)
        left = None if nodes is None else nodes - total
        if mask == self._full or self._wins_now(cur, mask) or floor + 1 >= hi:
            value = self.solve(board, deadline, left)
            self.nodes += total
            return value
        try:
            return self.core.root(cur, mask, ply, max(floor + 1, lo), hi, deadline, left)
        except SearchAborted:
            return None
        finally:
            self.nodes = total + self.core.nodes

    def best_move(
        self, board: Board, deadline: float | None = None, nodes: int | None = None, floor: int | None = None
    ) -> tuple[int, int] | None:
        """(a move keeping the exact value, that value), or None on timeout.

        Solves the position (from ``floor``, a score it is known to reach, when
        given: see :meth:`solve_from`), then proves one move (centre first)
        reaches the value with a single null-window probe per move tried.
        """
        self._check_rules(board)
        if board.is_over():
            raise ValueError("the game is over: there is no move to choose")
        if floor is None:
            value = self.solve(board, deadline, nodes)
        else:
            value = self.solve_from(board, floor, deadline, nodes)
        total = self.nodes
        if value is None:
            return None
        ply = board.ply
        children = self._children(board)
        for move, _cur, _mask, wins in children:
            if wins:  # value == score_of_win(ply): the quickest win there is
                self.nodes = total
                return move, value
        order = {m: i for i, m in enumerate(board.centre_order([c[0] for c in children]))}
        children.sort(key=lambda c: order[c[0]])
        for move, cur, mask, _wins in children:
            left = None if nodes is None else nodes - total
            if left is not None and left <= 0:
                self.nodes = total
                return None
            # The move keeps the value iff the child's score is at most -value.
            ok = self.at_least_raw(cur, mask, ply + 1, 1 - value, deadline, left)
            total += self.nodes
            if ok is None:
                self.nodes = total
                return None
            if not ok:
                self.nodes = total
                return move, value
        raise AssertionError(f"no move of {board!r} reaches its value {value}")  # pragma: no cover


def solve(
    board: Board, deadline: float | None = None, nodes: int | None = None, backend: str | None = None
) -> int | None:
    """Exact score of ``board`` for the side to move, or None if the deadline
    (a ``time.monotonic()`` value) or the node budget ran out first. A solver
    of its own each call: to solve many positions, keep a :class:`Solver`."""
    return Solver(board.rules, backend).solve(board, deadline, nodes)


def solve_moves(
    board: Board, deadline: float | None = None, nodes: int | None = None, backend: str | None = None
) -> dict[int, int | None]:
    """Score of each legal move, for the side to move; None where unsolved."""
    return Solver(board.rules, backend).solve_moves(board, deadline, nodes)


# --- the bot ---------------------------------------------------------------------------

#: Share of the move's time given to the exact search; the rest is kept for the
#: fallback search and the hand-off.
SOLVE_SHARE = 0.6
TIME_RESERVE = 0.02
FALLBACKS = ("mcts", "minimax")


class SolverBot(Bot):
    """Solver: perfect play by exact alpha-beta search, MCTS when out of time.

    Each move it tries to solve the position within its budget and plays a move
    that keeps the proven value: the quickest win, the slowest loss, a draw when
    drawn. The budget is ``nodes`` search nodes if set (the same games for the
    same seed, whatever the machine's load), else time (``seconds``, else the
    referee's time_allowed, else 1 s; 60% of it goes to the exact search). When
    the value cannot be proven within the budget it plays the MCTS bot's choice
    (``fallback_playouts`` iterations with a node budget, else the rest of the
    move's time; its tree kept from move to move), or with ``fallback=minimax``
    the minimax bot's at ``fallback_depth``, and says so in its info
    ("solved": false). Each bot has a solver of its own, whose transposition
    table is kept from move to move. On 7x6 connect 4 it first looks in its
    opening book (:mod:`bots.opening_book`), which holds the early positions too
    hard to solve within a move's time, so its play is perfect from the first move.
    """

    name = "solver"
    seconds = Option(0.0, "seconds per move (0: the referee's time_allowed, else 1.0)")
    nodes = Option(0, "search nodes per move, used instead of the clock when set (reproducible)")
    fallback = Option("mcts", "what plays a position not solved in time: mcts or minimax")
    fallback_playouts = Option(2000, "MCTS iterations of the fallback when `nodes` is set")
    fallback_depth = Option(4, "minimax depth of the fallback=minimax")
    backend = Option("auto", "search back end: auto, numba or python")
    book = Option(True, "play the opening book's proven move where it has one (7x6 connect 4)")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if not self.seconds >= 0:
            raise BotOptionError(f"option seconds={self.seconds} must be 0 or more")
        if self.nodes < 0:
            raise BotOptionError(f"option nodes={self.nodes} must be 0 or more")
        if self.fallback_depth < 1:
            raise BotOptionError(f"option fallback_depth={self.fallback_depth} must be at least 1")
        if self.backend not in BACKENDS:
            raise BotOptionError(f"option backend={self.backend!r} must be one of {', '.join(BACKENDS)}")
        if self.fallback not in FALLBACKS:
            raise BotOptionError(f"option fallback={self.fallback!r} must be one of {', '.join(FALLBACKS)}")
        if self.fallback_playouts < 1:
            raise BotOptionError(f"option fallback_playouts={self.fallback_playouts} must be at least 1")
        self._solver: Solver | None = None
        self._mcts: MctsBot | None = None

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        # Read the book and compile/load the search before the clock runs.
        if self.book:
            book_for(rules)
        self._mcts = None  # a fresh tree each game
        if solvable(rules):
            if self.fallback == "mcts":
                self._mcts_for(rules, player, seed)
            self._solver_for(rules).warm_up()

    def _solver_for(self, rules: Rules) -> Solver:
        """This bot's solver for ``rules`` (its table kept while the rules stay)."""
        if self._solver is None or self._solver.rules != rules:
            self._solver = Solver(rules, self._backend())
        return self._solver

    def _backend(self) -> str | None:
        return None if self.backend == "auto" else self.backend

    def budget(self) -> float:
        """Seconds this move may take."""
        if self.seconds > 0:
            return self.seconds
        if self.time_allowed is not None:
            return self.time_allowed
        return 1.0

    def choose_move(self, board: Board) -> Choice:
        if not solvable(board.rules):
            return self._fallback(board, "the solver plays line scoring only", 0, None)
        book = book_for(board.rules) if self.book else None
        if book is not None:
            known = book.lookup(board)
            if known is not None:
                move, score = known
                depth = board.rules.cells - board.ply
                return Choice(move, {"score": score, "solved": True, "book": True, "nodes": 0, "depth": depth})
        solver = self._solver_for(board.rules)
        started = time.monotonic()
        if self.nodes:
            found = solver.best_move(board, nodes=self.nodes)
            why = f"not solved in {self.nodes} nodes"
        else:
            seconds = max(0.001, self.budget() * SOLVE_SHARE - TIME_RESERVE)
            found = solver.best_move(board, started + seconds)
            why = f"not solved in {seconds:.3f} s"
        if found is None:
            if self.fallback == "mcts":
                until = None if self.nodes else started + self.budget() - 2 * TIME_RESERVE
                return self._mcts_fallback(board, why, solver.nodes, solver.backend, until)
            return self._fallback(board, why, solver.nodes, solver.backend)
        move, score = found
        info = {
            "score": score,
            "solved": True,
            "nodes": solver.nodes,
            "depth": board.rules.cells - board.ply,  # searched to the end of the game
            "backend": solver.backend,
        }
        return Choice(move, info)

    def _mcts_for(self, rules: Rules, player: int, seed: int) -> MctsBot:
        """This bot's MCTS (its tree kept while the game goes on), started for ``rules``."""
        if self._mcts is None or self._mcts.rules != rules:
            # Playouts fixed by the node budget keep games reproducible; with a clock
            # the fallback gets what the exact search left of the move's time.
            self._mcts = MctsBot(playouts=self.fallback_playouts if self.nodes else 0, backend=self.backend)
            self._mcts.new_game(rules, player, seed)
        return self._mcts

    def _mcts_fallback(self, board: Board, why: str, nodes: int, backend: str, until: float | None) -> Choice:
        """The MCTS bot's move: its playouts, or the time left before ``until``
        (``time.monotonic()``; a reserve for the hand-off is already taken off)."""
        mcts = self._mcts_for(board.rules, board.to_move, 0)
        if until is not None:
            mcts.seconds = max(0.002, until - time.monotonic())
            mcts.time_allowed = None
        answer = mcts.choose_move(board)
        playouts = answer.info["playouts"]
        info = {
            "solved": False,
            "nodes": nodes,
            "playouts": playouts,
            "win_rate": answer.info["win_rate"],
            "fallback": f"mcts {playouts} playouts: {why}",
            "backend": backend,
        }
        return Choice(answer.move, info)

    def _fallback(self, board: Board, why: str, nodes: int, backend: str | None) -> Choice:
        """The minimax bot's move at ``fallback_depth``, with its heuristic score."""
        answer = MinimaxBot(depth=self.fallback_depth).choose_move(board)
        info = {
            "score": answer.info["score"],
            "solved": False,
            "nodes": nodes + answer.info["nodes"],
            "depth": self.fallback_depth,
            "fallback": f"minimax depth {self.fallback_depth}: {why}",
        }
        if backend is not None:
            info["backend"] = backend
        return Choice(answer.move, info)
