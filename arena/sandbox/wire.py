"""The framing of the spawner's control messages, between the arena's own processes:
a length, then a pickle. (A bot process is spoken to in JSON lines only: see
:mod:`arena.protocol.messages`.)

Bot processes are forked from the spawner, which imports this module and little
else: every module it loads is copied, page by page, into every bot process, so
what they share stays small.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any, NamedTuple

OUTPUT_NAME = "output.txt"  # what the bot printed, in its working directory
# The first line a bot process sends, before its job and so before any of the bot's
# code has run: it is confined and ready. Anything else in its place (a line that
# says why, or the end of the channel) is a failure of the arena, not of a bot.
CONFINED = b'{"sandbox": "confined"}\n'
_HEADER = struct.Struct("!I")


class Ending(NamedTuple):
    """How a bot process ended, as its spawner saw it when it reaped it."""

    status: int  # its wait status
    cpu_seconds: float  # processor time it used (user and system), with its children's that it reaped
    # Whether its memory group reached its limit and the out-of-memory killer
    # killed in it, while it ran; None where the group's counters cannot be read.
    over_memory: bool | None


# --- messages: a length, then a pickle (only ever between the arena's own processes) ---


def encode(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def read_message(fd: int) -> Any | None:
    """The next message, blocking; None when the other end has closed."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def take_message(buffer: bytes) -> tuple[Any, bytes] | None:
    """(the first message in ``buffer``, the rest), or None if it is not all there."""
    if len(buffer) < _HEADER.size:
        return None
    end = _HEADER.size + _HEADER.unpack_from(buffer)[0]
    if len(buffer) < end:
        return None
    return pickle.loads(buffer[_HEADER.size:end]), buffer[end:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            chunk = os.read(fd, size - len(data))
        except ConnectionResetError:  # the other end left with messages unread
            return None
        if not chunk:
            return None
        data += chunk
    return data
