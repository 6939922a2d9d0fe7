"""The solver's opening book: its file format, its lookups by position and mirror
image, the shipped 7x6 book's entries checked by solving them, and its coverage of
every early position the solver bot meets when it plays from the book."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine.game import Board, Rules
from arena.engine.scores import score_of_win
from bots import book_builder
from bots.book_builder import DEFAULT_NODES
from bots.opening_book import (
    BookError,
    OpeningBook,
    book_for,
    canonical,
    mirror,
    position_key,
    position_of_key,
)
from bots.solver import Solver, SolverBot, fast_available

C4 = Rules()
needs_numba = pytest.mark.skipif(not fast_available(), reason="the compiled solver needs numba")


def random_board(rng: random.Random, plies: int, rules: Rules = C4) -> Board:
    board = Board(rules)
    while board.ply < plies and not board.is_over():
        board.play(rng.choice(board.legal_moves()))
    return board


def mirrored(board: Board) -> Board:
    return Board.from_moves([board.rules.width - 1 - m for m in board.history], board.rules)


# --- keys -------------------------------------------------------------------------------


@given(st.integers(0, 2**32), st.integers(0, 42))
def test_a_key_gives_back_its_position(seed, plies):
    board = random_board(random.Random(seed), plies)
    cur, mask = board.key()
    assert position_of_key(position_key(cur, mask), C4) == (cur, mask)


@given(st.integers(0, 2**32), st.integers(0, 42))
def test_a_position_and_its_mirror_image_share_a_key(seed, plies):
    board = random_board(random.Random(seed), plies)
    image = mirrored(board)
    (key, flipped), (image_key, image_flipped) = canonical(*board.key(), C4), canonical(*image.key(), C4)
    assert key == image_key
    assert mirror(mirror(board.occupied, C4), C4) == board.occupied
    if board.key() != image.key():  # not symmetric: exactly one of the two is flipped
        assert flipped != image_flipped


# --- the file ---------------------------------------------------------------------------


def small_book() -> tuple[OpeningBook, Board]:
    board = Board.from_moves("4453", C4)  # not symmetric: its mirror is 4435
    key, flipped = canonical(*board.key(), C4)
    move = 2
    stored = C4.width - 1 - move if flipped else move
    empty_key, _ = canonical(0, 0, C4)
    return OpeningBook.from_entries(C4, [(key, stored, -3), (empty_key, 3, 1)]), board


def test_lookup_by_position_and_by_mirror_image():
    book, board = small_book()
    assert book.lookup(board) == (2, -3)
    assert book.lookup(mirrored(board)) == (C4.width - 1 - 2, -3)
    assert book.lookup(Board(C4)) == (3, 1)
    assert book.lookup(Board.from_moves("44", C4)) is None
    assert book.lookup(Board(Rules(8, 7, 4))) is None  # other rules: never a move of this book
    assert book.lookup(Board.from_moves("1212121", C4)) is None  # a finished game


def test_round_trip_through_bytes():
    book, board = small_book()
    again = OpeningBook.from_bytes(book.to_bytes())
    assert again.entries() == book.entries()
    assert again.rules == C4
    assert again.lookup(board) == (2, -3)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda data: data[:10], "too short"),
        (lambda data: b"NOTABOOK" + data[8:], "not an opening book"),
        (lambda data: data[:-1], "cut short"),
        (lambda data: data + b"\0", "cut short or padded"),
        # The moves sit just before the last two bytes (the two entries' scores).
        (lambda data: data[:-4] + bytes([9]) + data[-3:], "outside the board"),
    ],
)
def test_a_damaged_file_is_refused_with_what_is_wrong(damage, message):
    book, _ = small_book()
    with pytest.raises(BookError, match=message):
        OpeningBook.from_bytes(damage(book.to_bytes()), "book.bin")


def test_keys_out_of_order_are_refused():
    book, _ = small_book()
    data = book.to_bytes()
    header = len(data) - 10 * len(book)
    swapped = data[:header] + data[header + 8 : header + 16] + data[header : header + 8] + data[header + 16 :]
    with pytest.raises(BookError, match="out of order"):
        OpeningBook.from_bytes(swapped)


# --- the shipped book -------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> OpeningBook:
    book = book_for(C4)
    assert book is not None, "the 7x6 book must ship with the solver (bots/data)"
    return book


def test_only_7x6_connect_4_has_a_book(shipped):
    assert len(shipped) > 1000
    assert book_for(Rules(8, 7, 4)) is None
    assert book_for(Rules(7, 6, 4, gravity=False)) is None


def test_the_first_move_is_the_centre_and_wins(shipped):
    # Allis (1988): the first player wins, by the centre column only, with the last
    # stone of the board at best (score 1 on Pons' scale).
    assert shipped.lookup(Board(C4)) == (3, 1)


@needs_numba
def test_a_sample_of_entries_checked_by_solving_them(shipped):
    """Each sampled entry's score is the position's exact score, and its move keeps it."""
    solver = Solver(C4, "numba", table_bits=22)
    entries = shipped.entries()
    # The deeper entries solve in well under a second each; the shallow ones take
    # minutes (that is why they are in the book), so the sample is drawn from the deep.
    deep = [e for e in entries if position_of_key(e[0], C4)[1].bit_count() >= 8]
    rng = random.Random(19)
    g = C4.geometry
    for key, move, score in rng.sample(deep, 12):
        cur, mask = position_of_key(key, C4)
        ply = mask.bit_count()
        assert not mask & g.top[move], "the book's move must be legal"
        solver.reset()
        assert solver.solve_raw(cur, mask, ply) == score
        bit = (mask + g.bottom[move]) & g.column[move]
        if score == score_of_win(C4, ply):  # the quickest win: the move itself wins
            continue
        assert solver.solve_raw(cur ^ mask, mask | bit, ply + 1) == -score


@needs_numba
@settings(max_examples=25)
@given(st.integers(0, 2**32), st.sampled_from([0, 1]))
def test_every_early_position_of_the_bot_is_in_the_book_or_quick_to_solve(shipped, seed, side):
    """Whatever the opponent plays, each position where the solver bot is to move
    (up to 16 stones), as first player or as second, is in the book or solved,
    best move included, within 4x the node budget the book was built for: well
    within a 0.1 s move."""
    rng = random.Random(seed)
    judge = Solver(C4, "numba")
    board = Board(C4)
    while board.ply < 16 and not board.is_over():
        if board.ply % 2 == side:
            known = shipped.lookup(board)
            if known is None:
                judge.reset()
                found = judge.best_move(board, nodes=4 * DEFAULT_NODES)
                assert found is not None, f"{board.moves_string()!r} is neither in the book nor quick to solve"
                move = found[0]
            else:
                move = known[0]
            board.play(move)
        else:
            board.play(rng.choice(board.legal_moves()))


def test_the_bot_plays_the_book_move_and_says_so(shipped):
    bot = SolverBot()
    bot.new_game(C4, 0, 1)
    choice = bot.choose_move(Board(C4))
    assert choice.move == 3
    assert choice.info["book"] is True
    assert choice.info["score"] == 1
    assert choice.info["solved"] is True


def test_the_bot_without_its_book_searches(shipped):
    bot = SolverBot(book=False, nodes=20_000)
    bot.new_game(C4, 0, 1)
    choice = bot.choose_move(Board(C4))
    assert "book" not in choice.info
    assert choice.info["solved"] is False  # the empty board is far beyond 20,000 nodes


def test_merge_writes_the_book_of_journals_later_ones_winning(tmp_path):
    key, _ = canonical(0, 0, C4)
    first, second = tmp_path / "a.journal", tmp_path / "b.journal"
    first.write_text(f"{key} 2 1\n12345 easy\n")
    second.write_text(f"{key} 3 1\n")
    out = tmp_path / "book.bin"
    assert book_builder.main(["--merge", str(first), str(second), "--out", str(out)]) == 0
    assert OpeningBook.read(out).lookup(Board(C4)) == (3, 1)


def test_a_bad_journal_is_one_line_and_exit_2(tmp_path, capsys):
    journal = tmp_path / "bad.journal"
    journal.write_text("1 2\n")
    with pytest.raises(SystemExit) as stop:
        book_builder.main(["--merge", str(journal), "--out", str(tmp_path / "book.bin")])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("bad.journal:1: not a journal line: '1 2'")
    assert not (tmp_path / "book.bin").exists()
