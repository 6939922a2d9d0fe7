"""``format = "knockout"``: a seeded bracket, played match by match.

The bracket and its rules are :mod:`arena.ratings.knockout`; a stored knockout's
state is :func:`arena.ratings.knockout_record.knockout_state`. Here it becomes a
:class:`~arena.tournament.rounds.RoundFormat`: the games to play next are those
the bracket calls for given the games stored (every pair of each match whose
entrants are known, then a level match's extra pairs one at a time), each a
GameSpec keyed by the bracket (``r2-m01-o00-a``), its seed following from its key
and its opening the tournament's opening of that round and pair. Asking again
once they are stored gives the next ones, until a champion is left.

The seeding is settled once, when the knockout starts (:func:`seeded`): the
bots' listed order, or their Elo in the database's league-wide standings, the
unrated after the rated in listing order. The runner stores it with the
tournament's settings (``seeding_order``) and a resumed run reads it from there,
so a rating that changed meanwhile draws no other bracket.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Sequence

from arena.ratings.knockout_record import (
    LISTED,
    SEEDING_ORDER,
    KnockoutSettings,
    knockout_state,
    prior_ratings,
    rating_order,
)
from arena.ratings.played import PlayedGame
from arena.records import GameSpec
from arena.store import Store
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import game_spec, iter_openings, seed_secret


def _settings(config: TournamentConfig) -> KnockoutSettings:
    if config.knockout is None:
        raise ValueError(f"tournament {config.name!r} is a {config.format}, not a knockout")
    return config.knockout


def seed_order(config: TournamentConfig) -> tuple[str, ...]:
    """The entrants in seed order: as settled by :func:`seeded`; a listed seeding
    needs no settling."""
    if config.seeds:
        return config.seeds
    if _settings(config).seeding == LISTED:
        return config.bots
    raise ValueError(f"knockout {config.name!r} is seeded by rating, and its seeding is not settled yet: "
                     "the runner settles it from the database")


def seeded(config: TournamentConfig, store: Store) -> TournamentConfig:
    """``config`` with its knockout's seeding settled: the one stored with the
    tournament of that name, if it holds these bots; else worked out now."""
    settings = _settings(config)
    if config.seeds:
        return config
    stored = store.tournaments.get(config.name)
    if stored is not None:
        given = json.loads(stored.config or "{}").get(SEEDING_ORDER)
        if isinstance(given, list) and sorted(given) == sorted(config.bots):
            return dataclasses.replace(config, seeds=tuple(given))
    order = config.bots if settings.seeding == LISTED else rating_order(config.bots, prior_ratings(store))
    return dataclasses.replace(config, seeds=tuple(order))


class Knockout:
    """``format = "knockout"`` as a :class:`~arena.tournament.rounds.RoundFormat`."""

    def game_count(self, config: TournamentConfig) -> int:
        """The most games the knockout can take: n - 1 matches, each of every pair and
        extra pair (most end sooner; the count only bounds the progress)."""
        settings = _settings(config)
        return (len(config.bots) - 1) * (config.games + 2 * settings.extra_pairs)

    def next_round(self, config: TournamentConfig, stored: Sequence[PlayedGame]) -> list[GameSpec] | None:
        _, due = knockout_state(seed_order(config), config.games // 2, _settings(config), config.seed,
                                config.rules, stored, seed_secret(config))
        if not due:
            return None
        openings = list(itertools.islice(iter_openings(config), max(game.opening for game in due) + 1))
        secret = seed_secret(config)
        return [game_spec(config, game.key, game.match, game.first, game.second, openings[game.opening], secret)
                for game in due]


KNOCKOUT = Knockout()
