"""The solver's kernel for 7x6 connect 4 (bots/kernel_c4.py): written from the
generic kernel by bots/kernel_source.py, kept up to date with it, and searching
exactly as it does."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.engine.game import Board, Rules
from bots import kernel_source
from bots.solver import Solver, fast_available

pytestmark = pytest.mark.skipif(not fast_available(), reason="the compiled solver needs numba")


def test_the_written_kernel_is_what_the_generic_kernel_gives_now():
    # Edit the kernel in bots/solver_fast.py, then run python -m bots.kernel_source.
    assert kernel_source.WRITTEN.read_text() == kernel_source.source()


def test_a_kernel_that_reads_the_rules_in_a_new_way_is_refused_not_half_written():
    generic = kernel_source.GENERIC.read_text()
    moved = generic.replace("st[NMOVES]", "st[NMOVES + 0]")
    with pytest.raises(ValueError, match=r"no longer reads st\[NMOVES\]: update bots/kernel_source.py"):
        kernel_source.source(moved)
    with pytest.raises(ValueError, match="only for connect 4 with gravity"):
        kernel_source.source(rules=Rules(connect=3))
    sideways = generic.replace("st[SHIFT + d]", "st[SHIFT + d + 0]", 1)
    with pytest.raises(ValueError, match=r"reads st\[SHIFT in a new way"):
        kernel_source.source(sideways)


def test_connect_four_searches_with_the_written_kernel_and_other_rules_with_the_generic_one():
    from bots import kernel_c4, solver_fast

    def search(rules: Rules) -> object:
        core = Solver(rules, "numba").core
        assert isinstance(core, solver_fast.NumbaCore)
        return core.search

    assert search(Rules()) is kernel_c4._search
    for rules in (Rules(width=6, height=5), Rules(connect=3), Rules(gravity=False, width=4, height=4)):
        assert search(rules) is solver_fast._search


def positions(count: int, stones: range, seed: int) -> list[Board]:
    """Random open 7x6 positions (the side to move has no win at once)."""
    rng = random.Random(seed)
    found: list[Board] = []
    while len(found) < count:
        board = Board(Rules())
        target = rng.choice(stones)
        while board.ply < target and not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        if not board.is_over() and not any(board.is_winning_move(move) for move in board.legal_moves()):
            found.append(board)
    return found


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_the_written_kernel_visits_the_same_nodes_and_finds_the_same_scores(mode):
    # Each search from an empty table, so that both see the same entries: with the
    # rules only written in, every node must be the same.
    from bots import kernel_c4, solver_fast

    core = solver_fast.NumbaCore(Rules(), table_bits=16)
    core.st[solver_fast.BUDGET] = -1  # no budget: every search runs to its end
    nodes = 0
    for board in positions(25, range(10, 22), seed=mode):
        cur, mask = board.key()
        results = []
        for search in (solver_fast._search, kernel_c4._search):
            core.reset()
            value = search(np.uint64(cur), np.uint64(mask), board.ply, -2, 3, mode, core.tt, core.st, core.cw,
                           core.buf, solver_fast.NO_DEADLINE)
            assert not core.st[solver_fast.ABORTED]
            results.append((int(value), int(core.st[solver_fast.NODES])))
        assert results[0] == results[1], (board.moves_string(), results)
        nodes += results[0][1]
    assert nodes > 25 * 100  # searches, not answers at the first node
