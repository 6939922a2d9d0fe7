"""A bot the referee can ask for moves: one interface, whatever runs the bot.

:class:`Player` is all the referee knows of a bot: it starts a game (in two
halves, so that two bots get ready side by side), asks ``play(board, limit)`` for
``(move, info)``, reads its ``kind``, and closes it. Behind it:

- :class:`InProcessPlayer`: a trusted Python bot (a :class:`~arena.bot.Bot`, a
  built-in plug-in) called in this process;
- :class:`ProtocolPlayer`: a bot at the other end of a channel that carries protocol
  v1 (:mod:`arena.protocol.messages`: lines of JSON). The sandbox's bot process is
  one (:class:`arena.sandbox.proxy.SandboxedBot`: the channel is a socket to a
  confined process, which runs :mod:`arena.protocol.server` for the Python bot in
  it). A bot program run over its own stdin and stdout, in any language, is the
  next: a subclass that starts the program and reads and writes its pipes.
  Nothing here assumes the bot is Python: it sees lines, a clock, and a process
  it may pause.

Whatever a player's bot does wrong comes up as :class:`~arena.bot.BotFailure`
with the forfeit reason, or as the exception the bot raised (in-process bots).

A player given a :class:`~arena.protocol.bot_log.LogCollector` (its ``log``) hands
it what its bot writes, ply by ply, and where its bot crashed; without one (as in
a bot process of the sandbox, whose output goes to its output file) it captures
nothing.
"""

from __future__ import annotations

import inspect
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any

from arena.bot import Bot, BotFailure, Choice, Limit, split_answer
from arena.engine.game import Board, ReadOnlyBoard, Rules
from arena.protocol import capture, handshake, messages
from arena.protocol.bot_log import LogCollector, bot_files, bot_frames, frames_from_wire
from arena.protocol.connectx import KaggleAgentBot
from arena.records import START, BotCode, Limits, TimeControl
from arena.text import clip


class Player(ABC):
    """What the referee asks for moves."""

    #: What runs: "bot" (a Bot subclass) or "connectx" (a Kaggle agent); known once a game has started.
    kind: str = "bot"
    #: Where what the bot writes goes (None: nowhere, not even captured).
    log: LogCollector | None = None
    #: Whether the bot may be handed the referee's own board, read-only, instead of
    #: a copy (see :attr:`arena.bot.Bot.reads_board_only`).
    reads_board_only: bool = False

    @abstractmethod
    def begin_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        """Begin getting ready for a game: its rules, the side played (0 moves first),
        the bot's seed, the clock. May return before the bot is ready."""

    @abstractmethod
    def finish_start(self) -> None:
        """Return once the bot is ready to move; :class:`BotFailure` if it never will be."""

    def new_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        """Start a game and wait until the bot is ready."""
        self.begin_game(rules, side, seed, time_control)
        self.finish_start()

    @abstractmethod
    def play(self, board: Board, limit: Limit) -> tuple[object, dict[str, Any] | None]:
        """The bot's move in ``board`` (a copy it may keep) within ``limit``, and the
        info it logs beside it. The move is the bot's, unchecked: the referee checks it."""

    @abstractmethod
    def close(self) -> None:
        """The game is over: release what the bot holds (its process, files)."""


def as_player(bot: Bot | Player) -> Player:
    """``bot`` as a player: itself if it is one, else a Python bot called in this process."""
    return bot if isinstance(bot, Player) else InProcessPlayer(bot)


