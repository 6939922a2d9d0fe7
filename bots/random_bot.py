"""The random bot."""

from __future__ import annotations

import random

from arena.bot import Bot, Option
from arena.engine.game import Board, Rules


class RandomBot(Bot):
    """Plays a uniformly random legal move.

    Reproducible: the same game seed (given by new_game) gives the same moves.
    The ``stream`` option picks another, independent sequence, so that
    ``random:stream=1`` and ``random:stream=2`` are two different random players.
    """

    name = "random"
    stream = Option(0, "which random stream to draw from (independent players)")
    # new_game seeds everything a game uses; choose_move only reads the legal moves.
    reusable = True
    reads_board_only = True

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        # Seeded once, for the stream: not first for the game seed (as Bot.new_game
        # does) and then again.
        self.rules = rules
        self.player = player
        self.rng = random.Random(f"{seed}:{self.stream}" if self.stream else seed)

    def choose_move(self, board: Board) -> int:
        return self.rng.choice(board.legal_moves())
