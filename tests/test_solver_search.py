"""The solver's search rules that a single score does not show: the transposition
table's moves (kept from one search to the next, tried first) and mirror images.

Every rule is checked on the pure-Python back end and, when numba is importable,
on the compiled one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.game import Board, Rules
from bots.solver import ETC_EMPTY_CELLS, TABLE_MOVE_BITS, TABLE_NO_MOVE, PythonCore, Solver, fast_available

PONS = Path(__file__).resolve().parent / "data" / "pons"
C4 = Rules()
#: Small enough for pure Python to solve a position of 10+ stones in milliseconds.
SMALL = Rules(6, 5, 4)
BACKENDS = ["python"] + (["numba"] if fast_available() else [])

#: One solver per back end whose table is kept across examples: entries and
#: moves of earlier positions and windows are there when a later one is searched.
KEPT = {backend: Solver(SMALL, backend) for backend in BACKENDS}
FRESH = Solver(SMALL, "python")


def pons_positions(name: str, count: int) -> list[str]:
    return [line.split()[0] for line in (PONS / name).read_text().splitlines() if line.strip()][:count]


def play(rules: Rules, picks: list[int]) -> Board | None:
    """The position reached by taking, at each turn, legal move ``pick % count``;
    None once the game is over."""
    board = Board(rules)
    for pick in picks:
        legal = board.legal_moves()
        board.play(legal[pick % len(legal)])
        if board.is_over():
            return None
    return board


def mirror(board: Board) -> Board:
    """The same game with every column reflected."""
    width = board.rules.width
    return Board.from_moves([width - 1 - move for move in board.history], board.rules)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 63), min_size=10, max_size=22))
def test_kept_tables_and_their_moves_never_change_a_score(picks):
    board = play(SMALL, picks)
    if board is None:
        return
    FRESH.reset()
    expected = FRESH.solve(board)
    for backend, solver in KEPT.items():
        assert solver.solve(board) == expected, (backend, board.moves_string())
        assert solver.solve(mirror(board)) == expected, (backend, "mirror", board.moves_string())


def root_entry(solver: Solver, board: Board) -> tuple[int, bool, int | None] | None:
    """(bound, lower bound?, column of its move or None) of the table entry of
    ``board``, as the solver's back end holds it; None when it holds none."""
    cur, mask = board.key()
    order = C4.geometry.centre_order
    if isinstance(solver.core, PythonCore):
        entry = solver.core.table.get(cur + mask)
        if entry is None:
            return None
        rank = entry & TABLE_NO_MOVE
        entry >>= TABLE_MOVE_BITS
        return entry >> 1, bool(entry & 1), None if rank == TABLE_NO_MOVE else order[rank]
    from bots import solver_fast

    core = solver.core
    assert isinstance(core, solver_fast.NumbaCore)
    slot = solver_fast._slot(np.uint64(cur), np.uint64(mask), core.st)
    for at in (slot, slot + core.st[solver_fast.STRIDE]):
        if solver_fast._holds(core.tt, at, np.uint64(cur + mask), np.uint64(mask), core.st):
            word = int(core.tt[at + 1])
            rank = (word >> 16) & 0xFF
            column = None if rank == solver_fast.NO_MOVE else order[rank]
            return ((word & 0xFFFF) >> 1) - 1024, bool(word & 1), column
    return None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refuted_position_keeps_the_move_that_refuted_it(backend):
    """Where a search found a move reaching a lower bound, the entry names that
    move, and the move does reach the bound."""
    solver = Solver(C4, backend)
    named = 0
    for moves in pons_positions("Test_L2_R1", 60):
        board = Board.from_moves(moves)
        solver.reset()
        solver.solve(board)
        entry = root_entry(solver, board)
        if entry is None or not entry[1] or entry[2] is None:
            continue
        bound, _lower, column = entry
        child = board.copy()
        child.play(column)
        assert child.winner is None and -solver.solve(child) >= bound, (moves, column)
        named += 1
    assert named >= 10  # the rule was exercised, not skipped


