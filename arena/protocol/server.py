"""The bot's side of protocol v1 for a Python bot: load it, answer the arena.

:func:`load_bot` builds the bot a job names (a :class:`~arena.bot.Bot` subclass from
a file or an installed entry point, or a Kaggle ConnectX agent behind its adapter);
:class:`Server` answers the arena's requests (:mod:`arena.protocol.messages`) by
calling it through :class:`~arena.protocol.player.InProcessPlayer`, one line per
answer. A bot process of the sandbox confines itself, reads its job, and hands its
channel to :func:`serve`.

The server writes only on its channel, a descriptor of its own, never on the bot's
stdout or stderr: those stay the bot's, free to be its log (the sandbox sends them
to the bot's output file). Given that file to read (``output``), the server sends
what the bot printed with each answer, and a crash's frames in the bot's own code
(:mod:`arena.protocol.bot_log`): the arena attributes the one to the ply it asked
about and reads both as the bot's text.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Any

from arena.bot import Bot, BotFailure, describe_non_move
from arena.engine.game import Board, Rules
from arena.errors import ArenaError
from arena.protocol import connectx
from arena.protocol.bot_log import bot_files, bot_frames, crash_reason, frames_as_wire
from arena.protocol.handshake import EVERY_GAME
from arena.protocol.messages import (
    MAX_DEPTH,
    MAX_OUTPUT,
    MAX_REQUEST,
    Hello,
    Job,
    Move,
    NewGame,
    Quit,
    Request,
    decode_request,
    describe_exception,
    encode,
    failed,
    hello_answer,
    moved,
    not_a_move,
    ready,
    with_output,
)
from arena.protocol.player import InProcessPlayer
from arena.records import BotCode, Frame, Limits
from arena.text import json_text, nested_deeper_than


class BotFileError(ArenaError):
    """A bot file that defines no bot to play, or several without saying which."""


class BotLoadFailed(Exception):
    """The bot could not be loaded; its reason, for the record, and the exception
    its own code raised, if it did (where it crashed goes to its log)."""

    def __init__(self, reason: str, crash: BaseException | None = None) -> None:
        super().__init__(reason)
        self.crash = crash


# --- the channel ---------------------------------------------------------------------------


class Channel:
    """Lines in and out of a descriptor (a socket, a pipe): what the server reads
    and writes, and nothing else."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = b""

    def read_line(self, limit: int = MAX_REQUEST) -> bytes | None:
        """The next line, without its newline, blocking; None once the other end has
        closed. :class:`BotFailure` if a line grows longer than ``limit``."""
        while b"\n" not in self._pending:
            if len(self._pending) > limit:
                raise BotFailure("protocol: request too long")
            try:
                chunk = os.read(self.fd, 65536)
            except ConnectionResetError:  # the other end left with messages unread
                return None
            if not chunk:
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def has_line(self) -> bool:
        """Whether a whole line has been read and not yet taken."""
        return b"\n" in self._pending

    def write(self, message: dict[str, Any]) -> None:
        self.write_bytes(encode(message))

    def write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


# --- answering -------------------------------------------------------------------------------


