"""The book builder: the walk's shortcuts give the book a plain walk gives, a
parallel build gives the serial build's book, and a build stopped part-way goes on
from its journals to the same book. (The shipped book's entries are checked by
solving them in tests/test_opening_book.py.)"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine.game import Board, Rules
from bots import book_builder
from bots.book_builder import (
    BookBuilder,
    build,
    canonical_roots,
    cut_unfinished_line,
    first_roots,
    part_journals,
    read_journal,
)
from bots.opening_book import OpeningBook, canonical
from bots.solver import Solver, fast_available

pytestmark = pytest.mark.skipif(not fast_available(), reason="the book builder needs the compiled solver")

C4 = Rules()
#: A board small enough to build a whole book in seconds; a node budget small
#: enough that it has thousands of hard positions.
TINY = Rules(5, 4, 4)
TINY_NODES = 30
TINY_PLIES = (0, 1)
#: A key above every 5x4 position's (25 bits): an entry no walk comes to.
NO_POSITION = 2**30


def random_open_board(rng: random.Random, plies: int, rules: Rules = C4) -> Board:
    while True:
        board = Board(rules)
        while board.ply < plies and not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        if not board.is_over():
            return board


# --- the search from a known floor ------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.integers(14, 30), st.sampled_from([0, 1, 2, 5, 40]))
def test_solving_from_a_floor_below_the_value_gives_the_value(seed, plies, below):
    board = random_open_board(random.Random(seed), plies)
    solver = Solver(C4, "numba", table_bits=18)
    value = solver.solve(board)
    assert value is not None
    solver.reset()
    assert solver.solve_from(board, value - below) == value
    solver.reset()
    found = solver.best_move(board, floor=value - below)
    assert found is not None and found[1] == value
    child = board.copy()
    child.play(found[0])
    assert child.winner is not None or -Solver(C4, "numba", table_bits=18).solve(child) == value  # type: ignore[operator]


# --- the builder on a small board -------------------------------------------------------


def plain_book(rules: Rules, nodes: int, plies: tuple[int, ...]) -> dict[int, tuple[int, int]]:
    """The book by the rule alone: from each root, every position where the bot is to
    move, judged and searched as keyed, no shortcut taken."""
    judge, search = Solver(rules, "numba"), Solver(rules, "numba", table_bits=16)
    entries: dict[int, tuple[int, int]] = {}

    def walk(board: Board) -> None:
        key, mirrored = canonical(*board.key(), rules)
        view = Board.from_moves([rules.width - 1 - m for m in board.history], rules) if mirrored else board
        judge.reset()
        if judge.best_move(view, nodes=nodes) is not None:
            return
        found = search.best_move(view)
        assert found is not None
        entries[key] = found
        board.play(rules.width - 1 - found[0] if mirrored else found[0])
        if not board.is_over():
            for reply in board.legal_moves():
                board.play(reply)
                if not board.is_over():
                    walk(board)
                board.undo()
        board.undo()

    for root in canonical_roots(rules, plies):
        walk(root.copy())
    return entries


@pytest.fixture(scope="module")
def serial_book(tmp_path_factory) -> OpeningBook:
    journal = tmp_path_factory.mktemp("serial") / "tiny.journal"
    return build(TINY, canonical_roots(TINY, TINY_PLIES), journal=journal, nodes=TINY_NODES, table_bits=16)


def test_the_walks_shortcuts_give_the_plain_walks_book(serial_book):
    plain = plain_book(TINY, TINY_NODES, TINY_PLIES)
    assert len(plain) > 1000
    assert {k: (m, s) for k, m, s in serial_book.entries()} == plain


def test_roots_are_one_per_position_and_mirror_image():
    roots = canonical_roots(C4, (2, 3))
    keys = [canonical(*r.key(), C4)[0] for r in roots]
    assert len(keys) == len(set(keys))
    every = {canonical(*b.key(), C4)[0] for b in (Board.from_moves(list(m), C4) for m in _sequences(3))}
    assert set(keys) == every | {canonical(*Board.from_moves(list(m), C4).key(), C4)[0] for m in _sequences(2)}
    assert [r.ply for r in roots] == sorted(r.ply for r in roots)  # fewest stones first


def test_roots_named_first_are_walked_first_in_the_order_given():
    roots = canonical_roots(C4, (3,))
    keys = [canonical(*r.key(), C4)[0] for r in roots]
    ordered = first_roots(C4, roots, ["444", "626", "262"])  # 262 is 626's mirror image: named once
    first = [canonical(*Board.from_moves(m, C4).key(), C4)[0] for m in ("444", "626")]
    assert [canonical(*r.key(), C4)[0] for r in ordered[:2]] == first
    rest = [canonical(*r.key(), C4)[0] for r in ordered[2:]]
    assert rest == [k for k in keys if k not in first]  # the others in their own order
    with pytest.raises(ValueError, match="1 of the positions named are not roots"):
        first_roots(C4, roots, ["44"])


def _sequences(plies: int) -> list[tuple[int, ...]]:
    import itertools

    return list(itertools.product(range(C4.width), repeat=plies))


def test_a_parallel_build_gives_the_serial_builds_book(serial_book, tmp_path):
    journal = tmp_path / "tiny.journal"
    book = build(TINY, canonical_roots(TINY, TINY_PLIES), journal=journal, jobs=3, nodes=TINY_NODES, table_bits=16)
    assert book.entries() == serial_book.entries()
    parts = part_journals(journal)
    assert [p.name for p in parts] == [f"tiny.journal.part{k}" for k in range(3)]
    assert not journal.exists()  # the parts hold it all
    assert sum(len(read_journal(p)[0]) for p in parts) >= len(book)


def test_a_stopped_parallel_build_goes_on_from_its_journals(serial_book, tmp_path):
    journal = tmp_path / "tiny.journal"
    roots = canonical_roots(TINY, TINY_PLIES)
    build(TINY, roots, journal=journal, jobs=2, nodes=TINY_NODES, table_bits=16)
    # Stop it as a kill would: each part cut after a third of its lines, in the middle of a line.
    kept: dict[Path, list[str]] = {}
    for part in part_journals(journal):
        lines = part.read_text().splitlines(keepends=True)
        kept[part] = lines[: len(lines) // 3]
        part.write_text("".join(kept[part]) + lines[len(lines) // 3][:3])
    book = build(TINY, roots, journal=journal, jobs=2, nodes=TINY_NODES, table_bits=16)
    assert book.entries() == serial_book.entries()
    known = {line.split()[0] for lines in kept.values() for line in lines}
    for part, lines in kept.items():
        text = part.read_text()
        assert text.startswith("".join(lines)), "a resumed build appends to its journal"
        read_journal(part)  # every line whole again
        # What the journals kept is not judged again (by any part).
        added = {line.split()[0] for line in text[len("".join(lines)) :].splitlines()}
        assert added and not added & known


def test_a_finished_build_run_again_searches_nothing(serial_book, tmp_path):
    journal = tmp_path / "tiny.journal"
    roots = canonical_roots(TINY, TINY_PLIES)
    build(TINY, roots, journal=journal, nodes=TINY_NODES, table_bits=16)
    before = journal.read_text()
    assert build(TINY, roots, journal=journal, jobs=2, nodes=TINY_NODES, table_bits=16).entries() == (
        serial_book.entries()
    )
    assert journal.read_text() == before
    assert all(p.read_text() == "" for p in part_journals(journal))


def test_a_seed_books_entries_are_followed_and_kept(serial_book, tmp_path):
    # Seeded with half the book, a build walks through the seeded entries without
    # judging them, and its book holds the whole book again.
    entries = serial_book.entries()
    seed = OpeningBook.from_entries(TINY, entries[::2])
    journal = tmp_path / "tiny.journal"
    book = build(TINY, canonical_roots(TINY, TINY_PLIES), journal=journal, nodes=TINY_NODES, table_bits=16, seed=seed)
    assert book.entries() == entries
    found, _ = read_journal(journal)
    assert not set(found) & {k for k, _, _ in seed.entries()}
    # A seed entry unreachable from the roots is kept too.
    extra = OpeningBook.from_entries(TINY, [*entries, (NO_POSITION, 0, 0)])
    again = build(TINY, [], journal=tmp_path / "other.journal", nodes=TINY_NODES, table_bits=16, seed=extra)
    assert (NO_POSITION, 0, 0) in again.entries()


# --- journals and the command -----------------------------------------------------------


def test_an_unfinished_last_line_is_left_out_and_cut_before_writing_on(tmp_path):
    journal = tmp_path / "j"
    journal.write_text("7 3 1\n8 easy\n91 2")
    assert read_journal(journal) == ({7: (3, 1)}, {8})
    cut_unfinished_line(journal)
    assert journal.read_text() == "7 3 1\n8 easy\n"
    builder = BookBuilder(TINY, TINY_NODES, 10, journal)
    builder.write("9 easy")
    assert read_journal(journal) == ({7: (3, 1)}, {8, 9})


def test_the_command_builds_extends_and_merges_a_book(tmp_path, capsys, monkeypatch, serial_book):
    monkeypatch.setattr(book_builder, "BOOK_RULES", TINY)
    book_path, journal = tmp_path / "book.bin", tmp_path / "b.journal"
    args = ["--out", str(book_path), "--journal", str(journal), "--only-plies", "1", "--limit-roots", "2",
            "--nodes", str(TINY_NODES), "--table-bits", "16", "--jobs", "2"]  # fmt: skip
    assert book_builder.main(args) == 0
    built = OpeningBook.read(book_path)
    assert 0 < len(built) < len(serial_book)  # two roots of the four
    assert set(built.entries()) < set(serial_book.entries())
    seed = tmp_path / "seed.bin"
    seed.write_bytes(OpeningBook.from_entries(TINY, [(NO_POSITION, 0, 0)]).to_bytes())
    assert book_builder.main([*args, "--seed-book", str(seed)]) == 0
    assert OpeningBook.read(book_path).entries() == sorted([*built.entries(), (NO_POSITION, 0, 0)])
    merged = tmp_path / "merged.bin"
    assert book_builder.main(["--merge", *map(str, part_journals(journal)), "--seed-book", str(seed),
                              "--out", str(merged)]) == 0  # fmt: skip
    assert OpeningBook.read(merged).entries() == OpeningBook.read(book_path).entries()
    assert "entries written to" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--jobs", "0"], "--jobs must be at least 1, got 0"),
        (["--limit-roots", "0"], "--limit-roots must be at least 1, got 0"),
        (["--only-plies", "two"], "--only-plies takes stone counts such as 2,3, got 'two'"),
        (["--seed-book", "missing.bin"], "missing.bin"),
        (["--only-plies", "3", "--first", "44"], "--first: 1 of the positions named are not roots"),
        (["--first", "48"], "--first: bad column '8' in '48': columns are 1..7"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as stop:
        book_builder.main(["--out", str(tmp_path / "book.bin"), *extra])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "book.bin").exists()
