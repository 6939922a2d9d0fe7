"""A seeded single-elimination bracket (knockout), as data: pure and deterministic.

The entrants are seeded (1 the favourite) and placed in a bracket whose size is the
next power of two: seed s meets seed size + 1 - s in the first round, and the
placement is the usual recursive one, so that seeds 1 and 2 can meet only in the
final, 1 to 4 only from the semi-finals on, and so on. The places a smaller field
leaves empty are byes, which fall to the top seeds, all in the first round.

Each match is a mini-match of ``pairs`` game pairs: from one opening, each entrant
moves first once. A match level after them plays up to ``extra_pairs`` more pairs,
one at a time, and stops at the first pair after which it is not level; still level,
a decider settles it: the caller's verdict (``decide``, the solver's say on the
match's games) or, without one, a coin drawn from the tournament's seed. Every
match records how it was decided (:data:`DECIDERS`) and, for a coin, its draw.

:func:`advance` is the whole state machine: given a bracket and the results of the
games stored so far, it returns the bracket as those results leave it and the games
to play next. It reads only the games the rules call for, so calling it again with
the same results gives the same bracket and the same games: a knockout resumes like
every tournament.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from arena.engine.openings import game_seed
from arena.errors import ArenaError

#: How a match was decided: a bye (no games), on points after its pairs, on points
#: after extra pairs, by the ``decide`` verdict, or by a coin.
BYE, SCORE, EXTRA_PAIRS, SOLVER, COIN = "bye", "score", "extra pairs", "solver", "coin"
DECIDERS = (BYE, SCORE, EXTRA_PAIRS, SOLVER, COIN)
#: The coin's faces: heads sends the upper entrant of the match on (the better
#: seed, in the first round), tails the lower.
HEADS, TAILS = "heads", "tails"
#: A game's result as :func:`advance` reads it: the points of the player who moved first.
POINTS = (0.0, 0.5, 1.0)


class KnockoutError(ArenaError):
    """A knockout that cannot be drawn: too few entrants, a name twice, seeds or
    ratings that do not cover the field, rules out of range."""


@dataclass(frozen=True)
class Entrant:
    name: str
    seed: int  # 1 for the favourite


@dataclass(frozen=True)
class KnockoutRules:
    pairs: int = 1  # game pairs of a match
    extra_pairs: int = 1  # at most this many more pairs while a match is level
    seed: int = 0  # the tournament's seed: the coins' draws

    def __post_init__(self) -> None:
        if self.pairs < 1:
            raise KnockoutError(f"a knockout match needs at least one pair of games, not {self.pairs}")
        if self.extra_pairs < 0:
            raise KnockoutError(f"extra pairs cannot be negative: {self.extra_pairs}")


class KnockoutGame(NamedTuple):
    """One game a match calls for."""

    key: str  # unique in the tournament: the match's key, the pair, a or b
    match: str  # the match's key (the game's pairing)
    pair: int  # 0 for the match's first pair
    first: str  # who moves first
    second: str
    opening: int  # which of the tournament's openings: the same for a round's pair in every match


class Played(NamedTuple):
    game: KnockoutGame
    points: float  # of the player who moved first: 1, 0.5 or 0


@dataclass(frozen=True)
class Match:
    key: str  # "r1-m01": round 1, first match from the top
    round: int  # 1 for the first
    slot: int  # 0 for the top match of its round
    top: Entrant | None = None  # None until the match feeding it is decided
    bottom: Entrant | None = None  # None also for a bye
    bye: bool = False
    games: tuple[Played, ...] = ()  # the games counted so far, in the order the rules call for them
    points: tuple[float, float] = (0.0, 0.0)  # top's, bottom's
    pairs_played: int = 0  # complete pairs, extra pairs included
    winner: Entrant | None = None
    decided_by: str | None = None  # one of DECIDERS once decided
    coin: str | None = None  # HEADS or TAILS where a coin decided

    @property
    def entrants(self) -> tuple[Entrant, ...]:
        return tuple(e for e in (self.top, self.bottom) if e is not None)

    @property
    def loser(self) -> Entrant | None:
        if self.winner is None or self.bye:
            return None
        return self.bottom if self.winner == self.top else self.top


@dataclass(frozen=True)
class Bracket:
    entrants: tuple[Entrant, ...]  # in seed order
    rules: KnockoutRules
    rounds: tuple[tuple[Match, ...], ...]  # the first round first; the last holds the final

    @property
    def size(self) -> int:
        """The places in the first round (a power of two): entrants and byes."""
        return 1 << len(self.rounds)

    @property
    def final(self) -> Match:
        return self.rounds[-1][0]

    @property
    def champion(self) -> Entrant | None:
        return self.final.winner

    def matches(self) -> Iterator[Match]:
        for matches in self.rounds:
            yield from matches

    def match(self, key: str) -> Match:
        for match in self.matches():
            if match.key == key:
                return match
        raise KeyError(key)


#: The caller's verdict on a match level after its extra pairs: (upper, lower, games) -> winner or None.
Decide = Callable[[str, str, Sequence[Played]], str | None]


def seeding(
    names: Sequence[str], *, seeds: Mapping[str, int] | None = None, ratings: Mapping[str, float] | None = None,
) -> tuple[Entrant, ...]:
    """The entrants in seed order: by ``seeds`` (name -> seed, exactly 1..n), by
    ``ratings`` (name -> a prior rating, the highest seed 1, ties broken by name),
    or, given neither, in the order of ``names``."""
    if len(names) < 2:
        raise KnockoutError(f"a knockout needs at least 2 entrants, not {len(names)}")
    doubles = sorted({name for name in names if names.count(name) > 1})
    if doubles:
        raise KnockoutError(f"{doubles[0]!r} is entered twice: each entrant once")
    if seeds is not None and ratings is not None:
        raise KnockoutError("seed a knockout by its seeds or by ratings, not both")
    order: list[str] = list(names)
    if seeds is not None:
        _cover(names, seeds, "seed")
        if sorted(seeds[name] for name in names) != list(range(1, len(names) + 1)):
            raise KnockoutError(f"the seeds must be 1 to {len(names)}, each once: "
                                f"{sorted(seeds[name] for name in names)}")
        order.sort(key=lambda name: seeds[name])
    elif ratings is not None:
        _cover(names, ratings, "rating")
        for name in names:
            if not math.isfinite(ratings[name]):
                raise KnockoutError(f"{name!r} has no finite rating to seed by: {ratings[name]}")
        order.sort(key=lambda name: (-ratings[name], name))
    return tuple(Entrant(name, seed) for seed, name in enumerate(order, start=1))


def _cover(names: Sequence[str], given: Mapping[str, Any], what: str) -> None:
    missing = [name for name in names if name not in given]
    if missing:
        raise KnockoutError(f"{missing[0]!r} has no {what}: give every entrant one")


def rounds_for(entrants: int) -> int:
    """The rounds of a knockout of ``entrants``: ceil(log2 entrants)."""
    return max(1, (entrants - 1).bit_length())


def placement(size: int) -> list[int]:
    """The seeds in bracket order, top to bottom, for ``size`` places (a power of
    two): each seed s of the bracket half the size is followed by its first-round
    opponent size + 1 - s, so the two halves of every part hold the seeds that can
    meet only when that part is decided. 8 places: 1 8 4 5 2 7 3 6."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"a bracket's size is a power of two, not {size}")
    order = [1]
    while len(order) < size:
        places = 2 * len(order)
        order = [seed for upper in order for seed in (upper, places + 1 - upper)]
    return order


