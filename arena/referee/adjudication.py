"""Adjudication by the solver: a game ends once the solver proves its result.

Opt-in (``--adjudicate solver[:STONES]``): from the given number of stones on
the board, before each move the referee asks the installed solver plug-in (see
:mod:`arena.engine.solvers`) for the exact value of the position within a small
node budget. Once it is proven, the game ends with that result: termination
``adjudicated``, the moves so far kept, the proof (its score and the nodes it
took) in the reason. Perfect play from there would give the same result, so the
tables count it as they count a win or a draw on the board.

The asking happens between moves, off every bot's clock, and a node budget (not
time) bounds it, from an empty table each time: the same position is adjudicated
alike on any worker, however loaded, whatever it played before.
"""

from __future__ import annotations

from arena.engine.game import PLAYER_MARKS, Board, Rules
from arena.engine.scores import stones_of_score
from arena.engine.solvers import PositionSolver, Proof, SolverMissing, find_solver, prove
from arena.errors import ArenaFault
from arena.records import Outcome, Termination
from arena.text import plural

#: Search nodes the solver may spend on one position before the game goes on:
#: a few hundredths of a second with the compiled solver, enough for nearly every
#: 7x6 position with 20 stones or more.
ADJUDICATION_NODES = 200_000
#: The stones on the board from which a game is adjudicated when none are given.
DEFAULT_ADJUDICATION_STONES = 20

# One solver per set of rules in each process: made once (loading a compiled
# back end takes a while), emptied before every position (see prove).
_solvers: dict[Rules, PositionSolver] = {}


class Adjudicator:
    """Asks the solver, from ``stones`` stones on, whether a game's result is proven."""

    def __init__(self, stones: int, nodes: int = ADJUDICATION_NODES) -> None:
        self.stones = stones
        self.nodes = nodes

    def verdict(self, board: Board) -> Outcome | None:
        """How the game ends if the solver proves the value of ``board`` (an open
        position) within the budget; None while it is too early or not proven."""
        if board.ply < self.stones:
            return None
        proof = prove(_solver(board.rules), board, self.nodes)
        if proof is None:
            return None
        mover = board.to_move
        winner = None if proof.value == 0 else mover if proof.value > 0 else 1 - mover
        return Outcome(winner, Termination.ADJUDICATED, adjudication_reason(board, proof))


def _solver(rules: Rules) -> PositionSolver:
    solver = _solvers.get(rules)
    if solver is None:
        try:
            solver = find_solver(rules)
        except SolverMissing as exc:  # the run checked it: a worker without the solver is the arena's fault
            raise ArenaFault(f"adjudication needs the solver on this machine: {exc}") from None
        _solvers[rules] = solver
    return solver


def adjudication_reason(board: Board, proof: Proof) -> str:
    """``solver: X wins in 3 (score 17 for O to move after 20 stones, 4,512 nodes)``:
    the result, counted in the winner's moves still to play, and the proof."""
    ply, value = board.ply, proof.value
    how = "from the book" if proof.looked_up else plural(proof.nodes, "node")
    proven = f"score {value} for {PLAYER_MARKS[board.to_move]} to move after {ply} stones, {how}"
    if value == 0:
        return f"solver: draw ({proven})"
    winner_stones = stones_of_score(board.rules, value) or 0
    if value > 0:
        winner, moves = board.to_move, winner_stones - ply // 2
    else:
        winner, moves = 1 - board.to_move, winner_stones - (ply + 1) // 2
    side = "first" if winner == 0 else "second"
    return f"solver: {side} player ({PLAYER_MARKS[winner]}) wins in {moves} ({proven})"
