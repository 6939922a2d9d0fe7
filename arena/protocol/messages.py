"""Protocol v1: the messages between the arena and a bot, one JSON object per line.

The arena asks, the bot answers, in order (docs/protocol.md is the reference):

- ``hello`` (the protocol version): answered with the bot's name, its kind, its
  options (type, default, help), the variants it plays, and the version it speaks
  (:mod:`arena.protocol.handshake` reads that answer);
- ``new_game`` (the rules as a dict, the side it plays, its seed, the time control,
  its options' values): answered with ``{"ok": true}``;
- ``move`` (the position as the moves so far, and the move's :class:`~arena.bot.Limit`):
  answered with ``{"move": ..., "info": {...}}``;
- ``quit``: not answered; the bot leaves.

Any request may be answered with ``{"error": "..."}`` (the bot failed: it forfeits
with that reason; a crash adds ``exception``, its type and message, and
``traceback``, its frames in the bot's own code), and ``move`` with
``{"not_a_move": "..."}`` (what the bot answered instead of a move). Any answer
may carry ``output``: what the bot printed since its last answer, in base64
(:data:`MAX_OUTPUT` bytes a game at most). A bot process of the sandbox is given its ``job``
(code, options, limits) first, as one more line of the same kind.

Whatever a bot sends is data to check, never to trust: :func:`parse_answer` refuses,
as a protocol forfeit, a line that is too long, nested too deep for the parser to
descend without exhausting the interpreter's stack, not JSON, or not an object;
its ``error`` and ``not_a_move`` texts are clipped and made storable (a JSON
escape such as ``\\ud800`` decodes to a lone surrogate, which no UTF-8 text may
hold: :func:`arena.text.storable`), its ``kind`` must be one the arena knows,
and numbers that are not finite (``NaN``, ``Infinity``, ``1e999``) are read as
null. Nothing a bot sends can raise anything there but
:class:`~arena.bot.BotFailure`.

This module is loaded by every bot process (the spawner preloads it): it imports
only the JSON parser and the modules below the sandbox.
"""

from __future__ import annotations

import binascii
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from arena.bot import BotFailure, Limit
from arena.engine.game import Rules
from arena.records import LOG_BYTES, BotCode, Limits, TimeControl
from arena.text import clip, json_text, nested_deeper_than, printable, quote, storable

#: The version of the protocol this arena speaks. A bot answers ``hello`` with the
#: version it speaks; any other than this one is refused.
PROTOCOL_VERSION = 1

MAX_MESSAGE = 64 * 1024  # bytes of one answer from a bot, but for its output
#: Bytes of its output a bot process sends over a game: one more than a log keeps,
#: so that the arena knows when it was cut.
MAX_OUTPUT = LOG_BYTES + 1
#: Bytes of one answer with its output (in base64: 4 characters for 3 bytes).
MAX_ANSWER = MAX_MESSAGE + 4 * (MAX_OUTPUT // 3 + 1)
#: Bytes of one request from the arena: a move carries the game so far.
MAX_REQUEST = 1024 * 1024
#: Bytes of a bot process's job: it carries the bot's source code.
MAX_JOB = 64 * 1024 * 1024
#: How deep arrays and objects may nest in an answer: far more than any real info
#: needs, far less than the thousand levels at which the parser's recursion fails.
MAX_DEPTH = 32
#: What a bot may say it runs: a Bot subclass, or a ConnectX agent.
KINDS = ("bot", "connectx")
#: Characters of a bot's error or non-move description kept for the record.
MAX_TEXT = 300


# --- the arena's requests --------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The first request of a connection: which version of the protocol the arena speaks."""

    TYPE: ClassVar[str] = "hello"
    protocol: int = PROTOCOL_VERSION

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "protocol": self.protocol}

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Hello:
        return cls(_int(message, "protocol"))


@dataclass(frozen=True)
class NewGame:
    """A game starts: its rules, the side the bot plays (0 moves first), its seed, the
    clock, and the values of the bot's options (a program's, typed as it declared them;
    a sandboxed Python bot has its options from its job)."""

    TYPE: ClassVar[str] = "new_game"
    rules: Rules
    side: int
    seed: int
    time_control: TimeControl = TimeControl()
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        clock = self.time_control
        return {"type": self.TYPE, "rules": self.rules.as_dict(), "side": self.side, "seed": self.seed,
                "time_control": {"move_seconds": clock.move_seconds, "bank_seconds": clock.bank_seconds},
                "options": dict(self.options)}

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> NewGame:
        rules = message.get("rules")
        if not isinstance(rules, dict):
            raise BotFailure("protocol: new_game without its rules")
        clock = message.get("time_control") or {}
        if not isinstance(clock, dict):
            raise BotFailure("protocol: new_game with a time control that is not an object")
        options = message.get("options") or {}
        if not isinstance(options, dict):
            raise BotFailure("protocol: new_game with options that are not an object")
        return cls(Rules(**rules), _int(message, "side"), _int(message, "seed"),
                   TimeControl(_seconds(clock, "move_seconds"), _seconds(clock, "bank_seconds") or 0.0), options)


