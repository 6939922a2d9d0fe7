"""Who plays whom, from which opening, in what order: pure and deterministic.

The same configuration and seed always give the same game specs with the same
keys in the same order, which is what makes a tournament resumable: the games
still to play are the scheduled keys that are not stored yet.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

from arena.engine.game import Rules
from arena.engine.openings import game_seed, iter_random_openings, openings_rng
from arena.records import BotCode, GameSpec, TimeControl
from arena.tournament.config import MATCH_FORMAT, TournamentConfig

MATCH_PAIRING = "match"  # a match is one pairing; its game keys start with it


def seed_secret(config: TournamentConfig) -> bytes | None:
    """The secret the seeds are keyed by: None for a public seed. A configuration with
    private seeds but no secret was never started (the runner reads the secret from
    the database): scheduling it would quietly give public seeds, so it is refused."""
    if config.private_seeds and config.seed_secret is None:
        raise ValueError(f"tournament {config.name!r} has private seeds but no secret: "
                         "the runner reads it from the tournament's database")
    return config.seed_secret if config.private_seeds else None


def field_game(config: TournamentConfig, key: str, pairing: str, first: str, second: str,
               opening: tuple[int, ...], code: dict[str, BotCode]) -> GameSpec:
    """A game of a changing field (a league's): seeded by its key, with the code of
    whichever of its two bots are submitted versions (``code``: by spec)."""
    from arena.players.plugins import parse_spec  # only a league's runner schedules a changing field

    names = {parse_spec(first).name, parse_spec(second).name}
    return GameSpec(
        key=key, rules=config.rules, first=first, second=second, pairing=pairing, opening=opening,
        seed=game_seed(config.seed, key, seed_secret(config)), time_control=config.time_control,
        isolate=config.isolate, limits=config.limits,
        submitted=tuple(sorted((name, c) for name, c in code.items() if name in names)),
    )


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """Unordered pairs of bots that meet: every pair (round robin), or each
    challenger against the whole field (gauntlet)."""
    if config.format in ("gauntlet", MATCH_FORMAT):
        return [(c, b) for c in config.challengers for b in config.bots]
    return list(combinations(config.bots, 2))


def openings(config: TournamentConfig) -> list[tuple[int, ...]]:
    """One opening per pair of games in a pairing (each is played with both colours)."""
    return list(itertools.islice(iter_openings(config), (config.games + 1) // 2))


def iter_openings(config: TournamentConfig) -> Iterator[tuple[int, ...]]:
    """The openings of :func:`openings`, one at a time: a pairing of a million games
    does not hold half a million openings."""
    if config.opening_lines:
        return itertools.cycle(config.opening_lines)
    rng = openings_rng("openings", config.seed, seed_secret(config))
    return iter_random_openings(config.rules, config.openings.plies, rng)


def schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, interleaved so that standings fill evenly."""
    return list(iter_schedule(config))


def game_count(config: TournamentConfig) -> int:
    return len(pairings(config)) * config.games


def iter_schedule(config: TournamentConfig) -> Iterator[GameSpec]:
    """``schedule`` one game at a time: a long tournament need not be held in memory."""
    if config.format == MATCH_FORMAT:
        (a, b), = pairings(config)
        yield from iter_match_games(
            a, b, config.games, config.seed, config.rules, config.time_control, config.openings.plies,
            seed_secret(config), isolate=config.isolate, limits=config.limits, adjudicate=config.adjudicate,
            submitted=_submitted_code(config, a, b),
            failed_start=tuple((bot, why) for bot, why in config.failed_start if bot in (a, b)))
        return
    named = [(f"p{number:04d}", a, b) for number, (a, b) in enumerate(pairings(config))]
    yield from iter_pairing_games(config, named, iter_openings(config))


def iter_pairing_games(
    config: TournamentConfig, pairs: Sequence[tuple[str, str, str]], lines: Iterator[tuple[int, ...]]
) -> Iterator[GameSpec]:
    """The games of ``pairs`` (pairing name, a, b), ``config.games`` each: every
    pairing's game N before any game N + 1, so standings fill evenly. Each opening
    drawn from ``lines`` is played by every pairing twice, ``a`` moving first in the
    first game (``-a``), ``b`` in the second (``-b``). A game's key is its pairing's
    name, then ``-oNNNN-a`` or ``-oNNNN-b``; its seed follows from the key."""
    secret = seed_secret(config)
    # What a pairing's games share, worked out once for the pairing, not for every game.
    shared = [(pairing, a, b, _submitted_code(config, a, b),
               tuple((bot, why) for bot, why in config.failed_start if bot in (a, b)))
              for pairing, a, b in pairs]
    opening: tuple[int, ...] = ()
    for game in range(config.games):
        if game % 2 == 0:
            opening = next(lines)
        swapped = game % 2 == 1
        suffix = f"-o{game // 2:04d}-{'b' if swapped else 'a'}"
        for pairing, a, b, submitted, failed_start in shared:
            first, second = (b, a) if swapped else (a, b)
            yield game_spec(config, pairing + suffix, pairing, first, second, opening, secret, submitted,
                            failed_start)


def game_spec(
    config: TournamentConfig, key: str, pairing: str, first: str, second: str, opening: tuple[int, ...],
    secret: bytes | None, submitted: tuple[tuple[str, BotCode], ...] | None = None,
    failed_start: tuple[tuple[str, str], ...] | None = None,
) -> GameSpec:
    """One game of the tournament, its seed following from its key (``submitted`` and
    ``failed_start``: those of its two bots, worked out here when not given)."""
    if submitted is None:
        submitted = _submitted_code(config, first, second)
    if failed_start is None:
        failed_start = tuple((bot, why) for bot, why in config.failed_start if bot in (first, second))
    return GameSpec(
        key=key,
        rules=config.rules,
        first=first,
        second=second,
        pairing=pairing,
        opening=opening,
        seed=game_seed(config.seed, key, secret),
        time_control=config.time_control,
        isolate=config.isolate,
        limits=config.limits,
        submitted=submitted,
        failed_start=failed_start,
        adjudicate=config.adjudicate,
    )


def _submitted_code(config: TournamentConfig, *bots: str) -> tuple[tuple[str, BotCode], ...]:
    """The code of the submitted bots among ``bots`` (only theirs: specs travel per game)."""
    names = {bot.split(":", 1)[0] for bot in bots}
    return tuple((name, code) for name, code in config.submitted if name in names)


def iter_match_games(
    bot_a: str, bot_b: str, games: int, seed: int, rules: Rules, time_control: TimeControl,
    opening_plies: int, secret: bytes | None, **extras: Any,
) -> Iterator[GameSpec]:
    """The games of a match, one at a time: bot_a moves first in even games, bot_b in
    odd ones; each pair of games starts from the same seeded random opening of
    ``opening_plies`` plies. Played here or stored, a match's seed gives these games;
    ``extras`` are the other fields of each GameSpec (isolate, limits...)."""
    lines = iter_random_openings(rules, opening_plies, openings_rng("match-openings", seed, secret))
    opening: tuple[int, ...] = ()
    for number in range(games):
        if number % 2 == 0 and opening_plies:
            opening = next(lines)
        first, second = (bot_a, bot_b) if number % 2 == 0 else (bot_b, bot_a)
        key = f"{MATCH_PAIRING}-{number:06d}"
        yield GameSpec(key=key, rules=rules, first=first, second=second, pairing=MATCH_PAIRING, opening=opening,
                       seed=game_seed(seed, key, secret), time_control=time_control, **extras)
