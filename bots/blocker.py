"""The blocking / selfish / random bot."""

from __future__ import annotations

from arena.bot import Bot
from arena.engine.game import Board
from bots.lines import landing_bit, lines_for, winning_moves


class BlockerBot(Bot):
    """Blocking / selfish / random: blocks a win, else plays near its own stones.

    If the opponent could win next move, it plays that move (the cell where its
    stone lands). Otherwise a random legal move whose
    cell is within Chebyshev distance connect-1 of one of its own stones; else random.
    """

    name = "blocker"

    def choose_move(self, board: Board) -> int:
        me = board.to_move
        threats = winning_moves(board, 1 - me)
        if threats:
            return self.rng.choice(threats)
        legal = board.legal_moves()
        lines = lines_for(board.rules)
        near = lines.dilate(board.stones(me), board.rules.connect - 1)
        close = [m for m in legal if landing_bit(board, m) & near]
        return self.rng.choice(close or legal)