@dataclass(frozen=True)
class Move:
    """The bot is to move: the game so far (every move from the empty board), and its limit."""

    TYPE: ClassVar[str] = "move"
    moves: Sequence[int]  # a tuple when read
    limit: Limit = Limit()

    def as_dict(self) -> dict[str, Any]:
        limit = self.limit
        return {"type": self.TYPE, "moves": self.moves, "limit": {
            "move_seconds": limit.move_seconds, "bank_seconds": limit.bank_seconds, "nodes": limit.nodes}}

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Move:
        moves = message.get("moves")
        if not isinstance(moves, list) or not set(map(type, moves)) <= {int}:
            raise BotFailure("protocol: move without the moves so far")
        limit = message.get("limit") or {}
        if not isinstance(limit, dict):
            raise BotFailure("protocol: move with a limit that is not an object")
        nodes = limit.get("nodes")
        if nodes is not None and type(nodes) is not int:
            raise BotFailure("protocol: a node limit that is not an integer")
        return cls(tuple(moves), Limit(_seconds(limit, "move_seconds"), _seconds(limit, "bank_seconds"), nodes))


@dataclass(frozen=True)
class Quit:
    """The connection ends: the bot leaves, answering nothing."""

    TYPE: ClassVar[str] = "quit"

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Quit:
        return cls()


@dataclass(frozen=True)
class Job:
    """What a sandboxed bot process runs: the bot's code, its options, its limits.
    Its first line, before ``hello``; a bot program of its own never gets one."""

    TYPE: ClassVar[str] = "job"
    code: BotCode
    options: dict[str, str]
    limits: Limits = Limits()

    def as_dict(self) -> dict[str, Any]:
        code, limits = self.code, self.limits
        return {"type": self.TYPE, "protocol": PROTOCOL_VERSION,
                "code": {"label": code.label, "text": code.text, "class_name": code.class_name,
                         "entry_point": code.entry_point,
                         "program": list(code.program) if code.program is not None else None},
                "options": dict(self.options),
                "limits": {"memory_mb": limits.memory_mb, "output_kb": limits.output_kb,
                           "cpu_seconds": limits.cpu_seconds, "start_seconds": limits.start_seconds,
                           "move_seconds": limits.move_seconds, "processes": limits.processes}}

    @classmethod
    def from_dict(cls, message: dict[str, Any]) -> Job:
        code, options, limits = message.get("code"), message.get("options"), message.get("limits")
        if not (isinstance(code, dict) and isinstance(options, dict) and isinstance(limits, dict)):
            raise BotFailure("protocol: a job without its code, options and limits")
        program = code.get("program")
        if program is not None and (not isinstance(program, list) or not program
                                    or not all(isinstance(word, str) for word in program)):
            raise BotFailure("protocol: a job whose program is not a command")
        code = {**code, "program": tuple(program) if program is not None else None}
        return cls(BotCode(**code), {str(key): str(value) for key, value in options.items()}, Limits(**limits))


Request = Hello | NewGame | Move | Quit | Job
_REQUESTS: dict[str, Any] = {kind.TYPE: kind for kind in (Hello, NewGame, Move, Quit, Job)}


