"""Building an uploaded program in the sandbox, under a build profile of its own.

A build is a bot process like any other (its own PID, network and IPC namespaces,
its control groups, no capabilities, Landlock, seccomp, resource limits), forked
by the spawner for one command (:meth:`arena.sandbox.spawner.Spawner.builder`),
with what a compiler needs and a playing bot may not have: its folder is its own
to change (make, remove and rename files and folders there), and the build
filter (:func:`arena.sandbox.seccomp.prepare_build`) lets it set its files'
modes and times and lock them. Everything else it may only read: the toolchains
(``/usr``), or not see at all. docs/sandbox.md, "Builds", says what holds.

The referee's side (this module) writes the upload's files into the folder, sends
the command, waits at most the wall-clock limit, then freezes the build and reads
the folder back: the built files (bounded) become the program's files, its output
(stdout and stderr, bounded) its build log.
"""

from __future__ import annotations

import os
import select
import stat
import time
from dataclasses import dataclass

from arena.bot import BotFailure
from arena.errors import ArenaFault, BuildFailed, NoSandbox
from arena.protocol import messages
from arena.protocol.program import place_program
from arena.records import BotCode, Limits, ProgramFile
from arena.sandbox import cgroups, process_control, spawner
from arena.sandbox.proxy import SandboxUnavailable, _require_isolation
from arena.sandbox.wire import CONFINED, OUTPUT_NAME
from arena.text import clip


@dataclass(frozen=True)
class BuildLimits:
    """What a build may use."""

    wall_seconds: float = 120.0  # from its command's start to its end
    cpu_seconds: int = 300  # processor time, per process
    memory_mb: int = 2048  # all its processes together, files it writes in its folder included
    processes: int = 256  # processes and threads at once
    log_kb: int = 1024  # what it may print, stdout and stderr together; more is a refusal
    file_mb: int = 64  # the largest file it may write
    files: int = 2000  # files the built folder may hold
    total_mb: int = 64  # their bytes together


#: What is kept of a build's log, at most (the start: a compiler's first error comes first).
KEPT_LOG_BYTES = 64 * 1024


@dataclass(frozen=True)
class Built:
    """A build that succeeded: the folder's files after it, its log, how long it took."""

    files: tuple[ProgramFile, ...]
    log: str
    seconds: float


def build_in_sandbox(
    files: tuple[ProgramFile, ...],
    command: tuple[str, ...],
    limits: BuildLimits = BuildLimits(),
    spawners: spawner.ProcessSpawner | None = None,
) -> Built:
    """Run ``command`` in a build process whose folder holds ``files``; the folder's
    files after it. :class:`BuildFailed` when the command fails or a limit is
    broken; :class:`ArenaFault` when the sandbox fails; fails closed where this
    machine cannot isolate untrusted code (:class:`~arena.sandbox.proxy.SandboxUnavailable`)."""
    builder = _builder(spawners if spawners is not None else spawner.PROCESS_SPAWNER)
    freezer = cgroups.Freezer(builder.freezer) if builder.freezer is not None else None
    try:
        _expect(builder.channel, CONFINED, 10.0)
        try:
            place_program(BotCode("build", files=files), builder.folder)
        except BotFailure as failure:
            raise BuildFailed(failure.reason) from None
        job = messages.Job(BotCode("build", program=command), {}, Limits(
            memory_mb=limits.memory_mb, output_kb=limits.file_mb * 1024, cpu_seconds=limits.cpu_seconds,
            processes=limits.processes))
        os.write(builder.channel, messages.encode(job))
        started = time.monotonic()
        line = _line(builder.channel, limits.wall_seconds)
        seconds = time.monotonic() - started
        if freezer is not None:
            freezer.rest()  # nothing it left behind changes the folder while it is read
        log, printed = _log(builder.folder)
        if line is None:
            raise BuildFailed(f"its build took more than {limits.wall_seconds:g} s (stopped)", log)
        if printed > limits.log_kb * 1024:
            raise BuildFailed(f"its build printed more than {limits.log_kb} KB ({printed // 1024} KB)", log)
        ended = messages.decode(line, what="build answer")
        if ended.get("build") == "signal":
            raise BuildFailed(f"its build was killed by signal {ended.get('signal')}"
                              " (over its memory or processor time?)", log)
        if ended.get("build") != "exit":
            raise BuildFailed(f"its build did not start: {clip(str(ended.get('why')), 200)}", log)
        if ended.get("code") != 0:
            raise BuildFailed(f"its build failed (exit {ended.get('code')})", log)
        return Built(_built_files(builder.folder, limits), log, seconds)
    except OSError as exc:
        raise ArenaFault(f"sandbox: the build process failed ({exc})") from None
    finally:
        if freezer is not None:
            freezer.close()  # thaws: a frozen process would not die
        process_control.kill_group(builder.pid)
        os.close(builder.channel)


