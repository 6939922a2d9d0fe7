"""Starting bot processes: the worker's side of the spawner.

A sandboxed bot gets a fresh process for every game. Forking the worker for it
would copy the page tables of everything the worker has loaded (the store, the
CLI, the ratings...), which costs milliseconds a game on a small virtual machine.
Instead each process that plays sandboxed games starts one *spawner*: a fresh,
small interpreter that has loaded only what a bot process needs
(:mod:`arena.sandbox.spawner_process`). It forks a bot process per request, in a fraction
of the time, and hands back one end of a socket to it.

The spawner never runs a bot's code itself: every game still starts from a
process that no bot has touched, so nothing one game does can reach the next.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from arena.sandbox import cgroups, process_control
from arena.sandbox.wire import Ending, encode, take_message


class SpawnerError(Exception):
    """The spawner did not answer (it died, or hung)."""


class NoSpare(SpawnerError):
    """The spawner answered, but could not make a bot process (a fork or a folder failed)."""


class Spare(NamedTuple):
    """A bot process forked ahead of need, confined, waiting for its job."""

    pid: int  # leader of its own process group (and first process of its PID namespace)
    channel: int  # our end of its socket: the job goes down it, then the game's requests
    freezer: cgroups.FreezerFiles | None  # how the referee freezes it
    folder: str  # its working directory: a program bot's files are written there before its job


class Spawner:
    """A handle on this process's spawner: ``take`` a bot process, ask how one ended.

    It keeps a stock of spare bot processes, confined and waiting: taking one
    costs no round trip, and its replacement is forked while the game is played.
    """

    STOCK = 4  # both sides of the next two games: replacements have a game's time to get ready

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self._process = subprocess.Popen(
            # -S: no site module; it loads import machinery the spawner does not
            # need, and every page the spawner holds is copied into every bot
            # process. -P: the current folder is not searched for modules (a bot
            # file named json.py there would run in the spawner, unconfined).
            # After the socket and this process: the plug-ins its bot processes may read.
            [sys.executable, "-S", "-P", "-m", "arena.sandbox.spawner_process", str(theirs.fileno()), str(os.getpid()),
             *process_control.plugin_paths()],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            env=_environment(),
        )
        theirs.close()
        self.owner = os.getpid()
        self._socket = ours
        self._buffer = b""
        self._fds: deque[int] = deque()  # received with spares, in the order of their messages
        self._stock: deque[Spare] = deque()
        self._asked = 0  # spares asked for, not yet received
        self._generation = 0  # spares forked before the last preload lack installed bots
        self._preloaded: set[str] = set()  # installed bots the spawner has loaded
        self._statuses: dict[int, Ending | None] = {}  # answers to status requests, by pid
        self._builders: deque[Spare | str] = deque()  # answers to build requests: a process, or why none
        self.report: dict[str, Any] | None = None  # what holds in its bot processes: its first message

    def containment(self, seconds: float = 10.0) -> dict[str, Any]:
        """What the spawner could set up for its bot processes (its first message):
        ``missing`` (core isolation it could not have, with why), ``controllers``
        (cgroup controllers), ``landlock`` (ABI version), ``seccomp``, ``user``."""
        try:
            deadline = time.monotonic() + seconds
            while self.report is None:
                self._read(block=True, deadline=deadline)
        except OSError as exc:
            raise SpawnerError(f"the spawner is gone ({exc})") from None
        return self.report

    @property
    def pid(self) -> int:
        return self._process.pid

    def running(self) -> bool:
        return self.owner == os.getpid() and self._process.poll() is None and self._socket.fileno() >= 0

    def take(self, installed: str | None, seconds: float) -> Spare:
        """A spare bot process. ``installed``: the installed bot it will run
        ("module:Class"), which the spawner then loads once, not every process."""
        try:
            if installed is not None and installed not in self._preloaded:
                self._preload(installed)
            self._read(block=False)
            deadline = time.monotonic() + seconds
            while not self._stock:
                self._ask_for_spares()
                self._read(block=True, deadline=deadline)
            spare = self._stock.popleft()
            self._ask_for_spares()  # its replacement, forked while this one plays
            return spare
        except OSError as exc:
            raise SpawnerError(f"the spawner is gone ({exc})") from None

    def builder(self, seconds: float) -> Spare:
        """A build process (:mod:`arena.sandbox.build`), forked now for one build:
        confined under the build profile, waiting for its job."""
        try:
            self._socket.sendall(encode(("build",)))
            deadline = time.monotonic() + seconds
            while not self._builders:
                self._read(block=True, deadline=deadline)
        except OSError as exc:
            raise SpawnerError(f"the spawner is gone ({exc})") from None
        answer = self._builders.popleft()
        if isinstance(answer, str):
            raise NoSpare(answer)
        return answer

    def ending(self, pid: int, seconds: float) -> Ending | None:
        """How bot process ``pid`` ended (its wait status, the processor time it
        used, whether its memory limit killed it), waiting up to ``seconds``; None
        if it is still running or is not known."""
        try:
            self._socket.sendall(encode(("status", pid, seconds)))
            deadline = time.monotonic() + seconds + 5.0
            while pid not in self._statuses:
                self._read(block=True, deadline=deadline)
        except OSError as exc:
            raise SpawnerError(f"the spawner is gone ({exc})") from None
        return self._statuses.pop(pid)

    def close(self) -> None:
        """Let the spawner go: it kills what is left of its bot processes and exits."""
        if self.owner == os.getpid():
            for spare in self._stock:
                os.close(spare.channel)
            self._stock.clear()
            self._socket.close()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            # A spawner that is not root may be unable to leave its group for the one it
            # came from (that one's cgroup.procs is not its user's): it has left it now.
            for base in (self.report or {}).get("bases") or []:
                cgroups.remove_base(base)

    def _preload(self, target: str) -> None:
        self._socket.sendall(encode(("preload", target)))
        self._preloaded.add(target)
        self._generation += 1
        for spare in self._stock:  # forked without the installed bots: let them go
            os.close(spare.channel)
        self._stock.clear()

    def _ask_for_spares(self) -> None:
        while len(self._stock) + self._asked < self.STOCK:
            self._socket.sendall(encode(("spare",)))
            self._asked += 1

    # --- answers ----------------------------------------------------------------------

    def _read(self, block: bool, deadline: float = 0.0) -> None:
        """Take in what the spawner has sent; if ``block``, at least one answer."""
        while True:
            message = take_message(self._buffer)
            if message is not None:
                answer, self._buffer = message
                self._file(answer)
                if block:
                    return
                continue
            wait = max(deadline - time.monotonic(), 0.0) if block else 0.0
            if not select.select([self._socket], [], [], wait)[0]:
                if block:
                    raise SpawnerError("the spawner did not answer in time")
                return
            data, fds, _, _ = socket.recv_fds(self._socket, 65536, 8)
            self._fds.extend(fds)
            if not data:
                raise SpawnerError("the spawner is gone")
            self._buffer += data

    def _file(self, answer: tuple[Any, ...]) -> None:
        if answer[0] == "spare":
            _, pid, generation, freezer, folder = answer
            self._asked -= 1
            channel = self._fds.popleft()
            if generation == self._generation:
                self._stock.append(Spare(pid, channel, freezer, folder))
            else:
                os.close(channel)  # it leaves when its channel closes
        elif answer[0] == "builder":
            _, pid, freezer, folder = answer
            self._builders.append(Spare(pid, self._fds.popleft(), freezer, folder))
        elif answer[0] == "no builder":
            self._builders.append(str(answer[1]))
        elif answer[0] == "status":
            self._statuses = {answer[1]: answer[2]}  # an answer that came too late is dropped
        elif answer[0] == "hello":
            self.report = answer[1]
        elif answer[0] == "no spare":
            self._asked -= 1
            raise NoSpare(str(answer[1]))
        else:
            raise SpawnerError(f"unexpected answer {answer!r}")


def _environment() -> dict[str, str]:
    """What the spawner, and so every bot, sees of the environment: the module
    path and the locale, the arena's and numba's settings; no credentials or
    tokens of whoever runs the arena."""
    kept = {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in kept or k.startswith(("ARENA_", "NUMBA_"))}
    # The path site would have built, from here: the arena's own folder first,
    # then this process's (without the current folder, as -P).
    package_root = str(Path(__file__).resolve().parents[2])
    try:
        here = os.getcwd()
    except OSError:  # it was removed
        here = "."
    entries = [p for p in sys.path if p and p not in (".", here)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([package_root, *entries]))
    return env


# --- one spawner per process ----------------------------------------------------------


class ProcessSpawner:
    """Owns "this process's spawner": the one a process's sandboxed bots share.

    Nothing starts when it is made: the spawner is started on first use
    (:meth:`get`), started again when it has died, replaced on request when it
    stops answering (:meth:`replace`), and let go with :meth:`close` by whoever
    is done playing (a tournament worker, the CLI). A forked child (a worker of
    a pool) never uses its parent's spawner: the child lets go of its inherited
    copy of the socket at once, so the spawner still sees its owner leave.
    """

    def __init__(self) -> None:
        self._spawner: Spawner | None = None
        self._retired: list[Spawner] = []  # replaced, still running the games they started
        self._watching_forks = False

    def get(self) -> Spawner:
        """The spawner, started on first use and again if it has died."""
        current = self._spawner
        if current is None or not current.running():
            if current is not None and current.owner == os.getpid():
                current.close()
            current = self._spawner = self._start()
        return current

    def replace(self) -> Spawner:
        """A new spawner, after the current one failed to answer."""
        current, self._spawner = self._spawner, None
        if current is not None and current.owner == os.getpid():
            current._process.kill()
            current.close()
        return self.get()

    def retire(self) -> Spawner:
        """A new spawner for the bot processes to come, after one of this one's
        could not be confined (its groups or namespaces may be broken). The old one
        is not killed: it still runs the bot processes of games being played, and
        is let go with :meth:`close` (or once too many are retired)."""
        current, self._spawner = self._spawner, None
        if current is not None and current.owner == os.getpid():
            self._retired.append(current)
            while len(self._retired) > MAX_RETIRED:
                self._retired.pop(0).close()
        return self.get()

    def close(self) -> None:
        """Let the spawner go (it kills its bot processes and exits); the next
        :meth:`get` starts a new one."""
        current, self._spawner = self._spawner, None
        retired, self._retired = self._retired, []
        for each in [*retired, *([current] if current is not None else [])]:
            each.close()

    def _start(self) -> Spawner:
        if not self._watching_forks:
            # Registered with the first spawner, not at import: a process that
            # never plays sandboxed games pays nothing. Weakly, so an owner made
            # for a test can still go away.
            forget = weakref.WeakMethod(self._forget_in_child)
            os.register_at_fork(after_in_child=lambda: _call_if_alive(forget))
            self._watching_forks = True
        return Spawner()

    def _forget_in_child(self) -> None:
        # Close the inherited socket and spares here, in the child: the spawner
        # must see its owner leave when the parent does.
        current, self._spawner = self._spawner, None
        retired, self._retired = self._retired, []
        for each in [*retired, *([current] if current is not None else [])]:
            try:
                each._socket.close()
                for spare in each._stock:
                    os.close(spare.channel)
            except OSError:
                pass


def _call_if_alive(method: weakref.WeakMethod[Callable[[], None]]) -> None:
    bound = method()
    if bound is not None:
        bound()


#: Retired spawners kept for the games they still run; beyond this many the oldest goes.
MAX_RETIRED = 2

#: This process's spawner, shared by every sandboxed bot that is given no other.
PROCESS_SPAWNER = ProcessSpawner()
