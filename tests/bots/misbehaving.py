"""Bots that break the contract in one way each, for referee and tournament tests."""

import time

from arena.bot import Bot, Choice


class Raises(Bot):
    """Raises on its first move."""

    def choose_move(self, board):
        raise RuntimeError("boom")


class ReturnsNone(Bot):
    """Answers None."""

    def choose_move(self, board):
        return None


class ReturnsString(Bot):
    """Answers a string."""

    def choose_move(self, board):
        return "4"


class ReturnsFloat(Bot):
    """Answers a float."""

    def choose_move(self, board):
        return 3.0


class ReturnsBool(Bot):
    """Answers True (an int subclass, not a move)."""

    def choose_move(self, board):
        return True


class OutOfRange(Bot):
    """Answers a column that does not exist."""

    def choose_move(self, board):
        return board.rules.width


class FullColumn(Bot):
    """Keeps playing column 0 until it is full, then once more."""

    def choose_move(self, board):
        return 0


class MutatesBoard(Bot):
    """Fills its copy of the board before answering legally on the original position."""

    def choose_move(self, board):
        move = board.legal_moves()[0]
        while not board.is_over():
            board.play(board.legal_moves()[0])
        return move


class Slow(Bot):
    """Sleeps 0.2 s per move."""

    def choose_move(self, board):
        time.sleep(0.2)
        return board.legal_moves()[0]


class BadInfo(Bot):
    """Logs info that is not JSON."""

    def choose_move(self, board):
        return Choice(board.legal_moves()[0], {"thing": object()})
