"""A Swiss tournament's table: mini-match points, byes and tie-breaks, from its games.

A Swiss round pairs the entrants two by two; each pairing plays a mini-match of
an even number of games (each opening with both colours). The mini-match is the
unit of the score:

- won (more game points than the opponent): 1 point; drawn: 1/2; lost: 0;
- a bye (an odd field leaves one entrant out of a round): 1 point, as a
  mini-match won, like FIDE's full-point bye.

Tie-breaks, in this order after the points:

1. Buchholz: the sum of the points of the opponents met (a bye adds nothing);
2. Sonneborn-Berger: the sum, over the mini-matches, of the opponent's points
   times the result (1, 1/2 or 0);
3. direct encounter: the points scored in mini-matches against the entrants
   with the same points;
4. the order the entrants were listed in (their seeding).

A mini-match counts once all its games are stored; a round counts once all its
mini-matches do (a bye is known only then: the entrant with no games in it).
Everything here is worked out from the game keys (``r03-p0002-o0000-a``: round 3,
board 2, the first opening, the first of its two games), so the table needs
nothing stored beside the games.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from arena.ratings.played import PlayedGame
from arena.store import Store, StoredTournament

SWISS_FORMAT = "swiss"
_ROUND_KEY = re.compile(r"r(\d{2,})-p(\d{4,})-o\d{4,}-([ab])")


def round_pairing(round_number: int, board: int) -> str:
    """The name of board ``board`` (from 0) of round ``round_number`` (from 1), which
    starts the keys of its games: ``r03-p0002``."""
    return f"r{round_number:02d}-p{board:04d}"


@dataclass(frozen=True)
class MiniMatch:
    """The games of one pairing of one round, all stored."""

    round: int
    board: int
    lead: str  # moved first in the first game of each opening
    other: str
    lead_points: float  # game points
    other_points: float

    def result(self, bot: str) -> float:
        """``bot``'s result: 1 (more game points), 1/2 (as many) or 0."""
        mine, theirs = (self.lead_points, self.other_points) if bot == self.lead else (
            self.other_points, self.lead_points)
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0

    def opponent(self, bot: str) -> str:
        return self.other if bot == self.lead else self.lead


@dataclass
class SwissRecord:
    """What the stored games say of a Swiss tournament: the mini-matches finished and
    the byes of the rounds finished."""

    entrants: tuple[str, ...]  # in the order given: the seeding
    rounds_complete: int  # rounds 1..this are whole (every mini-match stored)
    matches: list[MiniMatch] = field(default_factory=list)  # every whole mini-match, by round and board
    byes: dict[int, str] = field(default_factory=dict)  # round -> the entrant with the bye, for whole rounds

    def before(self, round_number: int) -> SwissRecord:
        """The record of the rounds before ``round_number`` only (what its pairing may use)."""
        return SwissRecord(self.entrants, min(self.rounds_complete, round_number - 1),
                           [m for m in self.matches if m.round < round_number],
                           {r: bot for r, bot in self.byes.items() if r < round_number})

    def points(self) -> dict[str, float]:
        points = dict.fromkeys(self.entrants, 0.0)
        for match in self.matches:
            points[match.lead] += match.result(match.lead)
            points[match.other] += match.result(match.other)
        for bot in self.byes.values():
            points[bot] += 1.0
        return points

    def met(self) -> set[frozenset[str]]:
        return {frozenset((m.lead, m.other)) for m in self.matches}


G = TypeVar("G", bound=PlayedGame)


def round_boards(games: Iterable[G]) -> dict[tuple[int, int], list[tuple[G, str]]]:
    """The stored games of each board of each round, by (round, board) in order, each
    with its half of its opening's pair ("a": the lead moves first; "b": colours
    swapped); games whose keys are not a Swiss round's are left out."""
    boards: dict[tuple[int, int], list[tuple[G, str]]] = defaultdict(list)
    for game in games:
        parsed = _ROUND_KEY.fullmatch(game.key)
        if parsed:
            boards[(int(parsed.group(1)), int(parsed.group(2)))].append((game, parsed.group(3)))
    return dict(sorted(boards.items()))


