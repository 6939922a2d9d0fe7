"""A slow, obviously-correct reference implementation of connect-k rules.

Written independently of ``arena.engine.game``: the board is a plain 2D list
``grid[column][row]`` (row 0 at the bottom) holding 0, 1 or None, and wins are
found by walking from every cell in four directions. Used by the tests as an
oracle for the bitboard engine.
"""

from __future__ import annotations

# Right, up, up-right, down-right. The other four directions are the same lines
# walked from the other end, so scanning these from every cell finds every line.
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


class ReferenceGame:
    """One game in progress, with the rules given as plain values."""

    def __init__(self, width: int, height: int, connect: int, gravity: bool, scoring: str = "line") -> None:
        self.scoring = scoring
        self.width = width
        self.height = height
        self.connect = connect
        self.gravity = gravity
        self.grid: list[list[int | None]] = [
            [None] * height for _ in range(width)
        ]
        self.moves: list[int] = []
        self.winner: int | None = None

    @classmethod
    def from_rules(cls, rules) -> ReferenceGame:
        return cls(rules.width, rules.height, rules.connect, rules.gravity, rules.scoring)

    # --- state -------------------------------------------------------------------

    @property
    def ply(self) -> int:
        return len(self.moves)

    @property
    def to_move(self) -> int:
        return len(self.moves) % 2

    def cell(self, column: int, row: int) -> int | None:
        return self.grid[column][row]

    def is_full(self) -> bool:
        return all(
            self.grid[c][r] is not None
            for c in range(self.width)
            for r in range(self.height)
        )

    def is_draw(self) -> bool:
        return self.winner is None and self.is_full()

    def is_over(self) -> bool:
        return self.winner is not None or self.is_full()

    # --- moves -------------------------------------------------------------------

    def target(self, move: int) -> tuple[int, int] | None:
        """The (column, row) that ``move`` would fill now, or None if it cannot."""
        if self.gravity:
            if not 0 <= move < self.width:
                return None
            column = move
            for row in range(self.height):
                if self.grid[column][row] is None:
                    return (column, row)
            return None
        if not 0 <= move < self.width * self.height:
            return None
        column = move // self.height
        row = move % self.height
        if self.grid[column][row] is not None:
            return None
        return (column, row)

    def legal_moves(self) -> list[int]:
        if self.winner is not None:
            return []
        count = self.width if self.gravity else self.width * self.height
        return sorted(m for m in range(count) if self.target(m) is not None)

    def play(self, move: int) -> None:
        assert move in self.legal_moves(), f"illegal move {move} after {self.moves}"
        column, row = self.target(move)
        self.grid[column][row] = self.to_move
        self.moves.append(move)
        self.winner = self.find_winner()

    def is_winning_move(self, move: int) -> bool:
        """Would the side to move have a line after playing ``move``?

        Counted locally: the new stone plus its same-coloured neighbours walking
        both ways along each direction (a different method from ``has_line``).
        With count scoring: does playing it fill the board with the mover ahead.
        """
        column, row = self.target(move)
        player = self.to_move
        if self.scoring == "count":
            self.grid[column][row] = player
            try:
                return self.is_full() and self.window_count(player) > self.window_count(1 - player)
            finally:
                self.grid[column][row] = None
        for dc, dr in DIRECTIONS:
            run = 1
            for sign in (1, -1):
                c, r = column + sign * dc, row + sign * dr
                while (
                    0 <= c < self.width
                    and 0 <= r < self.height
                    and self.grid[c][r] == player
                ):
                    run += 1
                    c, r = c + sign * dc, r + sign * dr
            if run >= self.connect:
                return True
        return False

    # --- lines -------------------------------------------------------------------

    def has_line(self, player: int) -> bool:
        for column in range(self.width):
            for row in range(self.height):
                if self.grid[column][row] != player:
                    continue  # no line of ``player`` starts here
                for dc, dr in DIRECTIONS:
                    if self._line_from(player, column, row, dc, dr):
                        return True
        return False

    def _line_from(self, player: int, column: int, row: int, dc: int, dr: int) -> bool:
        for step in range(self.connect):
            c = column + dc * step
            r = row + dr * step
            if not (0 <= c < self.width and 0 <= r < self.height):
                return False
            if self.grid[c][r] != player:
                return False
        return True

    def window_count(self, player: int) -> int:
        """Every window of ``connect`` cells in a row wholly owned by ``player``."""
        total = 0
        for column in range(self.width):
            for row in range(self.height):
                for dc, dr in DIRECTIONS:
                    cells = [(column + i * dc, row + i * dr) for i in range(self.connect)]
                    if all(0 <= c < self.width and 0 <= r < self.height and self.grid[c][r] == player
                           for c, r in cells):
                        total += 1
        return total

    def find_winner(self) -> int | None:
        """Scan the whole grid for both players."""
        if self.scoring == "count":
            if not self.is_full():
                return None
            first, second = self.window_count(0), self.window_count(1)
            return None if first == second else (0 if first > second else 1)
        winners = [p for p in (0, 1) if self.has_line(p)]
        # Play stops at the first win, so at most one player can have a line.
        assert len(winners) <= 1, winners
        return winners[0] if winners else None
