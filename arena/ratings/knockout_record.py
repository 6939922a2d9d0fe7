"""A knockout tournament from what is stored: its settings, the results of its
games, and the verdict on its level matches.

The bracket itself is :mod:`arena.ratings.knockout`. Here it is worked out for a
tournament of ``format = "knockout"``: the entrants in the seed order the
tournament stored when it started (``seeding_order`` in its settings, so a
prior rating that changed since draws no other bracket), ``games`` a match
(``games / 2`` pairs), the tie-breaks of its ``knockout`` settings, and each
stored game's result. The runner plays the games this gives to play next; the
standings and the site show the bracket it gives: both from one function,
:func:`knockout_state`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine.game import Rules
from arena.errors import ArenaError
from arena.ratings.knockout import Bracket, Decide, KnockoutGame, KnockoutRules, Played, advance, new_bracket, seeding
from arena.ratings.played import PlayedGame
from arena.ratings.verdict import VERDICT_NODES, verdict
from arena.store import Store, StoredTournament

KNOCKOUT_FORMAT = "knockout"
#: How the entrants are seeded: in the order they are listed, or by their Elo in the
#: database's league-wide standings when the knockout starts.
LISTED, RATING = "listed", "rating"
SEEDINGS = (LISTED, RATING)
#: What decides a match still level after its extra pairs: the solver's verdict on
#: its games (then, without one, the coin), or the coin alone.
SOLVER, COIN = "solver", "coin"
DECIDERS = (SOLVER, COIN)
#: The key of a knockout's settings (as given) that holds its entrants in seed order.
SEEDING_ORDER = "seeding_order"


class KnockoutSettingsError(ArenaError):
    """Knockout settings that cannot be played: an unknown seeding or decider, extra
    pairs below zero."""


@dataclass(frozen=True)
class KnockoutSettings:
    """What a knockout adds to a tournament's settings (``games`` is a match's games)."""

    extra_pairs: int = 1
    seeding: str = LISTED
    decider: str = COIN
    nodes: int = VERDICT_NODES  # the solver's budget per position, for the solver decider

    def __post_init__(self) -> None:
        if self.extra_pairs < 0:
            raise KnockoutSettingsError(f"extra_pairs must be 0 or more (pairs played while a match is level), "
                                        f"got {self.extra_pairs}")
        if self.seeding not in SEEDINGS:
            raise KnockoutSettingsError(f"seeding must be {' or '.join(SEEDINGS)}, got {self.seeding!r}")
        if self.decider not in DECIDERS:
            raise KnockoutSettingsError(f"decider must be {' or '.join(DECIDERS)}, got {self.decider!r}")

    def as_dict(self) -> dict[str, Any]:
        return {"extra_pairs": self.extra_pairs, "seeding": self.seeding, "decider": self.decider,
                **({"solver_nodes": self.nodes} if self.decider == SOLVER else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KnockoutSettings:
        return cls(data.get("extra_pairs", 1), data.get("seeding", LISTED), data.get("decider", COIN),
                   data.get("solver_nodes", VERDICT_NODES))


def first_points(game: PlayedGame) -> float:
    """The points of the player who moved first: 1, 0.5 (a draw) or 0."""
    return 0.5 if game.winner is None else 1.0 - game.winner


def knockout_state(
    order: Sequence[str], pairs: int, settings: KnockoutSettings, seed: int, rules: Rules,
    games: Sequence[PlayedGame], secret: bytes | None = None,
) -> tuple[Bracket, list[KnockoutGame]]:
    """The bracket of the entrants ``order`` (seed 1 first) as the stored ``games``
    leave it, and the games to play next (none once there is a champion)."""
    by_key = {game.key: game for game in games}
    start = new_bracket(seeding(list(order)), KnockoutRules(pairs, settings.extra_pairs, seed))
    decide: Decide | None = None
    if settings.decider == SOLVER:
        def decide(upper: str, lower: str, played: Sequence[Played]) -> str | None:
            return verdict(upper, lower, rules, [by_key[p.game.key] for p in played], settings.nodes)
    results = {key: first_points(game) for key, game in by_key.items()}
    return advance(start, results, decide=decide, secret=secret)


def stored_bracket(store: Store, tournament: StoredTournament) -> Bracket | None:
    """The bracket of a stored knockout as its stored games leave it; None for
    another format."""
    if tournament.format != KNOCKOUT_FORMAT:
        return None
    identity = json.loads(tournament.identity)
    secret = store.tournaments.seed_secret(tournament.id) if identity.get("private_seeds") else None
    bracket, _ = knockout_state(
        seeding_order(tournament), identity["games"] // 2, KnockoutSettings.from_dict(identity.get("knockout", {})),
        identity["seed"], Rules(**identity["rules"]), store.games.all(tournament=tournament.name), secret)
    return bracket


def seeding_order(tournament: StoredTournament) -> list[str]:
    """The entrants of a stored knockout in seed order: as it stored them when it
    started, else (a listed seeding) as they are listed."""
    given = json.loads(tournament.config or "{}")
    order = given.get(SEEDING_ORDER) if isinstance(given, dict) else None
    if isinstance(order, list) and all(isinstance(bot, str) for bot in order):
        return order
    return list(json.loads(tournament.identity)["bots"])


def prior_ratings(store: Store) -> dict[str, float]:
    """Each bot's Elo in the league-wide standings of ``store`` (none without games)."""
    from arena.ratings.selection import SelectionError, select
    from arena.ratings.standings import league_standings

    try:
        chosen = select(store, league=True)
    except SelectionError:
        return {}
    return {row.bot: row.elo for row in league_standings(chosen.results(), chosen.in_order())}


def rating_order(bots: Sequence[str], ratings: Mapping[str, float]) -> list[str]:
    """``bots`` by ``ratings``, the highest first (equal ratings in listing order),
    then the unrated in listing order."""
    rated = sorted((bot for bot in bots if bot in ratings), key=lambda bot: -ratings[bot])
    return rated + [bot for bot in bots if bot not in ratings]
