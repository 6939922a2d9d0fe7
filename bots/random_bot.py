"""The random bot."""

from __future__ import annotations

import hashlib
import struct

from arena.bot import Bot, Option
from arena.engine.game import Board, Rules

#: The hash the random bot draws its numbers from, personalised so that its draws
#: are its own: 64 bytes, sixteen draws, for each block of a game's sequence. Not
#: keyed: nothing here is secret (the seed is), and a key is one more block to
#: compress for every digest.
_BLOCKS = hashlib.blake2b(digest_size=64, person=b"arena random bot")
_SIXTEEN_WORDS = struct.Struct("<16I").unpack
#: A draw is the low 30 bits of a word: a number Python keeps in one digit, where
#: its arithmetic takes a short path (with 64-bit draws a move cost a third more).
_BITS = 30
_LOW = (1 << _BITS) - 1


class RandomBot(Bot):
    """Plays a uniformly random legal move.

    Reproducible: the same game seed (given by new_game) gives the same moves.
    The ``stream`` option picks another, independent sequence, so that
    ``random:stream=1`` and ``random:stream=2`` are two different random players.

    Its numbers are not Python's Mersenne Twister (``self.rng``, which it leaves to
    subclasses): seeding one costs about 4.5 µs, as long as a dozen of this bot's
    moves, and a tournament of random bots seeds two a game. Block ``b`` of the
    game's sequence is a BLAKE2b hash of ``seed:stream:b``, read as sixteen
    30-bit draws, made only when the game gets that far; a draw picks among ``n``
    moves (fewer than 2**30) by Lemire's multiply-and-shift with rejection, so
    every move is exactly equally likely.
    """

    name = "random"
    stream = Option(0, "which random stream to draw from (independent players)")
    # new_game sets up everything a game uses; choose_move only reads the legal moves.
    reusable = True
    reads_board_only = True

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        self._key = b"%d:%d:" % (seed, self.stream)
        self._blocks = 0
        self._draws: list[int] = []  # what is left of the block drawn from, last first

    def choose_move(self, board: Board) -> int:
        moves = board.legal_moves()
        n = len(moves)
        draws = self._draws
        if draws:  # _below's usual first step, inline: one call less a move
            scaled = (draws.pop() & _LOW) * n
            if scaled & _LOW >= n:
                return moves[scaled >> _BITS]
            draws.append(scaled // n)  # a draw in doubt: put back for _below to judge
        return moves[self._below(n)]

    def _below(self, n: int) -> int:
        """A number in [0, n), each equally likely."""
        draws = self._draws
        while True:
            if not draws:
                block = _BLOCKS.copy()
                block.update(b"%s%d" % (self._key, self._blocks))
                self._blocks += 1
                draws = self._draws = list(_SIXTEEN_WORDS(block.digest()))
            scaled = (draws.pop() & _LOW) * n
            # The low bits say whether this draw falls in the uneven rest of the
            # range (fewer than n of its 2**30 values); rarely even looked at.
            low = scaled & _LOW
            if low >= n or low >= (_LOW + 1 - n) % n:
                return scaled >> _BITS
