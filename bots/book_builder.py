"""Build the solver's opening book (:mod:`bots.opening_book`) with this project's solver.

Run: python -m bots.book_builder [--out bots/data/book-7x6-4.bin] [--nodes N]
                                 [--journal FILE] [--table-bits B] [--root-plies R]
                                 [--only-plies P,Q]

The book follows the bot's own strategy. From each root (every position with at
most ``--root-plies`` stones, 3 by default: the bot may start as first or second
player after a tournament's random opening of up to 2 plies, or of none) it walks
the positions where the bot is to move:

* a position the solver proves, best move included, within ``--nodes`` search nodes
  from an empty transposition table is left out: the bot solves it at play time,
  and everything after it is smaller still;
* any other position gets an entry, the proven best move found by an unbounded
  search (one large table kept across the whole build, so each search reuses what
  the earlier ones proved), and the walk goes on through every reply to that move.

So the book holds the hard positions of the bot's own games and nothing else: a
few tens of thousands of positions where the whole tree of every early position
would be millions. Each entry is written to a journal as it is found, so a build
that is stopped goes on from where it was when run again with the same journal.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from arena.engine.game import Board, Rules
from bots.opening_book import PACKAGE_BOOK, OpeningBook, canonical
from bots.solver import Solver

#: The node budget a position may need and still be left to the search at play
#: time: about 15 ms of this machine's solver, a small share of a 0.1 s move.
DEFAULT_NODES = 100_000
#: Roots: every position with at most this many stones (see the module's doc).
DEFAULT_ROOT_PLIES = 3
#: The journal's mark of a position left to the search (its other lines: key, move, score).
EASY = "easy"


def read_journal(journal: Path) -> tuple[dict[int, tuple[int, int]], set[int]]:
    """(entries by canonical key: (move, score); keys left to the search) of a journal."""
    entries: dict[int, tuple[int, int]] = {}
    easy: set[int] = set()
    for number, line in enumerate(journal.read_text().splitlines(), 1):
        fields = line.split()
        try:
            if fields[1] == EASY:
                easy.add(int(fields[0]))
            else:
                entries[int(fields[0])] = (int(fields[1]), int(fields[2]))
        except (IndexError, ValueError):
            raise ValueError(f"{journal}:{number}: not a journal line: {line!r}") from None
    return entries, easy


class BookBuilder:
    """Walks the bot's strategy tree and collects the entries of its hard positions."""

    def __init__(self, rules: Rules, nodes: int, table_bits: int, journal: Path | None) -> None:
        self.rules = rules
        self.nodes = nodes
        self.judge = Solver(rules, "numba")  # the bot's own table size, emptied per position
        self.search = Solver(rules, "numba", table_bits=table_bits)
        self.entries: dict[int, tuple[int, int]] = {}  # canonical key: (move, score)
        self.easy: set[int] = set()
        self.journal = journal
        self.solved = 0
        self.started = time.monotonic()
        if journal is not None and journal.exists():
            self.entries, self.easy = read_journal(journal)

    def roots(self, plies: tuple[int, ...]) -> Iterator[Board]:
        """Every open position with a number of stones in ``plies``, fewest first."""
        level = [Board(self.rules)]
        for ply in range(max(plies) + 1):
            if ply in plies:
                yield from level
            following = []
            for board in level:
                for move in board.legal_moves():
                    child = board.copy()
                    child.play(move)
                    if not child.is_over():
                        following.append(child)
            level = following

    def build(self, plies: tuple[int, ...]) -> OpeningBook:
        for root in self.roots(plies):
            self.walk(root)
        return OpeningBook.from_entries(self.rules, ((k, m, s) for k, (m, s) in self.entries.items()))

    def walk(self, board: Board) -> None:
        """Visit ``board``, where the bot is to move, and what follows its move."""
        cur, mask = board.key()
        key, mirrored = canonical(cur, mask, self.rules)
        if key in self.easy:
            return
        if key in self.entries:
            move = self.entries[key][0]
            move = self.rules.width - 1 - move if mirrored else move
        else:
            self.judge.reset()
            if self.judge.best_move(board, nodes=self.nodes) is not None:
                self.easy.add(key)
                self.write(f"{key} {EASY}")
                return
            found = self.search.best_move(board)
            assert found is not None  # no deadline and no budget: always found
            move, score = found
            self.record(key, self.rules.width - 1 - move if mirrored else move, score, board)
        board.play(move)
        if not board.is_over():
            for reply in board.legal_moves():
                board.play(reply)
                if not board.is_over():
                    self.walk(board)
                board.undo()
        board.undo()

    def record(self, key: int, move: int, score: int, board: Board) -> None:
        self.entries[key] = (move, score)
        self.solved += 1
        self.write(f"{key} {move} {score}")
        if self.solved % 100 == 0 or board.ply < 6:
            elapsed = time.monotonic() - self.started
            print(
                f"{len(self.entries):>7} entries, {len(self.easy):>7} left to the search, "
                f"{elapsed:8.0f} s; last at ply {board.ply}: {board.moves_string() or '(empty)'}",
                file=sys.stderr,
                flush=True,
            )


    def write(self, line: str) -> None:
        if self.journal is not None:
            with self.journal.open("a") as out:
                out.write(line + "\n")


def merge(journals: list[Path], out: Path) -> int:
    """Write the book of the entries of ``journals``; a later journal's entry wins.

    A finished build's entries are closed under its own walk: every reply to an
    entry's move leads to an entry or to a position left to the search. Two builds
    may prove different best moves for one position, and a build that was stopped
    may not have walked all of an entry's replies yet: list finished builds last,
    so that their entries, whose replies are all covered, are the ones kept.
    """
    entries: dict[int, tuple[int, int]] = {}
    for journal in journals:
        entries.update(read_journal(journal)[0])
    book = OpeningBook.from_entries(Rules(), ((k, m, s) for k, (m, s) in entries.items()))
    out.write_bytes(book.to_bytes())
    print(f"{len(book)} entries written to {out} ({out.stat().st_size:,} bytes)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_out = Path(__file__).resolve().parent / "data" / PACKAGE_BOOK
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES)
    parser.add_argument("--journal", type=Path, default=None, help="entries so far (default: OUT.journal)")
    parser.add_argument("--table-bits", type=int, default=26)
    parser.add_argument("--root-plies", type=int, default=DEFAULT_ROOT_PLIES)
    parser.add_argument("--only-plies", default=None, help="roots of these stone counts only (e.g. 2,3)")
    parser.add_argument(
        "--merge", type=Path, nargs="+", default=None, metavar="JOURNAL",
        help="write the book of these journals' entries, searching nothing; finished builds last",
    )
    args = parser.parse_args(argv)
    if args.merge:
        try:
            return merge(args.merge, args.out)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
    plies = tuple(range(args.root_plies + 1))
    if args.only_plies:
        plies = tuple(int(p) for p in args.only_plies.split(","))
    journal = args.journal or args.out.with_suffix(".journal")
    journal.parent.mkdir(parents=True, exist_ok=True)
    try:
        builder = BookBuilder(Rules(), args.nodes, args.table_bits, journal)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    book = builder.build(plies)
    args.out.write_bytes(book.to_bytes())
    print(f"{len(book)} entries written to {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
