"""A random bot that thinks for 10 ms per move: makes tournaments last long enough
to interrupt at a chosen moment, whatever the machine's speed."""

import time

from arena.bot import Bot, Option


class Sleepy(Bot):
    """Plays a random legal move after a short sleep."""

    options = {"stream": Option(0, "tells several sleepy players apart")}

    def choose_move(self, board):
        time.sleep(0.01)
        return self.rng.choice(board.legal_moves())