class InProcessPlayer(Player):
    """A trusted Python bot, called in this process (and, in a bot process of the
    sandbox, the bot the protocol server answers for)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        # Known from the class, not asked of the bot: a Bot may have an attribute (an
        # option, even) named kind, and the kind is stored with a submission.
        self.kind = "connectx" if isinstance(bot, KaggleAgentBot) else "bot"
        self._with_limit = takes_limit(bot)
        self._captured: list[str] = []  # what the bot writes during a call, when it has a log
        kind = type(bot)
        self.reusable = kind.reusable
        self.reads_board_only = kind.reads_board_only
        # Bot's own two halves of a start only remember the game, then call new_game:
        # a bot that keeps them is started by one call of new_game (one capture).
        self._starts_at_once = kind.begin_game is Bot.begin_game and kind.finish_start is Bot.finish_start
        self._starting: tuple[Rules, int, int] | None = None
        # The capture slot of the thread that plays the game (see capture.Slot),
        # taken when a game starts: a game is played in one thread.
        self._slot: capture.Slot | None = None

    def begin_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        self._give_clock(time_control)
        self._slot = None
        if self._starts_at_once:
            self._starting = (rules, side, seed)
        elif self.log is None:
            self.bot.begin_game(rules, side, seed)
        else:
            capture.routed()  # once a game: each call then only switches the capture on and off
            self._logged(self.bot.begin_game, rules, side, seed)

    def finish_start(self) -> None:
        starting, self._starting = self._starting, None
        if starting is not None:
            if self.log is None:
                self.bot.new_game(*starting)
            else:
                capture.routed()
                self._logged(self.bot.new_game, *starting)
        elif self.log is None:
            self.bot.finish_start()
        else:
            self._logged(self.bot.finish_start)

    def new_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        self._give_clock(time_control)
        self._slot = None
        if self.log is None:
            self.bot.new_game(rules, side, seed)
        else:
            capture.routed()
            self._logged(self.bot.new_game, rules, side, seed)

    def _give_clock(self, time_control: TimeControl | None) -> None:
        """A ConnectX agent's configuration tells the game's clock (a Bot sees its limits move by move)."""
        if isinstance(self.bot, KaggleAgentBot):
            self.bot.time_control = time_control

    def play(self, board: Board, limit: Limit) -> tuple[object, dict[str, Any] | None]:
        bot = self.bot
        if limit.move_seconds is not None:  # else it keeps what it had: None unless set by hand
            bot.time_allowed = limit.time_allowed
        log = self.log
        if log is None:
            answer = bot.choose_move(board, limit=limit) if self._with_limit else bot.choose_move(board)  # type: ignore[call-arg]
        else:
            # Inline, not through _logged or capture.into: a random bot's move takes
            # about as long as a few calls, and this runs on every move.
            slot = self._slot
            if slot is None:
                slot = self._slot = capture.slot()
            # The ply the output is filed under, read first from a copy the bot may
            # change; the referee's own board, read-only, only once there is output.
            ply = None if type(board) is ReadOnlyBoard else board.ply
            captured = self._captured
            out, err = sys.stdout, sys.stderr
            slot.capture = captured
            try:
                answer = bot.choose_move(board, limit=limit) if self._with_limit else bot.choose_move(board)  # type: ignore[call-arg]
            except BotFailure:
                raise
            except Exception as exc:
                self._crashed(exc)
                raise
            finally:
                slot.capture = None
                if sys.stdout is not out or sys.stderr is not err:  # the bot set its own: put back
                    sys.stdout, sys.stderr = out, err
                if captured:
                    log.add_text(board.ply if ply is None else ply, "".join(captured))
                    captured.clear()
        if type(answer) is int:  # the usual answer, a bare move
            return answer, None
        return split_answer(answer)

    def _logged(self, call: Any, *args: Any) -> None:
        """``call(*args)`` at the start of a game, what it writes to sys.stdout and
        sys.stderr captured, and where it crashed if it raises."""
        log = self.log
        assert log is not None
        captured = self._captured
        slot = self._slot = capture.slot()  # this game's thread: its moves capture through it too
        out, err = sys.stdout, sys.stderr
        slot.capture = captured
        try:
            call(*args)
        except BotFailure:
            raise
        except Exception as exc:
            self._crashed(exc)
            raise
        finally:
            slot.capture = None
            if sys.stdout is not out or sys.stderr is not err:  # the bot set its own: put back
                sys.stdout, sys.stderr = out, err
            if captured:
                log.add_text(START, "".join(captured))
                captured.clear()

    def _crashed(self, exc: Exception) -> None:
        assert self.log is not None
        self.log.crashed(messages.describe_exception(exc), bot_frames(exc.__traceback__, bot_files(self.bot)))

    def close(self) -> None:
        self.bot.close()


# Whether a bot class's choose_move takes the limit, by class: a tournament makes
# two bots a game, and a bot process should not pay for inspect's pages.
_TAKES_LIMIT: dict[type, bool] = {}


def takes_limit(bot: object) -> bool:
    """Whether ``bot.choose_move`` declares a parameter ``limit`` (then it is given the move's Limit)."""
    kind = type(bot)
    own = "choose_move" in getattr(bot, "__dict__", ())  # set on the bot itself: not the class's
    known = None if own else _TAKES_LIMIT.get(kind)
    if known is None:
        known = _declares_limit(getattr(bot, "choose_move", None))
        if not own:
            _TAKES_LIMIT[kind] = known
    return known


def _declares_limit(method: Any) -> bool:
    function = getattr(method, "__func__", method)
    code = getattr(function, "__code__", None)
    if code is not None and not hasattr(function, "__wrapped__"):  # a plain function: read its code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        return "limit" in names and names.index("limit") >= code.co_posonlyargcount
    try:  # a decorated function, a callable object...
        parameter = inspect.signature(method).parameters.get("limit")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)


