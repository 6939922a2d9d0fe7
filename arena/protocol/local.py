"""A bot file played in this process, spoken to in protocol v1: for a system
without the sandbox (see :mod:`arena.sandbox.system`), where an author still plays
their own bot file on their own machine.

The requests go to the same server a sandboxed bot process runs
(:class:`~arena.protocol.server.Server`), so the bot is loaded, asked and held to
the protocol as it would be in the sandbox: a crash, a non-move, a failed import is
the same forfeit with the same reason. What the sandbox adds is missing: nothing
stops the bot mid-move (a move over its time is a forfeit once it is answered),
limits its memory, or keeps it from the files and network of the one running it.
"""

from __future__ import annotations

import time
from collections import deque

from arena.bot import Bot, BotFailure
from arena.protocol import capture, messages
from arena.protocol.player import ChannelBot
from arena.protocol.server import Server, server_for
from arena.records import BotCode, Limits


class UnsandboxedBot(ChannelBot):
    """A bot file's code run in this process, behind the protocol's server."""

    def __init__(self, code: BotCode, options: dict[str, str], limits: Limits | None = None) -> None:
        Bot.__init__(self)
        self.code = code
        self.bot_options = dict(options)
        self.limits = limits or Limits()
        ChannelBot.__init__(self, self.limits.start_seconds, self.limits.move_seconds)
        self._server: Server | None = None
        self._answers: deque[bytes] = deque()  # the server's answers, not read yet

    def close(self) -> None:
        if self._server is not None:
            self._server.bot.close()
            self._server = None
        self._answers.clear()

    def _connect(self) -> None:
        server = server_for(messages.Job(self.code, self.bot_options, self.limits))
        if isinstance(server, Server):
            self._server = server
        else:  # it could not be loaded: its first answer says why, then it is gone
            self._answers.append(messages.encode(server).rstrip(b"\n"))

    def _send(self, data: bytes, seconds: float) -> None:
        for line in data.splitlines():
            if self._server is None:
                return
            # What the bot prints comes with its answer, as from a sandboxed bot's
            # output file: the player's log reads it from there.
            printed: list[str] = []
            capture.routed()
            capture.into(printed)
            try:
                answer = self._server.answer(messages.decode_request(line))
            finally:
                capture.into(None)
            if answer is None:  # quit
                self._server = None
                return
            answer = messages.with_output(answer, "".join(printed).encode("utf-8", "replace"))
            self._answers.append(messages.encode(answer).rstrip(b"\n"))

    def _receive(self, seconds: float, since: float) -> bytes:
        if not self._answers:
            raise BotFailure("the bot stopped answering (it could not be loaded)")
        took = time.monotonic() - since
        if took > seconds:
            raise BotFailure(f"time: no answer within {seconds:.3g} s (answered after {took:.3g} s)")
        return self._answers.popleft()

    def _unasked(self) -> bytes:
        return b""
