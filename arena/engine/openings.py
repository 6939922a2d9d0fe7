"""Openings and game seeds: what makes games between deterministic bots differ.

An opening is a short sequence of random legal plies played before the bots take
over. Both are drawn from seeds only, so a schedule can be rebuilt exactly.

A seed anyone knows is one a bot can search for: told its own seed, a bot that
tries the tournament seeds and game keys that give it finds its opponent's seed
too. Private seeds mix a secret the bots never see (:func:`new_seed_secret`, kept
with the tournament in its database) into every game seed and opening, through a
keyed one-way hash: the same secret gives the same games (a resume), and without
it a seed says nothing about any other.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

from arena.engine.game import Board, Rules
from arena.engine.solvers import PositionSolver, prove
from arena.errors import ArenaError
from arena.text import plural

MAX_OPENING_TRIES = 1000


class OpeningsError(ArenaError):
    """Openings the rules cannot give: too many plies to leave the game open."""


#: Bytes of a tournament's seed secret: far beyond any search.
SEED_SECRET_BYTES = 32


def new_seed_secret() -> bytes:
    """A new secret for private seeds, from the system's cryptographic source."""
    return secrets.token_bytes(SEED_SECRET_BYTES)


def game_seed(tournament_seed: int, key: str, secret: bytes | None = None) -> int:
    """A seed per game (63 bits) that depends only on the tournament seed, the game key
    and, with private seeds, the tournament's secret. Without a secret it is a plain
    hash, the same on any machine; with one it is keyed by the secret, so that no one
    who lacks it can compute it, or tell one game's seed from another's."""
    text = f"{tournament_seed}:{key}".encode()
    if secret is None:
        digest = hashlib.sha256(text).digest()
    else:
        digest = hashlib.blake2b(text, digest_size=8, key=secret, person=b"game seed").digest()
    return int.from_bytes(digest[:8], "big") >> 1


def openings_rng(label: str, seed: int, secret: bytes | None = None) -> random.Random:
    """The generator a schedule draws its openings from: seeded by ``label`` and the
    seed, and with private seeds by the secret too (through a keyed hash), so that the
    openings still to come cannot be computed from the seed alone."""
    if secret is None:
        return random.Random(f"{label}:{seed}")
    return random.Random(hashlib.blake2b(f"{label}:{seed}".encode(), key=secret, person=b"openings").digest())


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


# --- balanced openings -----------------------------------------------------------------

#: Search nodes the solver may spend on one drawn opening before it is passed over:
#: about half a second with the compiled solver. Past 10 plies nearly every
#: opening of 7x6 is proven within it; at 8 about a third; before that only the
#: book's positions are (see docs/tournaments.md).
BALANCED_NODES = 2_000_000
#: Openings drawn, per balanced opening asked for, before the draw gives up.
BALANCED_TRIES = 200
#: The only rules balanced openings are drawn for: those the solver's book and budget suit.
BALANCED_RULES = Rules()


@dataclass(frozen=True)
class ValuedOpening:
    """An opening and its exact value, the solver's score for the first player
    (None where not known: a file's opening without one)."""

    moves: tuple[int, ...]
    value: int | None


def check_balanced_rules(rules: Rules) -> None:
    """Balanced openings are for 7x6 connect four only: say so in one line otherwise."""
    if rules != BALANCED_RULES:
        raise OpeningsError(f"balanced openings are drawn for {BALANCED_RULES.describe()} only (the solver's book "
                            f"and node budget are sized for it), not {rules.describe()}; use random openings "
                            "(openings.plies) or a file of openings")


def balanced_openings(
    rules: Rules, plies: int, margin: int, count: int, rng: random.Random, solver: PositionSolver,
    nodes: int | None = None,
) -> list[ValuedOpening]:
    """``count`` distinct openings of ``plies`` random plies (as :func:`random_openings`
    draws them, from ``rng``) whose exact value is a draw, or within ``margin`` of
    one on the solver's score scale; an opening the solver cannot prove within
    ``nodes`` (default :data:`BALANCED_NODES`) is passed over. Deterministic: the same generator and back end give
    the same openings (see :func:`~arena.engine.solvers.prove`)."""
    check_balanced_rules(rules)
    found: list[ValuedOpening] = []
    tried = 0
    seen: set[tuple[int, ...]] = set()
    for line in iter_random_openings(rules, plies, rng):
        if len(found) == count:
            break
        tried += 1
        if tried > BALANCED_TRIES * count:
            raise OpeningsError(
                f"found only {len(found)} of {count} balanced openings of {plural(plies, 'ply', 'plies')} "
                f"(value within {margin} of a draw) in {plural(tried - 1, 'opening')} drawn; use more plies "
                "(10 or more are nearly always proven) or a larger margin")
        if line in seen:
            continue  # the random draw repeats once its openings seem used up
        seen.add(line)
        proof = prove(solver, Board.from_moves(list(line), rules), nodes or BALANCED_NODES)
        if proof is None:
            continue
        value = proof.value if plies % 2 == 0 else -proof.value  # for the first player
        if abs(value) <= margin:
            found.append(ValuedOpening(line, value))
    return found
