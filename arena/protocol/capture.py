"""What a bot called in this process writes to ``sys.stdout`` and ``sys.stderr``,
captured per call and per thread.

Swapping ``sys.stdout`` around each call (``contextlib.redirect_stdout``) is not
safe with threads: two games played side by side would restore each other's
streams, and one bot's lines would end in the other's log, or for good in one of
them. Instead, once, each of the two streams is wrapped in a :class:`_Routed`
stream that sends a write to the capture of the calling thread when it has one,
and to the stream it wraps otherwise. Each thread has one :class:`Slot`, made
the first time it captures: switching a capture on and off is two assignments
to an attribute of the slot, which a caller that switches on every move (a
random bot's move costs about as much as a few calls) keeps at hand; a bot
that prints nothing pays nothing more. (What a bot writes
below Python, to its descriptors, or from threads of its own, is not caught: a
bot that must be held to what it prints runs in the sandbox, where everything
it writes is.)
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any, TextIO

_local = threading.local()
_installing = threading.Lock()


class Slot:
    """Where one thread's writes go: ``capture``, the list they are appended to
    (None: the streams), and ``streams``, the two streams that :func:`into` puts
    back when the capture ends."""

    __slots__ = ("capture", "streams")

    def __init__(self) -> None:
        self.capture: list[str] | None = None
        self.streams: tuple[Any, Any] | None = None


def slot() -> Slot:
    """The calling thread's slot (made on its first call). It belongs to that
    thread: set its ``capture`` only from it."""
    try:
        return _local.slot  # type: ignore[no-any-return]
    except AttributeError:
        made = _local.slot = Slot()
        return made


class _Routed(io.TextIOBase):
    """A text stream that writes to the calling thread's capture, if it has one."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def write(self, text: str) -> int:
        capture = _capturing()
        if capture is None:
            return self.wrapped.write(text)
        capture.append(text)
        return len(text)

    def flush(self) -> None:
        if _capturing() is None:
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...: the wrapped stream's
        return getattr(self.wrapped, name)


def _capturing() -> list[str] | None:
    """The calling thread's capture, if it has one on."""
    mine = getattr(_local, "slot", None)
    return None if mine is None else mine.capture


def _route() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` (again, if something replaced them since)."""
    with _installing:
        if not isinstance(sys.stdout, _Routed):
            sys.stdout = _Routed(sys.stdout)
        if not isinstance(sys.stderr, _Routed):
            sys.stderr = _Routed(sys.stderr)


def routed() -> None:
    """Make sure ``sys.stdout`` and ``sys.stderr`` can be captured (:func:`into`):
    once before a game, and again if something replaced them since."""
    if type(sys.stdout) is not _Routed or type(sys.stderr) is not _Routed:
        _route()


def into(captured: list[str] | None) -> None:
    """From now on, what this thread writes to ``sys.stdout`` and ``sys.stderr`` goes
    to the end of ``captured`` (None: to the streams again). Call :func:`routed` first.

    A bot called in between may have set ``sys.stdout`` or ``sys.stderr`` to a stream
    of its own: at None they are put back as they were, so that the arena's own
    output goes on reaching the terminal and the bot's next call is captured."""
    mine = slot()
    if captured is not None:
        mine.streams = (sys.stdout, sys.stderr)
    elif mine.streams is not None:
        streams, mine.streams = mine.streams, None
        if sys.stdout is not streams[0]:
            sys.stdout = streams[0]
        if sys.stderr is not streams[1]:
            sys.stderr = streams[1]
    mine.capture = captured
