"""The random bot."""

from __future__ import annotations

import _random
import random

try:  # Python's own SHA-512, the one random.seed hashes a text seed with: quicker to
    # set up than OpenSSL's, which hashlib gives (each bot hashes its seed every game)
    from _sha512 import sha512  # type: ignore[import-not-found]
except ImportError:  # where Python has it under another name (3.12 on)
    from hashlib import sha512

from arena.bot import Bot, Option
from arena.engine.game import Board, Rules

#: The Mersenne Twister's own seeding, in C: what ``random.Random.seed`` calls once
#: it has turned a text seed into a number.
_SEED_GENERATOR = _random.Random.seed


class RandomBot(Bot):
    """Plays a uniformly random legal move.

    Reproducible: the same game seed (given by new_game) gives the same moves.
    The ``stream`` option picks another, independent sequence, so that
    ``random:stream=1`` and ``random:stream=2`` are two different random players.

    Its moves are those of ``self.rng.choice(board.legal_moves())`` with ``self.rng``
    seeded as ``random.Random(seed)`` (``random.Random(f"{seed}:{stream}")`` for a
    stream), game after game, release after release: a tournament resumed by a
    later release plays the games the first one would have. What is done here
    instead of those calls, for speed only: the bot keeps one generator and seeds
    it again for each game with Python's seeding in C, the text seed hashed here as
    ``random.seed`` hashes it; and a move draws as ``choice`` does, inline
    (``Random._randbelow_with_getrandbits``), two calls in Python fewer a move.
    """

    name = "random"
    stream = Option(0, "which random stream to draw from (independent players)")
    # new_game seeds everything a game uses; choose_move only reads the legal moves.
    reusable = True
    reads_board_only = True

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        self.rules = rules
        self.player = player
        rng: random.Random | None = self.__dict__.get("rng")
        if rng is None:  # the first game: a generator kept for the games after it
            rng = self.rng = random.Random(0)
        if self.stream:  # random.Random(text) turns its text into this number
            text = b"%d:%d" % (seed, self.stream)
            _SEED_GENERATOR(rng, int.from_bytes(text + sha512(text).digest()))
        else:
            _SEED_GENERATOR(rng, seed)
        rng.gauss_next = None  # type: ignore[attr-defined]  # as random.Random.seed leaves it

    def choose_move(self, board: Board) -> int:
        moves = board.legal_moves()
        n = len(moves)
        if not n:
            raise IndexError("Cannot choose from an empty sequence")  # as choice says it
        draw = self.rng.getrandbits
        bits = n.bit_length()
        index = draw(bits)
        while index >= n:
            index = draw(bits)
        return moves[index]
