"""Inside a bot process: confine it, read its job, hand its channel to the protocol server.

Runs in the child forked by the spawner (:mod:`arena.sandbox.spawner_process`); nothing
here may return into the spawner's code, so every path ends in ``os._exit``. Loading
the bot and answering the referee is :mod:`arena.protocol.server`'s: this module only
confines the process and limits it.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C core (no stubs): see _confine
import errno
import os
import resource
import select
import socket
import sys
from typing import Any, NamedTuple

from arena.bot import Bot, Limit
from arena.engine.game import Board, Rules
from arena.protocol import messages
from arena.protocol.server import Channel, Server, serve
from arena.records import BotCode, Limits, TimeControl
from arena.sandbox import cgroups, landlock, namespaces, seccomp
from arena.sandbox.process_control import die_with_parent, drop_capabilities
from arena.sandbox.wire import CONFINED, OUTPUT_NAME
from arena.text import clip

# What a bot process may read of its own /proc entry: its memory and state
# (status, statm, stat), its mappings (glibc reads maps for the main thread's
# stack) and its open descriptors (subprocess lists fd). Not the rest, the mount
# table above all (mountinfo, mounts, mountstats): it names the machine's
# folders the arena's are bound from, their devices and file systems; nor
# cgroup (the machine's control-group paths), nor task (each thread's copy of
# all of it). Landlock grants by hierarchy, with no exceptions below a folder
# allowed: hence a rule per entry, each one costing the bot process some 20 us
# before its game (its first look-up of the entry, then the rule), so only these.
_OWN_PROC_FILES = ("status", "statm", "stat", "maps")
_OWN_PROC_FOLDERS = ("fd",)


class Confinement(NamedTuple):
    """What the spawner prepared for one bot process."""

    folder: str  # its working directory
    user: tuple[int, int] | None  # (uid, gid) to become, if any
    ruleset: int | None  # Landlock ruleset to enforce
    channel: int  # its end of the socket to the referee
    lifeline: int  # read end of a pipe only the spawner writes to: readable (EOF) once it is gone
    group: cgroups.BotGroup | None  # its control groups
    private_ipc: bool  # make an IPC namespace of its own
    filter: seccomp.Filter | None  # system calls it is refused (None: no filter on this machine)
    lock: seccomp.Filter | None  # installed once its limits are set: they cannot be changed after
    build: bool = False  # a build (arena.sandbox.build): its job's command runs to its end, then says how it ended


def run_bot_process(confinement: Confinement) -> None:
    """Confine this process, wait for the bot to run, and hand its channel (a socket)
    to the protocol server, which loads the bot and answers the referee until it
    closes the channel.

    The spawner forks bot processes ahead of need: a process confines itself and
    rehearses while an earlier game is still being played, then waits for its
    job (the bot's code, options and limits), the first line on the channel: JSON,
    like every line after it.
    """
    if confinement.build:
        _run_build_process(confinement)  # never returns
    channel = confinement.channel
    try:
        inherited = _address_space()  # what the memory limit comes on top of
        joined, output = _confine(confinement)
        _rehearse()
    except BaseException:  # the arena's own failure (a group gone, out of memory): no bot code has run
        _send_line(channel, _failure_line("sandbox", "could not confine the bot process: "))
        os._exit(0)
    try:
        os.write(channel, CONFINED)
        lines = Channel(channel)
        line = _read_job(channel)
        if line is None:
            return  # not needed after all
        job = messages.decode_request(line, messages.MAX_JOB)
        if not isinstance(job, messages.Job):
            raise RuntimeError(f"sandbox: the first message was {type(job).TYPE}, not the job")
        limits = job.limits
        program = job.code.program is not None
        _limit(limits, inherited, joined, program=program)
        # Once the job says which: a program's runtime may need what a Python bot
        # is refused (seccomp.PROGRAM_ALLOWANCES). Still before any of the bot's code.
        chosen = confinement.filter
        if program and chosen is not None:
            chosen = chosen.programs or chosen
        if chosen is not None and not seccomp.install(chosen):
            raise RuntimeError("sandbox: the seccomp filter could not be installed")  # never run a bot unconfined
        # Before any of the bot's code: no lowering its own processor time limit, so
        # that a SIGKILL under that limit can only come from outside the arena.
        if confinement.lock is not None and not seccomp.install(confinement.lock):
            raise RuntimeError("sandbox: the seccomp filter could not be installed")  # never run a bot unconfined
        if job.code.program is not None:
            _run_program(job.code.program, channel)  # never returns
        # As the first process of its PID namespace it would ignore the kernel's
        # SIGXCPU (only SIGKILL, a second later, would end it): say why, and leave.
        _signal.signal(_signal.SIGXCPU, lambda signum, frame: _out_of_processor_time(channel, limits))
        # Line by line into the output file, as the bot prints: what it printed to
        # stdout and stderr during a move then reads in the order it printed it.
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        serve(lines, job, output)
    except BaseException:  # nothing may escape a forked child: it would run the spawner's code
        _send_line(channel, _failure_line("error", "crashed: "))
    finally:
        os._exit(0)


def _read_job(channel: int) -> bytes | None:
    """The job, the channel's first line, without its newline, and not one byte more:
    a program run next reads the requests after it from the same socket (None: the
    channel closed first)."""
    sock = socket.socket(fileno=channel)
    try:
        job = b""
        while True:
            waiting = sock.recv(65536, socket.MSG_PEEK)
            if not waiting:
                return None
            end = waiting.find(b"\n")
            take = len(waiting) if end < 0 else end + 1
            while take:
                chunk = sock.recv(take)
                job += chunk
                take -= len(chunk)
            if end >= 0:
                return job[:-1]
            if len(job) > messages.MAX_JOB:
                raise RuntimeError("sandbox: the job is too long")
    finally:
        sock.detach()


def _failure_line(key: str, prefix: str) -> bytes:
    """One JSON line saying why this process is leaving: ``{key: prefix + the
    exception's last line}``, for the exception being handled."""
    try:
        import traceback  # only now: every module the spawner loads costs every bot process

        return messages.encode({key: prefix + _last_line(traceback.format_exc())})
    except BaseException:
        return messages.encode({key: prefix + "unknown error"})


def _send_line(fd: int, line: bytes) -> None:
    try:
        os.write(fd, line)
    except BaseException:
        pass


def _confine(c: Confinement) -> tuple[cgroups.Joined | None, int]:
    """Everything that does not depend on the bot: its control groups (first, so
    they count all it does), an IPC namespace of its own, a session of its own,
    its folder, its output file, no inherited files, its user, no capabilities,
    and its Landlock domain (prepared by the spawner); the seccomp filter comes
    with the job, which says which of the two it is. Returns the open limit
    files of its groups, and the output file open for reading (the server sends
    what the bot printed from it)."""
    joined = cgroups.join(c.group) if c.group is not None else None
    if c.private_ipc:
        namespaces.make_private_ipc()
    os.setsid()
    # The C module's own call: signal.signal's enum conversions alone write to
    # some sixty pages, each one copied into this process.
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)  # over the output cap: write errors, not death
    os.chdir(c.folder)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(OUTPUT_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    output = os.open(OUTPUT_NAME, os.O_RDONLY)
    opened = [fd for fd in (joined or ()) if fd is not None]
    kept = sorted({c.channel, c.lifeline, output, *opened, *([c.ruleset] if c.ruleset is not None else [])})
    low = 3
    for fd in kept:  # close everything inherited but the channel and the ruleset
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, max(os.sysconf("SC_OPEN_MAX"), 1024))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # sys.stdout and sys.stderr (the spawner's, empty: it never prints) now write to
    # the output file, through the descriptors just replaced.
    if c.user is not None:
        os.setgroups([])
        os.setgid(c.user[1])
        os.setuid(c.user[0])
    else:
        # Root keeps uid 0 but none of root's powers; an unprivileged arena's
        # spawner has capabilities inside its own user namespace: none either.
        drop_capabilities()
    die_with_parent()  # here: changing credentials (above) cancels it
    if select.select([c.lifeline], [], [], 0)[0]:
        raise SystemExit("the spawner is gone")  # died before the line above could tell
    os.close(c.lifeline)
    if not c.build:  # a build's processes restrict themselves after its fork (see _run_build_process)
        _restrict(c)
    return joined, output


def _restrict(c: Confinement) -> None:
    """Landlock, then seccomp: for good, for this process and all it starts."""
    if c.ruleset is not None:
        # This process's own entries, resolved here: some of them, not the folder.
        landlock.allow_reading_entries(c.ruleset, "/proc/self", _OWN_PROC_FILES, _OWN_PROC_FOLDERS)
        if not landlock.enforce(c.ruleset):
            raise RuntimeError("sandbox: Landlock could not be enforced")  # never run a bot unconfined
        os.close(c.ruleset)
    # Last: it refuses calls the steps above make (unshare, chmod). A bot process
    # installs its filter once its job says which of the two (a Python bot's or a
    # program's) it is: see run_bot_process.
    if c.build and c.filter is not None and not seccomp.install(c.filter):
        raise RuntimeError("sandbox: the seccomp filter could not be installed")  # never run a build unconfined


class _Rehearsal(Bot):
    """A trivial bot, for the rehearsal."""

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def _rehearse() -> None:
    """Go once through what a game does (read a job, start, answer moves) with the
    arena's own trivial bot and no channel. A forked process pays for every page
    it first writes to; paying now, while it waits, keeps that cost out of the
    game. No bot code runs, so nothing of it can reach the bot."""
    messages.decode_request(messages.encode(messages.Job(BotCode("rehearsal", text=""), {}, Limits())),
                            messages.MAX_JOB)
    server = Server(_Rehearsal(), Limits())
    for request in (messages.Hello(), messages.NewGame(Rules(), 0, 0, TimeControl()),
                    messages.Move((3, 3), Limit(1.0))):
        answer = server.answer(messages.decode_request(messages.encode(request)))
        if answer is not None:
            messages.encode(answer)


def _limit(limits: Limits, inherited: int, joined: cgroups.Joined | None, program: bool = False) -> None:
    counted = joined is not None and joined.memory_limit is not None
    if joined is not None:  # the bot as a whole: all its processes, every kind of memory
        cgroups.apply_limits(joined, limits.memory_mb * 1024 * 1024, limits.processes)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_kb * 1024,) * 2)
    memory = limits.memory_mb * 1024 * 1024
    if not program:
        # The limit is on top of what the process inherited from the spawner: the
        # bot itself gets memory_mb.
        resource.setrlimit(resource.RLIMIT_AS, (inherited + memory,) * 2)
    elif not counted:
        # A program's runtime reserves far more address space than it uses (a JVM
        # will not start under 1 GiB of it): its memory is the group's to count.
        # Without a group (a weak sandbox) the memory it can write, per process.
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


