"""The incremental Elo of a selection, kept between computations and carried on
from where it stopped.

The incremental Elo (the standings' "Inc. Elo", a bot's rating after each of its
games) takes the games one by one, by tournament name and game key: reading a
league of a million games takes seconds, and while a league plays new games arrive
every second. :class:`EloSequence` is that state: each entrant's Elo, optionally its
Elo after each of its games, and every ``CHECKPOINT_GAMES`` games a copy of where it
stood. :class:`FollowedElo` keeps one between two states of the database: the games
stored since it last read are read after the last checkpoint before the first of
them in the order (a new game's key may sort before games already read), and
everything it read before that point is kept.

Whether only new games arrived is told by the store's counters: a tournament's
``game_changes`` grow by one for each game stored, removed or changed
(migration 0011), so where they grew by exactly as many games as were stored with
an id above the last one read, no game read before changed. Anything else (a game
removed or made void, a casual game saved again, an entrant renamed, a tournament
renamed) starts the sequence again from the first game. Either way the result is
the one a full pass gives, bit for bit: the same steps in the same order.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from arena.ratings.fit import MEAN_RATING
from arena.ratings.results import first_player_score
from arena.ratings.selection import Selection

CHECKPOINT_GAMES = 1024  # games between two copies of the state: what a new game costs at most besides its own

Position = tuple[str, str]  # (tournament name, game key): where a game stands in the order


@dataclass(frozen=True)
class _Checkpoint:
    position: Position  # of the last game taken before it
    games: int
    elo: list[float]
    played: list[int]  # games of each entrant (its history's length)


class EloSequence:
    """Sequential Elo (arena.ratings.fit.incremental_elo's steps) over games given by
    bot id, their entrants named by ``entrants``; ``histories``: keep each entrant's
    Elo after each of its games too."""

    def __init__(self, entrants: dict[int, str], k: float = 16.0, histories: bool = False) -> None:
        self.k = k
        self.entrants: dict[int, str] = {}
        self.names: list[str] = []  # entrants by place in the lists below
        self._place: dict[str, int] = {}
        self._of_id: dict[int, int] = {}
        self.elo: list[float] = []
        self.played: list[int] = []
        self.series: list[array[float]] | None = [] if histories else None
        self.games = 0
        self.last: Position | None = None
        self._checkpoints: list[_Checkpoint] = []
        self.add_entrants(entrants)

    def add_entrants(self, entrants: dict[int, str]) -> None:
        """Entrants met since (an entrant's name never changes here: see :meth:`FollowedElo.update`)."""
        for bot_id, name in entrants.items():
            if name not in self._place:
                self._place[name] = len(self.names)
                self.names.append(name)
                self.elo.append(MEAN_RATING)
                self.played.append(0)
                if self.series is not None:
                    self.series.append(array("d"))
            self._of_id[bot_id] = self._place[name]
            self.entrants[bot_id] = name

    def take(self, games: Iterable[tuple[str, str, int, int, int | None]]) -> None:
        """Each game (tournament name, game key, first bot id, second bot id, winner), in order after :attr:`last`."""
        of_id, elo, played, series, k = self._of_id, self.elo, self.played, self.series, self.k
        count, position = self.games, self.last
        for name, key, first, second, winner in games:
            a, b = of_id[first], of_id[second]
            expected = 1 / (1 + 10 ** ((elo[b] - elo[a]) / 400))
            change = k * (first_player_score(winner) - expected)
            elo[a] += change
            elo[b] -= change
            played[a] += 1
            played[b] += 1
            if series is not None:
                series[a].append(elo[a])
                series[b].append(elo[b])
            count += 1
            position = (name, key)
            if count % CHECKPOINT_GAMES == 0:
                self._checkpoints.append(_Checkpoint(position, count, list(elo), list(played)))
        self.games, self.last = count, position

    def rewind(self, before: Position) -> None:
        """Back to the last checkpoint whose games all stand before ``before`` (to the
        start where there is none): :attr:`last` is then where to read on from. Nothing
        to undo where every game taken stands before it."""
        if self.last is not None and self.last < before:
            return
        kept = bisect.bisect_left([c.position for c in self._checkpoints], before)
        del self._checkpoints[kept:]
        if not self._checkpoints:
            self.games, self.last = 0, None
            self.elo[:] = [MEAN_RATING] * len(self.names)
            self.played[:] = [0] * len(self.names)
        else:
            point = self._checkpoints[-1]
            self.games, self.last = point.games, point.position
            self.elo[:] = point.elo + [MEAN_RATING] * (len(self.names) - len(point.elo))
            self.played[:] = point.played + [0] * (len(self.names) - len(point.played))
        if self.series is not None:
            for values, length in zip(self.series, self.played):
                del values[length:]

    def ratings(self) -> dict[str, float]:
        """Each entrant's Elo now, those that played only (as incremental_elo gives it)."""
        return {name: elo for name, elo, played in zip(self.names, self.elo, self.played) if played}


class FollowedElo:
    """The :class:`EloSequence` of one selection (a tournament, the whole league), carried
    on at each :meth:`update` from the state of the database it last read. One update
    at a time: the site's cache runs one computation per table at a time."""

    def __init__(self, k: float = 16.0, histories: bool = False) -> None:
        self.k = k
        self.histories = histories
        self.sequence: EloSequence | None = None
        self.restarts = 0  # how many updates read every game again (for tests and the bench)
        self._last_id = 0
        self._tournaments: dict[int, tuple[str, int]] = {}  # id -> (name, game changes) when last read
        self._basis: Hashable = None
        self._scope: int | None = None  # the tournament read (None: the whole league)

    def update(self, chosen: Selection, basis: Hashable = None) -> EloSequence:
        """The sequence of ``chosen``'s games, read inside the same snapshot as ``chosen``;
        ``basis``: anything else that, changed, means starting again (a removal's count)."""
        store = chosen.store
        scope = None if chosen.tournament is None else chosen.tournament.id
        last_id, tournaments = store.results.marks(scope)
        try:
            sequence = self.sequence
            if (sequence is None or basis != self._basis or scope != self._scope
                    or not self._only_added(sequence, chosen, tournaments)):
                sequence = EloSequence(chosen.entrants, self.k, self.histories)
                self.restarts += 1
            else:
                sequence.add_entrants(chosen.entrants)
                grown = [tid for tid, (_, changes) in tournaments.items()
                         if changes != self._tournaments.get(tid, ("", 0))[1]]
                arrived = store.results.arrivals(grown, self._last_id)
                if any(stored != tournaments[tid][1] - self._tournaments.get(tid, ("", 0))[1]
                       for tid, (stored, _) in arrived.items()):
                    sequence = EloSequence(chosen.entrants, self.k, self.histories)
                    self.restarts += 1
                else:
                    firsts = [(tournaments[tid][0], key) for tid, (_, key) in arrived.items() if key is not None]
                    if not firsts:
                        self._remember(sequence, scope, last_id, tournaments, basis)
                        return sequence
                    sequence.rewind(min(firsts))
            sequence.take(store.results.in_order_after(scope, sequence.last))
        except BaseException:
            self.sequence = None  # half read: the next update starts again
            raise
        self._remember(sequence, scope, last_id, tournaments, basis)
        return sequence

    def _only_added(self, sequence: EloSequence, chosen: Selection, tournaments: dict[int, tuple[str, int]]) -> bool:
        """Whether what the sequence read still stands as it was: the same entrants under
        the same names, the same tournaments under the same names."""
        return (all(chosen.entrants.get(bot_id) == name for bot_id, name in sequence.entrants.items())
                and all(tournaments.get(tid, ("",))[0] == name for tid, (name, _) in self._tournaments.items()))

    def _remember(self, sequence: EloSequence, scope: int | None, last_id: int,
                  tournaments: dict[int, tuple[str, int]], basis: Hashable) -> None:
        self.sequence, self._scope, self._last_id = sequence, scope, last_id
        self._tournaments, self._basis = tournaments, basis
