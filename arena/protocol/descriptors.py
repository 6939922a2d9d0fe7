"""Protocol lines over a pair of descriptors, with a deadline on every read and write.

:class:`DescriptorBot` is the channel of every bot that runs in a process of its own:
a sandboxed bot (one socket, both ways: :class:`arena.sandbox.proxy.SandboxedBot`)
and a program run without the sandbox (its stdin and stdout pipes:
:class:`arena.protocol.program.LocalProgram`). The referee never blocks on a bot: a
bot that stops reading loses on time, one that never answers too, and one that
leaves is asked why (:meth:`DescriptorBot._death_reason`).
"""

from __future__ import annotations

import os
import select
import time

from arena.bot import BotFailure
from arena.protocol import messages
from arena.protocol.player import ChannelBot

# A fast bot answers within this. Waiting for its answer by polling, not by
# sleeping in the kernel, saves the wake-up: tens of microseconds a message on
# a virtual machine, more than a random bot takes to move. (Only the referee
# polls: a bot process waiting for its next turn sleeps, leaving the processor
# to the game.)
POLL_SECONDS = 0.0002
#: Seconds a bot has to leave by itself after ``quit``.
QUIT_SECONDS = 1.0


class BotTimeout(BotFailure):
    """The bot did not answer within the time it had."""


def wait_readable(fd: int, timeout: float | None) -> bool:
    """True once ``fd`` has data (or its end) to read, False after ``timeout`` seconds.
    Polls for a moment first, yielding the processor to anything else that is ready."""
    poll_until = time.perf_counter() + (POLL_SECONDS if timeout is None else min(POLL_SECONDS, timeout))
    while True:
        if select.select([fd], [], [], 0)[0]:
            return True
        if time.perf_counter() >= poll_until:
            break
        os.sched_yield()
    left = None if timeout is None else max(timeout - POLL_SECONDS, 0.0)
    return bool(select.select([fd], [], [], left)[0])


class DescriptorBot(ChannelBot):
    """A protocol player whose bot reads requests from ``_writer`` and answers on
    ``_reader`` (one socket may be both), both non-blocking. A subclass opens them
    in :meth:`_connect`, says why the bot left (:meth:`_death_reason`), and may
    wake a paused bot that must read to make room (:meth:`_stalled`)."""

    _reader: int | None = None
    _writer: int | None = None
    _buffer: bytes = b""

    def _stalled(self) -> None:
        """The bot is not taking what is written to it: a paused bot runs from here on."""

    def _death_reason(self) -> str:
        """Why the bot left (its end of the channel closed): a forfeit reason."""
        return "exited: closed its connection to the arena"

    def exit_code(self, seconds: float) -> int | None:
        """How the bot's process ended, waiting up to ``seconds``: its exit code, or
        minus the number of the signal that killed it; None while it runs. (A game
        never asks: its result stands however the bot leaves. ``arena check`` does.)"""
        raise NotImplementedError

    def _send(self, data: bytes, seconds: float) -> None:
        """Write all of ``data`` within ``seconds``: a bot that stops reading loses on
        time, never hangs the referee."""
        assert self._writer is not None
        deadline = time.monotonic() + seconds
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._writer, view):]
                continue
            except BlockingIOError:
                self._stalled()  # a frozen bot cannot make room: it runs from here on
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self._writer], [], left)[1]:
                raise BotTimeout(f"time: did not take the arena's message within {seconds:.3g} s")

    def _receive(self, seconds: float, since: float) -> bytes:
        """The bot's next line, within ``seconds`` of ``since``."""
        assert self._reader is not None
        deadline = since + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotTimeout(f"time: no answer within {seconds:.3g} s")
            if not wait_readable(self._reader, left):
                continue
            try:
                chunk = os.read(self._reader, 65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:  # it left with our request unread
                chunk = b""
            if not chunk:
                raise BotFailure(self._death_reason())
            self._buffer += chunk
            if len(self._buffer) > messages.MAX_ANSWER:
                raise BotFailure("protocol: answer too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _unasked(self) -> bytes:
        """What the bot sent after its last answer: what was read with it, and
        what waits on the channel now (read without waiting)."""
        if self._reader is not None and not self._buffer and select.select([self._reader], [], [], 0)[0]:
            try:
                self._buffer = os.read(self._reader, 65536)
            except (BlockingIOError, ConnectionResetError):
                pass  # nothing after all, or the bot gone: its next answer says which
        return self._buffer

    def _send_quit(self) -> None:
        """Send ``quit`` (BotFailure or OSError when the bot does not take it)."""
        self._send(messages.encode(messages.Quit()), QUIT_SECONDS)

    def _quit_and_wait(self) -> None:
        """Send ``quit`` and wait (at most :data:`QUIT_SECONDS`) for the bot to close
        its end: whatever it does, it is killed next, and the game's result stands."""
        try:
            self._send_quit()
            self._closed_within(QUIT_SECONDS)
        except (BotFailure, OSError):
            pass  # gone already, or not listening: killed all the same

    def _closed_within(self, seconds: float) -> bool:
        """Whether the bot closes its end within ``seconds`` (what it sends meanwhile is dropped)."""
        assert self._reader is not None
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and wait_readable(self._reader, left):
            try:
                if not os.read(self._reader, 65536):
                    return True
            except BlockingIOError:
                continue
            except OSError:
                return True
        return False
