"""A program bot (any language, protocol v1 on its stdin and stdout) run without the
sandbox: on a system that has none, where an author still plays their own program
on their own machine (:func:`arena.players.plugins.untrusted_bot` decides).

Like a sandboxed program it starts in a folder of its own, a copy of its files,
with stderr as its log; unlike one, nothing limits its memory or keeps it from the
files and network of the one running it, and it is not frozen off move. Its
process group is killed when the game ends, after ``quit`` and a moment to leave.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from typing import IO, Any

from arena.bot import Bot, BotFailure
from arena.protocol import messages
from arena.protocol.descriptors import DescriptorBot
from arena.protocol.player import ChannelBot
from arena.records import BotCode, Limits
from arena.text import clip

_LOG_NAME = "stderr.txt"


def place_program(code: BotCode, folder: str) -> None:
    """Write a program's files into ``folder``, new and empty (no code of any bot's
    has run in it): readable and runnable by the bot, each path kept inside it."""
    for file in code.files:
        parts = file.path.split("/")
        if file.path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise BotFailure(f"a program file with a path that leaves its folder: {clip(file.path, 80)!r}")
        parent = folder
        for part in parts[:-1]:
            parent = os.path.join(parent, part)
            if not os.path.isdir(parent):
                os.mkdir(parent, 0o755)
        fd = os.open(os.path.join(parent, parts[-1]), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     0o755 if file.executable else 0o644)
        try:
            view = memoryview(file.data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def command_failure(command: tuple[str, ...], exc: OSError) -> str:
    """The forfeit reason of a program whose command cannot be run."""
    return f"could not run its command {clip(command[0], 80)!r}: {exc.strerror or exc}"


class LogFile:
    """A program's stderr, in a file: what it wrote since the last read, at most
    :data:`messages.MAX_OUTPUT` bytes a game (the log notes when there was more)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.read = 0

    def new(self) -> bytes:
        try:
            printed = os.pread(self.fd, messages.MAX_OUTPUT - self.read, self.read)
        except OSError:
            return b""
        self.read += len(printed)
        return printed

    def close(self) -> None:
        os.close(self.fd)


class LocalProgram(DescriptorBot):
    """A program bot's process on this machine, its pipes the channel."""

    def __init__(self, code: BotCode, options: dict[str, str], limits: Limits | None = None) -> None:
        assert code.program is not None
        Bot.__init__(self)
        self.code = code
        self.bot_options = dict(options)
        self.limits = limits or Limits()
        ChannelBot.__init__(self, self.limits.start_seconds, self.limits.move_seconds)
        self.program_options = dict(options)  # typed as it declares them, in new_game
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: str | None = None
        self._log: LogFile | None = None
        self._stderr: IO[bytes] | None = None
        #: Variables its environment gets besides PATH, the locale, HOME and TMPDIR (its folder).
        self.environment: dict[str, str] = {}

    def _connect(self) -> None:
        assert self.code.program is not None
        self._folder = tempfile.mkdtemp(prefix="arena-program-")
        place_program(self.code, self._folder)
        self._stderr = open(os.path.join(self._folder, _LOG_NAME), "wb")  # noqa: SIM115  # closed by close()
        self._log = LogFile(os.open(os.path.join(self._folder, _LOG_NAME), os.O_RDONLY))
        environment = {key: value for key, value in os.environ.items()
                       if key in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "JAVA_HOME")}
        environment.update(self.environment, HOME=self._folder, TMPDIR=self._folder)
        try:
            self._process = subprocess.Popen(
                self.code.program, cwd=self._folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, env=environment, start_new_session=True)
        except OSError as exc:
            raise BotFailure(command_failure(self.code.program, exc)) from None
        assert self._process.stdin is not None and self._process.stdout is not None
        self._writer, self._reader = self._process.stdin.fileno(), self._process.stdout.fileno()
        os.set_blocking(self._writer, False)
        os.set_blocking(self._reader, False)

    def _death_reason(self) -> str:
        assert self._process is not None
        try:
            code = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "exited: closed its stdout"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            return f"exited: killed by {name}"
        return f"exited with code {code}"

    def _printed(self, reply: dict[str, Any] | None) -> bytes:
        return self._log.new() if self._log is not None else b""

    def exit_code(self, seconds: float) -> int | None:
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        process = self._process
        if process is not None:
            if process.poll() is None:
                self._quit_and_wait()
            try:
                os.killpg(process.pid, signal.SIGKILL)  # and whatever it started
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
            self._process = None
        self._reader = self._writer = None
        self._buffer = b""
        for handle in (self._log, self._stderr):
            if handle is not None:
                handle.close()
        self._log = self._stderr = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
