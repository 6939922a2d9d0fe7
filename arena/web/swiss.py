"""A Swiss tournament's page: its table (points, tie-breaks, each bot's Elo beside)
and every round's pairings with the results of their mini-matches, the rounds
still to play marked as such; as a page that follows the tournament while it runs,
and as JSON.

Like the standings, the table is worked out once per state of the tournament's
games (the site's cache, dated by :func:`arena.web.pages.data_version`), from the
games' keys alone (arena.ratings.swiss): a round shows once its games are stored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from arena.ratings.selection import SelectionError
from arena.ratings.standings import Standing, swiss_data
from arena.ratings.swiss import (
    SWISS_FORMAT,
    SwissRecord,
    SwissSettings,
    SwissStanding,
    mini_match,
    round_boards,
    swiss_record,
    swiss_settings,
    swiss_table,
)
from arena.store import Store, StoredGame, StoredTournament
from arena.text import printable
from arena.web.cache import TableCache
from arena.web.pages import StoreDep, apart, data_version, page, tables

router = APIRouter()

SwissTournament = Annotated[str | None, Query(
    description="A Swiss tournament's name (default: the latest Swiss tournament).", max_length=200)]

#: What a round is, as the page and the JSON say it.
PLAYED, PLAYING, TO_PLAY = "played", "playing", "to play"


@dataclass(frozen=True)
class Board:
    """One pairing of a round: its mini-match, all of it stored or what is so far."""

    board: int  # from 0: the top pairs first
    lead: str  # moves first in the first game of each opening
    other: str
    lead_points: float  # game points
    other_points: float
    games: list[int]  # the ids of its games stored, in the order they are played
    complete: bool  # every game of the mini-match stored

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Round:
    number: int  # from 1
    state: str  # PLAYED (every mini-match stored), PLAYING (some games stored) or TO_PLAY
    boards: list[Board]
    bye: str | None  # known once the round is played

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.number, "state": self.state, "bye": self.bye,
                "boards": [board.as_dict() for board in self.boards]}


@dataclass(frozen=True)
class SwissTables:
    """What a Swiss tournament's page shows, but the Elo (the standings' own, cached apart)."""

    name: str
    status: str
    games: int  # stored
    settings: SwissSettings
    record: SwissRecord
    table: list[SwissStanding]
    rounds: list[Round]


def swiss_tables(tournament: StoredTournament, settings: SwissSettings, games: list[StoredGame]) -> SwissTables:
    """The table and the rounds of a Swiss tournament from its games stored so far."""
    record = swiss_record(settings.entrants, settings.games, games)
    boards = round_boards(sorted(games, key=lambda game: game.key))
    rounds = []
    for number in range(1, settings.rounds + 1):
        shown = []
        for (round_number, board), played in boards.items():
            if round_number == number:
                match = mini_match(round_number, board, played)
                shown.append(Board(board, match.lead, match.other, match.lead_points, match.other_points,
                                   [game.id for game, _ in played], len(played) == settings.games))
        state = PLAYED if number <= record.rounds_complete else PLAYING if shown else TO_PLAY
        rounds.append(Round(number, state, shown, record.byes.get(number)))
    return SwissTables(tournament.name, tournament.status, len(games), settings, record, swiss_table(record), rounds)


def chosen_tournament(store: Store, name: str | None) -> tuple[StoredTournament, SwissSettings]:
    """The Swiss tournament of that name (by default the latest); a 404 saying why for
    an unknown name (naming those there are), another format, or none at all."""
    if name is None:
        swiss = [t for t in store.tournaments.all() if t.format == SWISS_FORMAT]
        if not swiss:
            raise SelectionError("no Swiss tournaments here yet: their tables appear once one is played")
        tournament = swiss[-1]
    else:
        tournament = store.tournaments.check(name)
    settings = swiss_settings(tournament)
    if settings is None:
        shown = printable(tournament.name)
        raise SelectionError(f"tournament {shown!r} is a {tournament.format} tournament, not a Swiss one: "
                             "it has no Swiss table (its standings show its results)")
    return tournament, settings


def swiss_of(request: Request, store: Store, name: str | None) -> tuple[SwissTables, dict[str, Standing]]:
    """A Swiss tournament's tables from the site's cache while its games are unchanged,
    and each bot's Elo from the standings of its games (none before its first game)."""
    tournament, settings = chosen_tournament(store, name)

    def compute(store: Store) -> SwissTables:
        return swiss_tables(tournament, settings, store.games.all(tournament=tournament.name))

    cache: TableCache = request.app.state.cache
    shown = cache.get(("swiss", tournament.name), data_version(store, tournament.id), apart(request, compute))
    if not shown.games:
        return shown, {}
    return shown, {row.bot: row for row in tables(request, store, tournament.name, False).standings}


def swiss_document(shown: SwissTables, elo: dict[str, Standing]) -> dict[str, Any]:
    """The JSON of a Swiss tournament: its table as ``arena standings --format json``'s
    ``swiss`` field, and its rounds' pairings."""
    return {"tournament": shown.name, "status": shown.status, "games": shown.games,
            "games_per_pairing": shown.settings.games,
            "swiss": swiss_data(shown.table, shown.settings.rounds, shown.record, elo),
            "rounds": [r.as_dict() for r in shown.rounds]}


@router.get("/swiss", response_class=HTMLResponse, include_in_schema=False)
def swiss_page(request: Request, store: StoreDep, tournament: SwissTournament = None) -> HTMLResponse:
    shown, elo = swiss_of(request, store, tournament)
    return page(request, "swiss.html", title=printable(f"Swiss tournament {shown.name}"), s=shown, elo=elo,
                words={PLAYED: "played", PLAYING: "being played", TO_PLAY: "to play"})


@router.get("/api/swiss", summary="A Swiss tournament: its table (as the 'swiss' field of 'arena standings "
                                  "--format json') and every round's pairings with their results")
def api_swiss(request: Request, store: StoreDep, tournament: SwissTournament = None) -> dict[str, Any]:
    return swiss_document(*swiss_of(request, store, tournament))