def test_the_tables_move_is_searched_first():
    """A probe tries the move named by the position's entry before any other: with
    that child's entry proving the cutoff at once, the probe takes two nodes."""
    solver = Solver(C4, "python")
    core = solver.core
    assert isinstance(core, PythonCore)
    g = C4.geometry
    first_elsewhere = 0
    for moves in pons_positions("Test_L3_R1", 40):
        board = Board.from_moves(moves)
        value = solver.solve(board)
        assert value is not None
        scores = solver.solve_moves(board)
        cur, mask = board.key()
        for column, score in scores.items():
            child = board.copy()
            child.play(column)
            if score != value or child.is_over():
                continue
            child_cur, child_mask = child.key()
            # The child's upper bound -value: the move reaches value, a cutoff at once.
            child_entry = ((-value) << 1) << TABLE_MOVE_BITS | TABLE_NO_MOVE
            core.reset()
            core.table[child_cur + child_mask] = child_entry
            core.probe(cur, mask, board.ply, value - 1, value)
            if core.nodes <= 2:
                break  # decided at the root, or the move searched first anyway: no test here
            core.reset()
            core.table[child_cur + child_mask] = child_entry
            # The position's own entry: no bound to speak of, and this move.
            core.table[cur + mask] = ((C4.cells << 1) << TABLE_MOVE_BITS) | g.centre_order.index(column)
            assert core.probe(cur, mask, board.ply, value - 1, value) >= value
            assert core.nodes == 2, (moves, column)
            first_elsewhere += 1
            break
    assert first_elsewhere >= 5


def plant_upper_bound(solver: Solver, board: Board, bound: int) -> None:
    """Put in the solver's table: the score of ``board`` is at most ``bound``."""
    cur, mask = board.key()
    if isinstance(solver.core, PythonCore):
        solver.core.table[cur + mask] = ((bound << 1) << TABLE_MOVE_BITS) | TABLE_NO_MOVE
        return
    from bots import solver_fast

    core = solver.core
    assert isinstance(core, solver_fast.NumbaCore)
    meta = (
        (int(core.st[solver_fast.EPOCH]) << 32)
        | (board.ply << 24)
        | (solver_fast.NO_MOVE << 16)
        | ((bound + 1024) << 1)
    )
    slot = solver_fast._slot(np.uint64(cur), np.uint64(mask), core.st)
    solver_fast._store(core.tt, slot, np.uint64(cur + mask), np.uint64(mask), np.uint64(meta), core.st)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_childs_proven_cutoff_is_taken_without_searching_far_from_the_end(backend):
    """Enhanced transposition cutoff: with ETC_EMPTY_CELLS or more empty cells, a
    child whose entry proves the cutoff ends the probe at the position itself
    (one node); nearer the end the children are searched."""
    solver = Solver(C4, backend)
    taken = searched = 0
    for moves in pons_positions("Test_L2_R1", 80):
        board = Board.from_moves(moves)
        value = solver.solve(board)
        assert value is not None
        # The last optimal move in centre order: the one a search reaches last.
        best = [move for move, score in solver.solve_moves(board).items() if score == value]
        column = board.centre_order(best)[-1]
        child = board.copy()
        child.play(column)
        if child.is_over():
            continue
        cur, mask = board.key()
        solver.reset()
        if solver.core.probe(cur, mask, board.ply, value - 1, value) >= value and solver.core.nodes == 1:
            continue  # decided at the position itself: nothing to tell
        solver.reset()
        plant_upper_bound(solver, child, -value)
        assert solver.core.probe(cur, mask, board.ply, value - 1, value) >= value, moves
        if C4.cells - board.ply >= ETC_EMPTY_CELLS:
            assert solver.core.nodes == 1, moves
            taken += 1
        else:
            assert solver.core.nodes > 1, moves
            searched += 1
    assert taken >= 5 and searched >= 5
