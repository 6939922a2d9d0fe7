"""Which stored games a league table is built from: one tournament or the whole league.

The command line's standings, crosstable and colours use this; so can any other
front end (a web site), which shows the same errors. A selection says what it
shows (``heading``, ``as_dict``): which tournament or the whole league, how many
games, under which rules, and whether they are all finished.

Casual tournaments (games played with ``arena play`` or imported) are never the
default: the default is the latest tournament that is not casual.

A bot is its code, not its name: two bots stored under one spec with different
code (two different ``mybot.py`` files) are two entrants, named ``mybot.py#3fa2c1``
(the spec and the start of the code's hash) wherever their names collide.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.league.store import Store, StoredGame, StoredTournament, rules_of
from arena.text import plural

CASUAL = "casual"  # the format of the tournaments 'arena play' and 'arena import' store games in
SHORT_HASH = 6  # hex digits of a code hash shown after a colliding name
STATUS_ORDER = ("running", "interrupted", "finished")  # a league is as unfinished as its least finished part


class SelectionError(ArenaError):
    """No games to build a table from."""


@dataclass(frozen=True)
class Selection:
    """The finished games a table shows, and what they are."""

    games: list[StoredGame]  # players named as entrants (see entrant_names)
    tournament: StoredTournament | None  # None: the whole league
    tournaments: list[StoredTournament]  # those the games come from

    @property
    def rules(self) -> list[str]:
        """The rules of the games, described, in the order first met."""
        return list(dict.fromkeys(rules_of(g).describe() for g in self.games))

    @property
    def status(self) -> str:
        """The tournament's status; for the whole league the least finished one's."""
        if self.tournament is not None:
            return self.tournament.status
        statuses = {t.status for t in self.tournaments}
        return next((s for s in STATUS_ORDER if s in statuses), "finished")

    def heading(self) -> str:
        """One line: what the table shows."""
        count = f"{len(self.games)} game{'' if len(self.games) == 1 else 's'}"
        rules = "; ".join(self.rules)
        if self.tournament is not None:
            return f"Tournament {self.tournament.name!r} ({self.status}): {count}, {rules}"
        unfinished = [t for t in self.tournaments if t.status != "finished"]
        across = f"{len(self.tournaments)} tournament{'' if len(self.tournaments) == 1 else 's'}"
        across += " (" + (", ".join(f"{t.name!r} {t.status}" for t in unfinished) or "all finished") + ")"
        return f"Whole league: {count} from {across}; rules: {rules}"

    def as_dict(self) -> dict[str, Any]:
        """The heading as JSON fields."""
        return {
            "tournament": None if self.tournament is None else self.tournament.name,
            "whole_league": self.tournament is None,
            "games": len(self.games),
            "rules": self.rules,
            "status": self.status,
            "tournaments": [t.name for t in self.tournaments],
        }


def select(store: Store, tournament: str | None = None, league: bool = False) -> Selection:
    """The finished games of ``tournament`` (by default the latest that is not casual),
    or of every tournament if ``league`` is set; unfinished casual games count in no table.

    Raises StoreError for a tournament that does not exist, SelectionError when
    both are asked for or there are no games to show (saying why).
    """
    if league and tournament:
        raise SelectionError(f"give either a tournament ({tournament!r}) or the whole league, not both")
    chosen = None if league else store.check_tournament(tournament) if tournament else latest_tournament(store)
    stored = store.games(tournament=None if chosen is None else chosen.name)
    # Unfinished casual games count in no table, nor do imported games with a player
    # their file did not name (no league entrant).
    games = [g for g in stored if g.finished and not g.has_unnamed_player]
    if not games:
        raise SelectionError(_why_empty(store, chosen, stored))
    names = {g.tournament for g in games}
    return Selection(entrant_names(games), chosen, [t for t in store.tournaments() if t.name in names])


def latest_tournament(store: Store) -> StoredTournament:
    """The tournament stored last that is not casual; SelectionError if there is none."""
    tournaments = store.tournaments()
    if not tournaments:
        raise SelectionError(f"no tournaments in {store.path} yet: run 'arena tournament run' first")
    played = [t for t in tournaments if t.format != CASUAL]
    if not played:
        names = ", ".join(repr(t.name) for t in tournaments)
        raise SelectionError(
            f"{store.path} holds only casual games (from 'arena play' and 'arena import', in {names}), "
            "which are never the default: show them with --all or --tournament NAME"
        )
    return played[-1]


def entrant_names(games: Sequence[StoredGame]) -> list[StoredGame]:
    """``games`` with each player named as an entrant: its spec, plus ``#`` and the start
    of its code's hash where one spec was stored with different code."""
    hashes: dict[str, set[str]] = defaultdict(set)
    for g in games:
        hashes[g.first].add(g.first_hash)
        hashes[g.second].add(g.second_hash)
    labels = {spec: _labels(spec, found) for spec, found in hashes.items() if len(found) > 1}
    if not labels:
        return list(games)
    return [
        dataclasses.replace(
            g,
            first=labels[g.first][g.first_hash] if g.first in labels else g.first,
            second=labels[g.second][g.second_hash] if g.second in labels else g.second,
        )
        for g in games
    ]


def _labels(spec: str, hashes: set[str]) -> dict[str, str]:
    """hash -> ``spec#<short hash>``, as long as it takes to tell them apart."""
    length = SHORT_HASH
    while len({h[:length] for h in hashes}) < len(hashes):
        length += 2
    return {h: f"{spec}#{h[:length] or 'unknown'}" for h in hashes}


def _why_empty(store: Store, chosen: StoredTournament | None, selected: Sequence[StoredGame]) -> str:
    """A true message for a selection with no game a table can show."""
    unnamed = sum(1 for g in selected if g.finished and g.has_unnamed_player)
    if unnamed:
        where = "the whole league" if chosen is None else f"tournament {chosen.name!r}"
        return (
            f"{where} in {store.path} holds {plural(unnamed, 'finished game')} with a player its file did not "
            "name ('unnamed'): such games count in no table; import them with their players named"
        )
    stored = store.game_count()
    finished = store.game_count(finished_only=True)
    if chosen is None:
        if stored == 0:
            return f"no games stored in {store.path} yet: run 'arena tournament run' first"
        return f"{store.path} holds {plural(stored, 'game')}, none of them finished: no table to show yet"
    here = store.game_count(tournament=chosen.name)
    what = f"tournament {chosen.name!r} ({chosen.status}) has no finished games"
    if here:
        what += f" ({here} unfinished)"
    if finished:
        return (
            f"{what}; {store.path} holds {plural(finished, 'finished game')} in all: "
            "--all or --tournament NAME shows them"
        )
    return f"{what}, and {store.path} holds no finished games: run 'arena tournament run' first"
