"""The bot contract: what a bot is given and what it answers.

A bot is a subclass of :class:`Bot` with a ``choose_move(board)`` method. The board
is the bot's own copy, so a bot may play and undo on it freely. The answer is a
move (an ``int``, see :mod:`arena.engine.game`) or a :class:`Choice` carrying the move and
whatever the bot wants logged beside it (score, depth, nodes...). A bot that declares
``choose_move(self, board, limit)`` is also given the :class:`Limit` of the move (its
time, what is left of its bank); ``self.time_allowed`` holds the same time for bots
that do not.

Options are class attributes, ``depth = Option(4, "search depth in plies")``;
``minimax:depth=6`` on the command line becomes ``Minimax(depth=6)``, and
``self.depth`` is then ``6``, typed ``int``. The class attribute ``options``
lists them all, inherited ones included. The older style, a dict
``options = {"depth": Option(4, "...")}``, still works as it always did.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, ClassVar, Generic, TypeVar, overload

from arena.engine.game import CONNECT_FOUR, Board, Rules
from arena.errors import ArenaError
from arena.text import clip

T = TypeVar("T")


class BotOptionError(ArenaError):
    """An option a bot does not have, or a value of the wrong kind."""


class BotFailure(Exception):
    """The bot failed in a way that forfeits the game; ``reason`` says how.

    The referee records ``reason`` as the forfeit reason as it is, so it is written
    for the game record ("time: no answer within 1 s", "exited with code 1").
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Option(Generic[T]):
    """One bot option: its default (whose type the given value must have) and help.

    Declared as a class attribute of a bot, it is a descriptor: read on the class
    (``Minimax.depth``) it is the Option; read on a bot it is that bot's value,
    which :class:`Bot` keeps in the bot's own ``__dict__``. Having no ``__set__``,
    it is a non-data descriptor, so the instance's value wins the lookup and no
    ``__get__`` call is paid per read. (CPython 3.11 still does not specialise such
    reads: one costs some 15 ns more than a plain attribute's, so a search loop
    copies an option into a local first, as the MCTS bot does with ``c``.)
    """

    default: T
    help: str = ""
    #: The attribute name it was declared under (empty in a dict of options).
    name: str = field(default="", init=False, compare=False, repr=False)

    def __set_name__(self, owner: type, name: str) -> None:
        object.__setattr__(self, "name", name)  # frozen: this is its one late field

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Option[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Option[T] | T:
        if instance is None:
            return self
        # Only reached while the bot's __dict__ has no value: before Bot.__init__,
        # or for an option that a dict-style subclass left out of its options.
        raise AttributeError(
            f"{type(instance).__name__!r} bot has no value for option {self.name!r}: "
            f"Bot.__init__ sets the options its class lists"
        )

    @property
    def kind(self) -> type[T]:
        """The type every value of the option has: its default's."""
        return type(self.default)

    def convert(self, name: str, value: Any) -> T:
        """Turn a command-line string (or a TOML value) into the option's type."""
        kind = self.kind
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)  # type: ignore[return-value]  # T is float here
        if isinstance(value, str):
            try:
                if kind is bool:
                    return _parse_bool(value)  # type: ignore[return-value]  # T is bool here
                if kind in (int, float):
                    return kind(value)  # type: ignore[call-arg]  # int or float from text
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


@dataclass(frozen=True, slots=True)
class Limit:
    """What one move may take, given to a bot that declares ``choose_move(self, board, limit)``.

    ``move_seconds``: the time for this move (None: no limit); ``bank_seconds``: what
    is left of the bot's bank, which an overrun draws on (None: the game has no bank);
    ``nodes``: a node budget (None: none).
    """

    move_seconds: float | None = None
    bank_seconds: float | None = None
    nodes: int | None = None

    @property
    def time_allowed(self) -> float | None:
        """The most this move may take: its time plus what is left of the bank (None:
        no limit). The number :attr:`Bot.time_allowed` holds for this move."""
        if self.move_seconds is None:
            return None
        return self.move_seconds + (self.bank_seconds if self.bank_seconds is not None else 0.0)


#: The limit of a move that has none.
NO_LIMIT = Limit()


@dataclass
class Choice:
    """A bot's answer: the move, plus info to log (e.g. score, depth, nodes)."""

    move: int
    info: dict[str, Any] = field(default_factory=dict)


