"""The leftmost legal column, at once: what the sandbox adds to a Python bot file's move."""

from arena.bot import Bot


class BenchPython(Bot):
    def choose_move(self, board):
        return board.legal_moves()[0]
