"""The pairing of ``format = "swiss"``: a score-group Swiss system, Dutch-style.

Each round, the entrants are ranked by points, then by the order they were listed
in (the seeding; tie-breaks decide the final table only). Then:

1. **Bye.** With an odd field, the lowest-ranked entrant who has not had a bye
   sits the round out (1 point, see arena.ratings.swiss); if the rest cannot be
   paired without a rematch, the next one up, and so on. No one has a second bye
   while another entrant has had none.
2. **Score groups, top half against bottom half.** The highest-ranked entrant not
   yet paired is paired first. Its score group is itself and the unpaired
   entrants with its points, in rank order, split in a top half and a bottom half
   (the bottom half the larger when the group is odd): the entrant at place i of
   the top half meets the one at place i of the bottom half, as in the Dutch
   system. Failing that (a rematch), the next ones of the bottom half, then the
   top half's from the nearest up.
3. **Floaters moved down.** An entrant left alone in its score group (an odd
   group, or one whose group offers it only rematches) meets the highest-ranked
   entrant of the groups below.
4. **No rematches.** Two entrants never meet twice. When a choice leaves the rest
   unpairable without a rematch, the search backtracks to the next choice: the
   pairing is the first in the order above with no rematch.
5. **Colours.** Every mini-match plays each opening twice, colours swapped, so
   every entrant moves first in exactly half its games. Who moves first in the
   first game of each opening (leads the mini-match) goes to the one who led
   fewer mini-matches so far; when even, to the one who did not lead its last
   one; else to the higher-ranked.

A pairing without a rematch always exists when the rounds are at most half the
field, rounded up (N rounds need at least 2N - 1 entrants): after k rounds each
entrant (and the bye, as one more) has met k others, so the pairs still allowed
form a graph of degree at least half its size, which by Dirac's theorem has a
Hamiltonian cycle, hence a perfect matching. The configuration refuses more
rounds up front (arena.tournament.config).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.ratings.played import PlayedGame
from arena.ratings.swiss import SwissRecord, swiss_record
from arena.records import GameSpec
from arena.tournament.config import TournamentConfig
from arena.tournament.rounds import round_games


class SwissPairingError(ArenaError):
    """No round can be paired without a rematch (the rounds were not checked against the field)."""


@dataclass(frozen=True)
class RoundPairing:
    boards: list[tuple[str, str]]  # (lead, other), board 0 first: the top pairs first
    bye: str | None


def ranking(record: SwissRecord) -> list[str]:
    """The entrants in pairing order: by points, then by seeding."""
    points = record.points()
    seeding = {bot: number for number, bot in enumerate(record.entrants)}
    return sorted(record.entrants, key=lambda bot: (-points[bot], seeding[bot]))


def pair_round(record: SwissRecord) -> RoundPairing:
    """The pairing of the round after the rounds in ``record`` (see the module)."""
    order = ranking(record)
    points = record.points()
    met = record.met()
    had_bye = set(record.byes.values())
    candidates: list[str | None] = [None]
    if len(order) % 2:
        # The lowest-ranked without a bye first; everyone has had one only past the rounds allowed.
        candidates = [bot for bot in reversed(order) if bot not in had_bye] or list(reversed(order))
    failed: set[frozenset[str]] = set()
    balance, last = lead_balance(record), last_leads(record)
    for bye in candidates:
        pairs = _pair([bot for bot in order if bot != bye], points, met, failed)
        if pairs is not None:
            return RoundPairing([colours(a, b, balance, last) for a, b in pairs], bye)
    raise SwissPairingError(f"round {record.rounds_complete + 1} of the Swiss tournament of "
                            f"{len(order)} entrants cannot be paired without a rematch: play fewer rounds")


def _pair(players: list[str], points: Mapping[str, float], met: set[frozenset[str]],
          failed: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    """The first pairing of ``players`` (in rank order) without a rematch, None if none;
    ``failed`` keeps the sets of players found unpairable, so none is searched twice."""
    if not players:
        return []
    if frozenset(players) in failed:
        return None
    top, rest = players[0], players[1:]
    for opponent in preferences(top, rest, points):
        if frozenset((top, opponent)) in met:
            continue
        tail = _pair([bot for bot in rest if bot != opponent], points, met, failed)
        if tail is not None:
            return [(top, opponent), *tail]
    failed.add(frozenset(players))
    return None


def preferences(top: str, rest: Sequence[str], points: Mapping[str, float]) -> list[str]:
    """Whom ``top`` (the highest-ranked unpaired) meets, first choice first: in its
    score group the bottom half from its head, then the top half from the nearest
    up; then the groups below, highest-ranked first (``rest`` is in rank order)."""
    group = [top, *(bot for bot in rest if points[bot] == points[top])]
    half = max(1, len(group) // 2)
    below = [bot for bot in rest if points[bot] != points[top]]
    return group[half:] + group[half - 1:0:-1] + below


def lead_balance(record: SwissRecord) -> dict[str, int]:
    """Mini-matches led minus mini-matches not led, per entrant."""
    balance = dict.fromkeys(record.entrants, 0)
    for match in record.matches:
        balance[match.lead] += 1
        balance[match.other] -= 1
    return balance


def last_leads(record: SwissRecord) -> dict[str, bool]:
    """Whether each entrant led its last mini-match (none for one that has not played)."""
    last: dict[str, bool] = {}
    for match in record.matches:  # in round order: the last one stays
        last[match.lead], last[match.other] = True, False
    return last


def colours(a: str, b: str, balance: Mapping[str, int], last: Mapping[str, bool]) -> tuple[str, str]:
    """(lead, other) of a pairing of ``a`` and the lower-ranked ``b`` (see the module)."""
    if balance[a] != balance[b]:
        return (a, b) if balance[a] < balance[b] else (b, a)
    if a in last and b in last and last[a] != last[b]:
        return (b, a) if last[a] else (a, b)
    return a, b


class Swiss:
    """``format = "swiss"`` as a :class:`~arena.tournament.rounds.RoundFormat`."""

    def game_count(self, config: TournamentConfig) -> int:
        return config.rounds * (len(config.bots) // 2) * config.games

    def next_round(self, config: TournamentConfig, stored: Sequence[PlayedGame]) -> list[GameSpec] | None:
        record = swiss_record(config.bots, config.games, stored)
        round_number = record.rounds_complete + 1
        if round_number > config.rounds:
            return None
        return round_games(config, round_number, pair_round(record.before(round_number)).boards)


SWISS = Swiss()
