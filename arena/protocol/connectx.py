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
from arena.records import TimeControl

#: What Kaggle's ConnectX configures where nothing else says (kaggle-environments'
#: connectx.json and the configuration every environment shares): seconds per move
#: (``actTimeout``, and ``timeout``, its old name), the overage bank
#: (``agentTimeout``, and the observation's ``remainingOverageTime`` at the start),
#: the seconds a whole episode may take, and the most steps it may have.
KAGGLE_ACT_TIMEOUT = 2
KAGGLE_OVERAGE = 60
KAGGLE_RUN_TIMEOUT = 1200
KAGGLE_EPISODE_STEPS = 1000


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


def unsupported(rules: Rules) -> str | None:
    """Why Kaggle's ConnectX cannot play a game of ``rules``; None when it can."""
    if not rules.moves_are_columns:
        return "Kaggle's ConnectX has no games without gravity (its moves are columns)"
    if not rules.first_line_wins:
        return "Kaggle's ConnectX has no count scoring (the first line wins)"
    return None


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


def grid(board: Board) -> list[int]:
    """Kaggle's ``observation.board`` of ``board``: the cells row by row from the top, 0
    empty, 1 the first player's stone, 2 the second's."""
    rules = board.rules
    flat = []
    for row in reversed(range(rules.height)):  # Kaggle's row 0 is the top
        for column in range(rules.width):
            owner = board.cell(column, row)
            flat.append(0 if owner is None else owner + 1)
    return flat


def observation(board: Board, overage: float = KAGGLE_OVERAGE) -> Struct:
    """What Kaggle shows an agent on move in ``board``, with ``overage`` seconds of its bank left."""
    return Struct(board=grid(board), mark=board.to_move + 1, step=board.ply, remainingOverageTime=overage)


def configuration(rules: Rules, time_control: TimeControl | None) -> Struct:
    """Kaggle's configuration for a game of ``rules``: with the arena's time control
    where the game has one (``actTimeout`` its seconds a move, ``agentTimeout`` its
    bank, ``runTimeout`` the longest the game can last on both clocks), else Kaggle's
    own values. ``episodeSteps`` is never what ends a game: at least one more than
    the board has cells."""
    cells = rules.width * rules.height
    if time_control is not None and time_control.move_seconds is not None:
        act, bank = time_control.move_seconds, time_control.bank_seconds
        run = cells * act + 2 * bank
    else:
        act, bank, run = KAGGLE_ACT_TIMEOUT, KAGGLE_OVERAGE, KAGGLE_RUN_TIMEOUT
    return Struct(
        columns=rules.width, rows=rules.height, inarow=rules.connect,
        actTimeout=act, timeout=act, agentTimeout=bank, runTimeout=run,
        episodeSteps=max(KAGGLE_EPISODE_STEPS, cells + 1),
    )


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
