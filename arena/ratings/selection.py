"""Which stored games a league table is built from: one tournament or the whole league.

The command line's standings, crosstable and colours use this; so can any other
front end (a web site), which shows the same errors. A selection says what it
shows (``heading``, ``as_dict``): which tournament or the whole league, how many
games, under which rules, and whether they are all finished.

Casual tournaments (games played with ``arena play``, single games imported) are
never the default: the default is the latest tournament that is not casual (a file
of many games imported is one).

A bot is its code, not its name: two bots stored under one spec with different
code (two different ``mybot.py`` files) are two entrants, named ``mybot.py#3fa2c1``
(the spec and the start of the code's hash) wherever their names collide.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from arena.engine.game import Rules, format_moves
from arena.errors import ArenaError
from arena.ratings.fit import Result
from arena.ratings.results import LeagueResults, first_player_score
from arena.store import Store, StoredTournament
from arena.text import plural

MATCH_FORMAT = "match"  # the format of the tournaments 'arena match' stores games in
CASUAL = "casual"  # the format of the tournaments 'arena play' and 'arena import' store games in
#: The format of the tournament rows a league's gate stores each test's games under:
#: a test is two versions of one bot, never the table a site or a command shows first.
GATE_FORMAT = "gate"
SHORT_HASH = 6  # hex digits of a code hash shown after a colliding name
STATUS_ORDER = ("running", "interrupted", "finished")  # a league is as unfinished as its least finished part


class SelectionError(ArenaError):
    """No games to build a table from."""


@dataclass(frozen=True)
class OpeningScore:
    """One opening of a tournament: its moves, its solver value for the first player
    (None where not known), and the first player's wins, draws and losses from it."""

    opening: str
    value: int | None
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def first_score(self) -> float:
        """The first player's score from this opening, 0 to 1."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


@dataclass(frozen=True)
class Selection:
    """The finished games a table shows, and what they are. The games stay in the
    store: :meth:`results` counts them there, :meth:`in_order` streams them."""

    store: Store
    tournament: StoredTournament | None  # None: the whole league
    tournaments: list[StoredTournament]  # those the games come from
    game_count: int
    rules: list[str]  # the rules of the games, described, in the order first met
    entrants: dict[int, str]  # bot id -> entrant name (see entrant_names)

    @property
    def status(self) -> str:
        """The tournament's status; for the whole league the least finished one's."""
        if self.tournament is not None:
            return self.tournament.status
        statuses = {t.status for t in self.tournaments}
        return next((s for s in STATUS_ORDER if s in statuses), "finished")

    def heading(self) -> str:
        """One line: what the table shows."""
        count = plural(self.game_count, "game")
        rules = "; ".join(self.rules)
        if self.tournament is not None:
            kind = "Match" if self.tournament.format == MATCH_FORMAT else "Tournament"
            adjudicated = self.adjudication()
            how = f"; adjudicated by the solver from {adjudicated.partition(':')[2]} stones" if adjudicated else ""
            return f"{kind} {self.tournament.name!r} ({self.status}): {count}, {rules}{how}"
        unfinished = [t for t in self.tournaments if t.status != "finished"]
        across = plural(len(self.tournaments), "tournament")
        across += " (" + (", ".join(f"{t.name!r} {t.status}" for t in unfinished) or "all finished") + ")"
        return f"Whole league: {count} from {across}; rules: {rules}"

    def as_dict(self) -> dict[str, Any]:
        """The heading as JSON fields."""
        return {
            "tournament": None if self.tournament is None else self.tournament.name,
            "whole_league": self.tournament is None,
            "games": self.game_count,
            "rules": self.rules,
            "status": self.status,
            "tournaments": [t.name for t in self.tournaments],
            **({"adjudicate": self.adjudication()} if self.adjudication() else {}),
        }

    @property
    def _tournament_id(self) -> int | None:
        return None if self.tournament is None else self.tournament.id

    def results(self) -> LeagueResults:
        """The games' results per pair of entrants, counted by the store."""
        results = LeagueResults()
        for first, second, wins, draws, losses, first_forfeits, second_forfeits in self.store.results.pairs(
                self._tournament_id):
            results.add(self.entrants[first], self.entrants[second], (wins, draws, losses),
                        (first_forfeits, second_forfeits))
        return results

    def settings(self) -> dict[str, Any]:
        """The tournament's stored definition ({} for the whole league, or one stored
        without it)."""
        if self.tournament is None:
            return {}
        try:
            config = json.loads(self.tournament.config or "{}")
        except ValueError:
            return {}
        return config if isinstance(config, dict) else {}

    def adjudication(self) -> str | None:
        """How the tournament's games were adjudicated (``solver:20``), None if never."""
        setting = self.settings().get("adjudicate")
        return setting if isinstance(setting, str) else None

    def by_opening(self) -> list[OpeningScore]:
        """The first player's results per opening of the tournament (none for the
        whole league), with each opening's solver value where the tournament knew it."""
        if self.tournament is None:
            return []
        openings = self.settings().get("openings")
        values: dict[str, int] = {}
        if isinstance(openings, dict) and isinstance(openings.get("values"), list):
            rules = Rules(**json.loads(self.tournament.rules))
            for line, value in zip(openings.get("lines") or [], openings["values"]):
                if isinstance(value, int):
                    values[format_moves(line, rules)] = value
        return [OpeningScore(opening, values.get(opening), wins, draws, losses)
                for opening, wins, draws, losses in self.store.results.by_opening(self.tournament.id)]

    def in_order(self) -> Iterator[Result]:
        """Each game's result, by tournament name and game key (the incremental Elo's
        order: the same games give the same column), read from the store as used."""
        for first, second, winner in self.store.results.in_order(self._tournament_id):
            yield Result(self.entrants[first], self.entrants[second], first_player_score(winner))


