"""What a bot wrote, as lines for the terminal: each one with whose it is and the
ply it was written during, every character that could act on a terminal escaped
(:func:`arena.text.printable`). For ``arena show --logs`` and the live
``--debug`` of ``arena play`` and ``arena match``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from arena.protocol.bot_log import traceback_lines
from arena.records import START, BotLog, Frame
from arena.text import printable


def ply_label(ply: int | str) -> str:
    """"start", or the ply counted from 1 as ``arena show`` numbers them."""
    return START if isinstance(ply, str) else f"ply {ply + 1}"


def prefixed(who: str, ply: int | str, text: str) -> list[str]:
    """``text`` as lines, each after ``[who ply N]``, escaped."""
    head = f"[{printable(who)} {ply_label(ply)}]"
    return [f"{head} {printable(line)}" for line in text.splitlines()]


def log_lines(who: str, log: BotLog) -> list[str]:
    """A whole log, line by line, each prefixed; a note if it was cut; its crash's traceback."""
    lines = [line for ply, text in log.by_ply() for line in prefixed(who, ply, text)]
    if log.cut:
        lines.append(f"[{printable(who)}] (the bot wrote more than {len(log.text.encode()) // 1024} KB: "
                     "the rest is not kept)")
    if log.crash or log.frames:
        # Prefixed too: a line of the bot's own text (its exception's message) could
        # otherwise pass for one of the arena's own ("Log of O ...").
        lines += [f"[{printable(who)}] {line}" for line in crash_lines(log.crash, log.frames)]
    return lines


def crash_lines(crash: str | None, frames: Iterable[Frame]) -> list[str]:
    """A crash as a traceback of the bot's own frames, escaped."""
    return [printable(line) for line in traceback_lines(crash, frames)]


class LiveLog:
    """A log sink that writes each piece of a bot's output, as it comes, to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, who: str, ply: int | str, text: str) -> None:
        for line in prefixed(who, ply, text):
            print(line, file=self.stream, flush=True)
