"""Openings and game seeds: what makes games between deterministic bots differ.

An opening is a short sequence of random legal plies played before the bots take
over. Both are drawn from seeds only, so a schedule can be rebuilt exactly.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator

from arena.engine.game import Board, Rules
from arena.errors import ArenaError
from arena.text import plural

MAX_OPENING_TRIES = 1000


class OpeningsError(ArenaError):
    """Openings the rules cannot give: too many plies to leave the game open."""


def game_seed(tournament_seed: int, key: str) -> int:
    """A seed per game that depends only on the tournament seed and the game key."""
    digest = hashlib.sha256(f"{tournament_seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def random_openings(rules: Rules, plies: int, count: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``count`` openings of ``plies`` random legal plies after which the game is
    still open and the side to move has no immediate win; distinct while possible."""
    return list(itertools.islice(iter_random_openings(rules, plies, rng), count))


def iter_random_openings(rules: Rules, plies: int, rng: random.Random) -> Iterator[tuple[int, ...]]:
    """The openings of :func:`random_openings`, one at a time and without end: a long
    tournament holds only the distinct ones seen, not one per pair of games."""
    seen: set[tuple[int, ...]] = set()
    misses = 0  # draws in a row that gave nothing new
    exhausted = False  # then repeats are accepted from here on
    while True:
        line = _random_line(rules, plies, rng)
        if line is None:
            misses += 1
            if misses > MAX_OPENING_TRIES and not seen:
                raise OpeningsError(
                    f"no opening of {plural(plies, 'ply', 'plies')} leaves the game open on {rules.describe()}; "
                    "lower openings.plies"
                )
            continue
        if line in seen and not exhausted:
            misses += 1
            exhausted = misses >= MAX_OPENING_TRIES
            continue  # prefer distinct openings; repeat only once they seem used up
        misses = 0
        seen.add(line)
        yield line


def _random_line(rules: Rules, plies: int, rng: random.Random) -> tuple[int, ...] | None:
    board = Board(rules)
    for ply in range(plies):
        moves = board.legal_moves()
        if _could_win(rules, ply):
            moves = [m for m in moves if not board.is_winning_move(m)]
            if not moves:
                return None
        board.play(rng.choice(moves))
    if board.is_over() or (
        _could_win(rules, plies) and any(board.is_winning_move(m) for m in board.legal_moves())
    ):
        return None
    return tuple(board.history)


def _could_win(rules: Rules, ply: int) -> bool:
    """Whether the move played at ``ply`` (0 the first) can win: it must give its
    side ``connect`` stones. The move that fills the board, where counted lines
    decide, always does: it gives its side half the cells, and with both sides at
    least 3 that is more than the longer side, which ``connect`` never exceeds.
    Short openings skip asking each move whether it wins: a tournament draws one
    opening per pair of games, and the asking cost more than the drawing."""
    return ply // 2 + 1 >= rules.connect
