"""Shared geometry for the bots: winning windows as bitmasks, landing cells, dilation.

Everything here works on the bitboard layout of :mod:`arena.engine.game` (bit
``column * (height + 1) + row``) and is computed once per :class:`Rules`.
"""

from __future__ import annotations

from functools import lru_cache

from arena.engine.game import Board, Rules

#: The four line directions as (column step, row step).
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


class Lines:
    """Windows of ``connect`` cells for one set of rules, as bitboard masks."""

    def __init__(self, rules: Rules) -> None:
        w, h, k = rules.width, rules.height, rules.connect
        g = rules.geometry
        self.rules = rules
        self.connect = k
        self.stride = g.stride
        self.full = g.full
        windows: list[int] = []
        for c in range(w):
            for r in range(h):
                for dc, dr in DIRECTIONS:
                    ec, er = c + (k - 1) * dc, r + (k - 1) * dr
                    if not (0 <= ec < w and 0 <= er < h):
                        continue
                    mask = 0
                    for i in range(k):
                        mask |= 1 << ((c + i * dc) * g.stride + r + i * dr)
                    windows.append(mask)
        self.windows: tuple[int, ...] = tuple(windows)
        # through[bit position] -> the windows that contain that cell.
        through: list[list[int]] = [[] for _ in range(w * g.stride)]
        for mask in windows:
            m = mask
            while m:
                low = m & -m
                through[low.bit_length() - 1].append(mask)
                m ^= low
        self.through: tuple[tuple[int, ...], ...] = tuple(tuple(t) for t in through)
        # Masks used by dilate(): cells that may move one step in each direction.
        self._not_top = g.full & ~sum(g.top)
        self._not_bottom = g.full & ~sum(g.bottom)

    def dilate(self, bits: int, steps: int = 1) -> int:
        """Every cell within Chebyshev distance ``steps`` of a cell of ``bits``."""
        stride, full = self.stride, self.full
        # The Chebyshev ball is a square: grow along columns, then along rows.
        for _ in range(steps):
            bits |= ((bits & self._not_top) << 1) | ((bits & self._not_bottom) >> 1)
        for _ in range(steps):
            bits |= (bits << stride) | (bits >> stride)
        return bits & full


@lru_cache(maxsize=64)
def lines_for(rules: Rules) -> Lines:
    """The (cached) :class:`Lines` of ``rules``."""
    return Lines(rules)


def landing_bit(board: Board, move: int) -> int:
    """The bit of the cell ``move`` would fill now (0 for a full column)."""
    return board.landing_bit(move)


def bit_position(bit: int) -> int:
    return bit.bit_length() - 1


def open_line_length(lines: Lines, own: int, opp: int, bit: int) -> int:
    """Longest open line through ``bit`` for the owner of ``own`` once it plays there.

    A window is open when it holds no stone of the opponent; its length is the
    number of own stones in it after the move. 0 if no window through the cell is open.
    """
    own |= bit
    best = 0
    for w in lines.through[bit_position(bit)]:
        if not w & opp:
            n = (w & own).bit_count()
            if n > best:
                best = n
    return best


def completed_windows(lines: Lines, own: int, bit: int) -> int:
    """How many windows through ``bit`` become wholly own when the stone lands there."""
    own |= bit
    return sum(1 for w in lines.through[bit_position(bit)] if w & own == w)


def winning_moves(board: Board, player: int) -> list[int]:
    """Legal moves that would complete a line for ``player`` (to move or not)."""
    lines = lines_for(board.rules)
    own, opp = board.stones(player), board.stones(1 - player)
    k1 = lines.connect - 1
    wins = []
    for move in board.legal_moves():
        bit = landing_bit(board, move)
        for w in lines.through[bit_position(bit)]:
            if not w & opp and (w & own).bit_count() == k1:
                wins.append(move)
                break
    return wins