#: Where a program's command is looked for when it names no folder (java, node, mono).
PROGRAM_PATH = "/usr/local/bin:/usr/bin:/bin"


def _run_program(command: tuple[str, ...], channel: int) -> None:
    """Become the bot's program: its stdin and stdout the channel to the referee, its
    stderr the output file (its log), in its folder, with an environment of its own.
    Confined already (namespaces, groups, Landlock, seccomp, limits): what it runs is
    held as a Python bot is. Never returns; a command that cannot run is the bot's
    failure, said on the channel."""
    folder = os.getcwd()
    os.dup2(channel, 0)
    os.dup2(channel, 1)
    os.closerange(3, max(os.sysconf("SC_OPEN_MAX"), 1024))
    environment = {"PATH": PROGRAM_PATH, "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                   **_runtime_environment()}
    try:
        os.execvpe(command[0], list(command), environment)
    except OSError as exc:
        failure = exc
    if failure.errno == errno.EACCES and "/" in command[0] and os.path.isfile(command[0]):
        # Its folder may be on a file system mounted without execution: run a copy
        # of the file from memory instead (no file system decides that).
        try:
            _run_from_memory(command, environment)
        except OSError as exc:
            failure = exc
    _send_line(1, messages.encode(messages.failed(
        f"could not run its command {clip(command[0], 80)!r}: {failure.strerror or failure}")))
    os._exit(0)


#: The BEAM's schedulers at most: it starts two threads per scheduler (one for
#: dirty work) and stops at start-up when one cannot be made, which on a machine
#: of 24 processors or more the process limit (64) refuses.
BEAM_SCHEDULERS = 8


def _runtime_environment() -> dict[str, str]:
    """Settings that let runtimes start within a bot's limits: the BEAM's thread
    counts (``ERL_AFLAGS`` comes first among its flags: a run command's own ``+S``
    wins). docs/seccomp.md, "Program bots and their runtimes"."""
    try:
        processors = len(os.sched_getaffinity(0))
    except OSError:
        processors = 1
    schedulers = max(1, min(processors, BEAM_SCHEDULERS))
    return {"ERL_AFLAGS": f"+S {schedulers}:{schedulers} +SDcpu {schedulers}:{schedulers} +SDio 4"}


def build_environment(folder: str) -> dict[str, str]:
    """A build's environment: its home, temporary files and the toolchains' caches
    all in its folder (Go's above all: its cache and module path), nothing of the
    machine's, no network for Go to try."""
    return {
        "PATH": PROGRAM_PATH, "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "GOCACHE": os.path.join(folder, ".cache", "go-build"), "GOPATH": os.path.join(folder, ".go"),
        "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOTELEMETRY": "off", "CGO_ENABLED": "0",
        "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "MONO_GAC_PREFIX": "", "NODE_OPTIONS": "",
    }


def _run_build_process(c: Confinement) -> None:
    """A build (:mod:`arena.sandbox.build`): confine this process, read the job, run
    its command to its end in a child, and say on the channel how it ended:
    ``{"build": "exit", "code": N}`` or ``{"build": "signal", "signal": N}``.

    The command runs in a child of this process, its stdout and stderr the output
    file (the build's log), its stdin empty, without the channel: that line is this
    process's alone. The child restricts itself (Landlock, seccomp) after the fork,
    as this process does: Landlock lets a process read its own /proc entries only
    if it named them itself (a compiler's runtime reads its threads' stacks there).
    Then this process waits for the referee to close the channel (it reads the
    folder first) and leaves: every process the build left behind dies with it, the
    first of its PID namespace. Never returns."""
    channel = c.channel
    try:
        inherited = _address_space()
        joined, _ = _confine(c)
    except BaseException:  # no code of the build's has run
        _send_line(channel, _failure_line("sandbox", "could not confine the build process: "))
        os._exit(0)
    try:
        os.write(channel, CONFINED)
        line = _read_job(channel)
        if line is None:
            return
        job = messages.decode_request(line, messages.MAX_JOB)
        if not isinstance(job, messages.Job) or job.code.program is None:
            raise RuntimeError("sandbox: the first message was not a build's job")
        _limit(job.limits, inherited, joined, program=True)
        command = job.code.program
        environment = build_environment(os.getcwd())
        pid = os.fork()
        if pid == 0:
            try:
                _restrict(c)
                if c.lock is not None and not seccomp.install(c.lock):
                    raise RuntimeError("sandbox: the seccomp filter could not be installed")
                os.closerange(3, max(os.sysconf("SC_OPEN_MAX"), 1024))
                os.execvpe(command[0], list(command), environment)
            except BaseException as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                _send_line(2, f"could not run {clip(command[0], 80)!r}: {why}\n".encode())
            os._exit(127)
        _restrict(c)
        status = _wait_for(pid)
        if os.WIFSIGNALED(status):
            _send_line(channel, messages.encode({"build": "signal", "signal": os.WTERMSIG(status)}))
        else:
            _send_line(channel, messages.encode({"build": "exit", "code": os.WEXITSTATUS(status)}))
        while os.read(channel, 4096):
            pass
    except BaseException:  # nothing may escape a forked child: it would run the spawner's code
        _send_line(channel, _failure_line("error", "crashed: "))
    finally:
        os._exit(0)


def _wait_for(pid: int) -> int:
    """The wait status of child ``pid`` (0 if it is not a child)."""
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


def _run_from_memory(command: tuple[str, ...], environment: dict[str, str]) -> None:
    with open(command[0], "rb") as file:
        data = file.read()
    memory = os.memfd_create("bot", 0)  # without close-on-exec: a script's interpreter opens it by its path
    view = memoryview(data)
    while view:
        view = view[os.write(memory, view):]
    os.execve(memory, list(command), environment)


def _out_of_processor_time(channel: int, limits: Limits) -> None:
    try:
        _send(channel, messages.failed(f"cpu: used its {limits.cpu_seconds} s of processor time for the game"))
    finally:
        os._exit(0)


def _address_space() -> int:
    """Bytes of address space this process has mapped now."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 200).split()[0]) * os.sysconf("SC_PAGE_SIZE")
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return 0


def _send(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, messages.encode(message))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:300]
