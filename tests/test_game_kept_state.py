"""Tests of what Board keeps between moves so that playing is cheap.

Board keeps its legal moves and where each move lands instead of working them out
from the stones on every call, and tests for lines with code written out per rules
(arena.engine.game.line_test). Whatever it keeps must always say what the stones
say: these properties play and take back random moves on every kind of rules, both
scorings included, and compare with tests/reference.py and with ``has_line``.
"""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from arena.engine.game import Board, Rules, has_line, line_test, line_test_source

try:
    from tests.reference import ReferenceGame
    from tests.test_game import PROPERTY, QUICK, TIC_TAC_TOE, assert_agrees, rules_strategy, snapshot
except ImportError:  # tests/ is on sys.path itself (pytest's default rootdir import)
    from reference import ReferenceGame
    from test_game import PROPERTY, QUICK, TIC_TAC_TOE, assert_agrees, rules_strategy, snapshot


@st.composite
def any_rules(draw, max_width: int = 7, max_height: int = 7) -> Rules:
    """Rules of every kind: with and without gravity, line and count scoring."""
    rules = draw(rules_strategy(max_width=max_width, max_height=max_height))
    scoring = draw(st.sampled_from(("line", "count")))
    return Rules(rules.width, rules.height, rules.connect, rules.gravity, scoring)


def replayed(rules: Rules, moves: list[int]) -> ReferenceGame:
    ref = ReferenceGame.from_rules(rules)
    for move in moves:
        ref.play(move)
    return ref


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_play_and_undo_in_any_order_agree_with_the_reference(rules, data):
    """After every play and every undo, on any rules, the board says what a
    reference game replaying the same moves says."""
    board = Board(rules)
    moves: list[int] = []
    for _ in range(data.draw(st.integers(0, 2 * rules.cells), label="steps")):
        legal = board.legal_moves()
        if moves and (not legal or data.draw(st.integers(0, 3), label="undo") == 0):
            assert board.undo() == moves.pop()
        else:
            move = data.draw(st.sampled_from(legal), label="move")
            board.play(move)
            moves.append(move)
        assert_agrees(board, replayed(rules, moves))
        # Where the last stone landed, as the position before it would have it land.
        landed = replayed(rules, moves[:-1]).target(moves[-1]) if moves else None
        assert board.last_cell() == landed
    event(f"{rules.scoring}, {'won' if board.winner is not None else 'open or drawn'}")


@QUICK
@given(rules=any_rules(), data=st.data())
def test_undo_of_the_last_move_reopens_the_game(rules, data):
    """Take back the move that ended a game (a line, or the full board counted):
    the game is open again with the moves a fresh replay allows."""
    board = Board(rules)
    while not board.is_over():
        board.play(data.draw(st.sampled_from(board.legal_moves()), label="move"))
    last = board.undo()
    fresh = Board.from_moves(board.history, rules)
    assert not board.is_over() and board.winner is None
    assert board.legal_moves() == fresh.legal_moves()
    assert last in board.legal_moves()
    board.play(last)
    assert board.is_over()


@QUICK
@given(rules=any_rules(), data=st.data())
def test_legal_moves_are_the_callers_own(rules, data):
    """The caller may change the list legal_moves returns: the board does not see it."""
    board = Board(rules)
    for _ in range(data.draw(st.integers(0, rules.cells), label="moves")):
        legal = board.legal_moves()
        if not legal:
            break
        expected = legal.copy()
        legal.append(rules.move_count)
        legal.reverse()
        board.legal_moves().clear()
        assert board.legal_moves() == expected
        assert board.is_over() is False
        board.play(data.draw(st.sampled_from(expected), label="move"))
    assert board.is_over() is (not board.legal_moves())


@settings(PROPERTY, max_examples=300)
@given(
    rules=rules_strategy(max_width=40, max_height=40),
    density=st.sampled_from((0.1, 0.3, 0.5, 0.7, 0.9)),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_written_out_line_test_is_has_line(rules, density, seed):
    """The line test generated per rules answers has_line's question on any stones,
    sparse or dense, on boards from 3x3 to 40x40."""
    rng = random.Random(seed)
    g = rules.geometry
    stones = sum(bit for bit in g.cell_bit if rng.random() < density)
    expected = has_line(stones, g.line_plan)
    assert g.has_line(stones) is expected
    assert line_test(g.line_plan)(stones) is expected
    event("a line" if expected else "no line")


def test_the_line_test_is_straight_line_code():
    """One shift-and-and chain per direction, the shifts written as numbers."""
    source = line_test_source(Rules().geometry.line_plan)
    assert "for " not in source
    assert source.count("return True") == 4
    for shift in (1, 2, 7, 14, 6, 12, 8, 16):
        assert f">> {shift}\n" in source or f">> {shift}:" in source


@pytest.mark.parametrize(
    "moves, rules, past_the_win",
    [
        ("a1b1a2b2a3", TIC_TAC_TOE, TIC_TAC_TOE.height * 2 + 2),  # c3, a cell still empty
        ("7777721212131", Rules(), 6),  # the last cell of column 7
    ],
)
def test_a_stone_played_past_a_win_can_be_taken_back(moves, rules, past_the_win):
    """play is unchecked: a search may play on after a win and take it back; the
    won position comes back as it was."""
    board = Board.from_moves(moves, rules)
    assert board.winner == 0
    won = snapshot(board)
    board.play(past_the_win)
    assert board.is_over()
    board.undo()
    assert snapshot(board) == won


@QUICK
@given(rules=any_rules(max_width=12, max_height=12), data=st.data())
def test_boards_pickle_and_deep_copy_as_their_position(rules, data):
    board = Board(rules)
    for _ in range(data.draw(st.integers(0, rules.cells), label="moves")):
        if board.is_over():
            break
        board.play(data.draw(st.sampled_from(board.legal_moves()), label="move"))
    for twin in (pickle.loads(pickle.dumps(board)), copy.deepcopy(board)):
        assert twin == board
        assert snapshot(twin) == snapshot(board)
        if twin.ply:
            twin.undo()
            assert snapshot(twin) == snapshot(Board.from_moves(board.history[:-1], rules))
