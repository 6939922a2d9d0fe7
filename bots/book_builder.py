"""Build the solver's opening book (:mod:`bots.opening_book`) with this project's solver.

Run: python -m bots.book_builder [--out bots/data/book-7x6-4.bin] [--nodes N]
                                 [--journal FILE] [--table-bits B] [--root-plies R]
                                 [--only-plies P,Q] [--limit-roots N] [--jobs N]
                                 [--seed-book BOOK] [--first MOVES,...]

The book follows the bot's own strategy. From each root (every position with at
most ``--root-plies`` stones, 3 by default: the bot may start as first or second
player after a tournament's random opening of up to 2 plies, or of none; a root and
its mirror image are one root) it walks the positions where the bot is to move:

* a position the solver proves, best move included, within ``--nodes`` search nodes
  from an empty transposition table is left out: the bot solves it at play time,
  and everything after it is smaller still;
* any other position gets an entry, the proven best move found by an unbounded
  search (one large table kept across the whole build, so each search reuses what
  the earlier ones proved), and the walk goes on through every reply to that move.

So the book holds the hard positions of the bot's own games and nothing else: a
few tens of thousands of positions where the whole tree of every early position
would be millions. Each entry is written to a journal as it is found, so a build
that is stopped goes on from where it was when the same command is run again.

``--seed-book`` starts from an existing book's entries (the shipped book, say):
they are known, so the walk goes through them without a search, and the book
written holds them besides the new entries. ``--jobs N`` deals the roots among N
processes, each with its own journal (``JOURNAL.part0`` ...) and its own search
table (16 bytes times 2 ** ``--table-bits`` each); every process starts knowing
the entries of the seed book and of all the journals, and the book is written
from all of them at the end.

Where the walk saves work: a position already in the book or known to be left to
the search is never judged again; a position whose walk is finished is not walked
again when another line of play reaches it (or its mirror image); and a position
after a reply to a book move is known to be worth at least the book position's
score (scores count stones to the end of the game, so they do not change along a
line of best play), so its search starts from that bound: one null-window probe
settles it when the reply was a best one.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.engine.game import Board, Rules
from bots.opening_book import PACKAGE_BOOK, BookError, OpeningBook, canonical
from bots.solver import Solver

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import Synchronized

#: The node budget a position may need and still be left to the search at play
#: time: about 15 ms of this machine's solver, a small share of a 0.1 s move.
DEFAULT_NODES = 100_000
#: Roots: every position with at most this many stones (see the module's doc).
DEFAULT_ROOT_PLIES = 3
#: The game the command builds a book for.
BOOK_RULES = Rules()
#: The journal's mark of a position left to the search (its other lines: key, move, score).
EASY = "easy"

Entries = dict[int, tuple[int, int]]  # canonical key: (move, score)


def read_journal(journal: Path) -> tuple[Entries, set[int]]:
    """(entries by canonical key: (move, score); keys left to the search) of a journal.

    A last line without its newline is left out: the build was stopped while
    writing it (the builder cuts it off before it writes on).
    """
    entries: Entries = {}
    easy: set[int] = set()
    text = journal.read_text()
    lines = text.split("\n")[:-1]  # the piece after the last newline is unfinished
    for number, line in enumerate(lines, 1):
        fields = line.split()
        try:
            if fields[1] == EASY:
                easy.add(int(fields[0]))
            else:
                entries[int(fields[0])] = (int(fields[1]), int(fields[2]))
        except (IndexError, ValueError):
            raise ValueError(f"{journal}:{number}: not a journal line: {line!r}") from None
    return entries, easy


def cut_unfinished_line(journal: Path) -> None:
    """Drop a last line without its newline, so that the next line starts clean."""
    if not journal.exists():
        return
    data = journal.read_bytes()
    if data and not data.endswith(b"\n"):
        with journal.open("r+b") as out:
            out.truncate(data.rfind(b"\n") + 1)


def part_journals(journal: Path) -> list[Path]:
    """The journals of a parallel build's processes, by part number."""
    parts = journal.parent.glob(journal.name + ".part*")
    numbered = [(p, p.name.rsplit(".part", 1)[1]) for p in parts]
    return [p for p, n in sorted(numbered, key=lambda pn: int(pn[1]) if pn[1].isdigit() else -1) if n.isdigit()]


