"""Bots written for the Kaggle ConnectX environment, run unchanged.

Such a file defines ``agent(observation, configuration)`` (Kaggle calls the last
callable in the file). ``observation.board`` is the grid as a flat list, row by
row from the top, 0 for empty, 1 for the first player's stones, 2 for the
second's; ``observation.mark`` is the agent's own number (1 or 2).
``configuration`` has ``columns``, ``rows`` and ``inarow``. The agent returns a
0-based column. Both objects allow attribute and key access, as Kaggle's do.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

from arena.bot import Bot, Limit
from arena.engine.game import Board


class Struct(dict[str, Any]):
    """A dict whose keys are also attributes (Kaggle's observation/configuration)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def find_agent(namespace: dict[str, Any]) -> Callable[..., Any] | None:
    """``agent`` if defined, else the last function defined in the file."""
    module = namespace.get("__name__")
    functions = [
        value for value in namespace.values()
        if inspect.isfunction(value) and value.__module__ == module
    ]
    named: object = namespace.get("agent")
    if callable(named):
        return named
    return functions[-1] if functions else None


def observation(board: Board) -> Struct:
    rules = board.rules
    flat = []
    for row in reversed(range(rules.height)):  # Kaggle's row 0 is the top
        for column in range(rules.width):
            owner = board.cell(column, row)
            flat.append(0 if owner is None else owner + 1)
    return Struct(board=flat, mark=board.to_move + 1, step=board.ply, remainingOverageTime=60)


def configuration(board: Board, time_allowed: float | None) -> Struct:
    rules = board.rules
    return Struct(
        columns=rules.width, rows=rules.height, inarow=rules.connect,
        timeout=time_allowed or 2, actTimeout=time_allowed or 2, episodeSteps=1000,
    )


class KaggleAgentBot(Bot):
    """A ConnectX ``agent(observation, configuration)`` playing as a Bot."""

    name = "kaggle-agent"
    kind = "connectx"

    def __init__(self, agent: Callable[..., Any]) -> None:
        super().__init__()
        self.agent = agent

    def choose_move(self, board: Board, limit: Limit | None = None) -> Any:
        if not board.rules.moves_are_columns:
            raise ValueError("a ConnectX agent plays only games with gravity")
        seconds = limit.time_allowed if limit is not None else self.time_allowed
        answer = self.agent(observation(board), configuration(board, seconds))
        try:
            return operator.index(answer)  # numpy integers are common in ConnectX agents
        except TypeError:
            return answer
