"""Runs an untrusted bot in a process of its own, one process per game.

The bot process is forked from the worker (so it starts in about a millisecond
with Python and the arena already loaded), then, before any of the bot's code
runs, it:

- leads a new session and process group, so everything it spawns can be killed;
- gets a fresh temporary working directory, stdin from /dev/null, and stdout and
  stderr in a file there capped by RLIMIT_FSIZE (a bot that prints megabytes gets
  write errors, not a full disk);
- gets resource limits: address space (memory), file size, no core dumps;
- where the kernel has Landlock: may write only in its temporary directory, read
  only the Python installation and the arena's packages (not the database), make
  no TCP connections and signal no process outside its own sandbox;
- where the arena runs as root and the Python installation is readable by
  ``nobody``: switches to that unprivileged user.

It speaks JSON lines over a pair of pipes (never stdin/stdout, which the bot may
use or abuse). The referee side enforces a wall-clock limit on every answer and
kills the whole process group at the end of the game. Orphans that escaped the
group are reaped because the worker is their subreaper.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import landlock, processes
from arena.bot import Bot, Choice
from arena.game import Board, Rules

MAX_MESSAGE = 64 * 1024  # bytes of one answer from the bot process
OUTPUT_NAME = "output.txt"


class BotFailure(Exception):
    """The bot process failed in a way that forfeits the game; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BotTimeout(BotFailure):
    """The bot did not answer within the time it had."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 1024  # address space of the bot process
    output_kb: int = 1024  # what it may print (stdout and stderr together)
    cpu_seconds: int = 600  # processor time for a whole game (a backstop: moves have clocks)
    start_seconds: float = 10.0  # to load the code and start a game
    move_seconds: float = 60.0  # hard cap per move when the tournament sets none


@dataclass(frozen=True)
class BotCode:
    """What the bot process runs: source text of a file, or an installed bot class."""

    label: str  # file path or entry-point name, for messages
    source: str | None = None  # file bots
    class_name: str | None = None  # which Bot subclass in the file, if several
    entry_point: str | None = None  # installed bots run isolated


class SandboxedBot(Bot):
    """A proxy in the referee's process for a bot running in its own process."""

    def __init__(self, code: BotCode, options: dict[str, str], limits: Limits | None = None) -> None:
        super().__init__()
        self.code = code
        self.bot_options = dict(options)
        self.limits = limits or Limits()
        self._pid: int | None = None
        self._to_bot: int | None = None
        self._from_bot: int | None = None
        self._buffer = b""
        self._workdir: str | None = None
        self.kind = "bot"  # or "connectx", known once a game has started

    # --- the Bot contract, seen from the referee -------------------------------------

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        self.begin_game(rules, player, seed)
        self.finish_start()

    def begin_game(self, rules: Rules, player: int, seed: int) -> None:
        """Start the bot process and send it the game, without waiting for it: the
        referee starts both sides' processes at once, then waits (finish_start)."""
        super().new_game(rules, player, seed)
        self.close()
        self._spawn()
        self._request({"op": "start", "rules": rules.as_dict(), "player": player, "seed": seed})

    def finish_start(self) -> None:
        reply = self._reply(self.limits.start_seconds)
        if "error" in reply:
            raise BotFailure(str(reply["error"]))
        self.kind = str(reply.get("kind", "bot"))

    def choose_move(self, board: Board) -> int | Choice:
        allowed = self.time_allowed if self.time_allowed is not None else self.limits.move_seconds
        reply = self._ask({"op": "move", "moves": board.history, "time": allowed}, allowed)
        if "error" in reply:
            raise BotFailure(str(reply["error"]))
        if "not_a_move" in reply:
            raise BotFailure(f"not a move: {reply['not_a_move']}")
        info = reply.get("info")
        return Choice(reply.get("move"), info if isinstance(info, dict) else {})

    def close(self) -> None:
        """Kill the bot process and everything it started; its directory is emptied
        before the next bot uses it."""
        if self._pid is not None:
            processes.kill_group(self._pid)
            processes.live_bots.discard(self._pid)
            processes.dying.add(self._pid)  # reaped later: its teardown need not hold up the game
            self._pid = None
        for fd in (self._to_bot, self._from_bot):
            if fd is not None:
                os.close(fd)
        self._to_bot = self._from_bot = None
        self._buffer = b""
        processes.reap_dying()
        processes.kill_orphans()
        if self._workdir is not None:
            processes.release_workdir(self._workdir)
            self._workdir = None

    def output(self) -> str:
        """What the bot printed so far (truncated at the output limit)."""
        if self._workdir is None:
            return ""
        path = Path(self._workdir, OUTPUT_NAME)
        return path.read_text(errors="replace") if path.exists() else ""

    # --- process plumbing --------------------------------------------------------------

    def _spawn(self) -> None:
        processes.become_subreaper()
        processes.reap_dying()
        user = processes.unprivileged_user()
        self._workdir, ruleset = processes.claim_workdir(self.player, user)
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        from arena.bot_process import run_bot_process  # imports this module's types

        landlock.libc()  # loaded here, once, not in every bot process
        pid = os.fork()
        if pid == 0:  # the bot process: never returns
            # Inherited objects go to the permanent generation, so the collector
            # never walks them: walking them would copy every page they sit on.
            gc.freeze()
            os.close(down_w)
            os.close(up_r)
            run_bot_process(self.code, self.bot_options, self.limits, self._workdir, user, ruleset, down_r, up_w)
        os.close(down_r)
        os.close(up_w)
        self._pid, self._to_bot, self._from_bot = pid, down_w, up_r
        processes.live_bots.add(pid)

    def _ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        self._request(request)
        return self._reply(seconds)

    def _request(self, request: dict[str, Any]) -> None:
        assert self._to_bot is not None
        try:
            os.write(self._to_bot, json.dumps(request).encode() + b"\n")
        except OSError:
            pass  # it may have said why before leaving: read on, EOF tells the rest

    def _reply(self, seconds: float) -> dict[str, Any]:
        assert self._from_bot is not None
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotTimeout(f"time: no answer within {seconds:.3g} s")
            ready, _, _ = select.select([self._from_bot], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_bot, 65536)
            if not chunk:
                raise BotFailure(self._death_reason())
            self._buffer += chunk
            if len(self._buffer) > MAX_MESSAGE:
                raise BotFailure("protocol: answer too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            raise BotFailure(f"protocol: unreadable answer {line[:40]!r}") from None
        if not isinstance(reply, dict):
            raise BotFailure(f"protocol: unreadable answer {line[:40]!r}")
        return reply

    def _death_reason(self) -> str:
        assert self._pid is not None
        status = processes.wait(self._pid, 1.0)
        self._pid = None if status is not None else self._pid
        if status is None:
            return "exited: closed its connection to the arena"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (over its memory limit?)" if sig in (signal.SIGKILL, signal.SIGSEGV) else ""
            return f"exited: killed by {name}{hint}"
        return f"exited with code {os.WEXITSTATUS(status)}"