def _int(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if type(value) is not int:
        raise BotFailure(f"protocol: {message.get('type')} without an integer {key}")
    return value


def _seconds(message: dict[str, Any], key: str) -> float | None:
    value = message.get(key)
    if value is not None and (type(value) not in (int, float) or value < 0):
        raise BotFailure(f"protocol: {key} must be a number of seconds or null")
    return value


# --- the bot's answers -------------------------------------------------------------------


def hello_answer(
    name: str, kind: str, options: dict[str, dict[str, Any]], variants: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """What a bot answers to ``hello``: its options as ``{name: {"type", "default", "help"}}``,
    and the variants it plays (None: Connect Four only)."""
    answer = {"type": "hello", "protocol": PROTOCOL_VERSION, "name": name, "kind": kind, "options": options}
    if variants is not None:
        answer["variants"] = variants
    return answer


def ready() -> dict[str, Any]:
    """The answer to ``new_game``."""
    return {"ok": True}


def moved(move: int, info: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``move``: the move, and what the bot logs beside it."""
    return {"move": move, "info": info}


def failed(reason: str) -> dict[str, Any]:
    """The answer to any request when the bot failed: it forfeits with ``reason``."""
    return {"error": reason}


def not_a_move(description: str) -> dict[str, Any]:
    """The answer to ``move`` when the bot answered something that is not a move."""
    return {"not_a_move": description}


def with_output(answer: dict[str, Any], output: bytes) -> dict[str, Any]:
    """``answer`` with what the bot printed since its last answer."""
    if output:
        answer["output"] = binascii.b2a_base64(output, newline=False).decode("ascii")
    return answer


def output_of(reply: dict[str, Any]) -> bytes:
    """What a bot printed, from its answer: the bytes of its ``output`` (none if
    that is not base64 text)."""
    text = reply.get("output")
    if not isinstance(text, str):
        return b""
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return b""


def describe_exception(exc: BaseException) -> str:
    """An exception for a forfeit reason: its type, then its message quoted (it is
    the bot's own words, never the arena's verdict: "the opponent crashed" reads as such)."""
    try:
        message = str(exc)
    except Exception:  # a bot's exception may fail to say what it is
        message = "(its message could not be read)"
    kind = printable(clip(type(exc).__name__, 60))  # a bot can name a class anything, escapes too
    return f"{kind}: {quote(message, 200)}" if message else kind


# --- lines -------------------------------------------------------------------------------


def encode(message: Request | dict[str, Any]) -> bytes:
    """One line: the message as JSON (numbers that are not finite as null), then a newline."""
    return json_text(message if isinstance(message, dict) else message.as_dict()).encode() + b"\n"


def decode(line: bytes, limit: int = MAX_MESSAGE, what: str = "answer") -> dict[str, Any]:
    """The JSON object in ``line`` (without its newline), read within bounds, or
    :class:`BotFailure` ("protocol: ...") saying what is wrong with it."""
    if len(line) > limit:
        raise BotFailure(f"protocol: {what} too long")
    if nested_deeper_than(line, MAX_DEPTH):
        raise BotFailure(f"protocol: {what} nested more than {MAX_DEPTH} deep")
    try:
        message = _DECODER.decode(line.decode("utf-8"))
    except Exception:  # whatever the parser raises, the line is unreadable
        raise BotFailure(f"protocol: unreadable {what} {line[:40]!r}") from None
    if not isinstance(message, dict):
        raise BotFailure(f"protocol: unreadable {what} {line[:40]!r}")
    return message


def decode_request(line: bytes, limit: int = MAX_REQUEST) -> Request:
    """The arena's request in ``line``, or :class:`BotFailure` saying what is wrong with it."""
    message = decode(line, limit, "request")
    kind = _REQUESTS.get(message.get("type"))  # type: ignore[arg-type]
    if kind is None:
        raise BotFailure(f"protocol: unknown request {clip(repr(message.get('type')), 60)}")
    try:
        request: Request = kind.from_dict(message)
    except BotFailure:
        raise
    except Exception as exc:  # a field of the wrong kind: Rules(**...) refusing it, say
        raise BotFailure(f"protocol: bad {message['type']} request: {describe_exception(exc)}") from None
    return request


def parse_answer(line: bytes) -> dict[str, Any]:
    """The answer in ``line`` (one line from the bot, without its newline) as a dict,
    or :class:`BotFailure` ("protocol: ...") saying what is wrong with it."""
    if len(line) > MAX_MESSAGE and b'"output"' not in line:
        raise BotFailure("protocol: answer too long")
    reply = decode(line, MAX_ANSWER)
    output = reply.get("output")
    if len(line) > MAX_MESSAGE and len(line) - (len(output) if isinstance(output, str) else 0) > MAX_MESSAGE:
        raise BotFailure("protocol: answer too long")  # only its output may take it over
    for key in ("error", "not_a_move", "exception"):  # texts for the record, kept short and storable
        if key in reply:
            reply[key] = clip(storable(str(reply[key])), MAX_TEXT)  # storable first: a pair is never split
    if "kind" in reply and reply["kind"] not in KINDS:
        raise BotFailure(f"protocol: unknown kind {clip(repr(reply['kind']), 60)}")
    return reply


def check_hello(reply: dict[str, Any]) -> None:
    """Refuse an answer to ``hello`` in another version of the protocol (or a failure)."""
    if "error" in reply:
        raise BotFailure(str(reply["error"]))
    if reply.get("protocol") != PROTOCOL_VERSION:
        raise BotFailure(f"protocol: the bot speaks version {clip(repr(reply.get('protocol')), 20)}, "
                         f"the arena version {PROTOCOL_VERSION}")


def _no_constant(name: str) -> None:
    """``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not have: null."""
    return None


def _finite_float(text: str) -> float | None:
    """A JSON number with a fraction or exponent; null if it overflows (``1e999``)."""
    value = float(text)
    return value if math.isfinite(value) else None


# Made once: json.loads with these arguments would make a decoder for every answer.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
