"""The bot contract: what a bot is given and what it answers.

A bot is a subclass of :class:`Bot` with a ``choose_move(board)`` method. The board
is the bot's own copy, so a bot may play and undo on it freely. The answer is a
move (an ``int``, see :mod:`arena.engine.game`) or a :class:`Choice` carrying the move and
whatever the bot wants logged beside it (score, depth, nodes...).

Options are declared in the class attribute ``options`` as
``{name: Option(default, "help")}``; ``minimax:depth=6`` on the command line
becomes ``Minimax(depth=6)``, and the values are available as attributes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from arena.engine.game import Board, Rules
from arena.text import clip


class BotOptionError(ValueError):
    """An option a bot does not have, or a value of the wrong kind."""


@dataclass(frozen=True)
class Option:
    """One bot option: its default (whose type the given value must have) and help."""

    default: Any
    help: str = ""

    @property
    def kind(self) -> type:
        return type(self.default)

    def convert(self, name: str, value: Any) -> Any:
        """Turn a command-line string (or a TOML value) into the option's type."""
        kind = self.kind
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                if kind is bool:
                    return _parse_bool(value)
                if kind in (int, float):
                    return kind(value)
            except ValueError:
                pass
        raise BotOptionError(
            f"option {name}={value!r} must be {kind.__name__} (default {self.default!r})"
        )


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


@dataclass
class Choice:
    """A bot's answer: the move, plus info to log (e.g. score, depth, nodes)."""

    move: int
    info: dict[str, Any] = field(default_factory=dict)


class Bot:
    """Base class of every bot. Override ``choose_move``; declare ``options``."""

    #: Short name used in bot specs when the bot is not installed as a plug-in.
    name: ClassVar[str] = ""
    #: ``{option name: Option(default, help)}``
    options: ClassVar[dict[str, Option]] = {}

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise BotOptionError(
                f"unknown option {unknown[0]!r} for bot {self.bot_name()!r}; "
                f"valid options: {valid}"
            )
        for key, option in self.options.items():
            value = options.get(key, option.default)
            setattr(self, key, option.convert(key, value))
        self.rules = Rules()
        self.player = 0
        self.rng = random.Random(0)
        #: Seconds this move may take (set by the referee before each move; None: no limit).
        self.time_allowed: float | None = None

    @classmethod
    def bot_name(cls) -> str:
        return cls.name or cls.__name__.lower()

    @classmethod
    def description(cls) -> str:
        """First line of the class docstring."""
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        """Called before each game: the rules, which side the bot plays, its seed.

        Bots that keep state between moves extend this (call super()).
        """
        self.rules = rules
        self.player = player
        self.rng = random.Random(seed)

    def choose_move(self, board: Board) -> int | Choice:
        """Return the move to play in ``board`` (the bot's own copy)."""
        raise NotImplementedError

    def close(self) -> None:
        """Called when the game is over; release anything held (processes, files)."""


def describe_non_move(answer: object) -> str:
    """A bot's answer that is not an int, for a forfeit reason: "'4' (str)"."""
    return f"{clip(repr(answer), 60)} ({type(answer).__name__})"


def split_answer(answer: object) -> tuple[object, dict[str, Any]]:
    """(move, info) from whatever a bot returned; info must be a dict of JSON values."""
    if isinstance(answer, Choice):
        info = answer.info if isinstance(answer.info, dict) else {}
        return answer.move, info
    return answer, {}
