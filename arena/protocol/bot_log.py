"""What a bot wrote during a game, and where in its own code it crashed.

A player (:mod:`arena.protocol.player`) hands what its bot printed to a
:class:`LogCollector`, ply by ply; the collector keeps the first
:data:`~arena.records.LOG_BYTES`, notes whether there was more, tells a live
sink (``arena play --debug``) each piece as it comes, and at the end of the game
gives the :class:`~arena.records.BotLog` stored with it (None for a bot that wrote
nothing, as nearly every one does: nothing is kept, nothing stored).

A crash is described by its frames in the bot's own files only (:func:`bot_frames`):
the arena's frames say nothing to the bot's author. A sandboxed bot's frames are
made in its own process and come over the wire: :func:`frames_from_wire` reads
them as the hostile data they are (bounded, typed, storable).

Everything here is the bot's own text: decoded with replacement characters, without
NULs, made storable. This module is loaded by every bot process: the standard
library's codecs only.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from arena.records import LOG_BYTES, START, BotLog, Frame
from arena.text import clip, storable

#: Told each piece of a bot's output as it comes: the ply (or "start") and the text.
LogSink = Callable[[int | str, str], None]

#: The innermost frames of a crash that are kept (a deep recursion has thousands).
MAX_FRAMES = 30
#: Characters kept of a frame's file name, function name and source line.
MAX_NAME = 120
MAX_SOURCE = 200


def clean(text: str) -> str:
    """A bot's text as the arena keeps it: storable, without NULs."""
    return storable(text.replace("\x00", ""))


class LogCollector:
    """A bot's output over one game, bounded, by ply."""

    def __init__(self, sink: LogSink | None = None) -> None:
        self.sink = sink
        self._parts: list[str] = []
        self._plies: list[tuple[int | str, int]] = []
        self._size = 0  # bytes of text kept so far, as UTF-8 (at most LOG_BYTES)
        self._length = 0  # characters kept so far
        self._cut = False
        self._decoder: codecs.IncrementalDecoder | None = None  # made for the first bytes: most bots print none
        self.crash: str | None = None
        self.frames: tuple[Frame, ...] = ()

    def add_bytes(self, ply: int | str, data: bytes) -> None:
        """Bytes a bot printed during ``ply``: decoded as UTF-8 (a character cut
        between two pieces is joined again), the rest replaced."""
        if not data or self._cut:
            return
        room = LOG_BYTES - self._size
        if self._decoder is None:
            self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = self._decoder.decode(data[:room])
        size = len(text.encode())
        if len(data) > room or size > room:
            # The bound is on the text kept, which ends on a whole character: a byte
            # that is no UTF-8 becomes a replacement character of three, and a
            # character the bound cuts in two is left out, not replaced.
            self._cut = True
            if size > room:
                text = text.encode()[:room].decode("utf-8", "ignore")
                size = len(text.encode())
        self._size += size
        self._keep(ply, text)

    def add_text(self, ply: int | str, text: str) -> None:
        """Text a bot in this process wrote during ``ply`` (kept to LOG_BYTES as UTF-8)."""
        if not text:
            return
        self.add_bytes(ply, text.encode("utf-8", "surrogatepass"))

    def _keep(self, ply: int | str, text: str) -> None:
        text = clean(text)
        if not text:
            return
        if self.sink is not None:
            self.sink(ply, text)
        if not self._plies or self._plies[-1][0] != ply:
            self._plies.append((ply, self._length))
        self._parts.append(text)
        self._length += len(text)

    def crashed(self, description: str, frames: Iterable[Frame]) -> None:
        """The bot crashed: how (its exception's type and message), and where."""
        self.crash = clean(clip(description, 400))
        self.frames = tuple(frames)

    def log(self) -> BotLog | None:
        """What the bot wrote over the game; None if nothing (and it did not crash)."""
        # A character begun at the end and never finished: replaced, unless the cut ended it.
        tail = self._decoder.decode(b"", final=True) if self._decoder is not None and not self._cut else ""
        if tail:
            self._keep(self._plies[-1][0] if self._plies else START, tail)
        if not self._parts and not self._cut and self.crash is None:
            return None
        return BotLog("".join(self._parts), tuple(self._plies), self._cut, self.crash, self.frames)


