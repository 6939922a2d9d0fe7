"""The greedy connect-k bot."""

from __future__ import annotations

from arena.bot import Bot
from arena.engine.game import Board
from bots.lines import completed_windows, landing_bit, lines_for, open_line_length


class GreedyBot(Bot):
    """Greedy connect-k: wins if it can, else makes its longest open line.

    An open line is a window of `connect` cells through the new stone holding no
    opponent stone; its length is the number of own stones in it after the move.
    It prefers connect, then connect-1, connect-2, ... down to 2; with nothing of
    length 2 or more it plays at random. Ties are broken at random. Under count
    scoring it prefers the move that completes the most windows.
    """

    name = "greedy"

    def choose_move(self, board: Board) -> int:
        legal = board.legal_moves()
        lines = lines_for(board.rules)
        me = board.to_move
        own, opp = board.stones(me), board.stones(1 - me)
        best, best_moves = (0, 1), []
        for move in legal:
            bit = landing_bit(board, move)
            # Completed windows first: one wins the line game; under count scoring
            # a move that completes two windows beats one that completes one.
            key = (completed_windows(lines, own, bit), open_line_length(lines, own, opp, bit))
            if key > best:
                best, best_moves = key, [move]
            elif key == best and best[1] > 1:
                best_moves.append(move)
        return self.rng.choice(best_moves or legal)
