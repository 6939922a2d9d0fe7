"""A bot's process killed from outside the arena (an operator, a test, the machine's
out-of-memory killer) is the arena's failure, not the bot's: its game is void.
A bot cannot make its own death look like that: it may not send SIGKILL to any of
its processes, nor lower its processor time limit, and a SIGKILL over its memory
or processor time is still charged to it. Played for real, in the sandbox."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading

import pytest

from arena.bot import Bot
from arena.engine.game import Rules
from arena.records import BotCode, GameRecord, GameSpec, Limits, Termination
from arena.referee.referee import play_game
from arena.sandbox.proxy import SandboxedBot
from arena.sandbox.spawner import PROCESS_SPAWNER

REPORT = PROCESS_SPAWNER.get().containment() if sys.platform == "linux" else {}
pytestmark = pytest.mark.skipif(
    not REPORT.get("seccomp") or "memory" not in REPORT.get("controllers", {}),
    reason="needs the seccomp filter and a memory control group for bot processes",
)
RANDOM = BotCode("random", entry_point="bots.random_bot:RandomBot")


def boxed(source: str, limits: Limits | None = None) -> SandboxedBot:
    text = textwrap.dedent(source)
    return SandboxedBot(BotCode("bot.py", text=text), {}, limits or Limits(move_seconds=120.0))


def spec(key: str = "1") -> GameSpec:
    return GameSpec(key=key, rules=Rules(), first="boxed", second="other", pairing="p", seed=1)


def first_player_infos(record: GameRecord) -> list[dict]:
    return [move.info for move in record.moves if move.info and move.ply % 2 == 0]


class KillsItsOpponentsProcess(Bot):
    """A trusted bot of this process that, on its first move, has the sandboxed
    opponent's process killed with SIGKILL a moment later (while the opponent
    thinks about its next move, which takes it long)."""

    def __init__(self, opponent: SandboxedBot) -> None:
        super().__init__()
        self.opponent = opponent

    def choose_move(self, board):  # type: ignore[no-untyped-def]
        pid = self.opponent._pid
        assert pid is not None
        killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
        killer.daemon = True
        killer.start()
        return board.legal_moves()[0]


THINKS_LONG = """
    import time
    from arena.bot import Bot

    class ThinksLong(Bot):
        def choose_move(self, board):
            if board.ply >= 2:
                time.sleep(60)
            return board.legal_moves()[0]
"""


def test_a_bot_whose_process_is_killed_from_outside_mid_move_does_not_lose_the_game_is_void() -> None:
    victim = boxed(THINKS_LONG)
    record = play_game(spec(), (victim, KillsItsOpponentsProcess(victim)))
    assert record.termination == Termination.VOID, (record.termination, record.reason)
    assert record.winner is None
    assert record.reason == "the arena failed: sandbox: the bot's process was killed from outside the arena (SIGKILL)"


TRIES_TO_KILL_ITSELF = """
    import os, resource, signal, threading, time
    from arena.bot import Bot, Choice

    def outcome(attempt):
        try:
            attempt()
        except Exception as exc:
            return type(exc).__name__
        time.sleep(0.2)  # a signal that went through would have ended it by now
        return "done"

    def child_kills_its_parent():
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(writer, outcome(lambda: os.kill(os.getppid(), signal.SIGKILL)).encode())
            os._exit(0)
        os.close(writer)
        said = os.read(reader, 100).decode()
        os.waitpid(pid, 0)
        if said != "done":
            raise PermissionError(said)

    ATTEMPTS = {
        "kill": lambda: os.kill(os.getpid(), signal.SIGKILL),
        "killpg": lambda: os.killpg(os.getpgid(0), signal.SIGKILL),
        "pthread_kill": lambda: signal.pthread_kill(threading.get_ident(), signal.SIGKILL),
        "child": child_kills_its_parent,
        "pdeathsig": lambda: _pdeathsig(),
        "cpu_limit": lambda: resource.setrlimit(resource.RLIMIT_CPU, (1, 1)),
    }

    def _pdeathsig():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    class TriesToKillItself(Bot):
        def choose_move(self, board):
            info = {}
            if board.ply == 0:
                info = {name: outcome(attempt) for name, attempt in ATTEMPTS.items()}
                info["cpu_hard_limit"] = resource.getrlimit(resource.RLIMIT_CPU)[1]
            return Choice(board.legal_moves()[0], info)
"""


def test_a_bot_cannot_send_sigkill_to_its_own_processes_and_plays_on() -> None:
    bot = boxed(TRIES_TO_KILL_ITSELF, Limits(cpu_seconds=30))
    record = play_game(spec(), (bot, SandboxedBot(RANDOM, {}, Limits())))
    assert record.termination in (Termination.WIN, Termination.DRAW), (record.termination, record.reason)
    tried = first_player_infos(record)[0]
    # resource.setrlimit says EPERM as ValueError; the hard limit is the arena's still.
    assert tried == {"kill": "PermissionError", "killpg": "PermissionError", "pthread_kill": "PermissionError",
                     "child": "PermissionError", "pdeathsig": "PermissionError", "cpu_limit": "ValueError",
                     "cpu_hard_limit": 31}, tried


HOARDS_MEMORY = """
    import os
    from arena.bot import Bot

    class HoardsMemory(Bot):
        def choose_move(self, board):
            # Memory no mapping holds: past the address-space limit, only the
            # memory group counts it (and its limit kills the process).
            fd = os.memfd_create("hoard")
            chunk = b"x" * (1024 * 1024)
            while True:
                os.write(fd, chunk)
"""


def test_a_bot_killed_over_its_memory_limit_is_charged_with_it() -> None:
    record = play_game(spec(), (boxed(HOARDS_MEMORY, Limits(memory_mb=64, output_kb=1024 * 1024, move_seconds=120.0)),
                                SandboxedBot(RANDOM, {}, Limits())))
    assert record.termination == Termination.FORFEIT and record.winner == 1, (record.termination, record.reason)
    assert record.reason == "exited: killed over its memory limit", record.reason


BURNS_CPU = """
    import signal
    from arena.bot import Bot

    class BurnsProcessorTime(Bot):
        def choose_move(self, board):
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # the soft limit's warning, ignored
            work = 0
            while True:
                work += 1
"""


def test_a_bot_killed_over_its_processor_time_is_charged_with_it() -> None:
    record = play_game(spec(), (boxed(BURNS_CPU, Limits(cpu_seconds=1, move_seconds=300.0)),
                                SandboxedBot(RANDOM, {}, Limits())))
    assert record.termination == Termination.FORFEIT and record.winner == 1, (record.termination, record.reason)
    assert record.reason == "exited: over its CPU time limit", record.reason

