"""Tests of the bitboard engine in arena/game.py.

The main property compares the engine with tests/reference.py, a slow 2D-list
implementation of the same rules, after random legal move sequences on random
rules. The rest are hand-made positions, error handling, notation and rendering.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arena.engine.game import (
    Board,
    IllegalMoveError,
    NotationError,
    Rules,
    RulesError,
    format_move,
    format_moves,
    parse_move,
    parse_moves,
    render,
)

try:
    from tests.reference import ReferenceGame
except ImportError:  # tests/ is on sys.path itself (pytest's default rootdir import)
    from reference import ReferenceGame

PROPERTY = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Cheaper settings for the properties that are not the main engine/reference check.
QUICK = settings(PROPERTY, max_examples=100)
CONNECT_FOUR = Rules()
TIC_TAC_TOE = Rules(3, 3, 3, gravity=False)


# --- strategies and helpers ----------------------------------------------------------


@st.composite
def rules_strategy(
    draw,
    min_width: int = 3,
    max_width: int = 12,
    min_height: int = 3,
    max_height: int = 12,
    gravity=None,
) -> Rules:
    width = draw(st.integers(min_width, max_width))
    height = draw(st.integers(min_height, max_height))
    longest = max(width, height)
    # Short lines half of the time, so that plenty of games end in a win.
    connect = draw(
        st.one_of(st.integers(3, min(4, longest)), st.integers(3, longest))
    )
    if gravity is None:
        gravity = draw(st.booleans())
    return Rules(width, height, connect, gravity)


def cells_of(rules: Rules):
    return [(c, r) for c in range(rules.width) for r in range(rules.height)]


def snapshot(board: Board) -> dict:
    """Everything observable about a position."""
    return {
        "key": board.key(),
        "history": board.history,
        "ply": board.ply,
        "to_move": board.to_move,
        "winner": board.winner,
        "legal": board.legal_moves(),
        "over": board.is_over(),
        "draw": board.is_draw(),
        "full": board.is_full(),
        "occupied": board.occupied,
        "stones": (board.stones(0), board.stones(1)),
        "last_move": board.last_move,
        "last_cell": board.last_cell(),
        "cells": [board.cell(c, r) for c, r in cells_of(board.rules)],
        "text": board.moves_string(),
        "render": board.render(),
    }


def state(board: Board) -> tuple:
    """A cheaper summary than ``snapshot``, for checks inside loops."""
    return (
        board.key(),
        board.history,
        board.winner,
        board.legal_moves(),
        board.last_cell(),
        board.is_over(),
    )


def assert_agrees(board: Board, ref: ReferenceGame) -> None:
    """The engine and the reference see the same position."""
    rules = board.rules
    legal = ref.legal_moves()
    assert board.legal_moves() == legal
    assert board.winner == ref.winner
    assert board.is_draw() == ref.is_draw()
    assert board.is_over() == ref.is_over()
    assert board.is_full() == ref.is_full()
    assert board.to_move == ref.to_move
    assert board.ply == ref.ply
    assert board.history == ref.moves
    for column, row in cells_of(rules):
        assert board.cell(column, row) == ref.cell(column, row), (column, row)
    legal_set = set(legal)
    for move in range(-2, rules.move_count + 2):
        assert board.is_legal(move) == (move in legal_set), move
    for move in legal:
        assert board.is_winning_move(move) == ref.is_winning_move(move), move
        assert board.move_cell(move) == ref.target(move), move


def play_random(data, board: Board, ref: ReferenceGame, max_moves: int, check=None):
    """Play up to ``max_moves`` random legal moves (chosen from the reference)."""
    # Half of the games go on until they are over (or ``max_moves`` is reached).
    count = data.draw(st.just(max_moves) | st.integers(0, max_moves), label="moves")
    for _ in range(count):
        legal = ref.legal_moves()
        if not legal:
            break
        move = data.draw(st.sampled_from(legal), label="move")
        board.play(move)
        ref.play(move)
        if check is not None:
            check(board, ref)


def random_game(data, rules: Rules, max_moves: int | None = None) -> Board:
    """A board after a random legal sequence, chosen with the engine only."""
    board = Board(rules)
    limit = rules.cells if max_moves is None else max_moves
    count = data.draw(st.integers(0, limit), label="moves")
    for _ in range(count):
        legal = board.legal_moves()
        if not legal:
            break
        board.play(data.draw(st.sampled_from(legal), label="move"))
    return board


# --- engine versus reference -----------------------------------------------------------


@PROPERTY
@given(rules=rules_strategy(), data=st.data())
def test_engine_agrees_with_reference(rules, data):
    board = Board(rules)
    ref = ReferenceGame.from_rules(rules)
    assert_agrees(board, ref)
    play_random(data, board, ref, rules.cells, check=assert_agrees)
    event("won" if board.winner is not None else "drawn" if board.is_draw() else "open")
    event(f"ply {'>=' if board.ply >= 20 else '<'} 20")
    if board.ply:
        (column, row) = board.last_cell()
        assert board.cell(column, row) == 1 - board.to_move


@PROPERTY
@given(rules=rules_strategy(), data=st.data())
def test_play_if_legal_is_is_legal_then_play_then_is_over(rules, data):
    # The referee's one call for a bot's answer: the same as the three it stands for,
    # for every answer, legal or not, of any type, in any position (a won one too).
    board = Board(rules)
    play_random(data, board, ReferenceGame.from_rules(rules), rules.cells)
    answers = [*range(-2, rules.move_count + 2), 2.0, True, "3", None]
    for answer in answers:
        fused, stepwise = board.copy(), board.copy()
        over = fused.play_if_legal(answer)
        if stepwise.is_legal(answer):
            stepwise.play(answer)  # type: ignore[arg-type]
            assert over is stepwise.is_over()
        else:
            assert over is None
        assert fused.history == stepwise.history and fused.key() == stepwise.key()
        assert fused.winner == stepwise.winner and fused.legal_moves() == stepwise.legal_moves()


@settings(PROPERTY, max_examples=60)
@given(
    rules=rules_strategy(min_width=10, max_width=40, min_height=10, max_height=40),
    data=st.data(),
)
def test_big_boards_agree_with_reference(rules, data):
    """Boards far wider than 64 bits: the same answers, checked after the last move."""
    board = Board(rules)
    ref = ReferenceGame.from_rules(rules)
    play_random(data, board, ref, 30)
    assert_agrees(board, ref)


@PROPERTY
@given(rules=rules_strategy(max_width=7, max_height=7, gravity=True), data=st.data())
def test_games_played_to_the_end_agree_with_reference(rules, data):
    """Play until the game is over (small boards with gravity fill up or end in a win)."""
    board = Board(rules)
    ref = ReferenceGame.from_rules(rules)
    while ref.legal_moves():
        move = data.draw(st.sampled_from(ref.legal_moves()))
        board.play(move)
        ref.play(move)
    assert_agrees(board, ref)
    assert board.is_over()
    assert board.legal_moves() == []
    event("won" if board.winner is not None else "drawn")


@QUICK
@given(rules=rules_strategy(), data=st.data())
def test_winning_move_means_playing_it_wins(rules, data):
    """is_winning_move(m) is exactly 'after play(m) the mover is the winner'."""
    board = random_game(data, rules)
    for move in board.legal_moves():
        trial = board.copy()
        mover = trial.to_move
        trial.play(move)
        assert board.is_winning_move(move) == (trial.winner == mover), move
        assert trial.winner in (None, mover)


# --- undo and copy ---------------------------------------------------------------------


@QUICK
@given(rules=rules_strategy(), data=st.data())
def test_undo_restores_every_earlier_position(rules, data):
    board = Board(rules)
    before = []
    copies = []
    count = data.draw(st.integers(0, rules.cells))
    for _ in range(count):
        legal = board.legal_moves()
        if not legal:
            break
        before.append(snapshot(board))
        copies.append(board.copy())
        board.play(data.draw(st.sampled_from(legal)))
    played = board.history
    while board.ply:
        expected_move = played[board.ply - 1]
        assert board.undo() == expected_move
        assert snapshot(board) == before[board.ply]
        assert board == copies[board.ply]
        assert board == Board.from_moves(board.history, rules)
    assert snapshot(board) == snapshot(Board(rules))
    with pytest.raises(IllegalMoveError):
        board.undo()


@QUICK
@given(rules=rules_strategy(max_width=8, max_height=8), data=st.data())
def test_interleaved_play_and_undo(rules, data):
    """Any mix of plays and undos leaves the same state as replaying the history."""
    board = Board(rules)
    expected: list[int] = []
    steps = data.draw(st.integers(0, 60))
    for _ in range(steps):
        legal = board.legal_moves()
        undo = board.ply > 0 and (not legal or data.draw(st.booleans()))
        if undo:
            assert board.undo() == expected.pop()
        elif legal:
            move = data.draw(st.sampled_from(legal))
            board.play(move)
            expected.append(move)
        fresh = Board.from_moves(expected, rules)
        assert board.history == expected
        assert board == fresh
        assert state(board) == state(fresh)
    assert snapshot(board) == snapshot(Board.from_moves(expected, rules))
    ref = ReferenceGame.from_rules(rules)
    for move in expected:
        ref.play(move)
    assert_agrees(board, ref)


@QUICK
@given(rules=rules_strategy(), data=st.data())
def test_play_then_undo_is_identity(rules, data):
    """From any position, playing each legal move and undoing it changes nothing."""
    board = random_game(data, rules)
    start = snapshot(board)
    quick = state(board)
    for move in board.legal_moves():
        board.play(move)
        assert board.undo() == move
        assert state(board) == quick
    assert snapshot(board) == start


@QUICK
@given(rules=rules_strategy(), data=st.data())
def test_copy_shares_nothing(rules, data):
    board = random_game(data, rules)
    original = snapshot(board)

    twin = board.copy()
    assert twin == board
    assert snapshot(twin) == original
    # Play on the copy (and undo past the shared history): the original is untouched.
    for _ in range(data.draw(st.integers(0, 10))):
        legal = twin.legal_moves()
        if not legal:
            break
        twin.play(data.draw(st.sampled_from(legal)))
    assert snapshot(board) == original
    while twin.ply:
        twin.undo()
    assert snapshot(board) == original
    assert board.history is not board.history  # a fresh list each time
    board.history.append(0)  # mutating the returned list does not reach the board
    assert snapshot(board) == original

    # And the other way round: play on the original, the copy stays put.
    twin = board.copy()
    frozen = snapshot(twin)
    for _ in range(data.draw(st.integers(0, 10))):
        legal = board.legal_moves()
        if not legal:
            break
        board.play(data.draw(st.sampled_from(legal)))
    for _ in range(2):
        if board.ply:
            board.undo()
    assert snapshot(twin) == frozen


def test_equality_is_by_rules_and_history_and_key_by_position():
    a = Board.from_moves("1234", CONNECT_FOUR)
    b = Board.from_moves("3214", CONNECT_FOUR)
    assert a.key() == b.key()
    assert a != b
    assert a == Board.from_moves([0, 1, 2, 3], CONNECT_FOUR)
    assert Board(Rules(7, 6, 4)) != Board(Rules(7, 6, 5))
    assert (a == "1234") is False
    with pytest.raises(TypeError):
        hash(a)


# --- notation --------------------------------------------------------------------------


def assert_notation_round_trips(board: Board) -> None:
    rules = board.rules
    moves = board.history
    text = format_moves(moves, rules)
    assert text == board.moves_string()
    assert parse_moves(text, rules) == moves
    assert parse_moves(text.upper(), rules) == moves
    assert parse_moves(f"  {text}  ", rules) == moves
    assert Board.from_moves(text, rules) == board
    assert Board.from_moves(text, rules).key() == board.key()
    for move in set(moves):
        assert parse_move(format_move(move, rules), rules) == move
    if rules.gravity and rules.width <= 9:
        assert text.isdigit() or text == ""
        assert len(text) == len(moves)
    if rules.gravity and rules.width >= 10:
        assert text.count(",") == max(len(moves) - 1, 0)
    if not rules.gravity:
        assert "," not in text and " " not in text
    # Separators are always allowed between moves.
    spaced = ", ".join(format_move(m, rules) for m in moves)
    assert parse_moves(spaced, rules) == moves


@QUICK
@given(rules=rules_strategy(max_width=40, max_height=40), data=st.data())
def test_notation_round_trips_on_any_rules(rules, data):
    assert_notation_round_trips(random_game(data, rules, max_moves=60))


@QUICK
@given(rules=rules_strategy(min_width=10, max_width=40, gravity=True), data=st.data())
def test_notation_round_trips_with_comma_columns(rules, data):
    assert_notation_round_trips(random_game(data, rules, max_moves=80))


@QUICK
@given(
    rules=rules_strategy(min_width=27, max_width=40, max_height=40, gravity=False),
    data=st.data(),
)
def test_notation_round_trips_with_two_letter_columns(rules, data):
    assert_notation_round_trips(random_game(data, rules, max_moves=80))


@QUICK
@given(rules=rules_strategy(max_width=40, max_height=40))
def test_every_single_move_round_trips(rules):
    seen = set()
    for move in range(rules.move_count):
        text = format_move(move, rules)
        assert parse_move(text, rules) == move
        seen.add(text)
    assert len(seen) == rules.move_count


def test_notation_examples():
    assert format_moves([3, 3, 4, 2], CONNECT_FOUR) == "4453"
    assert parse_moves("4453", CONNECT_FOUR) == [3, 3, 4, 2]
    assert parse_moves("4 4,5, 3", CONNECT_FOUR) == [3, 3, 4, 2]
    assert parse_moves("", CONNECT_FOUR) == []
    wide = Rules(12, 6, 4)
    assert format_moves([9, 2, 11], wide) == "10,3,12"
    assert parse_moves("10,3,12", wide) == [9, 2, 11]
    assert parse_moves("10 3 12", wide) == [9, 2, 11]
    assert parse_move("12", wide) == 11
    assert format_moves([4, 2], TIC_TAC_TOE) == "b2a3"
    assert parse_moves("b2a3", TIC_TAC_TOE) == [4, 2]
    assert parse_moves("B2, a3", TIC_TAC_TOE) == [4, 2]
    very_wide = Rules(30, 3, 3, gravity=False)
    assert format_move(25 * 3, very_wide) == "z1"
    assert format_move(26 * 3, very_wide) == "aa1"
    assert format_move(29 * 3 + 2, very_wide) == "ad3"
    assert parse_moves("z1aa1ad3", very_wide) == [75, 78, 89]
    tall = Rules(3, 40, 3, gravity=False)
    assert format_move(39, tall) == "a40"
    assert parse_moves("a40b1c12", tall) == [39, 40, 80 + 11]


@pytest.mark.parametrize(
    "text, rules",
    [
        ("8", CONNECT_FOUR),
        ("0", CONNECT_FOUR),
        ("1238", CONNECT_FOUR),
        ("x", CONNECT_FOUR),
        ("4-4", CONNECT_FOUR),
        ("13", Rules(12, 6, 4)),
        ("0", Rules(12, 6, 4)),
        ("1,,x", Rules(12, 6, 4)),
        ("z9", TIC_TAC_TOE),
        ("d1", TIC_TAC_TOE),
        ("a4", TIC_TAC_TOE),
        ("a0", TIC_TAC_TOE),
        ("a1?", TIC_TAC_TOE),
        ("a1?b2", TIC_TAC_TOE),
        ("?a1", TIC_TAC_TOE),
        ("a1-b2", TIC_TAC_TOE),
        ("1a", TIC_TAC_TOE),
        ("a", TIC_TAC_TOE),
        ("a1b", TIC_TAC_TOE),
        ("ae1", Rules(30, 3, 3, gravity=False)),
    ],
)
def test_parse_moves_rejects_junk(text, rules):
    with pytest.raises(NotationError) as info:
        parse_moves(text, rules)
    assert isinstance(info.value, ValueError)
    with pytest.raises(NotationError):
        Board.from_moves(text, rules)


def test_parse_move_wants_exactly_one_move():
    with pytest.raises(NotationError):
        parse_move("12", CONNECT_FOUR)
    with pytest.raises(NotationError):
        parse_move("", CONNECT_FOUR)
    with pytest.raises(NotationError):
        parse_move("a1b1", TIC_TAC_TOE)


# --- hand-made positions -------------------------------------------------------------

# (moves, winner, the four cells of the winning line as (column, row), 0-based)
CONNECT_FOUR_WINS = [
    # vertical, left edge, bottom
    ("1212121", 0, [(0, 0), (0, 1), (0, 2), (0, 3)]),
    # vertical, right edge, reaching the top row
    ("17277172717", 0, [(6, 2), (6, 3), (6, 4), (6, 5)]),
    # horizontal, bottom row, left corner
    ("1122334", 0, [(0, 0), (1, 0), (2, 0), (3, 0)]),
    # horizontal, bottom row, right corner
    ("7766554", 0, [(3, 0), (4, 0), (5, 0), (6, 0)]),
    # horizontal, top row, right corner, second player
    (
        "5644654265272431456426553237277677",
        1,
        [(3, 5), (4, 5), (5, 5), (6, 5)],
    ),
    # rising diagonal from the bottom-left corner
    ("12234334474", 0, [(0, 0), (1, 1), (2, 2), (3, 3)]),
    # rising diagonal into the top-right corner
    ("573246776667276574455", 0, [(3, 2), (4, 3), (5, 4), (6, 5)]),
    # falling diagonal into the bottom-right corner, first player
    ("76654554434", 0, [(3, 3), (4, 2), (5, 1), (6, 0)]),
    # falling diagonal into the bottom-right corner, second player
    ("674675441455", 1, [(3, 3), (4, 2), (5, 1), (6, 0)]),
    # falling diagonal from the top-left corner
    ("12172271112447441323323", 0, [(0, 5), (1, 4), (2, 3), (3, 2)]),
    # a win with the very last cell of the board
    ("473725347123341712511124675567466466235235", 1, None),
]


@pytest.mark.parametrize("moves, winner, line", CONNECT_FOUR_WINS)
def test_connect_four_wins(moves, winner, line):
    board = Board.from_moves(moves, CONNECT_FOUR)
    ref = ReferenceGame.from_rules(CONNECT_FOUR)
    for move in parse_moves(moves, CONNECT_FOUR):
        ref.play(move)
    assert_agrees(board, ref)
    assert board.winner == winner
    assert board.is_over() and not board.is_draw()
    assert board.legal_moves() == []
    assert not board.is_legal(0)
    if line is not None:
        for column, row in line:
            assert board.cell(column, row) == winner
        assert board.last_cell() in line
    # One move earlier nobody had won, and the last move was the winning one.
    board.undo()
    assert board.winner is None
    assert not board.is_over()
    last = parse_moves(moves, CONNECT_FOUR)[-1]
    assert board.is_winning_move(last)
    assert board.to_move == winner


def test_first_player_vertical_win_in_column_one():
    board = Board.from_moves("1212121", CONNECT_FOUR)
    assert board.winner == 0
    assert board.ply == 7
    assert board.render() == "\n".join(
        [
            ". . . . . . .",
            ". . . . . . .",
            "x . . . . . .",
            "X O . . . . .",
            "X O . . . . .",
            "X O . . . . .",
            "1 2 3 4 5 6 7",
        ]
    )


def test_connect_four_full_board_draw():
    moves = "442761225377252342545563474175371666631311"
    board = Board.from_moves(moves, CONNECT_FOUR)
    ref = ReferenceGame.from_rules(CONNECT_FOUR)
    for move in parse_moves(moves, CONNECT_FOUR):
        ref.play(move)
    assert_agrees(board, ref)
    assert board.ply == 42
    assert board.winner is None
    assert board.is_full() and board.is_draw() and board.is_over()
    assert board.legal_moves() == []


def test_full_board_win_is_not_a_draw():
    moves = "473725347123341712511124675567466466235235"
    board = Board.from_moves(moves, CONNECT_FOUR)
    assert board.is_full()
    assert board.winner == 1
    assert not board.is_draw()
    assert board.is_over()


@pytest.mark.parametrize(
    "moves, winner",
    [
        ("a1b1a2b2a3", 0),  # vertical
        ("a1a2b1b2c1", 0),  # horizontal, bottom
        ("a3a1b3b1c3", 0),  # horizontal, top
        ("a1a2b2a3c3", 0),  # rising diagonal, corner to corner
        ("a3a1b2b1c1", 0),  # falling diagonal, corner to corner
        ("a2c3a1c2b2c1", 1),  # second player, vertical on the right edge
        ("b2a3c1c2b3a1c3b1a2", None),  # full board, no line
        ("b2a3b1a2c3b3c2c1a1", 0),  # full board, won by the last stone
    ],
)
def test_tic_tac_toe(moves, winner):
    board = Board.from_moves(moves, TIC_TAC_TOE)
    ref = ReferenceGame.from_rules(TIC_TAC_TOE)
    for move in parse_moves(moves, TIC_TAC_TOE):
        ref.play(move)
    assert_agrees(board, ref)
    assert board.winner == winner
    assert board.is_over()
    assert board.is_draw() == (winner is None)


def test_tic_tac_toe_cell_numbering():
    board = Board(TIC_TAC_TOE)
    board.play_checked(5)  # column 1 (b), row 2 (top)
    assert board.cell(1, 2) == 0
    assert board.move_cell(7) == (2, 1)
    assert board.cell_move(2, 1) == 7
    assert format_move(5, TIC_TAC_TOE) == "b3"
    assert board.legal_moves() == [0, 1, 2, 3, 4, 6, 7, 8]


def interleave(x_cells: list[str], o_cells: list[str]) -> str:
    moves = []
    for i, x in enumerate(x_cells):
        moves.append(x)
        if i < len(o_cells):
            moves.append(o_cells[i])
    return "".join(moves)


GRAVITY_FREE_C4 = Rules(7, 6, 4, gravity=False)


@pytest.mark.parametrize(
    "x_cells",
    [
        ["a4", "a5", "a6", "b1"],  # top of column a, bottom of column b
        ["a5", "a6", "b1", "b2"],
        ["f6", "g1", "g2", "g3"],  # into the last column
        ["f1", "g1", "a2", "b2"],  # end of a row, start of the next
        ["g5", "a6", "b6", "c6"],
        ["a2", "b1", "b6", "c5"],  # falling diagonal through the bottom edge
        ["a5", "b6", "d1", "e2"],  # rising diagonal through the top edge
        ["e5", "f6", "g1", "a2"],
        ["f1", "g2", "a3", "b4"],  # rising diagonal off the right edge
        ["f6", "g5", "a4", "b3"],  # falling diagonal off the right edge
    ],
)
def test_no_line_wraps_around_an_edge(x_cells):
    fillers = [c for c in ("d3", "d4", "c3", "e4", "c2") if c not in x_cells][:3]
    moves = interleave(x_cells, fillers)
    board = Board.from_moves(moves, GRAVITY_FREE_C4)
    ref = ReferenceGame.from_rules(GRAVITY_FREE_C4)
    for move in parse_moves(moves, GRAVITY_FREE_C4):
        ref.play(move)
    assert ref.winner is None  # the pattern really is no line
    assert_agrees(board, ref)
    assert board.winner is None
    assert not board.is_over()


@pytest.mark.parametrize(
    "moves",
    [
        "21516117171",  # X: top three of column 1 and the bottom of column 2
        "5162731",  # X: bottom of columns 5-7 and the second row of column 1
        "1122337",  # X: columns 1-3 and 7 of the bottom row
    ],
)
def test_connect_four_no_win_across_columns(moves):
    board = Board.from_moves(moves, CONNECT_FOUR)
    ref = ReferenceGame.from_rules(CONNECT_FOUR)
    for move in parse_moves(moves, CONNECT_FOUR):
        ref.play(move)
    assert ref.winner is None
    assert_agrees(board, ref)
    assert board.winner is None


def test_tic_tac_toe_no_wrap_between_columns():
    # X on a3 (top of a) then b1, b2 (bottom of b): not a line.
    board = Board.from_moves("a3c3b1c1b2", TIC_TAC_TOE)
    assert board.winner is None
    assert board.to_move == 1
    # X on c1 (bottom of c) under b3 (top of b) and a2: no diagonal either.
    board = Board.from_moves("b3a1a2a3c1", TIC_TAC_TOE)
    assert board.winner is None


def test_long_lines_on_a_big_board():
    rules = Rules(40, 40, 40, gravity=False)
    board = Board(rules)
    # The whole left column for X, O on the next column: X wins on the 40th stone.
    for row in range(40):
        assert board.winner is None
        board.play_checked(row)
        if row < 39:
            board.play_checked(40 + row)
    assert board.winner == 0
    # 39 in a row is not enough.
    board = Board(rules)
    for row in range(39):
        board.play_checked(row)
        board.play_checked(40 * 2 + row)
    assert board.winner is None
    assert board.is_winning_move(39)


# --- rules validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, field, shown",
    [
        ({"width": 2}, "width", "2"),
        ({"width": 41}, "width", "41"),
        ({"width": -7}, "width", "-7"),
        ({"height": 2}, "height", "2"),
        ({"height": 41}, "height", "41"),
        ({"height": 0}, "height", "0"),
        ({"connect": 2}, "connect", "2"),
        ({"connect": 8}, "connect", "8"),
        ({"width": 3, "height": 10, "connect": 11}, "connect", "11"),
        ({"width": 7.0}, "width", "7.0"),
        ({"width": "7"}, "width", "'7'"),
        ({"height": None}, "height", "None"),
        ({"height": 6.5}, "height", "6.5"),
        ({"connect": 4.0}, "connect", "4.0"),
        ({"connect": "4"}, "connect", "'4'"),
        ({"width": True}, "width", "True"),
        ({"connect": False}, "connect", "False"),
        ({"gravity": 1}, "gravity", "1"),
        ({"gravity": 0}, "gravity", "0"),
        ({"gravity": "yes"}, "gravity", "'yes'"),
        ({"gravity": None}, "gravity", "None"),
    ],
)
def test_bad_rules_are_rejected(kwargs, field, shown):
    with pytest.raises(RulesError) as info:
        Rules(**kwargs)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert field in message
    assert shown in message


@pytest.mark.parametrize(
    "width, height, connect",
    [(3, 3, 3), (40, 40, 40), (3, 40, 40), (40, 3, 40), (7, 6, 7), (10, 3, 10)],
)
def test_boundary_rules_are_accepted(width, height, connect):
    for gravity in (True, False):
        rules = Rules(width, height, connect, gravity)
        board = Board(rules)
        assert len(board.legal_moves()) == rules.move_count


@settings(max_examples=300, deadline=None)
@given(
    width=st.integers(-2, 45),
    height=st.integers(-2, 45),
    connect=st.integers(-2, 45),
    gravity=st.booleans(),
)
def test_rules_accepted_exactly_when_valid(width, height, connect, gravity):
    valid = 3 <= width <= 40 and 3 <= height <= 40 and 3 <= connect <= max(width, height)
    if valid:
        rules = Rules(width, height, connect, gravity)
        assert rules.as_dict() == {
            "width": width,
            "height": height,
            "connect": connect,
            "gravity": gravity,
        }
    else:
        with pytest.raises(RulesError):
            Rules(width, height, connect, gravity)


# --- illegal moves ---------------------------------------------------------------------


def assert_illegal(board: Board, move, *words: str) -> None:
    before = snapshot(board)
    assert not board.is_legal(move)
    with pytest.raises(IllegalMoveError) as info:
        board.play_checked(move)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert repr(move) in message
    for word in words:
        assert word in message
    assert snapshot(board) == before  # a refused move changes nothing


def test_full_column_is_illegal():
    board = Board.from_moves("111111", CONNECT_FOUR)
    assert board.legal_moves() == [1, 2, 3, 4, 5, 6]
    assert_illegal(board, 0, "full")
    with pytest.raises(IllegalMoveError):
        Board.from_moves("1111111", CONNECT_FOUR)


def test_taken_cell_is_illegal():
    board = Board.from_moves("b2", TIC_TAC_TOE)
    assert_illegal(board, 4, "taken")
    with pytest.raises(IllegalMoveError):
        Board.from_moves("b2b2", TIC_TAC_TOE)


@pytest.mark.parametrize("move", [-1, 7, 8, 100, -100])
def test_out_of_range_column_is_illegal(move):
    assert_illegal(Board(CONNECT_FOUR), move, "range")


@pytest.mark.parametrize("move", [-1, 9, 10])
def test_out_of_range_cell_is_illegal(move):
    assert_illegal(Board(TIC_TAC_TOE), move, "range")


@pytest.mark.parametrize("move", ["1", "a1", 1.0, 0.0, None, True, False, [1], (0,)])
@pytest.mark.parametrize("rules", [CONNECT_FOUR, TIC_TAC_TOE])
def test_non_int_move_is_illegal(move, rules):
    assert_illegal(Board(rules), move, type(move).__name__)


@pytest.mark.parametrize(
    "moves, rules, next_move",
    [
        ("1212121", CONNECT_FOUR, 0),
        ("1212121", CONNECT_FOUR, 1),
        ("1122334", CONNECT_FOUR, 6),
        ("a1b1a2b2a3", TIC_TAC_TOE, 8),
    ],
)
def test_moves_after_a_win_are_illegal(moves, rules, next_move):
    board = Board.from_moves(moves, rules)
    assert board.winner == 0
    assert board.legal_moves() == []
    for move in range(rules.move_count):
        assert not board.is_legal(move)
    assert_illegal(board, next_move, "won")
    with pytest.raises(IllegalMoveError):
        Board.from_moves(moves + format_move(next_move, rules), rules)


# --- rendering -----------------------------------------------------------------------------


def test_render_empty_connect_four():
    text = Board().render()
    lines = text.split("\n")
    assert len(lines) == 7
    assert lines[-1] == "1 2 3 4 5 6 7"
    assert all(line == ". . . . . . ." for line in lines[:-1])
    assert str(Board()) == text
    assert render(Board()) == text


def test_render_shows_stones_and_the_last_move():
    board = Board.from_moves("4453", CONNECT_FOUR)
    assert board.render() == "\n".join(
        [
            ". . . . . . .",
            ". . . . . . .",
            ". . . . . . .",
            ". . . . . . .",
            ". . . O . . .",
            ". . o X X . .",
            "1 2 3 4 5 6 7",
        ]
    )
    assert render(board, marks=("R", "Y"), empty="-").split("\n")[-2] == "- - y R R - -"


def test_render_without_gravity_labels_letters_and_rows():
    board = Board.from_moves("b2a3", TIC_TAC_TOE)
    assert board.render() == "\n".join(
        [
            "3 o . .",
            "2 . X .",
            "1 . . .",
            "  a b c",
        ]
    )


def test_render_wide_boards():
    wide = Board.from_moves("10,12", Rules(12, 6, 4))
    lines = wide.render().split("\n")
    assert len(lines) == 7
    assert lines[-1].split() == [str(c) for c in range(1, 13)]
    assert lines[-2].split() == ["."] * 9 + ["X", ".", "o"]

    rules = Rules(28, 12, 4, gravity=False)
    board = Board(rules)
    board.play_checked(27 * 12 + 11)  # ab12, the top-right corner
    lines = board.render().split("\n")
    assert len(lines) == 13
    labels = lines[-1].split()
    assert labels[:3] == ["a", "b", "c"]
    assert labels[25:] == ["z", "aa", "ab"]
    assert lines[0].split()[0] == "12"
    assert lines[0].split()[-1] == "x"
    assert lines[-2].split()[0] == "1"
    # Every row and the label line line up.
    assert len({len(line) for line in lines}) == 1


@QUICK
@given(rules=rules_strategy(max_width=30, max_height=15), data=st.data())
def test_render_matches_cells(rules, data):
    board = random_game(data, rules, max_moves=40)
    lines = board.render().split("\n")
    assert len(lines) == rules.height + 1
    prefix = 0 if rules.gravity else len(str(rules.height)) + 1
    for row in range(rules.height):
        tokens = lines[rules.height - 1 - row][prefix:].split()
        if not rules.gravity:
            assert lines[rules.height - 1 - row][:prefix].strip() == str(row + 1)
        assert len(tokens) == rules.width
        for column, token in enumerate(tokens):
            owner = board.cell(column, row)
            expected = "." if owner is None else "XO"[owner]
            if (column, row) == board.last_cell():
                expected = expected.lower()
            assert token == expected
    assert len(lines[-1].split()) == rules.width



# --- the full-board scoring variant ------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(rules=rules_strategy(max_width=7, max_height=7), data=st.data())
def test_count_scoring_agrees_with_reference(rules, data):
    rules = Rules(rules.width, rules.height, rules.connect, rules.gravity, scoring="count")
    board, ref = Board(rules), ReferenceGame.from_rules(rules)
    while not ref.is_over():
        legal = ref.legal_moves()
        assert board.legal_moves() == legal
        assert board.winner is None  # nothing is decided before the board is full
        assert [board.is_winning_move(m) for m in legal] == [ref.is_winning_move(m) for m in legal]
        move = data.draw(st.sampled_from(legal))
        board.play(move)
        ref.play(move)
    assert board.is_full() and board.is_over()
    assert board.window_counts() == (ref.window_count(0), ref.window_count(1))
    assert board.winner == ref.winner
    assert board.is_draw() == (ref.winner is None)
    board.undo()
    assert board.winner is None and not board.is_over()


def test_a_line_of_five_holds_two_fours():
    rules = Rules(7, 6, 4, gravity=False, scoring="count")
    board = Board(rules)
    for column in range(5):  # X along the bottom row, O along the top
        board.play(board.cell_move(column, 0))
        board.play(board.cell_move(column, 5))
    assert board.window_counts() == (2, 2)
    assert board.winner is None and not board.is_over()  # lines do not end the game


def test_scoring_is_validated_and_described():
    with pytest.raises(RulesError, match="scoring must be one of line, count, got 'most'"):
        Rules(scoring="most")
    assert Rules(scoring="count").describe() == "7x6 connect 4, count scoring"
    assert "scoring" not in Rules().as_dict()
    assert Rules(**Rules(scoring="count").as_dict()) == Rules(scoring="count")


@settings(max_examples=150, deadline=None)
@given(st.integers(3, 7), st.integers(3, 7), st.integers(3, 5), st.booleans(), st.randoms(use_true_random=False))
def test_the_winning_lines_are_the_lines_the_last_move_made(width, height, connect, gravity, rng):
    """Board.winning_lines (what the site rings at a replay's end): every line is
    ``connect`` or more of the winner's stones in a row through the last stone, and
    there is one exactly when the last move won (never for count scoring)."""
    connect = min(connect, max(width, height))
    for scoring in ("line", "count"):
        board = Board(Rules(width, height, connect, gravity, scoring))
        while not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        lines = board.winning_lines()
        if scoring == "count" or board.winner is None:
            assert lines == []
            continue
        assert lines
        for line in lines:
            assert len(line) >= connect and board.last_cell() in line
            assert all(board.cell(c, r) == board.winner for c, r in line)
            (c0, r0), (c1, r1) = line[0], line[1]
            step = (c1 - c0, r1 - r0)
            assert all((c - c0, r - r0) == (i * step[0], i * step[1]) for i, (c, r) in enumerate(line))
