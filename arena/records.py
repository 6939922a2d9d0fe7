"""Plain data every layer shares: what a game is, how it ended, how it went, and
what a bot process runs under.

This module imports nothing but the standard library and :mod:`arena.engine.game`
(a game's replay, drawn for a notebook, loads :mod:`arena.render` when it is asked for).
The spawner and every bot process load it (for :class:`BotCode` and
:class:`Limits`), and the league reads and writes records without loading the
referee, the plug-ins or the sandbox.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, NamedTuple

from arena.engine.game import Rules


class Termination(enum.StrEnum):
    """Why a game ended. The values are the text stored in the database and
    written in game files, so they never change."""

    WIN = "win"  # a player completed a line (or had more windows, when counting)
    DRAW = "draw"
    FORFEIT = "forfeit"  # a bot crashed, answered a non-move or an illegal one, or overran its clock
    UNFINISHED = "unfinished"  # a casual game saved before its end; it counts in no table
    VOID = "void"  # the arena failed (not a bot): kept apart with why, counts in no table, played again
    # The solver proved the position's value before the end, and the game ended with
    # that result (opt-in: --adjudicate). Counts in every table as a win or draw does.
    ADJUDICATED = "adjudicated"


#: The result of a finished game, by winner (0 first player, 1 second, None a draw).
RESULTS: dict[int | None, str] = {0: "1-0", 1: "0-1", None: "1/2-1/2"}
#: The terminations of games that have no result. (Reading a member of an enum is a
#: lookup through its class in Python 3.11, slower than a module's name; a result is
#: read for every game stored.)
_NO_RESULT = (Termination.UNFINISHED, Termination.VOID)
#: The result of a game that has not ended.
UNFINISHED_RESULT = "*"


@dataclass(frozen=True)
class Outcome:
    """How a game ended: who won (0 first player, 1 second, None nobody), why,
    and for a forfeit what the loser did wrong."""

    winner: int | None
    termination: Termination
    reason: str | None = None

    @classmethod
    def of_result(cls, result: str, termination: Termination, reason: str | None = None) -> Outcome:
        """The outcome whose :attr:`result` is ``result`` ("1-0", "0-1" or "1/2-1/2")."""
        for winner, text in RESULTS.items():
            if text == result:
                return cls(winner, termination, reason)
        raise ValueError(f"not the result of a finished game: {result!r}")

    @property
    def result(self) -> str:
        """"1-0", "0-1" or "1/2-1/2"; "*" while the game is unfinished."""
        if self.termination in _NO_RESULT:
            return UNFINISHED_RESULT
        return RESULTS[self.winner]

    def score(self, player: int) -> float:
        """1, 0.5 or 0 for ``player`` (0 first, 1 second)."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == player else 0.0


