"""The typed rows the store reads and writes: plain, frozen values, one per kind of
row, and what can be said of one without the database (a game's rules, a
submitted file's description)."""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from typing import Any, NamedTuple

from arena.engine.game import Rules, format_moves, move_names
from arena.errors import ArenaError
from arena.records import BotLog, Frame, GameRecord, GameSpec, Outcome, RefereedGame, Termination
from arena.text import json_text, storable

#: The spec stored for a player an imported game's file does not name. Such a
#: player is no league entrant: its games count in no table (see league/selection.py).
UNNAMED = "unnamed"


class StoreError(ArenaError):
    """A database the arena cannot use, or a lookup that finds nothing."""


class StoreWriteFailed(StoreError):
    """The database could not be written (its disk full, its file gone or made
    read-only): nothing of the failed write is in it; what was written before is."""


class StoreBusy(StoreWriteFailed):
    """Another connection held the database's write lock for longer than this one
    waits for it (the busy timeout): nothing of this write is stored; try it again."""


class StoreFull(StoreWriteFailed):
    """The disk holding the database is full (or the file reached its size limit):
    nothing of the failed write is stored; free space and run the same command again."""


class StoreReadOnly(StoreWriteFailed):
    """The database cannot be written at all (read-only media, a file or folder this
    user may not write): a command that stores something is refused before it starts."""


@dataclass(frozen=True)
class Submission:
    """A submitted bot: one version of its code, kept in the database."""

    name: str
    version: int
    kind: str  # "bot" (a Bot subclass) or "connectx" (an agent function)
    source: str
    content_hash: str
    file: str
    submitted_at: str
    class_name: str | None = None  # the Bot subclass it plays, in a file that has several
    id: int | None = None
    user_id: int | None = None  # the account that submitted it (None: from the organiser's terminal)
    about: str | None = None  # what its author says it is
    language: str | None = None  # a program bot's (arena.entry.languages); None: a Python bot
    program: str | None = None  # a program bot's command, a JSON list of words
    build_log: str | None = None  # what its build printed (hostile: shown escaped, to its author)

    @property
    def is_program(self) -> bool:
        return self.program is not None

    @property
    def spec(self) -> str:
        return f"{self.name}@v{self.version}"

    @property
    def description(self) -> str:
        """The first docstring line of the class it plays (or of its ConnectX agent),
        read from the stored source without running it; "" when there is none (a program bot's)."""
        if self.is_program:
            return ""
        return code_description(self.source, self.kind, self.class_name)


@dataclass(frozen=True)
class StoredTournament:
    """A row of the tournaments table."""

    id: int
    name: str
    format: str
    config: str  # JSON: the definition as given
    identity: str  # JSON: what makes a resumed run the same tournament
    rules: str  # JSON: Rules.as_dict(); see rules_of
    seed: int
    status: str  # "running", "interrupted" or "finished"
    created_at: str
    finished_at: str | None


@dataclass(frozen=True)
class StoredGame:
    """A stored game, with its tournament's name and rules and its bots' specs."""

    id: int
    tournament: str
    key: str
    first: str  # bot spec of the first player (X)
    second: str
    result: str  # "1-0", "0-1" or "1/2-1/2"
    winner: int | None  # 0 (first), 1 (second) or None (a draw, or unfinished)
    termination: str
    reason: str | None
    plies: int | None
    opening: str | None  # move string of the opening
    opening_plies: int | None
    moves: str | None  # move string of the whole game, opening included
    duration: float | None
    seed: int | None
    finished_at: str | None
    rules: str  # JSON: Rules.as_dict(); see rules_of
    first_hash: str = ""  # hash of the first player's code ("" where it is not known: people, imports)
    second_hash: str = ""

    @property
    def finished(self) -> bool:
        """False for a casual game saved before its end, which counts in no table."""
        return self.termination != Termination.UNFINISHED

    @property
    def has_unnamed_player(self) -> bool:
        """An imported game whose file did not name a player: it counts in no table."""
        return UNNAMED in (self.first, self.second)

    def _repr_html_(self) -> str:
        """The game as the league site's animated replay (what a notebook shows): its
        moves and how it ended; each move's time and info are in the store
        (``store.games.moves(id)``), not in this row."""
        from arena.engine.game import parse_moves
        from arena.render.replay import replay_html

        rules = rules_of(self)
        return replay_html(
            rules, parse_moves(self.moves or "", rules), (self.first, self.second),
            self.result if self.finished else "*", self.termination, self.reason,
            opening_plies=self.opening_plies or 0,
        )