def select(store: Store, tournament: str | None = None, league: bool = False) -> Selection:
    """The finished games of ``tournament`` (by default the latest that is not casual),
    or of every tournament if ``league`` is set; unfinished casual games count in no
    table, nor do imported games with a player their file did not name.

    Raises StoreError for a tournament that does not exist, SelectionError when
    both are asked for or there are no games to show (saying why).
    """
    if league and tournament:
        raise SelectionError(f"give either a tournament ({tournament!r}) or the whole league, not both")
    chosen = None if league else store.tournaments.check(tournament) if tournament else latest_tournament(store)
    summary = store.results.summary(None if chosen is None else chosen.id)
    if not summary.games:
        message, site = _why_empty(store, chosen)
        raise SelectionError(message, site=site)
    return Selection(
        store, chosen, [t for t in store.tournaments.all() if t.id in set(summary.tournament_ids)], summary.games,
        list(dict.fromkeys(Rules(**json.loads(rules)).describe() for rules in summary.rules)),
        entrant_names(summary.bots),
    )


def latest_tournament(store: Store) -> StoredTournament:
    """The tournament stored last that is not casual (nor a league's gate test); SelectionError if there is none."""
    tournaments = store.tournaments.all()
    if not tournaments:
        raise SelectionError(f"no tournaments in {store.path} yet: run 'arena tournament run' first",
                             site="no tournaments here yet: the tables appear once games are played")
    played = [t for t in tournaments if t.format not in (CASUAL, GATE_FORMAT)]
    if not played:
        names = ", ".join(repr(t.name) for t in tournaments)
        raise SelectionError(
            f"{store.path} holds only casual games (from 'arena play' and 'arena import', in {names}), "
            "which are never the default: show them with --all or --tournament NAME",
            site=f"only casual games here (in {names}), which are never the default: "
                 "choose the whole league or a tournament",
        )
    return played[-1]


def entrant_names(bots: Iterable[tuple[int, str, str]]) -> dict[int, str]:
    """bot id -> entrant name, for (id, spec, code hash) rows: the spec, plus ``#`` and
    the start of the code's hash where one spec was stored with different code."""
    bots = list(bots)
    hashes: dict[str, set[str]] = defaultdict(set)
    for _, spec, code in bots:
        hashes[spec].add(code)
    labels = {spec: _labels(spec, found) for spec, found in hashes.items() if len(found) > 1}
    return {bot_id: labels[spec][code] if spec in labels else spec for bot_id, spec, code in bots}


def _labels(spec: str, hashes: set[str]) -> dict[str, str]:
    """hash -> ``spec#<short hash>``, as long as it takes to tell them apart."""
    length = SHORT_HASH
    while len({h[:length] for h in hashes}) < len(hashes):
        length += 2
    return {h: f"{spec}#{h[:length] or 'unknown'}" for h in hashes}


def _why_empty(store: Store, chosen: StoredTournament | None) -> tuple[str, str]:
    """A true message for a selection with no game a table can show, and its words for the site."""
    unnamed = store.results.unnamed_count(None if chosen is None else chosen.id)
    if unnamed:
        where = "the whole league" if chosen is None else f"tournament {chosen.name!r}"
        counted = f"holds {plural(unnamed, 'finished game')} with a player its file did not name ('unnamed')"
        return (f"{where} in {store.path} {counted}: such games count in no table; import them with their "
                "players named", f"{where} {counted}: such games count in no table")
    stored = store.games.count()
    finished = store.games.count(finished_only=True)
    if chosen is None:
        if stored == 0:
            return (f"no games stored in {store.path} yet: run 'arena tournament run' first",
                    "no games here yet: the tables appear once games are played")
        return (f"{store.path} holds {plural(stored, 'game')}, none of them finished: no table to show yet",
                f"{plural(stored, 'game')} here, none of them finished: no table to show yet")
    here = store.games.count(tournament=chosen.name)
    what = f"tournament {chosen.name!r} ({chosen.status}) has no finished games"
    if here:
        what += f" ({here} unfinished)"
    if finished:
        return (f"{what}; {store.path} holds {plural(finished, 'finished game')} in all: "
                "--all or --tournament NAME shows them",
                f"{what}; {plural(finished, 'finished game')} in all: the whole league or another tournament "
                "shows them")
    return (f"{what}, and {store.path} holds no finished games: run 'arena tournament run' first",
            f"{what}, and no finished games are here yet")
