"""Kaggle ConnectX episodes: the replay JSON Kaggle's viewer reads, out of the arena and in.

An episode (as kaggle-environments' ``env.toJSON()`` gives it, and as Kaggle's site downloads it)
is one JSON object::

    {"id": "...", "name": "connectx", "title": "ConnectX", "version": "1.0.1",
     "configuration": {"columns": 7, "rows": 6, "inarow": 4, "actTimeout": 2, ...},
     "specification": {...},
     "steps": [[{"action": 0, "reward": 0, "info": {}, "status": "ACTIVE",
                 "observation": {"board": [0, ...], "mark": 1, "step": 0, "remainingOverageTime": 60}},
                {"action": 0, "reward": 0, "info": {}, "status": "INACTIVE",
                 "observation": {"mark": 2, "remainingOverageTime": 60}}],
               ...],
     "rewards": [1, -1], "statuses": ["DONE", "DONE"],
     "info": {"TeamNames": ["first", "second"]}, "schema_version": 1}

Step 0 is the empty board; each later step follows one move: the agent that was ``ACTIVE``
in the step before played the ``action`` it has in this one (the other agent's action is
left as it was). The board (row by row from the top, 0 empty, 1 and 2 the players' stones)
is in the first agent's observation only. The last step's statuses say how it ended:
both ``DONE`` (a line, or the board full), or one agent ``ERROR``, ``TIMEOUT`` or
``INVALID`` (an illegal column), which forfeits, its reward null.

:func:`episode_of_game` writes a game as such an episode; :func:`game_of_episode` reads one
back, every move checked by playing it (and against the board where the step has one). The
players' names are the episode's ``info.TeamNames`` when it has them, else
``kaggle-agent-1`` and ``kaggle-agent-2``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, TypeGuard

from arena.engine.game import Board, Rules, RulesError
from arena.engine.kaggle import kaggle_configuration, kaggle_grid, unsupported
from arena.formats.game_files import GameFileError, ImportedGame, checked_game
from arena.records import RESULTS, Termination, TimeControl
from arena.text import clip

ENVIRONMENT = "connectx"
#: What kaggle-environments' ConnectX calls itself (its connectx.json).
TITLE = "ConnectX"
DESCRIPTION = "Classic Connect in a row but configurable."
VERSION = "1.0.1"
#: The names of players an episode does not name.
UNNAMED = ("kaggle-agent-1", "kaggle-agent-2")
#: The statuses of an agent that forfeits.
FORFEITS = ("ERROR", "TIMEOUT", "INVALID")
#: Words of the arena's forfeit reasons and the Kaggle status each means; any other forfeit is an ERROR.
_STATUS_WORDS = (("time", "TIMEOUT"), ("illegal", "INVALID"), ("not a move", "INVALID"))


class EpisodeError(GameFileError):
    """A Kaggle episode that is not a ConnectX game the arena can read."""


def is_episode(data: object) -> bool:
    """Whether a JSON document is a Kaggle episode (it has ``steps`` and a ``configuration``)."""
    return isinstance(data, dict) and isinstance(data.get("steps"), list) and "configuration" in data


# --- out ---------------------------------------------------------------------------------


def _agent(mark: int, action: int | None, status: str, reward: int | None, bank: float,
           board: list[int] | None, step: int) -> dict[str, Any]:
    observation: dict[str, Any] = {"remainingOverageTime": bank, "mark": mark}
    if board is not None:  # Kaggle's board is shared: in the first agent's observation only
        observation = {"remainingOverageTime": bank, "step": step, "board": board, "mark": mark}
    return {"action": action, "reward": reward, "info": {}, "observation": observation, "status": status}


def forfeit_status(reason: str | None) -> str:
    """The Kaggle status of an agent forfeiting for ``reason`` (the arena's words)."""
    text = (reason or "").lower()
    return next((status for word, status in _STATUS_WORDS if word in text), "ERROR")


def episode_of_game(game: ImportedGame) -> dict[str, Any]:
    """``game`` as a Kaggle episode (see the module docstring); EpisodeError for rules
    ConnectX has not."""
    rules = game.rules
    why = unsupported(rules)
    if why is not None:
        raise EpisodeError(f"a game of {rules.describe()} cannot be a Kaggle episode: {why}")
    clock = game.time_control
    configuration = kaggle_configuration(rules, clock.move_seconds if clock else None,
                                         clock.bank_seconds if clock else 0.0)
    bank = configuration["agentTimeout"]
    board = Board(rules)
    actions: list[int] = [0, 0]
    steps = [[_agent(1, 0, "ACTIVE", 0, bank, kaggle_grid(board), 0), _agent(2, 0, "INACTIVE", 0, bank, None, 0)]]
    for move in game.moves:
        mover = board.to_move
        board.play(move)
        actions[mover] = move
        statuses = ["ACTIVE", "ACTIVE"]
        statuses[mover] = "INACTIVE"
        rewards: list[int | None] = [0, 0]
        if board.is_over():
            statuses = ["DONE", "DONE"]
            if board.winner is not None:
                rewards[board.winner], rewards[1 - board.winner] = 1, -1
        steps.append([
            _agent(1, actions[0], statuses[0], rewards[0], bank, kaggle_grid(board), board.ply),
            _agent(2, actions[1], statuses[1], rewards[1], bank, None, board.ply),
        ])
    if game.termination == Termination.FORFEIT and not board.is_over():
        loser = board.to_move if game.result is None else (1 if game.result == RESULTS[0] else 0)
        last = steps[-1] if len(steps) > 1 else steps[0]
        last = [dict(agent) for agent in last]
        last[loser].update(status=forfeit_status(game.reason), reward=None, action=None)
        last[1 - loser].update(status="DONE", reward=0)
        steps.append(last)
    first, second = game.players or (None, None)
    names = [first or UNNAMED[0], second or UNNAMED[1]]
    final = steps[-1]
    return {
        "id": f"connectk-arena-{game.game_id}" if game.game_id is not None else str(uuid.uuid4()),
        "name": ENVIRONMENT,
        "title": TITLE,
        "description": DESCRIPTION,
        "version": VERSION,
        "configuration": dict(configuration),
        "specification": {"agents": [2]},
        "steps": steps,
        "rewards": [agent["reward"] for agent in final],
        "statuses": [agent["status"] for agent in final],
        "schema_version": 1,
        "info": {"TeamNames": names},
    }


# --- in ----------------------------------------------------------------------------------


def _whole(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise EpisodeError(f"{where} must be a whole number, got {clip(json.dumps(value))}")
    return int(value)


def _rules(configuration: Any) -> Rules:
    if not isinstance(configuration, dict):
        raise EpisodeError(f"an episode's 'configuration' must be an object, got {clip(json.dumps(configuration))}")
    try:
        return Rules(
            width=_whole(configuration.get("columns", 7), "configuration 'columns'"),
            height=_whole(configuration.get("rows", 6), "configuration 'rows'"),
            connect=_whole(configuration.get("inarow", 4), "configuration 'inarow'"),
        )
    except RulesError as exc:
        raise EpisodeError(f"the episode's board is no connect-k game here: {exc}") from None


def _time_control(configuration: dict[str, Any]) -> TimeControl | None:
    act = configuration.get("actTimeout", configuration.get("timeout"))
    bank = configuration.get("agentTimeout", 0)
    if _seconds(act) and _seconds(bank):
        return TimeControl(float(act), float(bank))
    return None  # none given, or no number of seconds


def _seconds(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _names(info: Any) -> tuple[str, str]:
    if isinstance(info, dict):
        names = info.get("TeamNames")
        if isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) and n.strip() for n in names):
            return names[0], names[1]
    return UNNAMED


def _step(steps: list[Any], index: int) -> list[dict[str, Any]]:
    step = steps[index]
    if not (isinstance(step, list) and len(step) == 2 and all(isinstance(agent, dict) for agent in step)):
        raise EpisodeError(f"step {index} must be a list of two agents' states, got {clip(json.dumps(step))}")
    return step


def game_of_episode(data: dict[str, Any]) -> ImportedGame:
    """The game of a Kaggle ConnectX episode, every move checked (see the module docstring)."""
    name = data.get("name", ENVIRONMENT)
    if name != ENVIRONMENT:
        raise EpisodeError(f"an episode of {clip(json.dumps(name))}, not of Kaggle's {ENVIRONMENT!r}: "
                           "only ConnectX games are connect-k games")
    configuration = data["configuration"]
    rules = _rules(configuration)
    steps: list[Any] = data["steps"]
    if not steps:
        raise EpisodeError("the episode has no steps: expected at least the empty board's")
    board = Board(rules)
    moves: list[int] = []
    previous = _step(steps, 0)
    forfeit: tuple[int, str] | None = None
    for index in range(1, len(steps)):
        step = _step(steps, index)
        active = [side for side in (0, 1) if previous[side].get("status") == "ACTIVE"]
        if len(active) != 1:
            raise EpisodeError(f"step {index} follows a step where {len(active)} agents were to move, not one")
        mover = active[0]
        status = step[mover].get("status")
        if status in FORFEITS:
            action = step[mover].get("action")
            forfeit = (mover, f"Kaggle status {status}" + (f" (action {clip(json.dumps(action))})"
                                                              if status == "INVALID" else ""))
            break
        move = _whole(step[mover].get("action"), f"step {index}'s action of agent {mover + 1}")
        if not board.is_legal(move):
            raise EpisodeError(f"step {index}: agent {mover + 1} played column {move}, which is illegal: "
                               f"{board.illegal_cause(move) or 'the game is over'}")
        board.play(move)
        moves.append(move)
        shown = step[0].get("observation", {}).get("board") if isinstance(step[0].get("observation"), dict) else None
        if shown is not None and shown != kaggle_grid(board):
            raise EpisodeError(f"step {index}: the board does not show column {move} played by agent {mover + 1}")
        previous = step
    result, termination, reason = None, None, None
    if forfeit is not None:
        loser, reason = forfeit
        result, termination = RESULTS[1 - loser], Termination.FORFEIT
    elif board.is_over():
        result = RESULTS[board.winner]
        termination = Termination.DRAW if board.winner is None else Termination.WIN
    return checked_game(
        rules, moves, players=_names(data.get("info")), result=result, termination=termination, reason=reason,
        site="kaggle", key=data["id"] if isinstance(data.get("id"), str) else None,
        time_control=_time_control(configuration),
    )