def known_positions(seed: OpeningBook | None, journals: Iterable[Path]) -> tuple[Entries, set[int]]:
    """The seed book's entries and those of ``journals`` (a later one's entry wins),
    and the keys the journals left to the search."""
    entries: Entries = {} if seed is None else {k: (m, s) for k, m, s in seed.entries()}
    easy: set[int] = set()
    for journal in journals:
        if journal.exists():
            found, left = read_journal(journal)
            entries.update(found)
            easy |= left
    return entries, easy


def canonical_roots(rules: Rules, plies: tuple[int, ...]) -> list[Board]:
    """Every open position with a number of stones in ``plies``, one per position
    and mirror image, fewest stones first and then in the order of their moves (so
    that roots sharing their first moves come one after another)."""
    roots: list[Board] = []
    level = [Board(rules)]
    for ply in range(max(plies) + 1):
        if ply in plies:
            roots += level
        if ply == max(plies):
            break
        following: dict[int, Board] = {}
        for board in level:
            for move in board.legal_moves():
                child = board.copy()
                child.play(move)
                key = canonical(*child.key(), rules)[0]
                if not child.is_over() and key not in following:
                    following[key] = child
        level = list(following.values())
    return roots


def first_roots(rules: Rules, roots: list[Board], first: list[str]) -> list[Board]:
    """``roots`` with those of the positions after the move strings ``first`` (or
    their mirror images) moved to the front, in the order given: the roots a
    measure reaches, walked before the rest."""
    rank: dict[int, int] = {}
    for moves in first:
        board = Board.from_moves(moves.strip(), rules)
        rank.setdefault(canonical(*board.key(), rules)[0], len(rank))
    keys = [canonical(*root.key(), rules)[0] for root in roots]
    missing = set(rank) - set(keys)
    if missing:
        raise ValueError(f"{len(missing)} of the positions named are not roots of the stone counts asked for")
    order = sorted(range(len(roots)), key=lambda i: rank.get(keys[i], len(rank)))
    return [roots[i] for i in order]


