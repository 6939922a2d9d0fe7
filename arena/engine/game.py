"""Rules and board of connect-k games: Connect Four and its relatives.

The board is a bitboard in Pascal Pons' layout: every column owns ``height + 1``
bits (bit ``column * (height + 1) + row``, row 0 at the bottom). The extra bit on
top of each column is never set, so line detection by shift-and-and cannot wrap
from one column into the next. Python integers have no width limit, so the same
code serves every board size from 3x3 to 40x40.

A move is an ``int``: the column (0-based) when stones fall, the cell index
``column * height + row`` when they do not. ``Board.play`` is the fast unchecked
path for search code; ``Board.play_checked`` is for untrusted input.
"""

from __future__ import annotations

import re
from bisect import insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import cast

from arena.errors import ArenaError

MIN_SIZE = 3
MAX_SIZE = 40
SCORINGS = ("line", "count")
PLAYER_MARKS = ("X", "O")


class RulesError(ArenaError):
    """Rules that do not describe a playable game."""


class IllegalMoveError(ArenaError):
    """A move that is not legal in the position it was played in."""


class NotationError(ArenaError):
    """A move string that cannot be read under the given rules."""


@dataclass(frozen=True)
class Rules:
    """Board size, how many in a row win, and whether stones fall."""

    width: int = 7
    height: int = 6
    connect: int = 4
    gravity: bool = True
    #: "line": the first to make `connect` in a row wins. "count": play goes on until
    #: the board is full; whoever holds more windows of `connect` in a row wins.
    scoring: str = "line"

    def __post_init__(self) -> None:
        for name in ("width", "height", "connect"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise RulesError(f"{name} must be a whole number, got {value!r}")
        if not isinstance(self.gravity, bool):
            raise RulesError(f"gravity must be true or false, got {self.gravity!r}")
        if self.scoring not in SCORINGS:
            raise RulesError(f"scoring must be one of {', '.join(SCORINGS)}, got {self.scoring!r}")
        for name in ("width", "height"):
            value = getattr(self, name)
            if not MIN_SIZE <= value <= MAX_SIZE:
                raise RulesError(
                    f"{name} must be between {MIN_SIZE} and {MAX_SIZE}, got {value}"
                )
        longest = max(self.width, self.height)
        if not MIN_SIZE <= self.connect <= longest:
            raise RulesError(
                f"connect must be between {MIN_SIZE} and {longest} "
                f"(the longer side of a {self.width}x{self.height} board), got {self.connect}"
            )

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def move_count(self) -> int:
        """How many distinct moves exist (columns, or cells without gravity)."""
        return self.width if self.gravity else self.cells

    @property
    def counts_windows(self) -> bool:
        return self.scoring == "count"

    def describe(self) -> str:
        """The rules for people, in a few words: ``7x6 connect 4, no gravity, count scoring``."""
        fall = "" if self.gravity else ", no gravity"
        count = ", count scoring" if self.counts_windows else ""
        return f"{self.width}x{self.height} connect {self.connect}{fall}{count}"

    def as_dict(self) -> dict[str, int | bool | str]:
        data: dict[str, int | bool | str] = {
            "width": self.width,
            "height": self.height,
            "connect": self.connect,
            "gravity": self.gravity,
        }
        if self.counts_windows:  # absent means "line": older databases read the same
            data["scoring"] = self.scoring
        return data

    @property
    def geometry(self) -> _Geometry:
        return _geometry(self)

    # --- what differs between variants, asked by the rest of the arena ----------------
    # Code outside the engine asks these instead of reading ``gravity`` or ``scoring``:
    # a new variant then changes this module, not every page, command and file format.

    @property
    def moves_are_columns(self) -> bool:
        """True when a move names a column and its stone drops to the lowest empty
        cell there (Connect Four, and ConnectX's actions); False when it names a cell."""
        return self.gravity

    @property
    def first_line_wins(self) -> bool:
        """True when the first line of ``connect`` ends the game (Connect Four, and
        ConnectX); False when windows are counted on the full board."""
        return not self.counts_windows

    def filled_text(self, move: int | None = None) -> str:
        """Why a move whose place is filled cannot be played: ``column is full`` or
        ``cell is taken``; with ``move``, named: ``column 4 is full``, ``cell c3 is taken``."""
        noun, verb = ("column", "is full") if self.gravity else ("cell", "is taken")
        return f"{noun} {verb}" if move is None else f"{noun} {format_move(move, self)} {verb}"

    def could_be_moves(self, text: str) -> bool:
        """False where ``text`` holds a character that no move string of these rules
        has (column numbers are digits, commas and spaces); True where it may be moves
        (cell names mix letters and digits: only parsing them tells)."""
        return not self.gravity or not re.search(r"[^\d,\s]", text)

    @property
    def code(self) -> str:
        """The rules in a few characters, as game files prefix their moves: ``7x6c4``;
        ``15x15c5n`` where stones stay where placed; a ``w`` suffix where windows are
        counted on the full board."""
        fall = "" if self.gravity else "n"
        count = "w" if self.counts_windows else ""
        return f"{self.width}x{self.height}c{self.connect}{fall}{count}"

    @classmethod
    def from_code(cls, text: str) -> Rules:
        """The rules of a :attr:`code` such as ``7x6c4`` or ``15x15c5n``; RulesError otherwise."""
        match = RULES_CODE.fullmatch(text)
        if not match:
            raise RulesError(
                "expected WIDTHxHEIGHTcCONNECT, with an 'n' suffix for no gravity and a 'w' one "
                "for count scoring, e.g. '7x6c4' or '15x15c5n'"
            )
        width, height, connect = (int(match.group(i)) for i in (1, 2, 3))
        scoring = "count" if match.group(5) else "line"
        return cls(width, height, connect, gravity=not match.group(4), scoring=scoring)

    @property
    def drawing(self) -> Drawing:
        """What a picture of a board of these rules needs to know of them."""
        return _drawing(self)

    def landings(self, moves: Iterable[int]) -> list[tuple[int, int]]:
        """(column, row) of the cell each of ``moves`` puts its stone on, played in
        order from the empty board (each checked: IllegalMoveError); row 0 is the bottom."""
        board = Board(self)
        cells = []
        for move in moves:
            board.play_checked(move)
            cell = board.last_cell()
            assert cell is not None  # a stone was just played
            cells.append(cell)
        return cells


CONNECT_FOUR = Rules()
#: The fields of :class:`Rules`, as a rules table (a config file, a game file) names them.
RULES_FIELDS = tuple(field.name for field in fields(Rules))
#: A :attr:`Rules.code`: width, height, connect, then the suffixes ``n`` and ``w``.
RULES_CODE = re.compile(r"(\d+)x(\d+)c(\d+)(n?)(w?)", re.IGNORECASE)


@dataclass(frozen=True)
class Drawing:
    """What a picture of a board needs to know of its rules, as data: a page draws
    from it without asking which variant is played."""

    #: The kind of picture: ``"gravity"``, a stand with a hole per cell that stones
    #: drop into from above; ``"cells"``, a grid of squares stones are placed on.
    style: str
    #: A face with a hole per cell is drawn in front of the stones (the stand).
    face: bool
    #: The name of each column, left to right.
    column_labels: tuple[str, ...]
    #: The name of each row, bottom first; none where a move names only its column.
    row_labels: tuple[str, ...]
    #: The row a stone comes in at, falling from there to its cell (the row above the
    #: top one); None where a stone appears in its cell.
    entry_row: int | None

    def fall(self, row: int) -> int:
        """How many rows a stone falls to land on ``row`` (0: it appears there)."""
        return 0 if self.entry_row is None else self.entry_row - row


@lru_cache(maxsize=64)
def _drawing(rules: Rules) -> Drawing:
    columns = tuple(column_label(column, rules) for column in range(rules.width))
    if rules.gravity:
        return Drawing("gravity", face=True, column_labels=columns, row_labels=(), entry_row=rules.height)
    rows = tuple(str(row + 1) for row in range(rules.height))
    return Drawing("cells", face=False, column_labels=columns, row_labels=rows, entry_row=None)


@lru_cache(maxsize=64)
def _geometry(rules: Rules) -> _Geometry:
    # Cached outside Rules so that pickled rules stay four small fields.
    return _Geometry(rules)


class _Geometry:
    """Bit masks derived from the rules, computed once per rules object."""

    def __init__(self, rules: Rules) -> None:
        w, h = rules.width, rules.height
        self.stride = h + 1
        self.bottom = [1 << (c * self.stride) for c in range(w)]
        self.top = [1 << (c * self.stride + h - 1) for c in range(w)]
        self.column = [((1 << h) - 1) << (c * self.stride) for c in range(w)]
        self.full = sum(self.column)
        # One shift per line direction: vertical, horizontal, and the two diagonals.
        self.shifts = (1, self.stride, self.stride - 1, self.stride + 1)
        self.line_plan = line_plan(self.shifts, rules.connect)
        self.top_pairs = tuple(enumerate(self.top))
        self.cell_bit = [
            1 << (c * self.stride + r) for c in range(w) for r in range(h)
        ]
        self.bit_cell = {bit: i for i, bit in enumerate(self.cell_bit)}
        self.centre_order = sorted(
            range(rules.move_count), key=lambda m: self._distance_to_centre(rules, m)
        )
        # What Board keeps per move: where it lands first, how far the next stone of
        # the same move lands above it (0 without gravity: a cell is played once),
        # and the cells whose filling leaves the move illegal (its column's top cell,
        # or the cell itself).
        self.moves = list(range(rules.move_count))
        self.first_landing = self.bottom if rules.gravity else self.cell_bit
        self.fall = 1 if rules.gravity else 0
        self.closing_pairs = self.top_pairs if rules.gravity else tuple(enumerate(self.cell_bit))
        self.closing = sum(bit for _, bit in self.closing_pairs)
        # The cell that must be empty for each move to be legal: its column's top
        # cell, or the cell itself (is_legal asks once a move, for every move played).
        self.open_bit = tuple(self.top if rules.gravity else self.cell_bit)
        self.counts_windows = rules.counts_windows
        self.has_line = line_test(self.line_plan)
        # No line can be made before the first player's connect-th stone: the test
        # is skipped until then (a third of a 7x6 playout). Count scoring never ends
        # the game on a line, so its boards never test.
        self.first_line_ply = rules.cells + 1 if rules.counts_windows else 2 * rules.connect - 1

    @staticmethod
    def _distance_to_centre(rules: Rules, move: int) -> tuple[float, int]:
        if rules.gravity:
            return (abs(move - (rules.width - 1) / 2), move)
        column, row = divmod(move, rules.height)
        dc = column - (rules.width - 1) / 2
        dr = row - (rules.height - 1) / 2
        return (dc * dc + dr * dr, move)


def line_plan(shifts: tuple[int, ...], connect: int) -> tuple[tuple[int, ...], ...]:
    """For each direction, the right-shifts whose and-ing leaves the start bits of
    every run of ``connect`` stones.

    Doubling: after and-ing with a shift of ``s * run``, bit p is set iff a run of
    ``2 * run`` starts at p. Two overlapping runs of ``run`` cover ``connect`` cells
    once ``run >= connect / 2``, so at most log2(connect) + 1 steps are needed.
    """
    plan = []
    for s in shifts:
        steps = []
        run = 1
        while run * 2 <= connect:
            steps.append(s * run)
            run *= 2
        if run < connect:
            steps.append(s * (connect - run))
        plan.append(tuple(steps))
    return tuple(plan)


def count_lines(stones: int, plan: tuple[tuple[int, ...], ...]) -> int:
    """How many windows of ``connect`` in a row ``stones`` hold (a line of five
    holds two fours), over every direction of ``plan``."""
    total = 0
    for steps in plan:
        m = stones
        for shift in steps:
            m &= m >> shift
        total += m.bit_count()
    return total


def has_line(stones: int, plan: tuple[tuple[int, ...], ...]) -> bool:
    """True if ``stones`` holds a run in any direction of ``plan`` (see line_plan)."""
    for steps in plan:
        m = stones
        for shift in steps:
            m &= m >> shift
        if m:
            return True
    return False


def line_test_source(plan: tuple[tuple[int, ...], ...]) -> str:
    """Python source of ``has_line_here(stones)``: ``has_line`` for one line plan,
    written out straight-line with the shifts as constants.

    It runs once per move played, the bulk of a random playout's work; with the
    loops of ``has_line`` unrolled, a 7x6 Connect Four test is four pairs of
    shift-and-and, each rejected by its first zero.
    """
    body = ["def has_line_here(stones):"]
    for steps in plan:
        body.append(f"    m = stones & stones >> {steps[0]}")
        body += [f"    m &= m >> {shift}" for shift in steps[1:-1]]
        body.append(f"    if m & m >> {steps[-1]}:")
        body.append("        return True")
    body.append("    return False")
    return "\n".join(body) + "\n"


def line_test(plan: tuple[tuple[int, ...], ...]) -> Callable[[int], bool]:
    """``has_line`` specialised to one line plan (see line_test_source)."""
    namespace: dict[str, Callable[[int], bool]] = {}
    exec(compile(line_test_source(plan), f"<line test {plan}>", "exec"), namespace)
    return namespace["has_line_here"]


class Board:
    """A position: both players' stones, whose turn it is, and how it came about.

    Besides the bitboards and the move history the board keeps, so that the loop
    ``while not board.is_over(): board.play(choice(board.legal_moves()))`` does
    little per move: the legal moves (in increasing order, emptied by a win), and
    where each move lands now (the bit ``play`` sets and ``undo`` clears).
    """

    __slots__ = ("_current", "_g", "_history", "_landing", "_legal", "_mask", "_winner", "rules")

    def __init__(self, rules: Rules | None = None) -> None:
        rules = self.rules = rules if rules is not None else CONNECT_FOUR
        g = self._g = _geometry(rules)
        self._current = 0  # stones of the side to move
        self._mask = 0  # stones of both sides
        self._history: list[int] = []
        self._winner: int | None = None
        self._legal = g.moves.copy()
        self._landing = g.first_landing.copy()

    @classmethod
    def from_moves(cls, moves: str | list[int], rules: Rules | None = None) -> Board:
        """Play a move string (or list of moves) from the empty board, checking each."""
        board = cls(rules)
        if isinstance(moves, str):
            moves = parse_moves(moves, board.rules)
        for move in moves:
            board.play_checked(move)
        return board

    # --- state -----------------------------------------------------------------

    @property
    def to_move(self) -> int:
        """0 for the first player, 1 for the second."""
        return len(self._history) & 1

    @property
    def ply(self) -> int:
        return len(self._history)

    @property
    def history(self) -> list[int]:
        return list(self._history)

    @property
    def last_move(self) -> int | None:
        return self._history[-1] if self._history else None

    @property
    def winner(self) -> int | None:
        """The player who completed a line, or None."""
        return self._winner

    def is_full(self) -> bool:
        return self._mask == self._g.full

    def is_draw(self) -> bool:
        return self._winner is None and self._mask == self._g.full

    def is_over(self) -> bool:
        # No legal move is left exactly when a line was made or the board is full.
        return not self._legal

    def stones(self, player: int) -> int:
        """Bitboard of ``player``'s stones."""
        if player == self.to_move:
            return self._current
        return self._current ^ self._mask

    @property
    def occupied(self) -> int:
        return self._mask

    def key(self) -> tuple[int, int]:
        """A hashable identity of the position (not of the move order)."""
        return (self._current, self._mask)

    def cell(self, column: int, row: int) -> int | None:
        """Owner of a cell (row 0 is the bottom), or None if empty."""
        bit = 1 << (column * self._g.stride + row)
        if not self._mask & bit:
            return None
        return self.to_move if self._current & bit else 1 - self.to_move

    def move_cell(self, move: int) -> tuple[int, int]:
        """(column, row) where ``move`` would put a stone now."""
        if self.rules.gravity:
            return move, (self.landing_bit(move).bit_length() - 1) % self._g.stride
        return divmod(move, self.rules.height)

    def landing_bit(self, move: int) -> int:
        """The bit of the cell where ``move`` puts a stone now (unchecked): the
        lowest empty cell of its column with gravity, the cell itself without."""
        g = self._g
        if self.rules.gravity:
            return (self._mask + g.bottom[move]) & g.column[move]
        return g.cell_bit[move]

    def last_cell(self) -> tuple[int, int] | None:
        """(column, row) of the last stone played, or None on the empty board."""
        if not self._history:
            return None
        bit = self._landing[self._history[-1]] >> self._g.fall
        return divmod(bit.bit_length() - 1, self._g.stride)

    def cell_move(self, column: int, row: int) -> int:
        """The move that means cell (column, row) on a gravity-free board, or column."""
        return column if self.rules.gravity else column * self.rules.height + row

    # --- moves -----------------------------------------------------------------

    def legal_moves(self) -> list[int]:
        """Moves allowed now, in increasing order; empty once the game is over.
        The list is the caller's own."""
        return self._legal.copy()

    def _open_moves(self) -> list[int]:
        """The legal moves, worked out from the stones (the game being open)."""
        mask = self._mask
        return [move for move, bit in self._g.closing_pairs if not mask & bit]

    def is_legal(self, move: object) -> bool:
        if type(move) is not int or self._winner is not None:
            return False
        open_bit = self._g.open_bit
        return 0 <= move < len(open_bit) and not self._mask & open_bit[move]

    def play(self, move: int) -> None:
        """Play a legal move, unchecked: the fast path for search code."""
        g = self._g
        landing = self._landing
        bit = landing[move]
        landing[move] = bit << g.fall
        mover = self._current | bit
        self._current ^= self._mask  # the opponent's stones, who moves next
        self._mask |= bit
        history = self._history
        history.append(move)
        if bit & g.closing and self._winner is None:  # the column (or the cell) is full now
            legal = self._legal
            legal.remove(move)
            if not legal and g.counts_windows:
                self._winner = self._count_winner()
        if len(history) >= g.first_line_ply and g.has_line(mover):
            self._winner = len(history) - 1 & 1
            self._legal.clear()

    def play_if_legal(self, move: object) -> bool | None:
        """Play ``move`` if it is legal (of any type: a bot's answer) and say whether
        the game is over now; None, nothing played, if it is not legal. The
        referee's every move: one call in Python where is_legal, play and is_over
        are three."""
        if type(move) is not int or self._winner is not None:
            return None
        open_bit = self._g.open_bit
        if not 0 <= move < len(open_bit) or self._mask & open_bit[move]:
            return None
        Board.play(self, move)  # Board's: a read-only board's owner plays through this too
        return not self._legal

    def play_checked(self, move: object) -> None:
        """Play ``move`` after checking it; raise IllegalMoveError if it is not legal."""
        if not self.is_legal(move):
            raise IllegalMoveError(self._illegal_reason(move))
        self.play(move)  # type: ignore[arg-type]

    def undo(self) -> int:
        """Take back the last move and return it."""
        history = self._history
        if not history:
            raise IllegalMoveError("nothing to undo on the empty board")
        g = self._g
        move = history.pop()
        landing = self._landing
        bit = landing[move] = landing[move] >> g.fall
        self._mask ^= bit
        self._current ^= self._mask
        if self._winner is not None:
            # Play stops at a win (or a counted full board), so the previous position
            # was open, unless the move taken back was played past a win (play is
            # unchecked): then the side that moved before it still has its line.
            self._winner = None
            if len(history) >= g.first_line_ply and g.has_line(self._current ^ self._mask):
                self._winner = len(history) - 1 & 1
                self._legal = []
            else:
                self._legal = self._open_moves()
        elif bit & g.closing:
            insort(self._legal, move)
        return move

    def window_counts(self) -> tuple[int, int]:
        """Windows of ``connect`` in a row held by the first and the second player."""
        plan = self._g.line_plan
        return count_lines(self.stones(0), plan), count_lines(self.stones(1), plan)

    def _count_winner(self) -> int | None:
        first, second = self.window_counts()
        return None if first == second else (0 if first > second else 1)

    def score_text(self) -> str | None:
        """The score in words where the rules keep one besides the winner (count
        scoring: ``Windows of 4: X 3, O 2``); None where the first line decides."""
        if not self._g.counts_windows:
            return None
        first, second = self.window_counts()
        return f"Windows of {self.rules.connect}: {PLAYER_MARKS[0]} {first}, {PLAYER_MARKS[1]} {second}"

    def winning_line(self) -> list[tuple[int, int]]:
        """(column, row) of every stone of the lines that won the game (see
        :meth:`winning_lines`), each once: what a picture of the board rings."""
        cells: list[tuple[int, int]] = []
        for line in self.winning_lines():
            cells += [cell for cell in line if cell not in cells]
        return sorted(cells)

    def is_winning_move(self, move: int) -> bool:
        """Would playing ``move`` win the game for the side to move? (unchecked)

        With line scoring: does it complete a line. With count scoring only the
        last move can decide, by the window counts on the full board.
        """
        g = self._g
        bit = self.landing_bit(move)
        if not g.counts_windows:
            return g.has_line(self._current | bit)
        if self._mask | bit != g.full:
            return False
        mine = count_lines(self._current | bit, g.line_plan)
        theirs = count_lines(self._current ^ self._mask, g.line_plan)
        return mine > theirs

    def winning_lines(self) -> list[list[tuple[int, int]]]:
        """The lines the last move completed (a move can close two at once), each as
        the (column, row) of its stones from one end to the other; none where the
        last move made no line (no winner yet, a draw, count scoring, where no single
        line decides)."""
        last = self.last_cell()
        if self._winner is None or last is None or self._g.counts_windows:
            return []
        column, row = last
        owner = self.cell(column, row)
        lines: list[list[tuple[int, int]]] = []
        for dc, dr in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = [(column, row)]
            for sign in (1, -1):
                c, r = column + sign * dc, row + sign * dr
                while 0 <= c < self.rules.width and 0 <= r < self.rules.height and self.cell(c, r) == owner:
                    run.append((c, r))
                    c, r = c + sign * dc, r + sign * dr
            if len(run) >= self.rules.connect:
                lines.append(sorted(run))
        return lines

    def centre_order(self, moves: list[int]) -> list[int]:
        """``moves`` sorted from the centre outwards."""
        wanted = set(moves)
        return [m for m in self._g.centre_order if m in wanted]

    def copy(self) -> Board:
        """An independent copy: playing on it never changes this board."""
        other = Board.__new__(Board)
        other.rules = self.rules
        other._g = self._g
        other._current = self._current
        other._mask = self._mask
        other._history = self._history.copy()
        other._winner = self._winner
        other._legal = self._legal.copy()
        other._landing = self._landing.copy()
        return other

    def __reduce__(self) -> tuple[Callable[[list[int], Rules], Board], tuple[list[int], Rules]]:
        # The rules' generated line test does not pickle; the moves replay the position.
        return (type(self).from_moves, (self._history.copy(), self.rules))

    # --- text ------------------------------------------------------------------

    def moves_string(self) -> str:
        return format_moves(self._history, self.rules)

    def render(self) -> str:
        """The board as text, top row first, with column labels under it."""
        return render(self)

    def __str__(self) -> str:
        return self.render()

    def _repr_svg_(self) -> str:
        """The board as a picture where one can be shown (a Jupyter notebook)."""
        from arena.engine.svg import board_svg

        return board_svg(self)

    def __repr__(self) -> str:
        return f"Board({self.moves_string()!r}, {self.rules.describe()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return (self.rules, self._history) == (other.rules, other._history)

    __hash__ = None  # type: ignore[assignment]  # boards are mutable

    def illegal_cause(self, move: object) -> str:
        """Why ``move`` is not legal here, in a few words ('' if it is legal)."""
        if self._winner is not None:
            return "the game is already won"
        if type(move) is not int:
            return f"a move must be an int, not {type(move).__name__}"
        if not 0 <= move < self.rules.move_count:
            return f"out of range 0..{self.rules.move_count - 1}"
        if self.is_legal(move):
            return ""
        return self.rules.filled_text()

    def _illegal_reason(self, move: object) -> str:
        where = f"in position {self.moves_string() or '(empty board)'!r}"
        return f"move {move!r} {where}: {self.illegal_cause(move)}"


class ReadOnlyBoard(Board):
    """A board that refuses to be played on through its methods: the referee's own
    board, handed as it is to a bot that only reads it (``Bot.reads_board_only``)
    instead of a copy for every move. Whoever owns it moves with :meth:`Board.play`
    called on it (``Board.play(board, move)``, ``Board.play_if_legal(board, move)``);
    ``copy`` gives an ordinary board."""

    __slots__ = ()

    def play(self, move: int) -> None:
        raise TypeError(_READ_ONLY)

    def play_checked(self, move: object) -> None:
        raise TypeError(_READ_ONLY)

    def play_if_legal(self, move: object) -> bool | None:
        raise TypeError(_READ_ONLY)

    def undo(self) -> int:
        raise TypeError(_READ_ONLY)

    def __reduce__(self) -> tuple[Callable[[list[int], Rules], Board], tuple[list[int], Rules]]:
        return (Board.from_moves, (self._history.copy(), self.rules))


_READ_ONLY = "this board is the referee's and read-only: play on board.copy()"


def read_only(board: Board) -> ReadOnlyBoard:
    """``board`` itself, made read-only (nothing copied): its owner goes on playing
    with ``Board.play(board, move)``."""
    board.__class__ = ReadOnlyBoard
    return cast(ReadOnlyBoard, board)


# --- notation --------------------------------------------------------------------

_CELL_TOKEN = re.compile(r"([a-z]+)(\d+)")


def column_label(column: int, rules: Rules) -> str:
    """How a column is named: 1-based numbers with gravity, letters without."""
    if rules.gravity:
        return str(column + 1)
    return _letters(column)


def format_move(move: int, rules: Rules) -> str:
    return move_names(rules)[move]


@lru_cache(maxsize=64)
def move_names(rules: Rules) -> tuple[str, ...]:
    """Every move's name, by move: the store writes millions of them."""
    if rules.gravity:
        return tuple(str(move + 1) for move in range(rules.width))
    return tuple(
        f"{_letters(column)}{row + 1}" for column in range(rules.width) for row in range(rules.height)
    )


def format_moves(moves: Iterable[int], rules: Rules) -> str:
    """Connect Four style digits ("4453") when every column is one digit; else
    comma-separated 1-based columns ("10,3,12"); without gravity, cell names
    with letter columns and 1-based rows from the bottom ("d4c3")."""
    names = move_names(rules)
    joiner = "," if rules.gravity and rules.width > 9 else ""
    return joiner.join([names[m] for m in moves])


def parse_move(text: str, rules: Rules) -> int:
    """Read one move in the notation of ``rules`` (range-checked, not legality)."""
    moves = parse_moves(text, rules)
    if len(moves) != 1:
        raise NotationError(f"expected one move, got {text!r}")
    return moves[0]


def parse_moves(text: str, rules: Rules) -> list[int]:
    """Read a move string; separators (comma, space) are optional where unambiguous."""
    text = text.strip().lower()
    if not text:
        return []
    if rules.gravity:
        return _parse_columns(text, rules)
    return _parse_cells(text, rules)


def _parse_columns(text: str, rules: Rules) -> list[int]:
    if re.fullmatch(r"\d+", text) and rules.width <= 9:
        tokens = list(text)
    else:
        tokens = [t for t in re.split(r"[,\s]+", text) if t]
    moves = []
    for token in tokens:
        if not token.isdigit() or not 1 <= int(token) <= rules.width:
            raise NotationError(
                f"bad column {token!r} in {text!r}: columns are 1..{rules.width}"
            )
        moves.append(int(token) - 1)
    return moves


def _parse_cells(text: str, rules: Rules) -> list[int]:
    compact = re.sub(r"[,\s]+", "", text)
    moves = []
    position = 0
    for match in _CELL_TOKEN.finditer(compact):
        if match.start() != position:
            break
        position = match.end()
        column = _letters_value(match.group(1))
        row = int(match.group(2)) - 1
        if not (0 <= column < rules.width and 0 <= row < rules.height):
            raise NotationError(
                f"bad cell {match.group(0)!r} in {text!r}: columns are "
                f"a..{_letters(rules.width - 1)}, rows 1..{rules.height}"
            )
        moves.append(column * rules.height + row)
    if position != len(compact):
        raise NotationError(
            f"cannot read {compact[position:]!r} in {text!r}: "
            "cells are written as column letters then row number, e.g. 'c3'"
        )
    return moves


def _letters(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa, ... (spreadsheet style)."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("a") + rest) + name
    return name


def _letters_value(name: str) -> int:
    value = 0
    for ch in name:
        value = value * 26 + (ord(ch) - ord("a") + 1)
    return value - 1


# --- rendering -------------------------------------------------------------------


def render(board: Board, marks: tuple[str, str] = PLAYER_MARKS, empty: str = ".") -> str:
    """Text picture of ``board``; the last move is shown in lower case."""
    rules = board.rules
    drawing = rules.drawing
    labels = drawing.column_labels
    cell_width = max(len(label) for label in labels)
    last = board.last_cell()
    row_label_width = max((len(label) for label in drawing.row_labels), default=0)
    lines = []
    for row in reversed(range(rules.height)):
        cells = []
        for column in range(rules.width):
            owner = board.cell(column, row)
            text = empty if owner is None else marks[owner]
            if (column, row) == last:
                text = text.lower()
            cells.append(text.rjust(cell_width))
        prefix = f"{drawing.row_labels[row]:>{row_label_width}} " if row_label_width else ""
        lines.append(prefix + " ".join(cells))
    prefix = " " * (row_label_width + 1) if row_label_width else ""
    lines.append(prefix + " ".join(label.rjust(cell_width) for label in labels))
    return "\n".join(lines)

