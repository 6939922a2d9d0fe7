"""The tournaments of a database, one summary each: what ``arena tournaments`` lists
and what the site's tournament pages and ``/api/tournaments`` show.

A summary is read from the tournament's row (its definition as given, its rules,
its status) and the count of its games stored; nothing is played or fitted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from tabulate import tabulate

from arena.ratings.standings import csv_text
from arena.store import Store, StoredTournament, rules_of
from arena.text import printable

#: The columns of the terminal's table, in order.
COLUMNS = ("name", "status", "format", "rules", "games", "bots", "created_at", "finished_at")


@dataclass(frozen=True)
class TournamentSummary:
    name: str
    status: str  # "running", "interrupted" or "finished"
    format: str
    rules: str  # described: "7x6 connect 4"
    games: int  # stored
    bots: list[str]  # as the definition names them (challengers last in a gauntlet)
    created_at: str
    finished_at: str | None
    settings: dict[str, Any]  # the definition as given (bots, games, openings, time, limits, seed...)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(tournament: StoredTournament, games: int) -> TournamentSummary:
    """One tournament's summary, given how many of its games are stored."""
    settings = _settings(tournament)
    bots = [*settings.get("bots", []), *settings.get("challengers", [])]
    return TournamentSummary(tournament.name, tournament.status, tournament.format, rules_of(tournament).describe(),
                             games, [str(b) for b in bots], tournament.created_at, tournament.finished_at, settings)


def tournament_summaries(store: Store) -> list[TournamentSummary]:
    """Every tournament, newest first."""
    counts = store.games.tournament_counts()
    return [summarize(t, counts.get(t.id, 0)) for t in reversed(store.tournaments.all())]


def render_tournaments(summaries: list[TournamentSummary], fmt: str = "table") -> str:
    """The summaries as a table for people (``table``, ``github``: names escaped), or as
    data (``csv``, ``json``: names as stored)."""
    if fmt == "json":
        return json.dumps([s.as_dict() for s in summaries], indent=2)
    rows = [[getattr(s, column) for column in COLUMNS] for s in summaries]
    if fmt == "csv":
        return csv_text(list(COLUMNS), [[*row[:5], " ".join(row[5]), *row[6:]] for row in rows])
    shown = [[printable(s.name), s.status, s.format, s.rules, s.games, printable(", ".join(s.bots)),
              s.created_at, s.finished_at or ""] for s in summaries]
    return tabulate(shown, headers=[c.replace("_", " ") for c in COLUMNS],
                    tablefmt="github" if fmt == "github" else "simple", disable_numparse=True,
                    colalign=("left",) * 4 + ("right",) + ("left",) * 3)


def _settings(tournament: StoredTournament) -> dict[str, Any]:
    """The definition stored with the tournament; a row written by hand may hold anything."""
    try:
        settings = json.loads(tournament.config or "{}")
    except ValueError:
        return {}
    if not isinstance(settings, dict):
        return {}
    settings.pop("db", None)  # where this machine keeps the file: not part of the tournament
    settings.pop("source", None)
    return settings