class BookBuilder:
    """Walks the bot's strategy tree and collects the entries of its hard positions."""

    def __init__(
        self,
        rules: Rules,
        nodes: int,
        table_bits: int | None,
        journal: Path | None,
        known: tuple[Entries, set[int]] | None = None,
        label: str = "",
    ) -> None:
        self.rules = rules
        self.nodes = nodes
        self.judge = Solver(rules, "numba")  # the bot's own table size, emptied per position
        self.search = Solver(rules, "numba", table_bits=table_bits)
        self.entries: Entries = {}
        self.easy: set[int] = set()
        #: Positions whose walk is finished in this process: met again, there is nothing to do.
        self.walked: set[int] = set()
        self.journal = journal
        self.label = label
        self.solved = 0
        self.judged = 0
        self.started = time.monotonic()
        if known is not None:
            self.entries, self.easy = known
        elif journal is not None and journal.exists():
            self.entries, self.easy = read_journal(journal)
        if journal is not None:
            cut_unfinished_line(journal)

    def build(self, roots: Iterable[Board]) -> OpeningBook:
        for root in roots:
            self.walk(root.copy())
        return OpeningBook.from_entries(self.rules, ((k, m, s) for k, (m, s) in self.entries.items()))

    def walk(self, board: Board, floor: int | None = None) -> None:
        """Visit ``board``, where the bot is to move, and what follows its move.

        ``floor``: a score the position is known to reach (that of the book
        position two plies up: the bot's move there kept its score)."""
        cur, mask = board.key()
        key, mirrored = canonical(cur, mask, self.rules)
        if key in self.easy or key in self.walked:
            return
        known = self.entries.get(key)
        if known is None:
            # Judged and searched as keyed, whichever of the two images the walk
            # came to first: the search's node count and its choice among equal
            # moves may differ between them, and the book must not depend on the
            # order of the walk (or on how a parallel build dealt its roots).
            view = board
            if mirrored:
                view = Board.from_moves([self.rules.width - 1 - m for m in board.history], self.rules)
            self.judged += 1
            self.judge.reset()
            if self.judge.best_move(view, nodes=self.nodes) is not None:
                self.easy.add(key)
                self.write(f"{key} {EASY}")
                return
            found = self.search.best_move(view, floor=floor)
            assert found is not None  # no deadline and no budget: always found
            stored, score = found
            self.record(key, stored, score, board)
        else:
            stored, score = known
        move = self.rules.width - 1 - stored if mirrored else stored
        board.play(move)
        if not board.is_over():
            for reply in board.legal_moves():
                board.play(reply)
                if not board.is_over():
                    self.walk(board, score)
                board.undo()
        board.undo()
        self.walked.add(key)

    def record(self, key: int, move: int, score: int, board: Board) -> None:
        self.entries[key] = (move, score)
        self.solved += 1
        self.write(f"{key} {move} {score}")
        if self.solved % 100 == 0 or board.ply < 6:
            elapsed = time.monotonic() - self.started
            print(
                f"{self.label}{len(self.entries):>7} entries, {len(self.easy):>7} left to the search, "
                f"{elapsed:8.0f} s; last at ply {board.ply}: {board.moves_string() or '(empty)'}",
                file=sys.stderr,
                flush=True,
            )

    def write(self, line: str) -> None:
        if self.journal is not None:
            with self.journal.open("a") as out:
                out.write(line + "\n")


def _walk_dealt_roots(
    part: int,
    rules: Rules,
    nodes: int,
    table_bits: int | None,
    journal: Path,
    known: tuple[Entries, set[int]],
    roots: list[Board],
    next_root: Synchronized[int],
) -> None:
    """One process of a parallel build: walks the next root not yet taken, until none is left."""
    builder = BookBuilder(rules, nodes, table_bits, journal, known, label=f"part {part}: ")
    while True:
        with next_root.get_lock():
            index = next_root.value
            next_root.value += 1
        if index >= len(roots):
            return
        builder.walk(roots[index].copy())


def build_in_parallel(
    rules: Rules,
    roots: list[Board],
    jobs: int,
    nodes: int,
    table_bits: int | None,
    journal: Path,
    known: tuple[Entries, set[int]],
) -> None:
    """Walk ``roots`` in ``jobs`` processes (forked: each starts with ``known``),
    process K journaling to ``JOURNAL.partK``; roots are dealt one at a time, in order."""
    context = multiprocessing.get_context("fork")
    next_root = context.Value("q", 0)
    processes = [
        context.Process(
            target=_walk_dealt_roots,
            args=(part, rules, nodes, table_bits, journal.with_name(f"{journal.name}.part{part}"), known, roots,
                  next_root),
            name=f"book part {part}",
        )
        for part in range(jobs)
    ]  # fmt: skip
    for process in processes:
        process.start()
    try:
        for process in processes:
            process.join()
    finally:
        for process in processes:
            if process.is_alive():  # the build was interrupted: stop the others too
                process.terminate()
                process.join()
    failed = [p.name for p in processes if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"{', '.join(failed)} stopped before its roots were walked; run the build again to go on")


def build(
    rules: Rules,
    roots: list[Board],
    *,
    journal: Path,
    jobs: int = 1,
    nodes: int = DEFAULT_NODES,
    table_bits: int | None = None,
    seed: OpeningBook | None = None,
) -> OpeningBook:
    """The book of ``roots``' walks, with ``seed``'s entries: resumes from ``journal``
    and its parts, and writes them as it goes."""
    journals = [journal, *part_journals(journal)]
    known = known_positions(seed, journals)
    if jobs == 1:
        BookBuilder(rules, nodes, table_bits, journal, known).build(roots)
    else:
        build_in_parallel(rules, roots, jobs, nodes, table_bits, journal, known)
    entries, _ = known_positions(seed, [journal, *part_journals(journal)])
    return OpeningBook.from_entries(rules, ((k, m, s) for k, (m, s) in entries.items()))