@dataclass(frozen=True)
class StoredMove:
    """One move of a stored game."""

    game_id: int
    ply: int  # 0 is the first move, openings included
    move: str  # in the game's notation (a column, or a cell without gravity)
    ms: float | None  # thinking time; None for opening moves and people
    info: str | None  # JSON: what the bot said about the move


@dataclass(frozen=True)
class BotIdentity:
    """How a bot is recorded: its spec and where its code came from."""

    spec: str
    name: str
    options: dict[str, str]
    source: str
    content_hash: str = ""


@dataclass(frozen=True)
class User:
    """An account of the open league. The password and the API token are kept only as hashes."""

    id: int
    name: str
    password_hash: str
    token_hash: str
    admin: bool
    disabled: bool
    created_at: str
    must_change_password: bool = False  # signed in with an issued password: must choose its own first

    @classmethod
    def of(cls, row: dict[str, Any]) -> User:
        return cls(row["id"], row["name"], row["password_hash"], row["token_hash"] or "", bool(row["admin"]),
                   bool(row["disabled"]), row["created_at"], bool(row.get("must_change_password")))


@dataclass(frozen=True)
class League:
    """A long-lived competition: its settings (a tournament file's keys), and the
    tournament row its games are stored under, so every table works for it."""

    id: int
    name: str
    config: dict[str, Any]
    tournament_id: int
    public_code: bool  # everyone may read every entrant's code (after a class competition, say)
    closed: bool  # only its members may submit
    created_at: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> League:
        return cls(row["id"], row["name"], json.loads(row["config"]), row["tournament_id"], bool(row["public_code"]),
                   bool(row["closed"]), row["created_at"])


@dataclass(frozen=True)
class Entry:
    """A bot in a league: an installed bot's spec, or one submitted version (``name@vN``)."""

    id: int
    league_id: int
    spec: str
    submission_id: int | None
    user_id: int | None
    status: str  # "active", "retired", "failed", or behind a league's gate "testing" or "rejected"
    checks: str  # the submission checks' report, as text
    joined_at: str
    retired_at: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> Entry:
        return cls(row["id"], row["league_id"], row["spec"], row["submission_id"], row["user_id"], row["status"],
                   row["checks"] or "", row["joined_at"], row["retired_at"])


@dataclass(frozen=True)
class GateTest:
    """A league's sequential test of a new version (``entry_id``) against its author's
    previous one, whose games are stored under the tournament row ``tournament_id``."""

    entry_id: int
    league_id: int
    previous_entry_id: int
    tournament_id: int
    sprt: str  # the test's bounds, as ``Sprt.parse`` reads them
    max_pairs: int
    status: str  # "running", "accepted", "rejected", or "withdrawn" (a newer version came first)
    reason: str | None  # how it was decided, in words (shown to its author)
    started_at: str
    decided_at: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> GateTest:
        return cls(row["entry_id"], row["league_id"], row["previous_entry_id"], row["tournament_id"], row["sprt"],
                   row["max_pairs"], row["status"], row["reason"], row["started_at"], row["decided_at"])


@dataclass(frozen=True)
class EntrantGame:
    """One game of an entrant, from its side."""

    id: int
    opponent: str  # the other bot's spec
    moved_first: bool
    result: str  # "1-0", "0-1" or "1/2-1/2", first player first
    winner: int | None  # 0 (first), 1 (second) or None
    termination: str
    reason: str | None
    finished_at: str | None

    @property
    def outcome(self) -> str:
        """"won", "drew" or "lost", for the entrant."""
        if self.winner is None:
            return "drew"
        return "won" if (self.winner == 0) == self.moved_first else "lost"


@dataclass(frozen=True)
class EntrantRecord:
    """How one bot did in one tournament or league (see :meth:`Leagues.entrant_record`)."""

    spec: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: list[tuple[str, int]] = field(default_factory=list)  # (reason, games lost so), most first
    recent: list[EntrantGame] = field(default_factory=list)  # newest first

    @property
    def forfeited(self) -> int:
        return sum(count for _, count in self.forfeits)


