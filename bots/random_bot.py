"""The random bot."""

from __future__ import annotations

from arena.bot import Bot
from arena.game import Board


class RandomBot(Bot):
    """Plays a uniformly random legal move.

    Reproducible: the same seed (given by new_game) gives the same moves.
    """

    name = "random"
    options = {}

    def choose_move(self, board: Board) -> int:
        return self.rng.choice(board.legal_moves())