def merge(journals: list[Path], out: Path, seed: OpeningBook | None = None) -> int:
    """Write the book of the entries of ``seed`` and of ``journals``; a later journal's entry wins.

    A finished build's entries are closed under its own walk: every reply to an
    entry's move leads to an entry or to a position left to the search. Two builds
    may prove different best moves for one position, and a build that was stopped
    may not have walked all of an entry's replies yet: list finished builds last,
    so that their entries, whose replies are all covered, are the ones kept.
    """
    for journal in journals:
        if not journal.exists():
            raise OSError(f"no journal {journal}: name the journal files of a build")
    entries, _ = known_positions(seed, journals)
    rules = BOOK_RULES if seed is None else seed.rules
    write_book(OpeningBook.from_entries(rules, ((k, m, s) for k, (m, s) in entries.items())), out)
    return 0


def write_book(book: OpeningBook, out: Path) -> None:
    out.write_bytes(book.to_bytes())
    print(f"{len(book)} entries written to {out} ({out.stat().st_size:,} bytes)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_out = Path(__file__).resolve().parent / "data" / PACKAGE_BOOK
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES)
    parser.add_argument("--journal", type=Path, default=None, help="entries so far (default: OUT.journal)")
    parser.add_argument("--table-bits", type=int, default=26)
    parser.add_argument("--root-plies", type=int, default=DEFAULT_ROOT_PLIES)
    parser.add_argument("--only-plies", default=None, help="roots of these stone counts only (e.g. 2,3)")
    parser.add_argument("--limit-roots", type=int, default=None, metavar="N", help="the first N roots only")
    parser.add_argument("--jobs", type=int, default=1, help="processes, each with its own journal and table")
    parser.add_argument(
        "--first", default=None, metavar="MOVES,...",
        help="walk the roots reached by these move strings (columns from 1: 444,362) before the others",
    )
    parser.add_argument(
        "--seed-book", type=Path, default=None, metavar="BOOK",
        help="start from this book's entries; the book written holds them too",
    )
    parser.add_argument(
        "--merge", type=Path, nargs="+", default=None, metavar="JOURNAL",
        help="write the book of these journals' entries (and the seed book's), searching nothing; "
        "finished builds last",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.limit_roots is not None and args.limit_roots < 1:
        parser.error(f"--limit-roots must be at least 1, got {args.limit_roots}")
    try:
        seed = None if args.seed_book is None else OpeningBook.read(args.seed_book)
        if args.merge:
            return merge(args.merge, args.out, seed)
    except (OSError, ValueError, BookError) as exc:
        parser.error(str(exc))
    plies = tuple(range(args.root_plies + 1))
    if args.only_plies:
        try:
            plies = tuple(int(p) for p in args.only_plies.split(","))
        except ValueError:
            parser.error(f"--only-plies takes stone counts such as 2,3, got {args.only_plies!r}")
    rules = BOOK_RULES
    if seed is not None and seed.rules != rules:
        parser.error(f"the seed book {args.seed_book} is for {seed.rules.describe()}, not {rules.describe()}")
    roots = canonical_roots(rules, plies)
    if args.first:
        try:
            roots = first_roots(rules, roots, args.first.split(","))
        except ValueError as exc:
            parser.error(f"--first: {exc}")
    roots = roots[: args.limit_roots]
    journal = args.journal or args.out.with_suffix(".journal")
    journal.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        book = build(
            rules, roots, journal=journal, jobs=args.jobs, nodes=args.nodes, table_bits=args.table_bits, seed=seed
        )
    except (OSError, ValueError, RuntimeError) as exc:
        parser.error(str(exc))
    print(f"{len(roots)} roots walked in {time.monotonic() - started:.0f} s", file=sys.stderr)
    write_book(book, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
