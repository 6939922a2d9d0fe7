"""A match: two bots, N games, alternating who moves first; or as many as a
sequential test needs to decide."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from arena.engine.game import Rules
from arena.engine.openings import game_seed, openings_rng, random_openings
from arena.errors import ArenaFault
from arena.ratings.sprt import CONTINUE, Outcomes, Sprt
from arena.records import GameRecord, GameSpec, Termination, TimeControl
from arena.referee.referee import LogSink, play_game
from arena.tournament.faults import Faults

MATCH_PAIRING = "match"  # a match is one pairing; its game keys start with it
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


@dataclass
class MatchResult:
    bots: tuple[str, str]
    records: list[GameRecord] = field(default_factory=list)

    @property
    def labels(self) -> tuple[str, str]:
        """The two bots' names in the tally (see :func:`match_labels`)."""
        return match_labels(*self.bots)

    def seats(self, record: GameRecord) -> tuple[str, str]:
        """The labels of a game's first and second player. Two different bots are
        told apart by spec; two instances of one spec by the game's number, as
        :func:`match_specs` numbers them (bot A moves first in the even games)."""
        a, b = self.labels
        if self.bots[0] != self.bots[1]:
            return (a, b) if record.spec.first == self.bots[0] else (b, a)
        return (a, b) if int(record.spec.key.rsplit("-", 1)[-1]) % 2 == 0 else (b, a)

    def points(self, record: GameRecord) -> float:
        """The first bot's score in a game."""
        return record.score(self.seats(record).index(self.labels[0]))

    def outcomes(self) -> Outcomes:
        """The first bot's results for a sequential test: per pair of games when the
        games come in pairs (see :func:`paired`; a last game without its partner is
        left out), else per game."""
        scores = [self.points(record) for record in self.records]
        if paired([record.spec for record in self.records]):
            return Outcomes.pairs(scores[i] + scores[i + 1] for i in range(0, len(scores) - 1, 2))
        return Outcomes.games(scores.count(1.0), scores.count(0.5), scores.count(0.0))

    def tally(self) -> dict[str, Tally]:
        """Wins, draws and losses of each bot, keyed by label."""
        tallies = {bot: Tally() for bot in self.labels}
        for record in self.records:
            for player, bot in enumerate(self.seats(record)):
                tallies[bot].add(record.score(player))
                if record.termination == Termination.FORFEIT and record.winner != player:
                    tallies[bot].forfeits += 1
                    tallies[bot].reasons[record.reason or "no reason given"] += 1
        return tallies

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
) -> list[GameSpec]:
    """The games of a match: bot_a moves first in even games, bot_b in odd ones.

    Each pair of games starts from the same seeded random opening of
    ``opening_plies`` plies, so that deterministic bots do not replay one game.
    With ``secret`` (private seeds: see :func:`~arena.engine.openings.new_seed_secret`)
    the openings and game seeds are keyed by it, and no bot can work them out.
    """
    rules = rules or Rules()
    clock = time_control or TimeControl()
    rng = openings_rng("match-openings", seed, secret)
    openings = random_openings(rules, opening_plies, (games + 1) // 2, rng) if opening_plies else []
    specs = []
    for number in range(games):
        first, second = (bot_a, bot_b) if number % 2 == 0 else (bot_b, bot_a)
        key = f"{MATCH_PAIRING}-{number:06d}"
        specs.append(
            GameSpec(
                key=key,
                rules=rules,
                first=first,
                second=second,
                pairing=MATCH_PAIRING,
                opening=openings[number // 2] if openings else (),
                seed=game_seed(seed, key, secret),
                time_control=clock,
            )
        )
    return specs


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
