"""Runs an untrusted bot in a process of its own, one process per game.

The bot process is forked by this process's spawner (:mod:`arena.sandbox.spawner`), a
small interpreter with Python and the engine already loaded, ahead of need: a
game takes one that is ready and gives it its job. Before any of the bot's code
runs, it (:mod:`arena.sandbox.bot_process`) is the first process of a PID namespace
of its own, in the spawner's network namespace (no network), with an IPC
namespace of its own; it has joined its control groups (memory and processes
counted for the bot as a whole, a freezer); it leads a new session, has a
private working directory, its output capped, resource limits, no capabilities,
Landlock rules and a seccomp filter. docs/sandbox.md says what each
gives and where it holds; :mod:`arena.sandbox.doctor` reports it for this machine.

It speaks protocol v1 (:mod:`arena.protocol.messages`: JSON lines) over a socket
(never stdin/stdout, which the bot may use or abuse): the job first, then the
game; :class:`~arena.protocol.player.ProtocolPlayer` is the client, this module
gives it the channel. This side enforces a deadline on every write to it and every answer,
freezes it while it is not on move (when it could run), and kills it at the end
of the game, which ends every process in its namespace. It refuses to start an
untrusted bot where the namespaces or the control groups could not be made,
unless the weak sandbox was accepted (``arena --weak-sandbox``).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from arena.bot import Bot, BotFailure
from arena.errors import ArenaFault
from arena.protocol import messages
from arena.protocol.descriptors import DescriptorBot
from arena.protocol.player import ChannelBot
from arena.protocol.program import LogFile, place_program
from arena.records import BotCode, Limits
from arena.sandbox import cgroups, process_control, spawner
from arena.sandbox.wire import CONFINED, OUTPUT_NAME, Ending


class SandboxedBot(DescriptorBot):
    """A proxy in the referee's process for a bot running in its own process: a
    player of protocol v1 over the socket to it (and, for older callers, a Bot)."""

    def __init__(
        self,
        code: BotCode,
        options: dict[str, str],
        limits: Limits | None = None,
        spawners: spawner.ProcessSpawner | None = None,
    ) -> None:
        """``spawners``: where its bot processes come from; this process's
        spawner (:data:`arena.sandbox.spawner.PROCESS_SPAWNER`) unless given."""
        Bot.__init__(self)
        self.code = code
        self.spawners = spawners if spawners is not None else spawner.PROCESS_SPAWNER
        self.bot_options = dict(options)
        self.limits = limits or Limits()
        ChannelBot.__init__(self, self.limits.start_seconds, self.limits.move_seconds)
        self._pid: int | None = None
        self._channel: int | None = None  # a socket: requests go down it, answers come up
        self._reader = self._writer = None
        self._ended = False  # the bot process is gone (its group may live on)
        self._freezer: cgroups.Freezer | None = None  # stops the bot while it is not on move
        self._buffer = b""
        self._source: spawner.Spawner | None = None  # the spawner its process came from
        self._output: LogFile | None = None  # a program's: its stderr, the output file, read after each answer
        if code.is_program:
            self.program_options = dict(options)  # typed as it declares them, in new_game

    def close(self) -> None:
        """Kill the bot process and everything it started (the spawner collects them).
        A program is told ``quit`` first, and given a moment to leave by itself."""
        if self.code.is_program and self._channel is not None and not self._ended:
            self._quit()
        if self._output is not None:
            self._output.close()
            self._output = None
        if self._freezer is not None:
            self._freezer.close()  # thaws: a process frozen in a v1 group would not die
            self._freezer = None
        if self._pid is not None:
            process_control.kill_group(self._pid, leader_gone=self._ended)
            self._pid = None
        if self._channel is not None:
            os.close(self._channel)
            self._channel = self._reader = self._writer = None
        self._buffer = b""

    # --- the channel: a socket to a confined process ---------------------------------------

    def _connect(self) -> None:
        self._spawn()

    def _moving(self) -> None:
        self._thaw()

    def _stalled(self) -> None:
        self._thaw()

    def _waiting(self) -> None:
        self._freeze()

    def _spawn(self) -> None:
        """Take a spare bot process from the spawner and give it this bot's job.

        Until the job is sent no code of the bot's has run: whatever fails up to
        then (the spawner, a fork, the process's confinement, its control groups)
        is the arena's fault. A new spawner, with new groups and namespaces, is
        tried; if that fails too, :class:`ArenaFault`.
        """
        problem = "no spawner answered"
        for _ in range(3):
            try:
                source = self.spawners.get()
                _require_isolation(source.containment(self.limits.start_seconds))
                spare = source.take(self.code.entry_point, self.limits.start_seconds)
            except spawner.NoSpare as exc:  # alive, running other games' bots: kept for them
                problem = f"the spawner failed: {exc}"
                self.spawners.retire()
                continue
            except spawner.SpawnerError as exc:  # dead or hung: its bots are lost with it
                problem = f"the spawner failed: {exc}"
                self.spawners.replace()
                continue
            self._source = source
            self._pid, self._channel, self._ended = spare.pid, spare.channel, False
            self._reader = self._writer = spare.channel
            # Never blocked on the bot: every write waits only as long as the bot has.
            os.set_blocking(spare.channel, False)
            try:
                self._await_confinement()
                if spare.freezer is not None:
                    self._freezer = cgroups.Freezer(spare.freezer)
                if self.code.is_program:
                    place_program(self.code, spare.folder)
                    log = os.open(os.path.join(spare.folder, OUTPUT_NAME), os.O_RDONLY | os.O_NOFOLLOW)
                    self._output = LogFile(log)
                self._send(messages.encode(messages.Job(self.code, self.bot_options, self.limits)),
                           self.limits.start_seconds)
                return
            except (ArenaFault, BotFailure, OSError) as exc:  # BotFailure: it left (no bot code had run)
                problem = f"a bot process could not be confined: {exc}"
                self.close()
                # Its groups or namespaces may be what broke: a new spawner for what comes
                # next, the old one kept for the bot processes it runs (the other side's).
                self.spawners.retire()
        raise ArenaFault(f"sandbox: could not start a bot process ({problem})")

    def _quit(self) -> None:
        """Thaw the bot and let it leave by itself (see ``_quit_and_wait``)."""
        try:
            self._thaw()
        except (ArenaFault, OSError):
            return  # gone already: killed all the same
        self._quit_and_wait()

    def _printed(self, reply: dict[str, Any] | None) -> bytes:
        """A program's log is its stderr, in its output file; a Python bot's comes with its answers."""
        return self._output.new() if self._output is not None else super()._printed(reply)

    def _check_printed(self) -> None:
        """A program's writes past its output cap fail (RLIMIT_FSIZE, SIGXFSZ ignored:
        as the first process of its PID namespace the signal would not end it
        anyway), and it may carry on as if nothing happened: its output file at the
        cap is the forfeit (a Python bot's server says so itself)."""
        if self._output is not None and os.fstat(self._output.fd).st_size >= self.limits.output_kb * 1024:
            raise BotFailure(f"output: printed more than the {self.limits.output_kb} KB allowed")

    def _await_confinement(self) -> None:
        """Wait for the bot process's first line: confined and ready, or why not."""
        line = self._receive(self.limits.start_seconds, time.monotonic()) + b"\n"
        if line != CONFINED:
            try:
                said = messages.decode(line[:-1])
            except BotFailure:
                said = {}
            raise ArenaFault(str(said.get("sandbox") or f"unexpected first line {line[:80]!r}"))

    def _freeze(self) -> None:
        if self._freezer is not None:
            try:
                self._freezer.rest()
            except OSError as exc:  # its group is gone or broken: not the bot's doing
                raise ArenaFault(f"sandbox: could not freeze the bot process: {exc}") from None

    def _thaw(self) -> None:
        if self._freezer is not None:
            try:
                self._freezer.wake()
            except OSError as exc:
                raise ArenaFault(f"sandbox: could not thaw the bot process: {exc}") from None

    def _death_reason(self) -> str:
        """Why the bot process left, from its spawner. If the spawner itself is
        gone, so are its bot processes, killed with it: :class:`ArenaFault`; so is
        a process killed from outside the arena (see :meth:`_killed`)."""
        assert self._pid is not None and self._source is not None
        try:
            ending = self._source.ending(self._pid, 3.0)  # a loaded machine: the spawner is slow
        except spawner.SpawnerError as exc:
            raise ArenaFault(f"sandbox: the spawner of the bot's process died ({exc})") from None
        self._ended = ending is not None
        if ending is None:
            return "exited: closed its connection to the arena"
        if os.WIFSIGNALED(ending.status):
            sig = os.WTERMSIG(ending.status)
            if sig == signal.SIGKILL:
                return self._killed(ending)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (over its memory limit?)" if sig == signal.SIGSEGV else ""
            return f"exited: killed by {name}{hint}"
        return f"exited with code {os.WEXITSTATUS(ending.status)}"

    def exit_code(self, seconds: float) -> int | None:
        """How the bot process ended, from its spawner (see :meth:`_death_reason`)."""
        if self._pid is None or self._source is None or self._ended:
            return None
        try:
            ending = self._source.ending(self._pid, seconds)
        except spawner.SpawnerError as exc:
            raise ArenaFault(f"sandbox: the spawner of the bot's process died ({exc})") from None
        if ending is None:
            return None
        self._ended = True
        if os.WIFSIGNALED(ending.status):
            return -os.WTERMSIG(ending.status)
        return os.WEXITSTATUS(ending.status)

    def _killed(self, ending: Ending) -> str:
        """Why a bot process died of SIGKILL. The bot cannot send it to itself
        (the seccomp filter), nor lower its processor time limit (the kernel's
        SIGKILL at the hard limit); the arena kills a bot process only once it
        is done with it (:meth:`close`), and never asks why it died then. So a
        SIGKILL is the bot's fault over its processor time (the hard limit, a
        second after SIGXCPU, which the bot ignored: see :data:`CPU_COUNTED`)
        or when its memory group's limit killed it; otherwise it came from
        outside the arena (an operator, the machine's out-of-memory killer):
        :class:`ArenaFault`, the game is void. Where the group's counters cannot
        be read (no memory controller) or there is no filter, nothing tells
        those apart: charged to the bot, as before."""
        assert self._source is not None
        if ending.cpu_seconds >= (self.limits.cpu_seconds + 1) * CPU_COUNTED:
            return "exited: over its CPU time limit"
        if ending.over_memory:
            return "exited: killed over its memory limit"
        if ending.over_memory is None or not (self._source.report or {}).get("seccomp"):
            return "exited: killed by SIGKILL (over its memory limit?)"
        raise ArenaFault("sandbox: the bot's process was killed from outside the arena (SIGKILL)")


# The share of its hard processor time limit a process killed at that limit has
# used at least, as its spawner measures it. The kernel counts the limit in
# clock ticks, each charged whole to the task it interrupts; the spawner gets
# the exact run time (wait4's user and system time): on a shared virtual machine
# the kernel killed at a 2 s limit processes that had run 1.73 s. Half leaves
# room to spare: a bot killed from outside after more than half its processor
# time for the game (a backstop, far above what moves take) is charged with it.
CPU_COUNTED = 0.5

WEAK_SANDBOX_VARIABLE = "ARENA_WEAK_SANDBOX"  # set (to 1) by ``arena --weak-sandbox``


class SandboxUnavailable(BotFailure):
    """This machine cannot isolate untrusted bots, and weaker containment was not accepted."""


def weak_sandbox_accepted() -> bool:
    return os.environ.get(WEAK_SANDBOX_VARIABLE, "") not in ("", "0")


def _require_isolation(report: dict[str, Any]) -> None:
    """Fail closed: no untrusted bot runs without its own PID and network
    namespaces, or without the control groups that hold it as a whole (memory,
    processes, frozen off move), unless whoever runs the arena said so."""
    from arena.sandbox.doctor import refusal  # light: the spawner's handle is loaded already

    refused = refusal(report)
    if refused is not None and not weak_sandbox_accepted():
        raise SandboxUnavailable(refused)
