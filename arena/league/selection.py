"""Which stored games a league table is built from: one tournament or the whole league.

The command line's standings, crosstable and colours use this; so can any other
front end (a web site), which shows the same errors.
"""

from __future__ import annotations

from arena.errors import ArenaError
from arena.league.store import Store, StoredGame


class SelectionError(ArenaError):
    """No games to build a table from."""


def select_games(store: Store, tournament: str | None = None, league: bool = False) -> list[StoredGame]:
    """The finished games of ``tournament`` (the latest if None), or of every tournament
    if ``league`` is set; unfinished casual games count in no table, nor do imported
    games with a player their file did not name (no league entrant).

    Raises StoreError for a tournament that does not exist, SelectionError when
    both are asked for or there are no games to show.
    """
    if league and tournament:
        raise SelectionError(f"give either a tournament ({tournament!r}) or the whole league, not both")
    if not league:
        tournament = tournament or latest_tournament(store)
    stored = store.games(tournament=None if league else tournament)
    games = [g for g in stored if g.finished and not g.has_unnamed_player]
    if not games:
        raise SelectionError(f"no games stored in {store.path} yet: run 'arena tournament run' first")
    return games


def latest_tournament(store: Store) -> str:
    """The name of the tournament stored last; SelectionError if there is none."""
    tournaments = store.tournaments()
    if not tournaments:
        raise SelectionError(f"no tournaments in {store.path} yet: run 'arena tournament run' first")
    return tournaments[-1].name
