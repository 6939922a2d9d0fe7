"""A hostile bot that brute-forces the arena's seeds (tests/test_private_seeds.py).

A bot is told its own seed and sees the game. This one copies, from the arena's
source as any author can, how seeds are made: a game's seed is a hash of the
tournament seed and the game's key, each side's seed a hash of the game's seed
under a key written in the source. It tries small tournament seeds and the keys a
tournament or a match gives its games until one gives its own seed; then it knows
its opponent's seed too, and against the built-in random bot it predicts each reply
before it is played. Its move info says what it found and how its predictions went.

With a public seed this works (a tournament run with ``--seed N`` is reproducible
by anyone, bots included); with private seeds the search finds nothing.
"""

from __future__ import annotations

import hashlib
import random

from arena.bot import Bot, Choice, Option

#: The referee's key for the side seeds, as written in arena/referee/referee.py.
SIDE_KEY = b"connectk-arena side seeds"
#: A league's pairings to try too (``older~newer``: its reference bots are listed on
#: its site, and an author knows its own bot's name); the test fills them in.
LEAGUE_PAIRINGS: list[str] = []


def public_game_seed(tournament_seed, key):
    """arena.engine.openings.game_seed without a secret, copied."""
    digest = hashlib.sha256(f"{tournament_seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def side_seed(game_seed, player):
    """arena.referee.referee._bot_seed, copied."""
    digest = hashlib.blake2b(b"%d" % game_seed, digest_size=6, key=SIDE_KEY, person=b"side %d" % player).digest()
    return int.from_bytes(digest, "big")


def candidate_keys(pairings, openings, matches):
    """The keys a tournament gives its first games (``p0000-o0000-a``), a league its
    (``random~mine@v1-o0000-a``) and a match its games (``match-000000``)."""
    names = [f"p{pairing:04d}" for pairing in range(pairings)] + LEAGUE_PAIRINGS
    for name in names:
        for opening in range(openings):
            for colours in "ab":
                yield f"{name}-o{opening:04d}-{colours}"
    for number in range(matches):
        yield f"match-{number:06d}"


class SeedGuesser(Bot):
    """Finds its opponent's seed from its own and predicts a random bot's replies."""

    # A small search, so that it fits in the first move's second even on a busy
    # machine: enough for the tests' seeds (0 to 3) and their few games.
    seeds = Option(16, "tournament seeds tried: 0 up to this")
    pairings = Option(2, "tournament pairings tried")
    openings = Option(4, "openings per pairing tried")
    matches = Option(16, "games of a match tried")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.found = self.search(seed)
        if self.found is not None:
            tournament_seed, key = self.found
            self.opponent = random.Random(side_seed(public_game_seed(tournament_seed, key), 1 - player))
        else:  # nothing found: a guess, right about one time in seven
            self.opponent = random.Random(seed + 1)
        self.prediction = None  # the reply the opponent will play to this bot's last move
        self.synced = False
        self.predicted = self.hits = 0

    def search(self, seed):
        """The (tournament seed, game key) that gives this side ``seed``, if any is small."""
        for key in candidate_keys(self.pairings, self.openings, self.matches):
            for tournament_seed in range(self.seeds + 1):
                if side_seed(public_game_seed(tournament_seed, key), self.player) == seed:
                    return tournament_seed, key
        return None

    def choose_move(self, board):
        history = board.history
        if not self.synced:
            # Moving second: the opponent's first move drew from its generator already.
            # (The games of this test have no random opening: every ply is a bot's.)
            replay = type(board)(board.rules)
            for ply, move in enumerate(history):
                if ply % 2 != self.player:
                    self.opponent.choice(replay.legal_moves())
                replay.play(move)
            self.synced = True
        elif self.prediction is not None:
            self.predicted += 1
            self.hits += history[-1] == self.prediction
        move = self.rng.choice(board.legal_moves())
        after = board.copy()
        after.play(move)
        # Exactly the draw the random bot will make from the position it is given.
        self.prediction = None if after.is_over() else self.opponent.choice(after.legal_moves())
        found = list(self.found) if self.found is not None else None
        return Choice(move, {"found": found, "predicted": self.predicted, "hits": self.hits,
                             "next": self.prediction})
