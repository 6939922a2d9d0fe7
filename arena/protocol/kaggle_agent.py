"""A Bot answering as a Kaggle ConnectX agent: the way out, as :mod:`arena.protocol.connectx`
is the way in.

A file written by ``arena export-bot SPEC --kaggle main.py`` holds this module; its
``agent(observation, configuration)`` calls a :class:`ConnectXPlayer`, which turns Kaggle's
observation into a :class:`~arena.engine.game.Board`, gives the bot the move's time and
answers its column.

The position: Kaggle shows a grid, not the moves that made it. The player keeps the board of
its last move; when the grid is that board plus one stone of the opponent's, the game goes on
(the bot's board has the true move order, which a bot reusing its search tree wants). Any
other grid starts a new game (:meth:`Bot.new_game`) on a board rebuilt from the grid by
:func:`board_of_grid`.

The time: each move may take ``MOVE_SHARE`` of ``configuration.actTimeout`` less
``SAFETY_SECONDS`` and less what the call spent before asking the bot (starting a game, which
reads the solver's book), at least ``MIN_SECONDS``; the bot's bank is a small share of
``observation.remainingOverageTime``, the seconds Kaggle lets moves overrun by over a whole
game, so a few overruns never use it up.

Only the standard library and modules a submission file holds are imported here.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from arena.bot import Bot, Limit, split_answer
from arena.engine.game import Board, Rules
from arena.errors import ArenaError
from arena.protocol import connectx

#: The share of ``actTimeout`` a move may take, and the seconds kept back from it besides
#: (Kaggle's own work around the call, a slow start of the process).
MOVE_SHARE = 0.8
SAFETY_SECONDS = 0.25
#: The least a move is given, however little is left.
MIN_SECONDS = 0.05
#: The share of ``remainingOverageTime`` a move may draw on, and the most, in ``actTimeout``s.
OVERAGE_SHARE = 0.01
OVERAGE_MOST = 0.5


class PositionError(ArenaError):
    """A Kaggle grid that no game of the rules reaches."""


def field(value: Any, name: str, default: Any = None) -> Any:
    """``value[name]`` or ``value.name``: Kaggle's observation and configuration are dicts
    whose keys are also attributes; a test may give either."""
    if isinstance(value, Mapping):
        return value.get(name, default)
    return getattr(value, name, default)


def rules_of(configuration: Any) -> Rules:
    """The rules of a ConnectX configuration (``columns``, ``rows``, ``inarow``; Kaggle's defaults)."""
    return Rules(
        width=int(field(configuration, "columns", 7)),
        height=int(field(configuration, "rows", 6)),
        connect=int(field(configuration, "inarow", 4)),
    )


def columns_of(grid: Sequence[int], rules: Rules) -> list[list[int]]:
    """Each column's stones from the bottom up (0 the first player's, 1 the second's);
    PositionError for a grid of the wrong size, a stone with an empty cell under it or an
    unknown mark."""
    width, height = rules.width, rules.height
    if len(grid) != width * height:
        raise PositionError(f"the board has {len(grid)} cells, expected {width}x{height}")
    columns: list[list[int]] = []
    for column in range(width):
        stones: list[int] = []
        for row in range(height):
            mark = grid[(height - 1 - row) * width + column]
            if mark not in (0, 1, 2):
                raise PositionError(f"unknown mark {mark!r} in column {column}")
            if mark and len(stones) < row:
                raise PositionError(f"a stone floats in column {column}, row {row} from the bottom")
            if mark:
                stones.append(mark - 1)
        columns.append(stones)
    return columns


def board_of_grid(grid: Sequence[int], rules: Rules) -> Board:
    """A board holding the stones of ``grid``, played in an order the rules allow.

    Which order made a grid cannot be known; any order works for the bots (they read the
    stones), as long as it alternates the players and fills each column from the bottom. A
    depth-first search finds one, remembering the column heights it found no way on from.
    No line is made before the last stone: the grid of a game still going on has none, so
    neither has any part of it."""
    columns = columns_of(grid, rules)
    total = sum(len(stones) for stones in columns)
    heights = [0] * rules.width
    order: list[int] = []
    dead: set[tuple[int, ...]] = set()

    def playable() -> list[int]:
        player = len(order) & 1
        return [c for c, stones in enumerate(columns) if heights[c] < len(stones) and stones[heights[c]] == player]

    pending = [playable()]
    while len(order) < total:
        if pending[-1]:
            column = pending[-1].pop()
            heights[column] += 1
            order.append(column)
            if tuple(heights) in dead:
                heights[column] -= 1
                order.pop()
            else:
                pending.append(playable())
        else:
            dead.add(tuple(heights))
            pending.pop()
            if not order:
                raise PositionError("no game reaches this board: the players' stones do not alternate")
            heights[order.pop()] -= 1
    return Board.from_moves(order, rules)


def following_move(board: Board, cells: Sequence[int]) -> int | None:
    """The column the side to move on ``board`` played to make the grid ``cells``, where
    ``cells`` is ``board`` plus that one stone; None otherwise."""
    before = connectx.grid(board)
    if len(before) != len(cells):
        return None
    changed = [i for i, (old, new) in enumerate(zip(before, cells)) if old != new]
    if len(changed) != 1 or before[changed[0]] != 0 or cells[changed[0]] != board.to_move + 1:
        return None
    row, column = divmod(changed[0], board.rules.width)
    if not board.is_legal(column) or board.move_cell(column)[1] != board.rules.height - 1 - row:
        return None  # the stone is not where it falls
    return column


def fallback_move(grid: Sequence[int], width: int) -> int:
    """A column with room, centre first: the answer when the bot could not give one."""
    centre = (width - 1) / 2
    open_columns = [c for c in range(width) if c < len(grid) and grid[c] == 0]
    return min(open_columns, key=lambda c: (abs(c - centre), c)) if open_columns else 0


class ConnectXPlayer:
    """A bot as a ConnectX agent: call it with Kaggle's ``(observation, configuration)``."""

    def __init__(self, bot: Bot, seed: int = 0) -> None:
        self.bot = bot
        self.seed = seed
        self.board: Board | None = None  # after the bot's last move
        self.side: int | None = None
        self.with_limit = "limit" in inspect.signature(bot.choose_move).parameters
        #: The bot's info of its last move (score, depth...), as it gave it.
        self.last_info: dict[str, Any] = {}

    def warm_up(self, rules: Rules) -> None:
        """Start a game of ``rules`` before any is played: what the bot reads or compiles
        for them then (the solver's book) is ready before a move's clock runs."""
        self.bot.new_game(rules, 0, self.seed)

    def __call__(self, observation: Any, configuration: Any = None) -> int:
        started = time.monotonic()
        cells = list(field(observation, "board", []))
        try:
            return self._move(observation, configuration or {}, cells, started)
        except Exception:  # an error loses the game on Kaggle: a column with room plays on, and the log says why
            traceback.print_exc(file=sys.stderr)
            self.board = None
            return fallback_move(cells, int(field(configuration or {}, "columns", 7)))

    def _move(self, observation: Any, configuration: Any, cells: list[int], started: float) -> int:
        rules = rules_of(configuration)
        side = int(field(observation, "mark", 1)) - 1
        board = self._position(cells, rules, side)
        limit = self.limit(observation, configuration, time.monotonic() - started)
        bot = self.bot
        bot.time_allowed = limit.time_allowed
        answer = bot.choose_move(board.copy(), limit=limit) if self.with_limit else bot.choose_move(board.copy())  # type: ignore[call-arg]
        move, info = split_answer(answer)
        self.last_info = info
        board.play_checked(move)
        assert isinstance(move, int)  # play_checked takes ints alone
        self.board = board
        return move

    def _position(self, cells: list[int], rules: Rules, side: int) -> Board:
        """The board to move on: the last one plus the opponent's stone, or a new game's."""
        board = self.board
        if board is not None and board.rules == rules and side == self.side:
            column = following_move(board, cells)
            if column is not None:
                board.play(column)
                return board
        board = board_of_grid(cells, rules)
        if board.to_move != side:
            raise PositionError(f"mark {side + 1} is not to move on this board")
        self.side = side
        self.bot.new_game(rules, side, self.seed)
        return board

    def limit(self, observation: Any, configuration: Any, spent: float) -> Limit:
        """What the bot's move may take, ``spent`` seconds into the call (see the module docstring)."""
        act = float(field(configuration, "actTimeout", field(configuration, "timeout", connectx.KAGGLE_ACT_TIMEOUT)))
        overage = float(field(observation, "remainingOverageTime", connectx.KAGGLE_OVERAGE))
        move = max(MIN_SECONDS, act * MOVE_SHARE - SAFETY_SECONDS - spent)
        bank = max(0.0, min(overage * OVERAGE_SHARE, act * OVERAGE_MOST))
        return Limit(move_seconds=move, bank_seconds=bank)


def start_player(settings: Mapping[str, Any]) -> ConnectXPlayer:
    """The player a submission file's settings describe: the bot class (``module`` and
    ``class``, or the one Bot subclass ``module`` defines), its ``options``, the ``rules``
    it warms up for and its ``seed``."""
    module = importlib.import_module(settings["module"])
    name = settings.get("class")
    if name:
        bot_class = getattr(module, name)
    else:
        found = [value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Bot)
                 and value is not Bot and value.__module__ == module.__name__]
        if len(found) != 1:
            raise TypeError(f"{settings['module']} defines {len(found)} Bot subclasses: name the one to play")
        bot_class = found[0]
    player = ConnectXPlayer(bot_class(**settings.get("options", {})), int(settings.get("seed", 0)))
    player.warm_up(Rules(**settings["rules"]))
    return player
