"""The solver's verdict on a knockout match still level after its extra pairs.

Each move either entrant made in the match's games (the opening's plies are
nobody's) is judged by the solver: the value of the position before it, for the
mover, against the value after it. A perfect move keeps the value; any other
loses some. What an entrant lost is counted twice over, and compared in this
order:

1. results let go: a won position left for a draw counts 1, for a loss 2, a
   drawn one left for a loss 1;
2. the solver's score let go (a win put off, a loss brought nearer; see
   :mod:`arena.engine.scores`).

The entrant that lost less wins the match; equal, there is no verdict (None) and
the coin decides. Only moves whose two positions the solver proves within a
budget of search nodes count: a node budget, from an empty table each time
(:func:`arena.engine.solvers.prove`), so the same games get the same verdict on
any machine, however loaded, and a resumed knockout goes on as it began.

A verdict takes about a second a game with the compiled solver; it is kept
(:data:`_VERDICTS`), so working the bracket out again, as every round does, asks
the solver once per match.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from arena.engine.game import Board, Rules, parse_moves
from arena.engine.solvers import PositionSolver, find_solver, prove
from arena.ratings.analysis import analyse, position_values
from arena.ratings.played import PlayedGame

#: Search nodes the solver may spend on each position of a level match's games.
VERDICT_NODES = 200_000
#: Verdicts kept, the oldest dropped first.
KEPT_VERDICTS = 256


#: (rules, nodes, each game's players, moves and opening) -> the verdict.
_VERDICTS: OrderedDict[tuple[object, ...], str | None] = OrderedDict()


def value_lost(rules: Rules, games: Sequence[PlayedGame], nodes: int = VERDICT_NODES,
               solver: PositionSolver | None = None) -> dict[str, tuple[int, int]]:
    """Per player, over ``games``: (results let go, the solver's score let go) by its
    moves whose positions before and after the solver proves within ``nodes``."""
    found = solver or find_solver(rules)

    def solve(board: Board, deadline: float) -> int | None:
        proof = prove(found, board, nodes)
        return None if proof is None else proof.value

    lost: dict[str, tuple[int, int]] = {}
    for game in games:
        moves = parse_moves(game.moves or "", rules)
        for ply in analyse(rules, moves, position_values(rules, moves, 0.0, solve)):
            if ply.ply < (game.opening_plies or 0) or ply.before is None or ply.after is None:
                continue
            mover = game.first if ply.ply % 2 == 0 else game.second
            results, score = lost.get(mover, (0, 0))
            lost[mover] = (results + _sign(ply.before) - _sign(ply.after), score + ply.before - ply.after)
    return lost


def verdict(upper: str, lower: str, rules: Rules, games: Sequence[PlayedGame],
            nodes: int = VERDICT_NODES) -> str | None:
    """The player of ``upper`` and ``lower`` whose moves in ``games`` lost less by the
    solver's judgement (see the module); None when they lost as much."""
    key = (rules, nodes, upper, lower, tuple((g.first, g.second, g.moves, g.opening_plies) for g in games))
    if key in _VERDICTS:
        _VERDICTS.move_to_end(key)
        return _VERDICTS[key]
    lost = value_lost(rules, games, nodes)
    upper_lost, lower_lost = lost.get(upper, (0, 0)), lost.get(lower, (0, 0))
    found = None if upper_lost == lower_lost else upper if upper_lost < lower_lost else lower
    _VERDICTS[key] = found
    while len(_VERDICTS) > KEPT_VERDICTS:
        _VERDICTS.popitem(last=False)
    return found


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)
