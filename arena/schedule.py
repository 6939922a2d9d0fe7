"""Who plays whom, from which opening, in what order: pure and deterministic.

The same configuration and seed always give the same game specs with the same
keys in the same order, which is what makes a tournament resumable: the games
still to play are the scheduled keys that are not stored yet.
"""

from __future__ import annotations

import hashlib
import random
from itertools import combinations

from arena.config import TournamentConfig
from arena.game import Board, Rules
from arena.referee import GameSpec

MAX_OPENING_TRIES = 1000


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """Unordered pairs of bots that meet: every pair (round robin), or each
    challenger against the whole field (gauntlet)."""
    if config.format == "gauntlet":
        return [(c, b) for c in config.challengers for b in config.bots]
    return list(combinations(config.bots, 2))


def openings(config: TournamentConfig) -> list[tuple[int, ...]]:
    """One opening per pair of games in a pairing (each is played with both colours)."""
    needed = (config.games + 1) // 2
    if config.opening_lines:
        lines = config.opening_lines
        return [lines[i % len(lines)] for i in range(needed)]
    rng = random.Random(f"openings:{config.seed}")
    return random_openings(config.rules, config.openings.plies, needed, rng)


def schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, interleaved so that standings fill evenly."""
    pairs = pairings(config)
    lines = openings(config)
    specs = []
    for game in range(config.games):
        opening = lines[game // 2]
        swapped = game % 2 == 1
        for number, (a, b) in enumerate(pairs):
            first, second = (b, a) if swapped else (a, b)
            key = f"p{number:04d}-o{game // 2:04d}-{'b' if swapped else 'a'}"
            specs.append(
                GameSpec(
                    key=key,
                    rules=config.rules,
                    first=first,
                    second=second,
                    opening=opening,
                    seed=game_seed(config.seed, key),
                    time_control=config.time_control,
                )
            )
    return specs


def game_seed(tournament_seed: int, key: str) -> int:
    """A seed per game that depends only on the tournament seed and the game key."""
    digest = hashlib.sha256(f"{tournament_seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def random_openings(rules: Rules, plies: int, count: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``count`` openings of ``plies`` random legal plies after which the game is
    still open and the side to move has no immediate win; distinct while possible."""
    found: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    misses = 0  # draws in a row that gave nothing new
    while len(found) < count:
        line = _random_line(rules, plies, rng)
        if line is None:
            misses += 1
            if misses > MAX_OPENING_TRIES and not found:
                raise ValueError(
                    f"no opening of {plies} plies leaves the game open on {rules.describe()}; "
                    "lower openings.plies"
                )
            continue
        if line in seen and misses < MAX_OPENING_TRIES:
            misses += 1
            continue  # prefer distinct openings; repeat only once they seem used up
        misses = 0
        seen.add(line)
        found.append(line)
    return found


def _random_line(rules: Rules, plies: int, rng: random.Random) -> tuple[int, ...] | None:
    board = Board(rules)
    for _ in range(plies):
        moves = board.legal_moves()
        safe = [m for m in moves if not board.is_winning_move(m)]
        if not safe:
            return None
        board.play(rng.choice(safe))
    if board.is_over() or any(board.is_winning_move(m) for m in board.legal_moves()):
        return None
    return tuple(board.history)
