"""Bots written for the Kaggle ConnectX environment, run unchanged.

Such a file defines ``agent(observation, configuration)``, or ``agent(observation)``
(Kaggle calls ``agent`` if there is one, else the last function in the file; an
agent that takes ``*args`` is given both). ``observation.board`` is the grid as a
flat list, row by row from the top, 0 for empty, 1 for the first player's stones, 2
for the second's; ``observation.mark`` is the agent's own number (1 or 2),
``observation.step`` the number of moves played and
``observation.remainingOverageTime`` what is left of its bank. ``configuration``
holds every field Kaggle gives (:func:`configuration`). The agent returns a 0-based
column. Both objects allow attribute and key access, as Kaggle's ``Struct`` does.

Kaggle's ConnectX has stones that fall and a line that wins: other rules
(:func:`unsupported`) are refused before any game, never forfeited game by game.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

from arena.bot import Bot, Limit
from arena.engine.game import Board, Rules

# What Kaggle's ConnectX configures where nothing else says, the rules it plays and
# its grid: shared with Kaggle's episode files (arena.formats), so in the engine.
from arena.engine.kaggle import KAGGLE_ACT_TIMEOUT as KAGGLE_ACT_TIMEOUT
from arena.engine.kaggle import KAGGLE_EPISODE_STEPS as KAGGLE_EPISODE_STEPS
from arena.engine.kaggle import KAGGLE_OVERAGE as KAGGLE_OVERAGE
from arena.engine.kaggle import KAGGLE_RUN_TIMEOUT as KAGGLE_RUN_TIMEOUT
from arena.engine.kaggle import kaggle_configuration, kaggle_grid
from arena.engine.kaggle import unsupported as unsupported
from arena.records import TimeControl


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


def arguments_taken(agent: Callable[..., Any]) -> int:
    """How many of (observation, configuration) ``agent`` is called with: two if it
    takes two positional arguments or ``*args``, one if it takes one."""
    try:
        parameters = inspect.signature(agent).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): as Kaggle calls most agents
        return 2
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in parameters) or len(positional) >= 2:
        return 2
    return len(positional)


grid = kaggle_grid  # the name this module has always given it


def observation(board: Board, overage: float = KAGGLE_OVERAGE) -> Struct:
    """What Kaggle shows an agent on move in ``board``, with ``overage`` seconds of its bank left."""
    return Struct(board=grid(board), mark=board.to_move + 1, step=board.ply, remainingOverageTime=overage)


def configuration(rules: Rules, time_control: TimeControl | None) -> Struct:
    """Kaggle's configuration for a game of ``rules`` under ``time_control`` (see
    :func:`arena.engine.kaggle.kaggle_configuration`)."""
    move, bank = (time_control.move_seconds, time_control.bank_seconds) if time_control is not None else (None, 0.0)
    return Struct(**kaggle_configuration(rules, move, bank))


class KaggleAgentBot(Bot):
    """A ConnectX ``agent(observation[, configuration])`` playing as a Bot."""

    name = "kaggle-agent"
    kind = "connectx"

    def __init__(self, agent: Callable[..., Any]) -> None:
        super().__init__()
        self.agent = agent
        self.arguments = arguments_taken(agent)  # read once: a game asks for many moves
        self.time_control: TimeControl | None = None  # the game's, given by whoever starts it

    def choose_move(self, board: Board, limit: Limit | None = None) -> Any:
        why = unsupported(board.rules)
        if why is not None:  # refused before any game where the arena starts one; a backstop here
            raise ValueError(why)
        timed = self.time_control is not None and self.time_control.move_seconds is not None
        # The bank left now where the game has one; none where it has a move limit
        # alone; Kaggle's own figure where it has no clock at all.
        bank = limit.bank_seconds if limit is not None else None
        overage = (bank or 0.0) if timed else KAGGLE_OVERAGE
        # Made each move: an agent that writes to its configuration changes no other move.
        config = configuration(board.rules, self.time_control)
        obs = observation(board, overage)
        answer = self.agent(obs, config) if self.arguments == 2 else self.agent(obs)
        try:
            return operator.index(answer)  # numpy integers are common in ConnectX agents
        except TypeError:
            return answer
