"""Solvers: plug-ins that give the exact value of positions.

The arena never imports a solver by name. A solver is an installed plug-in,
found through the entry-point group ``arena.solvers``: each entry point names a
factory that, given the rules, returns a :class:`PositionSolver` for them (the
arena's own distribution registers ``perfect = "bots.solver:Solver"``). The
analysis of stored games and ``arena solve`` ask :func:`find_solver` for one.

Scores are those of :mod:`arena.engine.scores`, for the side to move.

A solver may also offer ``known(board) -> int | None``, a value looked up rather
than searched (the built-in solver's opening book), and ``reset()``, which empties
what it learnt: :func:`prove` uses both when they are there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Protocol

from arena.engine.game import Board, Rules
from arena.errors import ArenaError

ENTRY_POINT_GROUP = "arena.solvers"


class PositionSolver(Protocol):
    """What the arena asks of a solver, for the one set of rules it was made for.

    ``deadline`` is a ``time.monotonic()`` value and ``nodes`` a budget of search
    nodes; a solver that runs out of either gives None for what it has not proven.
    A solver may keep what it learns from one call to the next (a transposition
    table), so the positions of one game are best solved by one solver.
    """

    def solve(self, board: Board, deadline: float | None = None, nodes: int | None = None) -> int | None:
        """Exact score of ``board`` for the side to move, or None if out of time or nodes."""
        ...

    def solve_moves(
        self, board: Board, deadline: float | None = None, nodes: int | None = None
    ) -> dict[int, int | None]:
        """Score of each legal move of ``board`` for the side to move; None where unproven."""
        ...


#: Makes a solver for a set of rules; raises ValueError for rules it cannot serve.
SolverFactory = Callable[[Rules], PositionSolver]


class SolverMissing(ArenaError):
    """No solver plug-in can be had: none is installed, the installed one cannot be
    loaded, or it cannot serve the rules asked for."""


def find_solver(rules: Rules) -> PositionSolver:
    """A solver for ``rules`` from the installed plug-ins (the first by name).

    Raises :class:`SolverMissing` when none is installed, it fails to load, or it
    refuses ``rules`` (a plug-in says so with a ValueError).
    """
    factory = solver_factory()
    try:
        return factory(rules)
    except ValueError as exc:  # a plug-in's own refusal: one line for the person, never a traceback
        raise SolverMissing(f"the solver cannot serve {rules.describe()}: {exc}") from None


def solver_factory() -> SolverFactory:
    """The factory of the first installed solver plug-in, by name."""
    found = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
    if not found:
        raise SolverMissing(
            f"no solver is installed: install a plug-in that registers one in the {ENTRY_POINT_GROUP!r} "
            "entry-point group (connectk-arena's built-in bots do)"
        )
    entry = found[0]
    try:
        factory: SolverFactory = entry.load()
    except Exception as exc:  # third-party code: report it in one line, never a traceback
        raise SolverMissing(f"the solver {entry.name!r} ({entry.value}) failed to load: "
                            f"{type(exc).__name__}: {exc}") from None
    return factory


@dataclass(frozen=True)
class Proof:
    """A position's exact value and what proving it took."""

    value: int  # the solver's score for the side to move
    nodes: int  # search nodes spent (0: looked up, or the game was already over)
    looked_up: bool = False  # from the solver's book, not searched


def prove(solver: PositionSolver, board: Board, nodes: int) -> Proof | None:
    """The exact value of ``board`` within a budget of ``nodes`` search nodes, or
    None when it is not proven within it. The solver's book answers first where it
    holds the position. The search starts from an empty table (where the solver can
    empty it), so whether a position is proven within the budget depends on the
    position alone, not on what was solved before: the same seed draws the same
    openings, and a game is adjudicated at the same ply, in any order on any worker."""
    known = getattr(solver, "known", None)
    value = known(board) if known is not None else None
    if value is not None:
        return Proof(value, 0, looked_up=True)
    reset = getattr(solver, "reset", None)
    if reset is not None:
        reset()
    value = solver.solve(board, nodes=nodes)
    if value is None:
        return None
    return Proof(value, int(getattr(solver, "nodes", 0) or 0))