@dataclass(frozen=True)
class TimeControl:
    """Seconds allowed per move, plus an optional bank to draw on for overruns.

    ``move_seconds=None`` means no limit.
    """

    move_seconds: float | None = None
    bank_seconds: float = 0.0

    def describe(self) -> str:
        """"no limit", or e.g. "1 s/move + 5 s bank"."""
        if self.move_seconds is None:
            return "no limit"
        bank = f" + {self.bank_seconds:g} s bank" if self.bank_seconds else ""
        return f"{self.move_seconds:g} s/move{bank}"


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot process may use."""

    memory_mb: int = 1024  # memory of the bot: all its processes together where cgroups count it
    output_kb: int = 1024  # what it may print (stdout and stderr together)
    cpu_seconds: int = 600  # processor time for a whole game (a backstop: moves have clocks)
    start_seconds: float = 10.0  # to load the code and start a game
    move_seconds: float = 60.0  # hard cap per move when the tournament sets none
    processes: int = 64  # processes and threads of the bot at once (where cgroups count them)


class ProgramFile(NamedTuple):
    """One file of a program bot, copied into its folder before it runs."""

    path: str  # relative to the bot's folder, with "/" between folders
    data: bytes
    executable: bool = False


@dataclass(frozen=True)
class BotCode:
    """What the bot process runs: the text of a file, an installed bot class, or a
    program (any language) speaking the protocol on its stdin and stdout."""

    label: str  # file path or entry-point name, for messages
    text: str | None = None  # file bots: the file's Python source
    class_name: str | None = None  # which Bot subclass in the file, if several
    entry_point: str | None = None  # installed bots run isolated: "module:Class"
    program: tuple[str, ...] | None = None  # program bots: the command, run in the bot's folder
    files: tuple[ProgramFile, ...] = ()  # program bots: what its folder holds when it starts

    @property
    def is_program(self) -> bool:
        return self.program is not None


@dataclass(frozen=True)
class GameSpec:
    """Everything needed to play one game, and nothing that is not picklable."""

    key: str  # unique within its tournament
    rules: Rules
    first: str  # bot spec text of the player who moves first
    second: str
    pairing: str  # the two bots' meeting this game belongs to, stored with the game
    opening: tuple[int, ...] = ()
    seed: int = 0
    time_control: TimeControl = TimeControl()
    isolate: bool = False  # run installed bots in their own processes too
    limits: Limits = Limits()  # for sandboxed bots
    # Code of submitted bots, by name; on a cluster also of bot files, by path.
    submitted: tuple[tuple[str, BotCode], ...] = ()
    # (spec, why) of each of its bots that failed its start-up check before the
    # run: it forfeits the game without being started.
    failed_start: tuple[tuple[str, str], ...] = ()
    # The stones on the board from which the solver may end the game with the value
    # it proves (see arena/referee/adjudication.py); None: the game is played out.
    adjudicate: int | None = None

    @property
    def bots(self) -> tuple[str, str]:
        return (self.first, self.second)

    # Specs cross to the workers by the thousand: pickled as their values in field
    # order, not as a dataclass's state, a dict of field names rebuilt key by key
    # (a worker unpickles a spec for 0.65x the work).
    def __reduce__(self) -> tuple[Any, tuple[tuple[Any, ...]]]:
        return (_game_spec, (_spec_values(self),))


_SPEC_FIELDS = tuple(field.name for field in fields(GameSpec))
_spec_values = attrgetter(*_SPEC_FIELDS)


def _game_spec(values: tuple[Any, ...]) -> GameSpec:
    """The spec :meth:`GameSpec.__reduce__` pickled, its fields set as a frozen
    dataclass's own ``__init__`` sets them (past its ``__setattr__``)."""
    spec = object.__new__(GameSpec)
    spec.__dict__.update(zip(_SPEC_FIELDS, values))
    return spec


class Frame(NamedTuple):
    """One frame of a bot's crash, in the bot's own code: the file's name as its
    author knows it (no folder), the line, the function and that line's source."""

    file: str
    line: int
    function: str
    source: str


#: A bot's log is kept to this many bytes per game (what it printed beyond is cut, with a note).
LOG_BYTES = 64 * 1024
#: The ply a bot's output before its first move is attributed to.
START = "start"


@dataclass(frozen=True)
class BotLog:
    """What one bot wrote in one game (its stdout and stderr together, the first
    :data:`LOG_BYTES`), by ply, and where it crashed if it did.

    ``plies`` holds, in order, each ply the bot wrote during (:data:`START` for
    its start, before its first move) with the offset in ``text`` where that
    ply's text begins. Every text is the bot's own: hostile, stored as text.
    """

    text: str = ""
    plies: tuple[tuple[int | str, int], ...] = ()
    cut: bool = False  # it wrote more than LOG_BYTES; the rest is not kept
    crash: str | None = None  # how it crashed: the exception's type and message
    frames: tuple[Frame, ...] = ()  # its crash's frames in its own files, outermost first

    def __bool__(self) -> bool:
        return bool(self.text or self.cut or self.crash)

    def by_ply(self) -> list[tuple[int | str, str]]:
        """(ply or :data:`START`, what the bot wrote during it), in order."""
        bounds = [offset for _, offset in self.plies[1:]] + [len(self.text)]
        return [(ply, self.text[start:end]) for (ply, start), end in zip(self.plies, bounds)]

    def lines(self) -> int:
        """How many lines the bot wrote (a last line without its newline counts)."""
        return self.text.count("\n") + (1 if self.text and not self.text.endswith("\n") else 0)