def mini_match(round_number: int, board: int, played: Sequence[tuple[PlayedGame, str]]) -> MiniMatch:
    """The mini-match of the games ``played`` of one board (see :func:`round_boards`),
    all of them or those stored so far (at least one)."""
    sample, half = played[0]
    lead = next((g.first for g, h in played if h == "a"), sample.first if half == "a" else sample.second)
    other = sample.second if sample.first == lead else sample.first
    points = {lead: 0.0, other: 0.0}
    for game, _ in played:
        if game.winner is None:
            points[game.first] += 0.5
            points[game.second] += 0.5
        else:
            points[game.second if game.winner else game.first] += 1.0
    return MiniMatch(round_number, board, lead, other, points[lead], points[other])


def swiss_record(entrants: Sequence[str], games_per_pairing: int, games: Iterable[PlayedGame]) -> SwissRecord:
    """The record of a Swiss tournament of ``entrants`` from its stored ``games``
    (other keys are ignored)."""
    matches = [mini_match(round_number, board, played)
               for (round_number, board), played in round_boards(games).items()
               if len(played) == games_per_pairing]  # the others are not all stored yet
    per_round = len(entrants) // 2
    complete = 0
    byes: dict[int, str] = {}
    while sum(1 for m in matches if m.round == complete + 1) == per_round and per_round:
        complete += 1
        playing = {bot for m in matches if m.round == complete for bot in (m.lead, m.other)}
        resting = [bot for bot in entrants if bot not in playing]
        if resting:
            byes[complete] = resting[0]
    return SwissRecord(tuple(entrants), complete, matches, byes)


@dataclass
class SwissStanding:
    rank: int
    bot: str
    points: float
    played: int  # mini-matches
    won: int
    drawn: int
    lost: int
    byes: int
    buchholz: float
    sonneborn_berger: float
    direct: float  # points against the entrants with the same points


def swiss_table(record: SwissRecord) -> list[SwissStanding]:
    """One row per entrant, ranked by points, then the tie-breaks (see the module)."""
    whole = record.before(record.rounds_complete + 1)  # a round counts once it is whole
    points = whole.points()
    rows = {bot: SwissStanding(0, bot, points[bot], 0, 0, 0, 0, 0, 0.0, 0.0, 0.0) for bot in record.entrants}
    for match in whole.matches:
        for bot in (match.lead, match.other):
            row, opponent, result = rows[bot], match.opponent(bot), match.result(bot)
            row.played += 1
            row.won += result == 1.0
            row.drawn += result == 0.5
            row.lost += result == 0.0
            row.buchholz += points[opponent]
            row.sonneborn_berger += result * points[opponent]
            if points[opponent] == points[bot]:
                row.direct += result
    for bot in whole.byes.values():
        rows[bot].byes += 1
    seeding = {bot: number for number, bot in enumerate(record.entrants)}
    order = sorted(rows.values(), key=lambda r: (-r.points, -r.buchholz, -r.sonneborn_berger, -r.direct,
                                                 seeding[r.bot]))
    for rank, row in enumerate(order, start=1):
        row.rank = rank
    return order


@dataclass(frozen=True)
class SwissSettings:
    """What a stored Swiss tournament was defined with, that its table needs."""

    entrants: tuple[str, ...]  # in the order given: the seeding
    games: int  # per pairing: a mini-match
    rounds: int


def swiss_settings(tournament: StoredTournament) -> SwissSettings | None:
    """The settings of a stored Swiss tournament; None for another format."""
    if tournament.format != SWISS_FORMAT:
        return None
    identity = json.loads(tournament.identity)
    return SwissSettings(tuple(identity["bots"]), identity["games"], identity["rounds"])


def stored_swiss(store: Store, tournament: StoredTournament) -> tuple[SwissRecord, int] | None:
    """The record of a stored Swiss tournament and its rounds; None for another format."""
    settings = swiss_settings(tournament)
    if settings is None:
        return None
    record = swiss_record(settings.entrants, settings.games, store.games.all(tournament=tournament.name))
    return record, settings.rounds
