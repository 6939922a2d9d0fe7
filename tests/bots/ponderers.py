"""Bots that try to think on their opponent's time, as a hostile author would, and
report (in their info) how much processor time they got while not on move.

Each replaces the ``os`` module the serving loop of its bot process reads and writes
through (``arena.protocol.server``), so code of its own runs after it has answered
and while it waits for the next request: no thread, no timer, one task at the
moment the referee looks.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
import types

from arena.bot import Bot, Choice


def _serving_module() -> types.ModuleType:
    return sys.modules["arena.protocol.server"]


class _Os(types.ModuleType):
    """``os`` for the serving loop: the real module's, but for what a subclass replaces."""

    def __init__(self, owner: Bot) -> None:
        super().__init__("os")
        self._owner = owner

    def __getattr__(self, name: str) -> object:  # everything not replaced is the real module's
        return getattr(os, name)


class _Spinning(_Os):
    """``os`` for the serving loop, but ``read`` computes until a request is there."""

    _owner: SpinsWhileWaiting

    def read(self, fd: int, n: int) -> bytes:  # type: ignore[override]
        started = time.process_time()
        work = 0
        while not select.select([fd], [], [], 0)[0]:
            for i in range(2000):  # thinking
                work += i * i
        self._owner.off_move += time.process_time() - started
        return os.read(fd, n)


class SpinsWhileWaiting(Bot):
    """One process: its read spins, computing, while the opponent is on move."""

    def __init__(self) -> None:
        super().__init__()
        self.off_move = 0.0
        self.moves = 0

    def choose_move(self, board):  # type: ignore[no-untyped-def]
        server = _serving_module()
        if not isinstance(server.os, _Spinning):
            server.os = _Spinning(self)
        self.moves += 1
        return Choice(board.legal_moves()[0], {"off_move_cpu": self.off_move, "waits": self.moves - 1})


class _Forking(_Os):
    """``os`` for the serving loop: after each answer is written, start helpers
    that spin in sessions of their own; before the next answer, stop and reap them,
    adding up the processor time they had."""

    _owner: ForksAfterAnswering

    def write(self, fd: int, data: bytes) -> int:  # type: ignore[override]
        written = os.write(fd, data)
        if b'"move"' in bytes(data):  # an answer: now think in the opponent's time
            time.sleep(0.01)  # once the referee has looked: it sees one task
            self._owner.start_helpers()
        return written

    def read(self, fd: int, n: int) -> bytes:  # type: ignore[override]
        select.select([fd], [], [], None)  # the next request: stop thinking, before it is answered
        self._owner.reap_helpers()
        return os.read(fd, n)


class ForksAfterAnswering(Bot):
    """Several processes, started only after each answer and reaped before the next,
    so the referee never counts more than one task."""

    HELPERS = 3

    def __init__(self) -> None:
        super().__init__()
        self.off_move = 0.0
        self.helpers: list[int] = []
        self.moves = 0

    def start_helpers(self) -> None:
        for _ in range(self.HELPERS):
            pid = os.fork()
            if pid == 0:
                try:
                    os.setsid()
                    work = 0
                    while True:
                        for i in range(2000):
                            work += i * i
                finally:
                    os._exit(0)
            self.helpers.append(pid)

    def reap_helpers(self) -> None:
        for pid in self.helpers:
            try:
                os.kill(pid, signal.SIGTERM)  # a bot may not send SIGKILL
                _, _, usage = os.wait4(pid, 0)
                self.off_move += usage.ru_utime + usage.ru_stime
            except OSError:
                pass
        self.helpers = []

    def choose_move(self, board):  # type: ignore[no-untyped-def]
        server = _serving_module()
        if not isinstance(server.os, _Forking):
            server.os = _Forking(self)
        self.moves += 1
        return Choice(board.legal_moves()[0], {"off_move_cpu": self.off_move, "waits": self.moves - 1})