class Server:
    """Answers the arena's requests for one Python bot, within the process's ``limits``
    (named in the reasons of a bot that went over them). ``output``: a descriptor
    to read what the bot prints from (its output file), sent with each answer;
    ``code``: the bot's code, whose lines a crash's frames quote."""

    def __init__(self, bot: Bot, limits: Limits, output: int | None = None, code: BotCode | None = None) -> None:
        self.bot = bot
        self.player = InProcessPlayer(bot)
        self.limits = limits
        self.rules = Rules()
        self.output = output
        self.code = code
        self._sent = 0  # bytes of the output file sent so far

    def run(self, channel: Channel) -> None:
        """Answer every request on ``channel`` until ``quit`` or its end. Answers to
        requests that came together go back together (``hello`` and ``new_game``):
        one write, and the arena wakes once for both."""
        answers = b""
        while True:
            if answers and not channel.has_line():
                channel.write_bytes(answers)
                answers = b""
            try:
                line = channel.read_line()
                if line is None:
                    break
                request: Request = decode_request(line)
            except BotFailure as failure:  # the arena's own message: never expected
                answers += encode(failed(failure.reason))
                break
            answer = self.answer(request)
            if answer is None:
                break
            answers += encode(self.with_printed(answer))
        if answers:
            channel.write_bytes(answers)

    def answer(self, request: Request) -> dict[str, Any] | None:
        """The answer to ``request`` (None for ``quit``: the server stops)."""
        if isinstance(request, Quit):
            return None
        limits = self.limits
        try:
            if isinstance(request, Move):
                board = Board(self.rules)
                for played in request.moves:
                    board.play(played)
                move, info = self.player.play(board, request.limit)
            elif isinstance(request, NewGame):
                self.player.new_game(request.rules, request.side, request.seed, request.time_control)
                self.rules = request.rules
                return ready()
            elif isinstance(request, Hello):
                return self.hello()
            else:  # a job: it comes once, before hello, to whoever starts the server
                return failed(f"protocol: unexpected {type(request).TYPE}")
        except MemoryError:
            return failed(f"memory: over the {limits.memory_mb} MB limit")
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                return self._over_output()
            return self._crash(exc)
        except BaseException as exc:
            return self._crash(exc)
        if type(move) is not int:
            return not_a_move(describe_non_move(move))
        if info is None:
            info = {}
        try:
            text = json_text(info)  # as encode will write it: NaN and infinities as null
        except Exception:  # not JSON (an object, a circular structure, too deep to write...)
            info = {"error": "info was not JSON-serialisable"}
        else:
            if nested_deeper_than(text.encode(), MAX_DEPTH - 1):  # the answer around it is one level more
                info = {"error": f"info nested more than {MAX_DEPTH - 1} deep"}
        return moved(move, info)

    def _over_output(self) -> dict[str, Any]:
        return failed(f"output: printed more than the {self.limits.output_kb} KB allowed")

    def _crash(self, exc: BaseException, reason: str | None = None) -> dict[str, Any]:
        """The answer of a bot that raised: why it forfeits (``reason``, else that it
        crashed, and where), its exception, and its frames in its own code (the
        server's are none of its author's business)."""
        description = describe_exception(exc)
        code = self.code
        frames: list[Frame] = []
        try:
            if code is not None and code.text is not None:  # compiled from the job's text, named by its label
                lines = code.text.splitlines()
                frames = bot_frames(exc.__traceback__, {code.label},
                                    lambda file, line: lines[line - 1] if 0 < line <= len(lines) else "")
            else:
                frames = bot_frames(exc.__traceback__, bot_files(self.bot))
        except Exception:  # a frame that cannot be read: the crash is still told
            pass
        answer = failed(reason if reason is not None else crash_reason(description, frames))
        answer["exception"] = description
        answer["traceback"] = frames_as_wire(frames)
        return answer

    def with_printed(self, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` with what the bot printed since the last one (flushed first:
        a print is buffered). A flush over the output limit is the bot's forfeit."""
        if self.output is None:
            return answer
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError as exc:
                if exc.errno == errno.EFBIG and "error" not in answer:
                    answer = self._over_output()
            except Exception:  # the bot's own stream, which may be anything
                pass
        if self._sent >= MAX_OUTPUT:
            return answer
        try:
            printed = os.pread(self.output, MAX_OUTPUT - self._sent, self._sent)
        except OSError:  # the bot closed it: nothing more is told
            return answer
        self._sent += len(printed)
        return with_output(answer, printed)

    def hello(self) -> dict[str, Any]:
        """The bot's name, kind and options (known from its class: the bot is not asked)."""
        bot_class = type(self.bot)
        options = {
            key: {"type": option.kind.__name__, "default": _json_value(option.default), "help": option.help}
            for key, option in bot_class.options.items()
        }
        # A Python bot plays every game the arena has (a ConnectX agent is refused
        # rules Kaggle lacks before any game, with its own reason: connectx.unsupported).
        return hello_answer(bot_class.bot_name(), self.player.kind, options, [EVERY_GAME.as_dict()])


def _json_value(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


def serve(channel: Channel, job: Job, output: int | None = None) -> None:
    """Load the bot of ``job`` and answer the arena on ``channel`` until it is done.
    A bot that cannot be loaded answers its first request with why, and the server stops.
    ``output``: the bot's output file, to read what it prints from."""
    server = server_for(job, output)
    if isinstance(server, Server):
        server.run(channel)
    else:
        channel.write(server)


def server_for(job: Job, output: int | None = None) -> Server | dict[str, Any]:
    """The server of the bot ``job`` names, or (a bot that cannot be loaded) the
    failure that answers its first request, with what it printed."""
    try:
        return Server(load_bot(job.code, job.options), job.limits, output, job.code)
    except BotLoadFailed as exc:
        server = Server(Bot(), job.limits, output, job.code)
        return server.with_printed(failed(str(exc)) if exc.crash is None else server._crash(exc.crash, str(exc)))
    except Exception as exc:  # its own __init__ raised: a crash like one in a game, with where
        server = Server(Bot(), job.limits, output, job.code)
        return server.with_printed(server._crash(exc))


# --- loading a bot ------------------------------------------------------------------------


def load_bot(code: BotCode, options: dict[str, str]) -> Bot:
    """Build the bot: a Bot subclass from the file or entry point, or a ConnectX agent."""
    if code.entry_point is not None:
        return load_installed(code.entry_point)(**options)  # type: ignore[no-any-return]
    namespace: dict[str, Any] = {"__name__": "arena_sandboxed_bot", "__file__": code.label}
    try:
        exec(compile(code.text or "", code.label, "exec"), namespace)
    except BaseException as exc:
        raise BotLoadFailed(f"failed to import: {type(exc).__name__}: {exc}", exc) from None
    try:
        bot_class = pick_bot_class(namespace, code.label, code.class_name, quiet=True)
    except BotFileError as exc:
        raise BotLoadFailed(str(exc)) from None
    if bot_class is not None:
        try:
            return bot_class(**options)
        except ValueError as exc:  # BotOptionError
            raise BotLoadFailed(f"bad option: {exc}") from None
    agent = connectx.find_agent(namespace)
    if agent is None:
        raise BotLoadFailed(f"{code.label} defines no Bot subclass and no agent(observation, configuration)")
    if connectx.arguments_taken(agent) == 0:
        raise BotLoadFailed(f"{code.label}: the ConnectX agent takes no argument; Kaggle calls it with "
                      "(observation, configuration) or (observation)")
    return connectx.KaggleAgentBot(agent)


def load_installed(target: str) -> Any:
    """The class an installed bot's entry point names ("module:Class")."""
    module, _, name = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):  # a class nested in another
        found = getattr(found, part)
    return found


def pick_bot_class(
    namespace: dict[str, Any], label: str, class_name: str | None, quiet: bool = False
) -> type[Bot] | None:
    """The Bot subclass a file defines (the one named, or its only one).

    With ``quiet``, a file with no Bot subclass gives None (it may hold a ConnectX agent).
    """
    module = namespace.get("__name__")
    candidates = {
        obj.__name__: obj
        for obj in namespace.values()
        if isinstance(obj, type) and issubclass(obj, Bot) and obj is not Bot and obj.__module__ == module
    }
    if class_name is not None:
        if class_name not in candidates:
            raise BotFileError(
                f"bot file {label!r} has no Bot subclass {class_name!r}; "
                f"it has: {', '.join(sorted(candidates)) or 'none'}"
            )
        return candidates[class_name]
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    if not candidates:
        if quiet:
            return None
        raise BotFileError(f"bot file {label!r} defines no subclass of arena.bot.Bot; see the README's bot example")
    raise BotFileError(
        f"bot file {label!r} defines several bots ({', '.join(sorted(candidates))}); pick one with {label}:ClassName"
    )