class Bot:
    """Base class of every bot. Override ``choose_move``; declare options as
    class attributes (``depth = Option(4, "search depth in plies")``)."""

    #: Short name used in bot specs when the bot is not installed as a plug-in.
    name: ClassVar[str] = ""
    #: ``{option name: Option(default, help)}``, read-only: the options the class
    #: declares and those it inherits. Built for each class when it is defined.
    options: ClassVar[Mapping[str, Option[Any]]] = MappingProxyType({})
    # What this class itself declares: whether it lists all its options (the dict
    # style), and those options. Kept because ``options`` is replaced by the
    # collected mapping, and subclasses collect from it.
    _declared_options: ClassVar[tuple[bool, Mapping[str, Option[Any]]]] = (False, MappingProxyType({}))
    #: True: one bot of this class may play many games, one after another. Its
    #: ``new_game`` starts each game afresh (nothing of one game carries into the
    #: next) and ``close`` leaves it able to play another. A tournament then builds
    #: the bot once for a run of games instead of once for every game (a bot that
    #: forfeits is built anew). False, the default: a fresh bot for every game.
    reusable: ClassVar[bool] = False
    #: True: ``choose_move`` only reads the board it is given, never plays on it nor
    #: keeps it once it has answered. The referee then hands it its own board, made
    #: read-only (playing on it raises TypeError), instead of a copy of it for every
    #: move. False, the default: the bot's own copy, to play on and keep as it likes.
    reads_board_only: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._declared_options = _declared_in(cls)
        cls.options = _collect_options(cls)

    def __init__(self, **options: Any) -> None:
        unknown = sorted(options.keys() - self.options.keys()) if options else ()
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise BotOptionError(
                f"unknown option {unknown[0]!r} for bot {self.bot_name()!r}; "
                f"valid options: {valid}"
            )
        for key, option in self.options.items():
            # Into the bot's own __dict__, where it wins over the class's Option. A
            # default is of its option's type by definition: only given values are
            # converted (a tournament builds two bots per game).
            setattr(self, key, option.convert(key, options[key]) if key in options else option.default)
        self.rules = CONNECT_FOUR  # until new_game: rules are immutable, one is shared
        self.player = 0
        #: Seconds this move may take (set before each move by whoever runs the bot, from
        #: the move's :class:`Limit`: its ``time_allowed``; None: no limit).
        self.time_allowed: float | None = None

    @classmethod
    def bot_name(cls) -> str:
        return cls.name or cls.__name__.lower()

    @classmethod
    def description(cls) -> str:
        """First line of the class docstring."""
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    @cached_property
    def rng(self) -> random.Random:
        """The bot's random numbers: seeded with the game's seed (:meth:`new_game`);
        before any game, with 0. Made on first use in a game, not when the game
        starts: seeding a Mersenne Twister costs about 4.5 µs, as long as a move of
        a simple bot, and a bot that never draws (a search) should not pay it
        twice a game."""
        return random.Random(self.__dict__.get("_rng_seed", 0))

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        """Called before each game: the rules, which side the bot plays, its seed.

        Bots that keep state between moves extend this (call super()).
        """
        self.rules = rules
        self.player = player
        self._rng_seed = seed
        self.__dict__.pop("rng", None)  # the last game's: the next use seeds it anew

    def begin_game(self, rules: Rules, player: int, seed: int) -> None:
        """First half of starting a game, for the referee: begin getting ready.

        The referee begins every bot of a game, then finishes starting every bot
        (:meth:`finish_start`), so a bot that gets ready in the background (a
        sandboxed bot starts a process) does so while the other one prepares. By
        default nothing happens yet: the game is remembered for ``finish_start``.
        """
        self._starting: tuple[Rules, int, int] | None = (rules, player, seed)

    def finish_start(self) -> None:
        """Second half of starting a game: return once the bot is ready to move.

        Raises :class:`BotFailure` if it never will be. By default this is
        :meth:`new_game` with the game given to :meth:`begin_game`.
        """
        starting = getattr(self, "_starting", None)
        if starting is not None:
            self._starting = None
            self.new_game(*starting)

    def choose_move(self, board: Board) -> int | Choice:
        """Return the move to play in ``board`` (the bot's own copy).

        A bot may declare ``choose_move(self, board, limit)`` instead: it is then given
        the move's :class:`Limit` too."""
        raise NotImplementedError

    def close(self) -> None:
        """Called when the game is over; release anything held (processes, files)."""


def _declared_in(bot_class: type[Bot]) -> tuple[bool, Mapping[str, Option[Any]]]:
    """The options ``bot_class`` declares in its own body, and whether it lists
    them all (a dict ``options``, which as ever replaces the inherited ones)."""
    listed = vars(bot_class).get("options")
    attributes = _option_attributes(bot_class)
    if not isinstance(listed, Mapping):
        return False, MappingProxyType(attributes)
    return True, MappingProxyType({**listed, **attributes})


def _option_attributes(klass: type) -> dict[str, Option[Any]]:
    """The options declared as class attributes in ``klass``'s own body."""
    found = {key: value for key, value in vars(klass).items() if isinstance(value, Option)}
    taken = sorted(set(found) & _reserved_names())
    if taken:
        raise BotOptionError(
            f"bot class {klass.__name__!r} declares an option named {taken[0]!r}, a name the Bot class "
            "uses itself: give the option another name"
        )
    return found


def _reserved_names() -> set[str]:
    """What Bot itself defines or sets on every bot: an option of that name would
    replace it (``name = Option(...)`` would break ``bot_name()``)."""
    return {name for name in dir(Bot) if not name.startswith("__")} | {"rules", "player", "rng", "time_allowed"}


def _collect_options(bot_class: type[Bot]) -> Mapping[str, Option[Any]]:
    """Every option of ``bot_class``, from its most distant base on, so that a
    subclass's declaration overrides a base's."""
    collected: dict[str, Option[Any]] = {}
    for klass in reversed(bot_class.__mro__):
        if issubclass(klass, Bot):
            lists_all, declared = vars(klass)["_declared_options"]
        else:  # a mixin: its Option attributes are options too
            lists_all, declared = False, _option_attributes(klass)
        if lists_all:
            collected = {}
        collected.update(declared)
    return MappingProxyType(collected)


def describe_non_move(answer: object) -> str:
    """A bot's answer that is not an int, for a forfeit reason: "'4' (str)"."""
    return f"{clip(repr(answer), 60)} ({type(answer).__name__})"


def split_answer(answer: object) -> tuple[object, dict[str, Any]]:
    """(move, info) from whatever a bot returned; info must be a dict of JSON values."""
    if isinstance(answer, Choice):
        info = answer.info if isinstance(answer.info, dict) else {}
        return answer.move, info
    return answer, {}


@dataclass(frozen=True)
class Program:
    """An installed bot that is a program of the bot protocol (docs/protocol.md), in
    any language: a plug-in's entry point (group ``arena.bots``) names one of these
    instead of a :class:`Bot` subclass. ``path``: a folder with a ``bot.toml``, or an
    executable file. It plays sandboxed, like every program."""

    path: str
    description: str = ""
