"""Runs an untrusted bot in a process of its own, one process per game.

The bot process is forked by this process's spawner (:mod:`arena.sandbox.spawner`), a
small interpreter with Python and the engine already loaded, ahead of need: a
game takes one that is ready and gives it its job. Before any of the bot's code
runs, it (:mod:`arena.sandbox.bot_process`):

- leads a new session and process group, so everything it spawns can be killed;
- gets a new, private working directory, stdin from /dev/null, and stdout and
  stderr in a file there capped by RLIMIT_FSIZE (a bot that prints megabytes gets
  write errors, not a full disk);
- gets resource limits: address space (memory), file size, no core dumps;
- where the kernel has Landlock: may create no files, write only its output,
  read only the Python installation and the arena's packages (not the database),
  make no TCP connections and signal no process outside its own sandbox;
- where the arena runs as root and the Python installation is readable by
  ``nobody``: switches to that unprivileged user.

It speaks JSON lines over a socket (never stdin/stdout, which the bot may use or
abuse). This side enforces a wall-clock limit on every answer and kills the whole
process group at the end of the game. Orphans that escaped the group are killed
by the spawner, which is their subreaper.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

from arena.bot import Bot, BotFailure, Choice
from arena.engine.game import Board, Rules
from arena.records import BotCode, Limits
from arena.sandbox import process_control, spawner
from arena.sandbox.answers import MAX_MESSAGE, parse_answer
from arena.sandbox.wire import wait_readable, write_message


class BotTimeout(BotFailure):
    """The bot did not answer within the time it had."""


class SandboxedBot(Bot):
    """A proxy in the referee's process for a bot running in its own process."""

    def __init__(
        self,
        code: BotCode,
        options: dict[str, str],
        limits: Limits | None = None,
        spawners: spawner.ProcessSpawner | None = None,
    ) -> None:
        """``spawners``: where its bot processes come from; this process's
        spawner (:data:`arena.sandbox.spawner.PROCESS_SPAWNER`) unless given."""
        super().__init__()
        self.code = code
        self.spawners = spawners if spawners is not None else spawner.PROCESS_SPAWNER
        self.bot_options = dict(options)
        self.limits = limits or Limits()
        self._pid: int | None = None
        self._channel: int | None = None  # a socket: requests go down it, answers come up
        self._ended = False  # the bot process is gone (its group may live on)
        self._buffer = b""
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
        """Wait for the bot process to say it is ready (or why it never will be)."""
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
        # The move is whatever the bot process sent (untrusted): the referee checks
        # that it is a legal move, an int, before it touches the board.
        return Choice(reply.get("move"), info if isinstance(info, dict) else {})  # type: ignore[arg-type]

    def close(self) -> None:
        """Kill the bot process and everything it started (the spawner collects them)."""
        if self._pid is not None:
            process_control.kill_group(self._pid, leader_gone=self._ended)
            self._pid = None
        if self._channel is not None:
            os.close(self._channel)
            self._channel = None
        self._buffer = b""

    # --- process plumbing --------------------------------------------------------------

    def _spawn(self) -> None:
        """Take a spare bot process from the spawner and give it this bot's job."""
        for attempt in range(3):
            try:
                spare = self.spawners.get().take(self.code.entry_point, self.limits.start_seconds)
            except spawner.SpawnerError as exc:
                if attempt:
                    raise BotFailure(f"sandbox: could not start the bot process: {exc}") from None
                self.spawners.replace()
                continue
            self._pid, self._channel, self._ended = spare.pid, spare.channel, False
            try:
                write_message(spare.channel, (self.code, self.bot_options, self.limits))
                return
            except OSError:  # it died waiting (killed from outside): take another
                self.close()
        raise BotFailure("sandbox: could not start the bot process")

    def _ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        self._request(request)
        return self._reply(seconds)

    def _request(self, request: dict[str, Any]) -> None:
        assert self._channel is not None
        try:
            os.write(self._channel, json.dumps(request).encode() + b"\n")
        except OSError:
            pass  # it may have said why before leaving: read on, EOF tells the rest

    def _reply(self, seconds: float) -> dict[str, Any]:
        assert self._channel is not None
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotTimeout(f"time: no answer within {seconds:.3g} s")
            if not wait_readable(self._channel, left):
                continue
            try:
                chunk = os.read(self._channel, 65536)
            except ConnectionResetError:  # it left with our request unread
                chunk = b""
            if not chunk:
                raise BotFailure(self._death_reason())
            self._buffer += chunk
            if len(self._buffer) > MAX_MESSAGE:
                raise BotFailure("protocol: answer too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return parse_answer(line)

    def _death_reason(self) -> str:
        assert self._pid is not None
        try:
            status = self.spawners.get().exit_status(self._pid, 1.0)
        except spawner.SpawnerError:
            status = None
        self._ended = status is not None
        if status is None:
            return "exited: closed its connection to the arena"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (over its memory limit?)" if sig in (signal.SIGKILL, signal.SIGSEGV) else ""
            return f"exited: killed by {name}{hint}"
        return f"exited with code {os.WEXITSTATUS(status)}"

