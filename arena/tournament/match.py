"""A match: two bots, N games, alternating who moves first; or as many as a
sequential test needs to decide.

Played here (:func:`play_match`, :func:`play_sprt`: nothing stored), or stored as a
tournament of format ``match`` (:func:`match_config`, run by the tournament runner
with :class:`SprtStop` as its early stop): both play the same games for a seed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from arena.engine.game import Rules
from arena.errors import ArenaFault
from arena.ratings.sprt import CONTINUE, Outcomes, Sprt, elo_with_interval
from arena.records import BotCode, GameRecord, GameSpec, Termination, TimeControl
from arena.referee.referee import LogSink, play_game
from arena.tournament.config import MATCH_FORMAT, OpeningsConfig, TournamentConfig
from arena.tournament.faults import Faults
from arena.tournament.schedule import MATCH_PAIRING, iter_match_games

if TYPE_CHECKING:
    from arena.store import Store

__all__ = ["MATCH_PAIRING", "MatchResult", "SprtStop", "match_config", "match_specs", "play_match", "play_sprt",
           "stored_result"]
#: The most games a match with a sequential test and no --games plays: far more
#: than any test between bots of different strength needs, yet a bound, because
#: two bots of equal strength on elo0=elo1-tiny bounds could go on for hours.
SPRT_MAX_GAMES = 100_000

#: Told after each game: games done, games in all, seconds since the start.
Progress = Callable[[int, int, float], None]


@dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0  # games this bot lost by forfeit
    reasons: Counter[str] = field(default_factory=Counter)  # why, each reason counted

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.draws

    def add(self, points: float) -> None:
        if points == 1:
            self.wins += 1
        elif points == 0:
            self.losses += 1
        else:
            self.draws += 1


def match_labels(bot_a: str, bot_b: str) -> tuple[str, str]:
    """How a match names its two bots: their specs, and ``spec#2`` for the second
    instance when a bot plays itself (``random`` and ``random#2``)."""
    return (bot_a, bot_b) if bot_a != bot_b else (bot_a, f"{bot_b}#2")


def _number(game: Any) -> int:
    """A match game's number, from its key (``match-000042``)."""
    return int(_spec_or_row(game).key.rsplit("-", 1)[-1])


def _spec_or_row(game: Any) -> Any:
    """Where a game's key and first player are: a GameRecord's spec, or a stored game itself."""
    return game.spec if isinstance(game, GameRecord) else game


def _score(game: Any, player: int) -> float:
    """1, 0.5 or 0 for ``player`` (0 first, 1 second), as :meth:`Outcome.score`."""
    return 0.5 if game.winner is None else float(game.winner == player)


class EloDifference(NamedTuple):
    """One bot's Elo advantage over another, with the ends of its 95% interval."""

    elo: float
    low: float
    high: float


@dataclass
class MatchResult:
    """A match's games: GameRecords played here, or the games stored (StoredGames,
    FinishedGames: each has ``key``, ``first``, ``winner``, ``termination``, ``reason``)."""

    bots: tuple[str, str]
    records: list[Any] = field(default_factory=list)
    #: Whether games 2k and 2k+1 are a pair (one opening, both colours); None: judged
    #: from the records' specs (see :func:`paired`). A stored match of 2 games or more is.
    pairs: bool | None = None

    @property
    def labels(self) -> tuple[str, str]:
        """The two bots' names in the tally (see :func:`match_labels`)."""
        return match_labels(*self.bots)

    def seats(self, record: Any) -> tuple[str, str]:
        """The labels of a game's first and second player. Two different bots are
        told apart by spec; two instances of one spec by the game's number, as
        :func:`match_specs` numbers them (bot A moves first in the even games)."""
        a, b = self.labels
        if self.bots[0] != self.bots[1]:
            return (a, b) if _spec_or_row(record).first == self.bots[0] else (b, a)
        return (a, b) if _number(record) % 2 == 0 else (b, a)

    def points(self, record: Any) -> float:
        """The first bot's score in a game."""
        return _score(record, self.seats(record).index(self.labels[0]))

    def outcomes(self) -> Outcomes:
        """The first bot's results for a sequential test: per pair of games when the
        games come in pairs (a game without its partner is left out), else per game."""
        by_pair = self.pairs if self.pairs is not None else paired([record.spec for record in self.records])
        counts = OutcomeCounts(by_pair)
        for record in self.records:
            counts.add(_number(record), self.points(record))
        return counts.outcomes()

    def tally(self) -> dict[str, Tally]:
        """Wins, draws and losses of each bot, keyed by label."""
        tallies = {bot: Tally() for bot in self.labels}
        for record in self.records:
            for player, bot in enumerate(self.seats(record)):
                tallies[bot].add(_score(record, player))
                if record.termination == Termination.FORFEIT and record.winner != player:
                    tallies[bot].forfeits += 1
                    tallies[bot].reasons[record.reason or "no reason given"] += 1
        return tallies

    # --- the results at a glance (a notebook's, as `arena match` prints them) -------------

    @property
    def games(self) -> list[GameRecord]:
        """Every game played, in order; each shows as its replay in a notebook."""
        return self.records

    @property
    def score(self) -> tuple[float, float]:
        """Each bot's points: a win 1, a draw 1/2."""
        tallies = self.tally()
        return tallies[self.labels[0]].score, tallies[self.labels[1]].score

    @property
    def wins(self) -> int:
        """The first bot's wins (its losses are the second bot's wins)."""
        return self.tally()[self.labels[0]].wins

    @property
    def draws(self) -> int:
        return self.tally()[self.labels[0]].draws

    @property
    def losses(self) -> int:
        return self.tally()[self.labels[0]].losses

    @property
    def forfeits(self) -> dict[str, dict[str, int]]:
        """For each bot, the games it lost by forfeit, counted by reason (most frequent first)."""
        return {bot: dict(t.reasons.most_common()) for bot, t in self.tally().items()}

    def games_lost(self, bot: str | None = None) -> list[GameRecord]:
        """The games that ``bot`` (a label; by default the first bot) lost."""
        label = self.labels[0] if bot is None else bot
        if label not in self.labels:
            raise ValueError(f"no bot {label!r} in this match: its bots are {', '.join(map(repr, self.labels))}")
        return [record for record in self.records if record.score(self.seats(record).index(label)) == 0]

    def elo_difference(self) -> EloDifference | None:
        """The first bot's Elo advantage over the second with its 95% interval, as
        `arena match` gives it; None before any game."""
        tally = self.tally()[self.labels[0]]
        if not tally.games:
            return None
        return EloDifference(*elo_with_interval(tally.wins, tally.draws, tally.losses))

    def _repr_html_(self) -> str:
        """A small table of the results (what a notebook shows)."""
        from arena.render.match import BotLine, match_html

        lines = [BotLine(bot, t.games, t.wins, t.draws, t.losses, t.score, t.reasons.most_common())
                 for bot, t in self.tally().items()]
        return match_html(lines, self.elo_difference())

    def as_json(self) -> dict[str, Any]:
        return {
            "games": len(self.records),
            "results": {
                bot: {"wins": t.wins, "draws": t.draws, "losses": t.losses, "forfeits": t.forfeits,
                      "forfeit_reasons": dict(t.reasons.most_common())}
                for bot, t in self.tally().items()
            },
        }


def match_specs(
    bot_a: str,
    bot_b: str,
    games: int,
    seed: int = 0,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    opening_plies: int = 2,
    secret: bytes | None = None,
    submitted: dict[str, BotCode] | None = None,
) -> list[GameSpec]:
    """The games of a match: bot_a moves first in even games, bot_b in odd ones.

    Each pair of games starts from the same seeded random opening of
    ``opening_plies`` plies, so that deterministic bots do not replay one game.
    With ``secret`` (private seeds: see :func:`~arena.engine.openings.new_seed_secret`)
    the openings and game seeds are keyed by it, and no bot can work them out.
    ``submitted``: the code of submitted bots among the two, by name, as
    :func:`~arena.entry.submissions.resolve_bot` found it.
    """
    extras = {"submitted": tuple(sorted(submitted.items()))} if submitted else {}
    return list(iter_match_games(bot_a, bot_b, games, seed, rules or Rules(), time_control or TimeControl(),
                                 opening_plies, secret, **extras))


def paired(specs: list[GameSpec]) -> bool:
    """Whether the games come in pairs: games 2k and 2k+1 start from the same
    opening with the colours swapped (as :func:`match_specs` makes them; a last
    odd game may stand alone)."""
    return len(specs) >= 2 and all(
        a.opening == b.opening and a.rules == b.rules and (a.first, a.second) == (b.second, b.first)
        for a, b in zip(specs[::2], specs[1::2])
    )


def play_match(
    specs: Iterable[GameSpec],
    bots: tuple[str, str],
    play: Callable[[Iterable[GameSpec]], Iterator[GameRecord]] | None = None,
    progress: Progress | None = None,
    log_sink: LogSink | None = None,
) -> MatchResult:
    """Play every spec (in this process unless ``play`` maps them elsewhere),
    telling ``progress`` after each game, and ``log_sink`` what the bots write as
    they write it (games played in this process)."""
    specs = list(specs)
    result = MatchResult(bots)
    started = time.perf_counter()
    todo, faults = specs, Faults()
    while todo:
        again = []
        for record in play(todo) if play is not None else map(_referee(log_sink), todo):
            _count(faults, record)
            if record.void:  # the arena failed, not a bot: counts for nobody, played again
                again.append(record.spec)
                continue
            result.records.append(record)
            if progress is not None:
                progress(len(result.records), len(specs), time.perf_counter() - started)
        todo = again
    result.records.sort(key=lambda record: record.spec.key)
    return result


def _referee(log_sink: LogSink | None) -> Callable[[GameSpec], GameRecord]:
    """What plays a game here: the referee, telling ``log_sink`` what the bots write."""
    return play_game if log_sink is None else partial(play_game, log_sink=log_sink)


def _count(faults: Faults, record: GameRecord) -> None:
    """Count a game; :class:`ArenaFault` (one line on the terminal) once too many are void in a row."""
    faults.count(record)
    if faults.too_many:
        raise ArenaFault(faults.describe())


def play_sprt(
    specs: Iterable[GameSpec], bots: tuple[str, str], test: Sprt, progress: Progress | None = None,
    log_sink: LogSink | None = None,
) -> tuple[MatchResult, str]:
    """Play ``specs`` in order, checking ``test`` after each pair of games (one
    opening, both colours) when they come in pairs, else after each game; stop as
    soon as it decides. Returns the games played and the decision (H0, H1, or
    continue if the specs ran out first). ``progress`` is told after each game,
    against the most games there can be; ``log_sink`` what the bots write."""
    specs = list(specs)
    result = MatchResult(bots)
    by_pair = paired(specs)
    counts = [0] * (5 if by_pair else 3)  # kept as the games come: a long match recounts nothing
    first_of_pair = 0.0
    decision = CONTINUE
    started = time.perf_counter()
    play = _referee(log_sink)
    for spec in specs:
        record, faults = play(spec), Faults()
        _count(faults, record)
        while record.void:  # the arena failed, not a bot: played again
            record = play(spec)
            _count(faults, record)
        result.records.append(record)
        if progress is not None:
            progress(len(result.records), len(specs), time.perf_counter() - started)
        points = result.points(record)
        if by_pair and len(result.records) % 2:
            first_of_pair = points
            continue
        counts[round(2 * (first_of_pair + points)) if by_pair else round(2 * points)] += 1
        decision = test.decision(Outcomes(tuple(counts)))
        if decision != CONTINUE:
            break
    return result, decision


class OutcomeCounts:
    """The first bot's results counted as the games come, in any order: per pair of
    games (2k and 2k+1; a pair counts once both are in) or per game."""

    def __init__(self, by_pair: bool) -> None:
        self.by_pair = by_pair
        self.counts = [0] * (5 if by_pair else 3)
        self._halves: dict[int, float] = {}  # pairs with one game in: game number -> its points

    def add(self, number: int, points: float) -> None:
        if not self.by_pair:
            self.counts[round(2 * points)] += 1
        elif (number ^ 1) in self._halves:
            self.counts[round(2 * (points + self._halves.pop(number ^ 1)))] += 1
        else:
            self._halves[number] = points

    def outcomes(self) -> Outcomes:
        return Outcomes(tuple(self.counts))


class SprtStop:
    """A match's sequential test as the runner's early stop
    (:class:`arena.tournament.runner.EarlyStop`): told the games stored, it counts
    them (by pair, as :func:`play_sprt` does) and says whether the test decided.
    It needs no state of its own: a resumed match tells it the stored games again."""

    def __init__(self, bots: tuple[str, str], test: Sprt, games: int) -> None:
        self.test = test
        self._result = MatchResult(bots)  # for the seats: holds no game
        self._counts = OutcomeCounts(games >= 2)
        self.decision = CONTINUE

    def decided(self, games: Sequence[Any]) -> bool:
        for game in games:
            self._counts.add(_number(game), self._result.points(game))
        self.decision = self.test.decision(self._counts.outcomes())
        return self.decision != CONTINUE


def match_config(
    bot_a: str,
    bot_b: str,
    games: int,
    seed: int = 0,
    rules: Rules | None = None,
    time_control: TimeControl | None = None,
    opening_plies: int = 2,
    private_seeds: bool = False,
    sprt: Sprt | None = None,
    name: str = "",
    db: str = "arena.db",
    workers: int = 1,
    cluster: str | None = None,
) -> TournamentConfig:
    """A match to store, as a tournament of format ``match``: the games of
    :func:`match_specs` for the same arguments, kept in ``db`` under ``name`` (by
    default ``match-A-B-HASH`` of its settings, so the same match resumes)."""
    return TournamentConfig(
        name=name, bots=(bot_b,), challengers=(bot_a,), format=MATCH_FORMAT, games=games, rules=rules or Rules(),
        openings=OpeningsConfig(plies=opening_plies), time_control=time_control or TimeControl(), seed=seed,
        private_seeds=private_seeds, workers=workers, db=db, cluster=cluster,
        origin="arena match", sprt=f"{sprt.describe()} model={sprt.model}" if sprt is not None else None,
    )


def stored_result(store: Store, config: TournamentConfig) -> MatchResult:
    """The match ``config`` names, from its games stored in ``store``."""
    games = sorted(store.games.all(tournament=config.name), key=_number)
    return MatchResult((config.challengers[0], config.bots[0]), games, pairs=config.games >= 2)
