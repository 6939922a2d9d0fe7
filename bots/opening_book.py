"""The solver's opening book: a proven best move for the early positions it meets.

Early in a 7x6 game an exact search takes seconds to minutes, far more than a move's
time. The book holds, for every position the solver bot can meet with few stones on
the board while it plays its own book moves (as first player and as second), a move
that keeps the position's exact value. Past the book, the positions are ones the
search proves within a small node budget (see :mod:`bots.book_builder`, which makes
the book with this project's own solver).

A position is keyed as Pascal Pons' solver keys it: ``stones of the side to move +
all stones`` in the engine's bit layout, unique for every position. A position and
its mirror image share one entry, stored under the smaller key with the move as
seen from that orientation.

The file (package data, little-endian): the magic ``ARENABK1``; width, height,
connect (one byte each) and one zero byte; the number of entries (uint32); the keys
(uint64, ascending); the moves (uint8, in the keys' order); the positions' exact
scores for the side to move (int8, Pons' scale as :mod:`bots.solver` gives it).
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from arena.engine.game import Board, Rules
from arena.errors import ArenaError

MAGIC = b"ARENABK1"
HEADER = struct.Struct("<8sBBBxI")
#: The book that ships with the solver, in the ``bots`` package's data.
PACKAGE_BOOK = "book-7x6-4.bin"


class BookError(ArenaError):
    """A book file that cannot be read."""


def mirror(bits: int, rules: Rules) -> int:
    """``bits`` with the columns in reverse order (the board seen in a mirror)."""
    stride = rules.height + 1
    column = (1 << stride) - 1
    out = 0
    last = rules.width - 1
    for c in range(rules.width):
        out |= ((bits >> (c * stride)) & column) << ((last - c) * stride)
    return out


def position_key(cur: int, mask: int) -> int:
    """Pons' key: unique per position (the sum sets one bit above each column's
    top stone, which tells the two colours' stones apart with ``cur``)."""
    return cur + mask


def position_of_key(key: int, rules: Rules) -> tuple[int, int]:
    """(stones of the side to move, all stones) of a key (see :func:`position_key`).

    In each column the key holds ``own + all`` stones: plus one, that sets the bit
    just above the column's top stone and no higher one.
    """
    stride = rules.height + 1
    column = (1 << stride) - 1
    mask = 0
    for c in range(rules.width):
        marker = (((key >> (c * stride)) & column) + 1).bit_length() - 1
        mask |= ((1 << marker) - 1) << (c * stride)
    return key - mask, mask


def canonical(cur: int, mask: int, rules: Rules) -> tuple[int, bool]:
    """(the key of the position or of its mirror image, whichever is smaller;
    whether it is the mirror's)."""
    key = position_key(cur, mask)
    mirrored = position_key(mirror(cur, rules), mirror(mask, rules))
    return (mirrored, True) if mirrored < key else (key, False)


class OpeningBook:
    """Moves by position for one set of rules, read from a book file."""

    def __init__(self, rules: Rules, keys: array[int], moves: bytes, scores: array[int]) -> None:
        if not len(keys) == len(moves) == len(scores):
            raise BookError(
                f"a book needs a move and a score per key, got {len(keys)} keys, "
                f"{len(moves)} moves and {len(scores)} scores"
            )
        self.rules = rules
        self._keys = keys
        self._moves = moves
        self._scores = scores

    def __len__(self) -> int:
        return len(self._keys)

    @classmethod
    def read(cls, path: Path) -> OpeningBook:
        return cls.from_bytes(path.read_bytes(), str(path))

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "the book") -> OpeningBook:
        if len(data) < HEADER.size:
            raise BookError(f"{where} is not an opening book: {len(data)} bytes is too short")
        magic, width, height, connect, count = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise BookError(f"{where} is not an opening book (it does not start with {MAGIC!r})")
        expected = HEADER.size + 10 * count
        if len(data) != expected:
            raise BookError(f"{where} is cut short or padded: {len(data)} bytes, expected {expected}")
        keys = array("Q")
        keys.frombytes(data[HEADER.size : HEADER.size + 8 * count])
        moves = data[HEADER.size + 8 * count : HEADER.size + 9 * count]
        scores = array("b", data[HEADER.size + 9 * count :])
        rules = Rules(width, height, connect)
        if any(m >= width for m in moves):
            raise BookError(f"{where} holds a move outside the board's {width} columns")
        if any(keys[i] >= keys[i + 1] for i in range(len(keys) - 1)):
            raise BookError(f"{where} has keys out of order")
        return cls(rules, keys, moves, scores)

    @classmethod
    def from_entries(cls, rules: Rules, entries: Iterable[tuple[int, int, int]]) -> OpeningBook:
        """A book from (canonical key, move, score) triples."""
        table = {key: (move, score) for key, move, score in entries}
        ordered = sorted(table)
        moves = bytes(table[k][0] for k in ordered)
        return cls(rules, array("Q", ordered), moves, array("b", [table[k][1] for k in ordered]))

    def to_bytes(self) -> bytes:
        r = self.rules
        header = HEADER.pack(MAGIC, r.width, r.height, r.connect, len(self._keys))
        return header + self._keys.tobytes() + bytes(self._moves) + self._scores.tobytes()

    def entries(self) -> list[tuple[int, int, int]]:
        """(canonical key, move, score) of every entry, keys ascending."""
        return list(zip(self._keys, self._moves, self._scores, strict=True))

    def lookup_raw(self, cur: int, mask: int) -> tuple[int, int] | None:
        """(the book's move, the position's score) for (cur, mask), or None."""
        key, mirrored = canonical(cur, mask, self.rules)
        i = bisect_left(self._keys, key)
        if i == len(self._keys) or self._keys[i] != key:
            return None
        move = self._moves[i]
        return (self.rules.width - 1 - move if mirrored else move), self._scores[i]

    def lookup(self, board: Board) -> tuple[int, int] | None:
        """(move, exact score) for ``board`` from the book, or None when it does not hold it."""
        if board.rules != self.rules or board.is_over():
            return None
        cur, mask = board.key()
        return self.lookup_raw(cur, mask)


_loaded: dict[Rules, OpeningBook | None] = {}


def book_for(rules: Rules) -> OpeningBook | None:
    """The shipped book for ``rules``, or None when there is none (read once)."""
    if rules not in _loaded:
        _loaded[rules] = _read_package_book(rules)
    return _loaded[rules]


def _read_package_book(rules: Rules) -> OpeningBook | None:
    if not rules.gravity or rules.counts_windows:
        return None
    name = f"book-{rules.width}x{rules.height}-{rules.connect}.bin"
    resource = resources.files("bots").joinpath("data", name)
    if not resource.is_file():
        return None
    return OpeningBook.from_bytes(resource.read_bytes(), f"the solver's book {name}")
