"""Which move lost the game: the solver's value of every position of a stored game.

Each position gets its exact value for the side to move (win / draw / loss and
how soon, as the solver's score), or stays unknown when the solver cannot prove
it within the budget: unknown values are never guessed. A move is marked when it
throws away a win (the position before was won, the one after is not) or a draw
(drawn before, lost after).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.engine.game import Board, Rules
from arena.engine.scores import score_of_win, stones_of_score
from arena.engine.solvers import find_solver

if TYPE_CHECKING:
    from arena.store import Store, StoredGame

LOST_WIN = "lost win"
LOST_DRAW = "lost draw"

Solve = Callable[[Board, float], "int | None"]  # (position, deadline) -> score or None


@dataclass(frozen=True)
class PlyAnalysis:
    ply: int
    move: int
    before: int | None  # value for the mover before the move
    after: int | None  # value for the mover after it
    mark: str | None  # LOST_WIN, LOST_DRAW or None

    @property
    def known(self) -> bool:
        return self.before is not None and self.after is not None


def position_values(
    rules: Rules, moves: list[int], budget: float, solve: Solve, known: dict[int, int | None] | None = None
) -> dict[int, int | None]:
    """The value of the position before each ply (and after the last one), for the
    side to move there; ``known`` values are reused and not solved again."""
    values = dict(known or {})
    board = Board(rules)
    for ply in range(len(moves) + 1):
        if values.get(ply) is None:
            values[ply] = _value(board, budget, solve)
        if ply < len(moves):
            board.play(moves[ply])
    return values


def analyse(rules: Rules, moves: list[int], values: dict[int, int | None]) -> list[PlyAnalysis]:
    """Marks for every ply, from the position values."""
    plies = []
    for ply, move in enumerate(moves):
        before = values.get(ply)
        after_for_opponent = values.get(ply + 1)
        after = None if after_for_opponent is None else -after_for_opponent
        plies.append(PlyAnalysis(ply, move, before, after, _mark(before, after)))
    return plies


def _mark(before: int | None, after: int | None) -> str | None:
    if before is None or after is None:
        return None
    if before > 0 >= after:
        return LOST_WIN
    if before == 0 > after:
        return LOST_DRAW
    return None


def _value(board: Board, budget: float, solve: Solve) -> int | None:
    """Score of ``board`` for its side to move; a finished game scores itself."""
    if board.is_over():
        if board.winner is None:
            return 0
        # The side to move has just lost: minus the winner's score for that win.
        return -_win_score(board)
    return solve(board, time.monotonic() + budget)


def _win_score(board: Board) -> int:
    """Score of the win just completed, in the solver's convention: the sooner, the
    higher (22 minus the winner's stones on 7x6)."""
    return score_of_win(board.rules, board.ply - 1)  # the winning stone was ply - 1


def describe(rules: Rules, ply: int, score: int | None) -> str:
    """'win in 3', 'draw', 'loss in 5' or 'unknown' for the side to move at ``ply``,
    counting the moves of the player who wins (the winning move included)."""
    if score is None:
        return "unknown"
    if score == 0:
        return "draw"
    winner_stones = stones_of_score(rules, score) or 0
    if score > 0:
        return f"win in {winner_stones - ply // 2}"
    return f"loss in {winner_stones - (ply + 1) // 2}"


def solver_solve(rules: Rules) -> Solve:
    """The installed solver plug-in's ``solve`` for these rules (see
    :mod:`arena.engine.solvers`; SolverMissing if there is none). One solver for the
    whole game: what it learns carries from position to position."""
    solver = find_solver(rules)

    def run(board: Board, deadline: float) -> int | None:
        return solver.solve(board, deadline=deadline)

    return run


def analyse_stored(store: Store, game_id: int, budget: float | None, solve: Solve | None = None) -> list[PlyAnalysis]:
    """Analyse a stored game, reusing stored values; with ``budget`` None, only read.

    Unknown positions are tried again when the budget is larger than last time.
    """
    from arena.engine.game import parse_moves
    from arena.store import rules_of

    game = store.games.get(game_id)
    rules = rules_of(game)
    moves = parse_moves(game.moves or "", rules)
    stored = store.analyses.values(game_id)
    if budget is None and not stored:
        return []  # never analysed
    known = {ply: value for ply, (value, tried) in stored.items()
             if value is not None or budget is None or tried >= budget}
    if budget is not None and len(known) < len(moves) + 1:
        values = position_values(rules, moves, budget, solve or solver_solve(rules), known)
        store.analyses.save(game_id, {p: v for p, v in values.items() if p not in known}, budget)
    else:
        values = {ply: value for ply, (value, _) in stored.items()}
    return analyse(rules, moves, values)


@dataclass
class BotSlips:
    """Per bot, over the analysed games: won positions it had, and how many it let go."""

    bot: str
    moves: int = 0  # its moves analysed
    won_positions: int = 0  # moves played from a proven win
    lost_wins: int = 0
    lost_draws: int = 0
    unknown: int = 0


def slips_by_bot(games: Sequence[StoredGame], analyses: dict[int, list[PlyAnalysis]]) -> list[BotSlips]:
    """Summary per bot of the analysed games (opening plies are nobody's)."""
    table: dict[str, BotSlips] = {}
    for game in games:
        for ply in analyses.get(game.id, []):
            if ply.ply < (game.opening_plies or 0):
                continue
            bot = game.first if ply.ply % 2 == 0 else game.second
            row = table.setdefault(bot, BotSlips(bot))
            row.moves += 1
            if not ply.known:
                row.unknown += 1
                continue
            row.won_positions += ply.before is not None and ply.before > 0
            row.lost_wins += ply.mark == LOST_WIN
            row.lost_draws += ply.mark == LOST_DRAW
    return sorted(table.values(), key=lambda r: (-r.lost_wins, r.bot))
