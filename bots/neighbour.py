"""The defensive neighbour bot."""

from __future__ import annotations

from arena.bot import Bot
from arena.engine.game import Board


class NeighbourBot(Bot):
    """Defensive neighbour: plays next to the opponent's last move, else at random.

    With gravity: a random legal column among the opponent's last column and its two
    neighbours. Without gravity: a random empty cell adjacent (8-neighbourhood) to the
    opponent's last stone. When there is none (or no last move): any random legal move.
    """

    name = "neighbour"

    def choose_move(self, board: Board) -> int:
        candidates = self.candidates(board)
        if candidates:
            return self.rng.choice(candidates)
        return self.rng.choice(board.legal_moves())

    @staticmethod
    def candidates(board: Board) -> list[int]:
        """The moves next to the last one (empty if there are none)."""
        last = board.last_cell()
        if last is None:
            return []
        rules = board.rules
        column, row = last
        if rules.gravity:
            return [c for c in (column - 1, column, column + 1)
                    if 0 <= c < rules.width and board.is_legal(c)]
        moves = []
        for dc in (-1, 0, 1):
            for dr in (-1, 0, 1):
                c, r = column + dc, row + dr
                inside = (dc or dr) and 0 <= c < rules.width and 0 <= r < rules.height
                if inside and board.cell(c, r) is None:
                    moves.append(board.cell_move(c, r))
        return moves