class MoveRecord(NamedTuple):
    ply: int
    move: int
    ms: float | None  # None for opening plies, which no bot chose
    info: dict[str, Any] | None = None


@dataclass
class GameRecord:
    """How one game went: its outcome and every ply."""

    spec: GameSpec
    outcome: Outcome
    moves: list[MoveRecord] = field(default_factory=list)
    duration: float = 0.0
    finished_at: float = 0.0
    #: What each side's bot wrote (None: nothing, as for nearly every game).
    logs: tuple[BotLog | None, BotLog | None] = (None, None)

    @property
    def winner(self) -> int | None:
        return self.outcome.winner

    @property
    def termination(self) -> Termination:
        return self.outcome.termination

    @property
    def void(self) -> bool:
        """The arena failed during it: it counts for nobody and is played again."""
        return self.outcome.termination == Termination.VOID

    @property
    def reason(self) -> str | None:
        return self.outcome.reason

    @property
    def result(self) -> str:
        return self.outcome.result

    @property
    def plies(self) -> int:
        return len(self.moves)

    def score(self, player: int) -> float:
        """1, 0.5 or 0 for ``player`` (0 first, 1 second)."""
        return self.outcome.score(player)

    def move_list(self) -> list[int]:
        return [m.move for m in self.moves]

    def _repr_html_(self) -> str:
        """The game as the league site's animated replay (what a notebook shows)."""
        from arena.render.replay import replay_html

        spec = self.spec
        return replay_html(
            spec.rules, self.move_list(), spec.bots, self.result, self.termination.value, self.reason,
            opening_plies=len(spec.opening), move_ms=[m.ms for m in self.moves],
            move_info=[m.info for m in self.moves],
        )

    # Records cross process boundaries by the thousand: pickle the moves as plain
    # tuples (plies are implied by position), several times cheaper than objects,
    # and the outcome as its fields (a Termination pickles as a call with its
    # value, made once per message thanks to pickle's memo).
    def __getstate__(self) -> tuple[Any, ...]:
        moves = tuple((m.move, m.ms, m.info) for m in self.moves)
        outcome = self.outcome
        return (
            self.spec, outcome.winner, outcome.termination, outcome.reason,
            moves, self.duration, self.finished_at, self.logs,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.spec, winner, termination, reason, moves, self.duration, self.finished_at, self.logs = state
        self.outcome = Outcome(winner, termination, reason)
        make = tuple.__new__  # skips NamedTuple's Python-level __new__: 5x faster
        self.moves = [make(MoveRecord, (ply, *move)) for ply, move in enumerate(moves)]


class RefereedGame(NamedTuple):
    """A game as the referee leaves it: a :class:`GameRecord` but for its moves, kept
    in columns as they were played. A tournament's worker turns it into the rows the
    store writes without making a :class:`MoveRecord` a ply (a game of random bots
    plays one every few microseconds); :meth:`record` makes the GameRecord."""

    spec: GameSpec
    outcome: Outcome
    moves: list[int]  # every ply's move, the opening's first
    ms: list[float | None]  # what each bot's move took; None for the opening's plies
    infos: dict[int, dict[str, Any]]  # the info of each ply that has one, by ply
    duration: float
    finished_at: float
    logs: tuple[BotLog | None, BotLog | None]

    def record(self) -> GameRecord:
        infos = self.infos
        make = tuple.__new__  # skips NamedTuple's Python-level __new__
        moves = [make(MoveRecord, (ply, move, ms, infos.get(ply)))
                 for ply, (move, ms) in enumerate(zip(self.moves, self.ms))]
        return GameRecord(self.spec, self.outcome, moves, self.duration, self.finished_at, self.logs)
