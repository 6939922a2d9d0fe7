"""What every league table is built from: results counted per ordered pair of bots.

A standings table, a crosstable and a table by colour need nothing but, for each
(first player, second player), the first player's wins, draws and losses, plus
each bot's losses by forfeit. Counted this way a league of a million games is a
few thousand numbers: the store counts them in SQL (GROUP BY) and no game row is
ever held. Only the incremental Elo column needs the games one by one, in order,
and it reads them as a stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.ratings.fit import PairCounts
from arena.records import Termination
from arena.store import StoredGame


@dataclass
class LeagueResults:
    """Results per ordered pair (``pairs``, the rating fit's input) and losses by forfeit per bot."""

    pairs: PairCounts = field(default_factory=PairCounts)
    forfeits: dict[str, int] = field(default_factory=dict)

    def add(self, first: str, second: str, wdl: tuple[int, int, int], forfeits: tuple[int, int] = (0, 0)) -> None:
        """``wdl``: the first player's wins, draws and losses against the second;
        ``forfeits``: how many of its losses each of them lost by forfeit."""
        self.pairs.add(first, second, *map(float, wdl))
        for bot, count in zip((first, second), forfeits):
            self.forfeits[bot] = self.forfeits.get(bot, 0) + count

    @classmethod
    def of_games(cls, games: Iterable[StoredGame]) -> LeagueResults:
        """The results of game rows already in memory."""
        results = cls()
        for g in games:
            forfeit = g.termination == Termination.FORFEIT
            results.add(g.first, g.second, (int(g.winner == 0), int(g.winner is None), int(g.winner == 1)),
                        (int(forfeit and g.winner == 1), int(forfeit and g.winner == 0)))
        return results

    @property
    def games(self) -> int:
        return int(sum(sum(row) for row in self.pairs.counts.values()))

    def tally(self) -> dict[str, list[int]]:
        """bot -> [wins, draws, losses, forfeit losses]."""
        tally: dict[str, list[int]] = {}
        for (first, second), (wins, draws, losses) in self.pairs.counts.items():
            a = tally.setdefault(first, [0, 0, 0, self.forfeits.get(first, 0)])
            b = tally.setdefault(second, [0, 0, 0, self.forfeits.get(second, 0)])
            a[0] += int(wins)
            a[1] += int(draws)
            a[2] += int(losses)
            b[0] += int(losses)
            b[1] += int(draws)
            b[2] += int(wins)
        return tally


def first_player_score(winner: int | None) -> float:
    """1, 0.5 or 0: the first player's points from a stored game's winner column."""
    return 0.5 if winner is None else 1.0 - winner