@dataclass(frozen=True)
class CountedSummary:
    """The games that count in a table, described (see :meth:`Results.summary`)."""

    games: int
    tournament_ids: list[int]  # those the games come from, oldest first
    rules: list[str]  # JSON of each distinct rules, in the order their first game was stored
    bots: list[tuple[int, str, str]]  # (id, spec, content hash) of each bot that played one


@dataclass(frozen=True)
class StoredBot:
    """A row of the bots table: one spec as played by one code."""

    id: int
    spec: str
    name: str  # the bot's name in the spec (a plug-in's, a submission's with its version, a file's stem)
    options: str  # JSON: the options the spec gave
    source: str  # where the code came from: a distribution and version, a file, "submitted NAME@vN", ...
    content_hash: str  # sha256 of the code ("" for a plug-in: its distribution version says which code)


@dataclass(frozen=True)
class OpeningCounts:
    """One opening of a pair's games: the first bot's wins, draws and losses when it
    moved first and when it moved second."""

    opening: str  # its moves ("" for games played from the empty board)
    first: tuple[int, int, int]
    second: tuple[int, int, int]


@dataclass(frozen=True)
class VoidGame:
    """A game during which the arena failed: in no table, played again; kept with why."""

    id: int
    tournament: str
    key: str
    first: str  # bot specs
    second: str
    reason: str  # "the arena failed: ..."
    plies: int | None  # how far it had gone
    moves: str | None
    finished_at: str


class FinishedGame(NamedTuple):
    """A finished game as the store writes it: its games row but for the ids the
    database gives (its own, the tournament's, the bots': by spec here), and its
    move rows but for the game's id. Made where the game was played, so that the
    one writer only inserts; it crosses processes as plain values."""

    key: str
    pairing: str
    first: str  # bot specs
    second: str
    opening: str  # in the notation, as are the moves
    opening_plies: int
    result: str
    winner: int | None
    termination: str
    reason: str | None
    plies: int
    moves: str
    duration: float
    seed: int
    finished_at: str
    # The move rows, column by column (the ply, the move in the notation, the
    # milliseconds the bot took, its info as JSON; no info column when no move has
    # any): the writer zips them into rows in C, and they pickle small.
    move_plies: tuple[int, ...]
    move_names: tuple[str, ...]
    move_ms: tuple[float | None, ...]
    move_info: tuple[str | None, ...] | None
    # The bot_logs rows but for the game's id: (side, text, plies as JSON, cut,
    # crash, traceback as JSON); None when neither bot wrote anything.
    logs: tuple[tuple[int, str, str, int, str | None, str | None], ...] | None = None

    @classmethod
    def of(cls, record: GameRecord) -> FinishedGame:
        moves = record.moves
        infos = [move.info for move in moves]
        return cls._made(record.spec, record.outcome, tuple([move.ply for move in moves]),
                         [move.move for move in moves], tuple([move.ms for move in moves]),
                         None if infos.count(None) == len(infos) else infos,
                         record.duration, record.finished_at, record.logs)

    @classmethod
    def of_refereed(cls, game: RefereedGame) -> FinishedGame:
        """:meth:`of` the record of ``game``, without making it (a worker's every game)."""
        spec, outcome, moves, ms, infos, duration, finished_at, logs = game
        plies = tuple(range(len(moves)))
        return cls._made(spec, outcome, plies, moves, tuple(ms),
                         [infos.get(ply) for ply in plies] if infos else None, duration, finished_at, logs)

    @classmethod
    def _made(
        cls, spec: GameSpec, outcome: Outcome, plies: tuple[int, ...], moves: list[int],
        ms: tuple[float | None, ...], infos: list[dict[str, Any] | None] | None,
        duration: float, finished_at: float, logs: tuple[BotLog | None, BotLog | None],
    ) -> FinishedGame:
        """The rows of a game whose infos are None where no move has one."""
        names, joiner = _notation(spec.rules)
        played = tuple([names[move] for move in moves])
        # strict JSON: a NaN a bot reported is null
        info_texts = None if infos is None else tuple([None if info is None else json_text(info) for info in infos])
        return tuple.__new__(cls, (  # skips NamedTuple's Python-level __new__: one a game
            spec.key, spec.pairing, spec.first, spec.second,
            joiner.join([names[move] for move in spec.opening]), len(spec.opening),
            outcome.result, outcome.winner, str(outcome.termination), outcome.reason, len(played),
            joiner.join(played), round(duration, 6), spec.seed, stored_time(finished_at),
            plies, played, ms, info_texts, _log_rows(logs),
        ))

    def storable(self) -> FinishedGame:
        """This game with every text it stores made storable (:func:`arena.text.storable`):
        itself when there is nothing to change, as nearly always.

        The referee makes what a bot says storable as it enters a record; this is
        the store's own last line, for a game made anywhere else. A lone surrogate
        would fail the whole batch's transaction, losing every game in it, and a
        resumed run would fail on it again. A surrogate in an info's JSON is an
        escape (``\\ud800``): harmless to store, it reads back as a surrogate that no
        page can show, so such an info is written again without it. The bot specs
        are kept as they are: the writer looks their ids up by them, and they are
        the organiser's, never a bot's.
        """
        infos = [info for info in self.move_info or () if info is not None]
        logs = [part for _, text, _, _, crash, frames in self.logs or () for part in (text, crash or "", frames or "")]
        try:
            joined = "".join([self.key, self.pairing, self.opening, self.result, self.termination,
                              self.reason or "", self.moves, self.finished_at, *self.move_names, *infos, *logs])
        except TypeError:  # a value that is no text: looked at one by one below (the database judges it)
            joined = "\\ud"
        if joined.isascii() and "\\ud" not in joined:
            return self
        made: dict[str, Any] = {name: storable(value) for name, value in zip(self._fields, self)
                if isinstance(value, str) and name not in ("first", "second")}
        return self._replace(
            **made, move_names=storable(self.move_names),
            move_info=None if self.move_info is None else tuple([_storable_json(info) for info in self.move_info]),
            logs=None if self.logs is None else tuple(
                (side, storable(text), plies, cut, storable(crash), _storable_json(frames))
                for side, text, plies, cut, crash, frames in self.logs),
        )

    def move_rows(self, game_id: int) -> Iterator[tuple[int, int, str, float, str | float]]:
        """The rows of the moves table, once the game has its id, with :data:`NULL`
        for every missing value (a move's milliseconds in the opening, its info)."""
        infos = bindable(self.move_info) if self.move_info is not None else repeat(NULL)
        return zip(repeat(game_id), self.move_plies, self.move_names, bindable(self.move_ms), infos)

    def game_row(self, game_id: int, tournament_id: int, bot_ids: dict[str, int]) -> tuple[Any, ...]:
        """The row of the games table, with :data:`NULL` for a missing value (a draw's
        winner, the reason of most games)."""
        return (game_id, tournament_id, self.key, self.pairing, bot_ids[self.first], bot_ids[self.second],
                *bindable(tuple.__getitem__(self, GAME_COLUMNS)))