def _builder(spawners: spawner.ProcessSpawner) -> spawner.Spare:
    """A build process from this process's spawner; a spawner that died (its
    starting thread gone, say) is replaced, as for a game's bot process."""
    problem = "no spawner answered"
    for _ in range(3):
        try:
            source = spawners.get()
            _require_isolation(source.containment(10.0))
            return source.builder(10.0)
        except SandboxUnavailable as exc:  # fails closed: a build is code others wrote
            raise NoSandbox(f"building an uploaded program needs the sandbox: {exc.reason}") from None
        except spawner.NoSpare as exc:
            problem = str(exc)
            spawners.retire()
        except spawner.SpawnerError as exc:
            problem = str(exc)
            spawners.replace()
    raise ArenaFault(f"sandbox: could not start a build process ({problem})")


def _expect(channel: int, line: bytes, seconds: float) -> None:
    got = _line(channel, seconds)
    if got is None or got + b"\n" != line:
        raise ArenaFault(f"sandbox: the build process could not be confined ({clip(repr(got), 200)})")


def _line(channel: int, seconds: float) -> bytes | None:
    """The next line from the build process, without its newline; None when none
    came within ``seconds``. The channel closing first is the arena's failure."""
    deadline = time.monotonic() + seconds
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([channel], [], [], left)[0]:
            return None
        chunk = os.read(channel, 4096)
        if not chunk:
            raise ArenaFault("sandbox: the build process left without saying how its build ended")
        data += chunk
        if len(data) > messages.MAX_MESSAGE:
            raise ArenaFault("sandbox: the build process said too much")
    return data.split(b"\n", 1)[0]


def _log(folder: str) -> tuple[str, int]:
    """The start of what the build printed, and how many bytes it printed."""
    try:
        fd = os.open(os.path.join(folder, OUTPUT_NAME), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return "", 0
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, KEPT_LOG_BYTES)
    finally:
        os.close(fd)
    text = data.decode("utf-8", "ignore")
    if size > KEPT_LOG_BYTES:
        text += f"\n[... {size - KEPT_LOG_BYTES} more bytes not kept]\n"
    return text, size


def _built_files(folder: str, limits: BuildLimits) -> tuple[ProgramFile, ...]:
    """The folder's regular files after the build, but its log and the toolchains'
    caches (folders whose name starts with a dot); links and special files left
    out. Bounded in count and bytes."""
    found: list[ProgramFile] = []
    total = 0
    for root, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(names):
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder)
            if relative == OUTPUT_NAME:
                continue
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            if len(found) >= limits.files:
                raise BuildFailed(f"its build left more than {limits.files} files")
            total += info.st_size
            if total > limits.total_mb * 1024 * 1024:
                raise BuildFailed(f"its build left more than {limits.total_mb} MB of files")
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as file:
                data = file.read(info.st_size)
            found.append(ProgramFile(relative.replace(os.sep, "/"), data, bool(info.st_mode & stat.S_IXUSR)))
    return tuple(found)