class ProtocolPlayer(Player):
    """A bot at the other end of a channel that carries protocol v1.

    A game sends ``hello`` (:meth:`begin_game`), reads its answer and sends
    ``new_game`` with the options typed as the bot declared them, then reads that
    answer (:meth:`finish_start`), then one ``move`` per turn. Every answer
    has a deadline: the start within ``start_seconds``, a move within its limit
    (``move_seconds`` when the game sets none). A subclass gives the channel:
    :meth:`_connect`, :meth:`_send`, :meth:`_receive`, :meth:`_unasked`, and may
    pause the bot while it is not on move (:meth:`_moving`, :meth:`_waiting`).

    Each request but ``quit`` is answered by exactly one line. A bot that sent more
    (a second answer to one request, or a line before it was asked) forfeits:
    ``protocol: answered twice``. Such a line cannot be told apart from the answer
    to the next request, so taking it as that answer (as a buffered channel
    would) lets a bot answer a position it has not been shown, outside its clock;
    discarding it would guess which of the lines the bot meant, and keep playing a
    bot whose answers and requests no longer pair. The bot is at fault either way,
    and a forfeit says so, with the line, where any other choice hides it.
    """

    def __init__(self, start_seconds: float, move_seconds: float) -> None:
        self.start_seconds = start_seconds
        self.move_seconds = move_seconds
        self._own_limit = Limit(move_seconds)  # the limit of a move when the game sets none
        self.kind = "bot"
        #: What the bot said of itself in its answer to ``hello``: name, kind, options.
        self.hello: dict[str, Any] = {}
        #: A program's options as the user wrote them, sent in ``new_game`` typed as it
        #: declares them. None: the bot has them another way (a sandboxed Python bot, in its job).
        self.program_options: dict[str, str] | None = None
        self._started = 0.0
        self._game = messages.NewGame(Rules(), 0, 0)

    # --- the channel, given by a subclass --------------------------------------------

    @abstractmethod
    def _connect(self) -> None:
        """Start the bot for a game and open the channel to it (:class:`BotFailure` if it cannot)."""

    @abstractmethod
    def _send(self, data: bytes, seconds: float) -> None:
        """Write all of ``data`` within ``seconds``, or :class:`BotFailure` ("time: ..."): a
        bot that stops reading loses on time. OSError if the bot is gone."""

    @abstractmethod
    def _receive(self, seconds: float, since: float) -> bytes:
        """The bot's next line, without its newline, within ``seconds`` of ``since`` (a
        ``time.monotonic()``), or :class:`BotFailure` (too late, too long, the bot gone)."""

    @abstractmethod
    def _unasked(self) -> bytes:
        """What the bot has sent that no request has asked for: what was read after
        its last answer, and what is waiting on the channel now (never waits for
        more). Empty unless the bot answered twice."""

    def _moving(self) -> None:
        """The bot is on move (a paused bot runs again)."""

    def _waiting(self) -> None:
        """The bot is not on move (it may be paused)."""

    # --- the game ------------------------------------------------------------------------

    def begin_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        """Start the bot and greet it, without waiting for it: the referee starts
        both sides at once, then waits (:meth:`finish_start`)."""
        self.close()
        self._connect()
        # The start-up clock runs from here, the bot's process started (a program
        # executed), to the answer to new_game: a JVM's boot is on it, not on a move's.
        self._started = time.monotonic()
        self._game = messages.NewGame(rules, side, seed, time_control if time_control is not None else TimeControl())
        self._request(messages.encode(messages.Hello()), self.start_seconds)

    def finish_start(self) -> None:
        """Read the answer to ``hello``, send the game (with the options, typed as
        the bot declared them) and wait for its answer, or why it never comes."""
        since = self._started
        try:
            hello = self._answer(self.start_seconds, since, START)
            messages.check_hello(hello)
            game = self._game
            variants = handshake.variants_of(hello)
            if not handshake.plays(variants, game.rules):
                raise BotFailure(handshake.refusal(clip(str(hello.get("name")), 60), variants, game.rules))
            if self.program_options:
                game = replace(game, options=handshake.typed_options(handshake.declared_options(hello),
                                                                     self.program_options))
            left = self.start_seconds - (time.monotonic() - since)
            self._request(messages.encode(game), max(left, 0.001))
            reply = self._answer(self.start_seconds, since, START)
        finally:
            self._waiting()
        if "error" in reply:
            raise BotFailure(str(reply["error"]))
        self.hello = hello
        self.kind = str(hello.get("kind", "bot"))

    def play(self, board: Board, limit: Limit) -> tuple[object, dict[str, Any] | None]:
        if limit.move_seconds is None:  # the game sets no limit: the bot still has one
            allowed = self.move_seconds
            limit = Limit(allowed, None, limit.nodes) if limit.nodes is not None else self._own_limit
        else:
            allowed = limit.time_allowed  # type: ignore[assignment]
        started = time.monotonic()
        # Whatever the bot sent since its last answer was asked for by no request:
        # before this one is sent, nothing the bot sends can be taken for its answer.
        extra = self._unasked()
        if extra:
            line = extra.partition(b"\n")[0]
            raise BotFailure(f"protocol: answered twice (a line no request asked for: {line[:40]!r})")
        try:
            # The request first, then the bot runs: it finds the request waiting and
            # answers, where a bot woken first would go back to sleep until it came.
            # (A subclass whose bot must read to make room wakes it as it waits.)
            self._request(messages.encode(messages.Move(board.history, limit)), allowed)
            self._moving()
            reply = self._answer(allowed, started, board.ply)
        finally:
            self._waiting()
        if "error" in reply:
            raise BotFailure(str(reply["error"]))
        if "not_a_move" in reply:
            raise BotFailure(f"not a move: {reply['not_a_move']}")
        info = reply.get("info")
        # The move is whatever the bot sent (untrusted): the referee checks that it
        # is a legal move, an int, before it touches the board.
        return reply.get("move"), info if isinstance(info, dict) else {}

    def _request(self, data: bytes, seconds: float) -> None:
        try:
            self._send(data, seconds)
        except OSError:  # (not a BotFailure: a bot that does not read loses on time)
            pass  # it may have said why before leaving: read on, the end of the channel tells the rest

    def _answer(self, seconds: float, since: float, ply: int | str) -> dict[str, Any]:
        try:
            reply = messages.parse_answer(self._receive(seconds, since))
        except BotFailure:
            self._keep_printed(ply, None)  # what it wrote before it failed is its log too
            raise
        self._keep_printed(ply, reply)
        if self.log is not None and "error" in reply and "exception" in reply:
            self.log.crashed(str(reply["exception"]), frames_from_wire(reply.get("traceback")))
        self._check_printed()
        return reply

    def _check_printed(self) -> None:
        """:class:`BotFailure` if the bot printed more than it may (where the arena, not
        the bot's own server, holds the count: a program's stderr)."""

    def _keep_printed(self, ply: int | str, reply: dict[str, Any] | None) -> None:
        if self.log is not None:
            output = self._printed(reply)
            if output:
                self.log.add_bytes(ply, output)

    def _printed(self, reply: dict[str, Any] | None) -> bytes:
        """What the bot printed since its last answer: a sandboxed Python bot's comes
        with the answer (``output``); a subclass whose bot writes its log where the
        arena reads it (a program's stderr) reads it there."""
        return messages.output_of(reply) if reply is not None else b""


class ChannelBot(ProtocolPlayer, Bot):
    """A protocol player that is also a :class:`~arena.bot.Bot`, for callers that hold
    it as one (the submission checks, older callers): a sandboxed bot, or a bot file
    played in this process where there is no sandbox. A subclass gives the channel
    (see :class:`ProtocolPlayer`) and sets ``code`` and ``limits``."""

    code: BotCode
    limits: Limits

    def new_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        self.begin_game(rules, side, seed, time_control)
        self.finish_start()

    def begin_game(self, rules: Rules, side: int, seed: int, time_control: TimeControl | None = None) -> None:
        """Start the bot and send it the game, without waiting for it: the referee
        starts both sides at once, then waits (finish_start)."""
        Bot.new_game(self, rules, side, seed)
        ProtocolPlayer.begin_game(self, rules, side, seed, time_control)

    def choose_move(self, board: Board) -> int | Choice:
        """The move within ``time_allowed`` (the bot's own ``move_seconds`` if None)."""
        limit = Limit(self.time_allowed) if self.time_allowed is not None else Limit()
        move, info = self.play(board, limit)
        return Choice(move, info or {})  # type: ignore[arg-type]  # the move is the bot's, unchecked