# --- crashes ------------------------------------------------------------------------------


def bot_files(bot: object) -> set[str]:
    """The files a bot's code is in: those of the functions its classes define
    (its own and its bases', but not the arena's :class:`~arena.bot.Bot`), and of
    a ConnectX agent it wraps."""
    arena_folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files: set[str] = set()
    for klass in type(bot).__mro__:
        for value in vars(klass).values():
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is not None:
                files.add(code.co_filename)
    agent = getattr(bot, "agent", None)
    code = getattr(agent, "__code__", None)
    if code is not None:
        files.add(code.co_filename)
    return {file for file in files if not os.path.abspath(file).startswith(arena_folder + os.sep)}


def bot_frames(
    traceback: TracebackType | None, files: set[str], source: Callable[[str, int], str] | None = None
) -> list[Frame]:
    """The frames of ``traceback`` in the bot's ``files``, outermost first, the
    innermost :data:`MAX_FRAMES` of them. ``source(file, line)`` gives a line's
    text (the text of the file the bot was compiled from, in a bot process), else
    it is read with :mod:`linecache`."""
    found: list[Frame] = []
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_filename in files:
            line = traceback.tb_lineno or 0
            text = source(code.co_filename, line) if source is not None else _line_of(code.co_filename, line)
            found.append(_frame(os.path.basename(code.co_filename), line, code.co_name, text))
        traceback = traceback.tb_next
    return found[-MAX_FRAMES:]


def _line_of(file: str, line: int) -> str:
    import linecache  # only for a crash

    return linecache.getline(file, line)


def _frame(file: str, line: int, function: str, source: str) -> Frame:
    return Frame(clean(clip(file, MAX_NAME)), line, clean(clip(function, MAX_NAME)),
                 clean(clip(source.strip(), MAX_SOURCE)))


def crash_reason(description: str, frames: list[Frame] | tuple[Frame, ...]) -> str:
    """A crash's forfeit reason: ``crashed: `` its exception, and its innermost
    frame in the bot's own code: ``crashed: IndexError: "..." (my_bot.py line 12, in choose_move)``."""
    return f"crashed: {description}{where(frames)}"


def where(frames: list[Frame] | tuple[Frame, ...]) -> str:
    """`` (my_bot.py line 12, in choose_move)`` for the innermost frame; "" for none."""
    if not frames:
        return ""
    file, line, function, _ = frames[-1]
    return f" ({file} line {line}, in {function})"


def frames_as_wire(frames: list[Frame]) -> list[list[Any]]:
    return [list(frame) for frame in frames]


def frames_from_wire(value: object) -> tuple[Frame, ...]:
    """Frames a bot process sent: a list of ``[file, line, function, source]``;
    anything else in it is left out, every text bounded."""
    if not isinstance(value, list):
        return ()
    frames = []
    for item in value[-MAX_FRAMES:]:
        if (isinstance(item, list) and len(item) == 4 and isinstance(item[0], str) and type(item[1]) is int
                and isinstance(item[2], str) and isinstance(item[3], str)):
            # The file's name without a folder, as bot_frames gives it: a frame is
            # never told as one in a file of the arena's, wherever it claims to be.
            frames.append(_frame(os.path.basename(item[0]), max(0, min(item[1], 10**9)), item[2], item[3]))
    return tuple(frames)


def traceback_lines(crash: str | None, frames: Iterable[Frame]) -> list[str]:
    """A crash as the lines of a traceback (the bot's frames, then its exception),
    raw text: whoever shows them escapes them."""
    lines = ["Traceback (the bot's own code, most recent call last):"]
    for file, line, function, source in frames:
        lines.append(f'  File "{file}", line {line}, in {function}')
        if source:
            lines.append(f"    {source}")
    if crash:
        lines.append(crash)
    return lines