def match_key(round_number: int, slot: int) -> str:
    return f"r{round_number}-m{slot + 1:02d}"


def game_key(match: str, pair: int, swapped: bool) -> str:
    """The key of a match's game: in pair ``pair``, game a has the upper entrant move
    first, game b the lower."""
    return f"{match}-o{pair:02d}-{'b' if swapped else 'a'}"


def new_bracket(entrants: Sequence[Entrant], rules: KnockoutRules) -> Bracket:
    """The bracket before any game: the first round drawn, byes decided, the later
    rounds waiting for their entrants."""
    field = tuple(sorted(entrants, key=lambda entrant: entrant.seed))
    if len(field) < 2:
        raise KnockoutError(f"a knockout needs at least 2 entrants, not {len(field)}")
    if [entrant.seed for entrant in field] != list(range(1, len(field) + 1)):
        raise KnockoutError("the entrants' seeds must be 1 to the number of entrants, each once")
    count = rounds_for(len(field))
    places = placement(2 ** count)
    first = []
    for slot in range(len(places) // 2):
        top, bottom = (field[seed - 1] if seed <= len(field) else None for seed in places[2 * slot: 2 * slot + 2])
        assert top is not None  # the better seed of a pair is always in the field
        bye = bottom is None
        first.append(Match(match_key(1, slot), 1, slot, top, bottom, bye=bye,
                           winner=top if bye else None, decided_by=BYE if bye else None))
    later = tuple(tuple(Match(match_key(number, slot), number, slot) for slot in range(2 ** (count - number)))
                  for number in range(2, count + 1))
    return Bracket(field, rules, (tuple(first), *later))


def advance(
    bracket: Bracket, results: Mapping[str, float], *, decide: Decide | None = None, secret: bytes | None = None,
) -> tuple[Bracket, list[KnockoutGame]]:
    """The bracket as ``results`` leave it, and the games to play next.

    ``results`` maps a game's key to the points of the player who moved first (1,
    0.5 or 0; a stored game's ``outcome.score(0)``); games it lacks are unplayed.
    Only the bracket's entrants and rules are read, never its state: the bracket is
    worked out again from the first round. ``decide(upper, lower, games)`` names the
    winner of a match still level after its extra pairs, or None to leave it to the
    coin; it is asked each time such a match is worked out, so it must give the same
    answer for the same games. ``secret`` keys the coins, as it keys a tournament's
    private seeds.

    The games to play are every missing game of the pairs due: all of a match's
    pairs at once, then its extra pairs one at a time. An empty list with no
    champion cannot happen; an empty list means the knockout is over.
    """
    start = new_bracket(bracket.entrants, bracket.rules)
    rounds: list[tuple[Match, ...]] = []
    due: list[KnockoutGame] = []
    for matches in start.rounds:
        if rounds:
            feeding = rounds[-1]
            matches = tuple(replace(match, top=feeding[2 * match.slot].winner,
                                    bottom=feeding[2 * match.slot + 1].winner) for match in matches)
        worked = []
        for match in matches:
            match, games = _work_out(match, bracket.rules, results, decide, secret)
            worked.append(match)
            due.extend(games)
        rounds.append(tuple(worked))
    return replace(start, rounds=tuple(rounds)), due


def _work_out(
    match: Match, rules: KnockoutRules, results: Mapping[str, float], decide: Decide | None, secret: bytes | None,
) -> tuple[Match, list[KnockoutGame]]:
    """``match`` with the games of ``results`` it calls for counted, and decided if
    they decide it; else the games it waits for."""
    if match.winner is not None or match.top is None or match.bottom is None:
        return match, []
    top, bottom = match.top, match.bottom
    opening_base = (match.round - 1) * (rules.pairs + rules.extra_pairs)
    played: list[Played] = []
    points = [0.0, 0.0]
    pairs = 0

    def pair_games(pair: int) -> list[KnockoutGame]:
        """The pair's games still unplayed; those played are counted."""
        missing = []
        for swapped in (False, True):
            first, second = (bottom, top) if swapped else (top, bottom)
            game = KnockoutGame(game_key(match.key, pair, swapped), match.key, pair, first.name, second.name,
                                opening_base + pair)
            if game.key not in results:
                missing.append(game)
                continue
            score = results[game.key]
            if score not in POINTS:
                raise ValueError(f"game {game.key}: the first player's points are 1, 0.5 or 0, not {score!r}")
            played.append(Played(game, score))
            points[swapped] += score
            points[not swapped] += 1 - score
        return missing

    def state(**decision: Any) -> Match:
        return replace(match, games=tuple(played), points=(points[0], points[1]), pairs_played=pairs, **decision)

    missing = [game for pair in range(rules.pairs) for game in pair_games(pair)]
    if missing:
        pairs = len({p.game.pair for p in played} - {game.pair for game in missing})
        return state(), missing
    pairs = rules.pairs
    if points[0] != points[1]:
        return state(winner=top if points[0] > points[1] else bottom, decided_by=SCORE), []
    for pair in range(rules.pairs, rules.pairs + rules.extra_pairs):
        missing = pair_games(pair)
        if missing:
            return state(), missing
        pairs += 1
        if points[0] != points[1]:
            return state(winner=top if points[0] > points[1] else bottom, decided_by=EXTRA_PAIRS), []
    if decide is not None:
        verdict = decide(top.name, bottom.name, tuple(played))
        if verdict is not None:
            if verdict not in (top.name, bottom.name):
                raise ValueError(f"match {match.key}: the verdict names {verdict!r}, who is not in it")
            return state(winner=top if verdict == top.name else bottom, decided_by=SOLVER), []
    heads = coin(rules.seed, match.key, secret) == HEADS
    return state(winner=top if heads else bottom, decided_by=COIN, coin=HEADS if heads else TAILS), []


def coin(seed: int, match: str, secret: bytes | None = None) -> str:
    """The coin a level match is decided by: HEADS or TAILS, drawn from the
    tournament's seed and the match's key (keyed by the secret with private seeds)."""
    return HEADS if game_seed(seed, f"{match}-coin", secret) & 1 == 0 else TAILS


def bracket_data(bracket: Bracket) -> dict[str, Any]:
    """The bracket as a JSON document (names as given: escaping is the reader's)."""

    def entrant(who: Entrant | None) -> dict[str, Any] | None:
        return None if who is None else {"name": who.name, "seed": who.seed}

    def match(m: Match) -> dict[str, Any]:
        return {
            "key": m.key, "round": m.round, "slot": m.slot, "top": entrant(m.top), "bottom": entrant(m.bottom),
            "bye": m.bye, "points": list(m.points), "pairs_played": m.pairs_played,
            "games": [{"key": p.game.key, "pair": p.game.pair, "first": p.game.first, "second": p.game.second,
                       "opening": p.game.opening, "first_points": p.points} for p in m.games],
            "winner": entrant(m.winner), "decided_by": m.decided_by, "coin": m.coin,
        }

    return {
        "format": "knockout",
        "rules": {"pairs": bracket.rules.pairs, "extra_pairs": bracket.rules.extra_pairs, "seed": bracket.rules.seed},
        "entrants": [entrant(e) for e in bracket.entrants],
        "rounds": [[match(m) for m in matches] for matches in bracket.rounds],
        "champion": entrant(bracket.champion),
    }


#: The columns of a bracket as CSV: one row per match.
BRACKET_COLUMNS = ["round", "match", "top", "bottom", "top_points", "bottom_points", "winner", "decided_by", "coin"]


def bracket_rows(bracket: Bracket) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of the bracket as CSV, a match a row, the first round first
    (names as given: CSV is data; a bye's bottom, an entrant not known yet: empty)."""

    def name(who: Entrant | None) -> str:
        return "" if who is None else who.name

    rows = [[m.round, m.key, name(m.top), name(m.bottom), *(f"{p:g}" if m.games else "" for p in m.points),
             name(m.winner), m.decided_by or "", m.coin or ""] for m in bracket.matches()]
    return BRACKET_COLUMNS, rows