#: What the writer binds for a missing value: SQLite stores a NaN as NULL, the same
#: row None gives, but Python's sqlite3 binds a float directly where None first goes
#: through its adaptation lookup, which costs about a microsecond a value, more than
#: the rest of the value's insert; a random game's moves have twenty-odd missing infos.
NULL = math.nan


def bindable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` with :data:`NULL` for None (itself when there is none)."""
    return tuple([NULL if value is None else value for value in values]) if None in values else values


def _log_rows(
    logs: tuple[BotLog | None, BotLog | None],
) -> tuple[tuple[int, str, str, int, str | None, str | None], ...] | None:
    """The bot_logs rows of a game's logs (but for its id); None for none."""
    if logs == (None, None):
        return None
    return tuple(
        (side, log.text, json_text([list(ply) for ply in log.plies]), int(log.cut), log.crash,
         json_text([list(frame) for frame in log.frames]) if log.frames or log.crash else None)
        for side, log in enumerate(logs) if log is not None)


@dataclass(frozen=True)
class StoredLog:
    """What one bot wrote in a stored game (see :class:`~arena.records.BotLog`)."""

    game_id: int
    side: int  # 0: the first player's bot
    log: BotLog


def stored_log(row: tuple[Any, ...]) -> StoredLog:
    """A bot_logs row (game_id, side, text, plies, cut, crash, traceback) read back."""
    game_id, side, text, plies, cut, crash, frames = row
    try:
        ply_offsets = tuple((ply if isinstance(ply, int) else str(ply), int(offset))
                            for ply, offset in json.loads(plies or "[]"))
        made = tuple(Frame(str(f[0]), int(f[1]), str(f[2]), str(f[3])) for f in json.loads(frames or "[]"))
    except (ValueError, TypeError, IndexError):  # a row written by hand: its text is still shown
        ply_offsets, made = (("start", 0),) if text else (), ()
    return StoredLog(game_id, side, BotLog(text or "", ply_offsets, bool(cut), crash, made))


def _storable_json(text: str | None) -> str | None:
    """A JSON text with no surrogate in it, escaped or not: the value it holds,
    made storable and written again, where it held one."""
    if not isinstance(text, str):
        return text
    text = storable(text)
    if "\\ud" not in text:
        return text
    try:
        value = json.loads(text)
        made = storable(value)
        return text if made is value else json_text(made)
    except Exception:  # no JSON after all (or too deep to read): kept as the text it is
        return text


#: The fields of a FinishedGame that go into its games row as they are.
GAME_COLUMNS = slice(FinishedGame._fields.index("opening"), FinishedGame._fields.index("move_plies"))


@lru_cache(maxsize=64)
def _notation(rules: Rules) -> tuple[tuple[str, ...], str]:
    """The name of each move, and what goes between them in a move string (as
    :func:`~arena.engine.game.format_moves` writes them), made once per rules."""
    names = move_names(rules)
    two = format_moves((0, 0), rules)  # the notation's own choice, read back: "11" or "1,1"
    return names, two[len(names[0]):len(two) - len(names[0])]


#: One parse at a time: CPython 3.11's parser counts its recursion depth per
#: interpreter, not per thread, and two threads parsing at once (the site's request
#: threads listing submitted bots) can fail with "AST constructor recursion depth
#: mismatch" (a SystemError, CPython gh-106905).
_PARSING = threading.Lock()


def code_description(source: str, kind: str, class_name: str | None = None) -> str:
    """The first docstring line of a bot file's Bot subclass (``class_name``, or its
    only one) or, for a ``connectx`` file, of ``agent`` (else its last function), as
    the sandbox would pick them (an agent without a docstring: the file's); found by
    parsing, never by running the code."""
    import ast  # only listing submitted bots needs it

    try:
        with _PARSING:
            module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the parser's word for nested too deep
        return ""
    body = module.body
    node: ast.AST | None = None
    if kind == "connectx":
        functions = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        named = [f for f in functions if f.name == "agent"]
        node = (named or functions)[-1] if functions else None
    else:
        bots: dict[str, ast.ClassDef] = {}
        for cls in (n for n in body if isinstance(n, ast.ClassDef)):  # in file order: subclasses of bots too
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                     for b in cls.bases}
            if "Bot" in bases or bases & set(bots):
                bots[cls.name] = cls
        node = bots.get(class_name) if class_name else (next(iter(bots.values())) if len(bots) == 1 else None)
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    doc = (ast.get_docstring(node) or (ast.get_docstring(module) if kind == "connectx" else "") or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def rules_of(row: StoredGame | StoredTournament) -> Rules:
    """The Rules stored with a game or tournament."""
    return Rules(**json.loads(row.rules))


def stored_time(seconds: float) -> str:
    """A time (seconds since the epoch) as the games table stores it: ISO 8601 in UTC,
    to the millisecond, which sorts as the times do:
    ``datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")``.

    Every stored game has one, and a short game is over in a fraction of a
    millisecond: the text of the whole second is made once per second, and only
    the milliseconds after it for each game (rounded to the microsecond first,
    half to even, as datetime does)."""
    whole = math.floor(seconds)
    micro = round((seconds - whole) * 1e6)  # exact: whole is 0 or within a factor of two of seconds
    if micro == 1_000_000:
        whole, micro = whole + 1, 0
    global _SECOND
    second = _SECOND  # one tuple, read and replaced whole: threads may share it
    if second[0] != whole:
        second = _SECOND = (whole, dt.datetime.fromtimestamp(whole, dt.UTC).isoformat()[:-6])
    return second[1] + _MILLISECONDS[micro // 1000]


#: The last whole second stored_time wrote, and its text (without the offset).
_SECOND: tuple[float, str] = (math.nan, "")
#: The end of a stored time after its whole second, for each millisecond: looked up,
#: not formatted, for every game.
_MILLISECONDS = tuple(f".{milli:03d}+00:00" for milli in range(1000))
