"""connectk-arena: a bot arena for Connect Four and its relatives.

The supported Python API is the names in ``__all__``: the game (``Board``,
``Rules``), the bot authors' contract (``Bot``, ``Option``, ``Choice``,
``Limit``, ``BotFailure``), the records of a game, and five calls (``play_match``,
``run_tournament``, ``open_store``, ``standings``, ``analyse``; see :mod:`arena.api`).
In a notebook a board shows as a picture, a game as its animated replay and a
match as a table of its results.
Everything else is internal: its modules may move between releases.

Names load on first use (PEP 562), so ``import arena`` costs almost nothing: the
sandbox's spawner imports this package before every bot it forks, and
``arena --help`` must stay quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.api import analyse, open_store, play_match, run_tournament, standings
    from arena.bot import Bot, BotFailure, Choice, Limit, Option
    from arena.engine.game import Board, IllegalMoveError, Rules, RulesError
    from arena.errors import ArenaError
    from arena.records import GameRecord, GameSpec, MoveRecord, Outcome, Termination, TimeControl

# Each public name and the module that defines it.
_HOMES = {
    "Board": "arena.engine.game",
    "Rules": "arena.engine.game",
    "RulesError": "arena.engine.game",
    "IllegalMoveError": "arena.engine.game",
    "Bot": "arena.bot",
    "Option": "arena.bot",
    "Choice": "arena.bot",
    "BotFailure": "arena.bot",
    "Limit": "arena.bot",
    "ArenaError": "arena.errors",
    "GameSpec": "arena.records",
    "GameRecord": "arena.records",
    "MoveRecord": "arena.records",
    "Outcome": "arena.records",
    "Termination": "arena.records",
    "TimeControl": "arena.records",
    "play_match": "arena.api",
    "run_tournament": "arena.api",
    "open_store": "arena.api",
    "standings": "arena.api",
    "analyse": "arena.api",
}

__all__ = [
    "ArenaError", "Board", "Bot", "BotFailure", "Choice", "GameRecord", "GameSpec", "IllegalMoveError",
    "Limit", "MoveRecord", "Option", "Outcome", "Rules", "RulesError", "Termination", "TimeControl",
    "analyse", "open_store", "play_match", "run_tournament", "standings",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # found once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
