"""Tournaments played round by round, each round's games following from the results
of the rounds before (Swiss; a knockout bracket).

A format of this kind is a :class:`RoundFormat`. Given the configuration and the
games stored, :meth:`RoundFormat.next_round` gives every game of the first round
that is not whole yet, or None once the last round is whole. It is pure and
deterministic: the same configuration, seed and stored results give the same
games with the same keys and seeds, so a run resumes round by round as a round
robin resumes game by game: the runner plays the keys of that round not stored
yet, stores them, and asks again.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Protocol

from arena.ratings.swiss import round_pairing
from arena.records import GameSpec
from arena.store import StoredGame
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import iter_openings, iter_pairing_games


class RoundFormat(Protocol):
    """A tournament format whose rounds are paired from the results so far."""

    def game_count(self, config: TournamentConfig) -> int:
        """The games of the whole tournament (a bye plays none): the total its progress counts to."""
        ...

    def next_round(self, config: TournamentConfig, stored: Sequence[StoredGame]) -> list[GameSpec] | None:
        """Every game of the first round not yet whole in ``stored`` (the stored games of
        the tournament), or None when the tournament is over. Games of that round
        already stored may be given again: the runner skips their keys. A round may
        grow: a knockout's level match asks for its extra pairs once the pairs before
        them are stored."""
        ...


def round_games(config: TournamentConfig, round_number: int, boards: Sequence[tuple[str, str]]) -> list[GameSpec]:
    """The games of round ``round_number`` (from 1): each board (a, b) a mini-match of
    ``config.games`` games, ``a`` moving first in the first game of each opening, keyed
    ``r03-p0002-o0000-a``. Every board of a round plays the same openings, drawn after
    those of the rounds before, so no opening favours one board."""
    per_round = (config.games + 1) // 2
    lines = itertools.islice(iter_openings(config), (round_number - 1) * per_round, None)
    named = [(round_pairing(round_number, board), a, b) for board, (a, b) in enumerate(boards)]
    return list(iter_pairing_games(config, named, lines))
