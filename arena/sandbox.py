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

import atexit
import errno
import gc
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena import kaggle, landlock
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
            _kill_group(self._pid)
            _live_bots.discard(self._pid)
            _dying.add(self._pid)  # reaped later: its teardown need not hold up the game
            self._pid = None
        for fd in (self._to_bot, self._from_bot):
            if fd is not None:
                os.close(fd)
        self._to_bot = self._from_bot = None
        self._buffer = b""
        _reap_dying()
        _kill_orphans()
        if self._workdir is not None:
            _release_workdir(self._workdir)
            self._workdir = None

    def output(self) -> str:
        """What the bot printed so far (truncated at the output limit)."""
        if self._workdir is None:
            return ""
        path = Path(self._workdir, OUTPUT_NAME)
        return path.read_text(errors="replace") if path.exists() else ""

    # --- process plumbing --------------------------------------------------------------

    def _spawn(self) -> None:
        _become_subreaper()
        _reap_dying()
        user = _unprivileged_user()
        self._workdir, ruleset = _claim_workdir(self.player, user)
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        landlock.libc()  # loaded here, once, not in every bot process
        pid = os.fork()
        if pid == 0:  # the bot process: never returns
            # Inherited objects go to the permanent generation, so the collector
            # never walks them: walking them would copy every page they sit on.
            gc.freeze()
            os.close(down_w)
            os.close(up_r)
            _bot_process(self.code, self.bot_options, self.limits, self._workdir, user, ruleset, down_r, up_w)
        os.close(down_r)
        os.close(up_w)
        self._pid, self._to_bot, self._from_bot = pid, down_w, up_r
        _live_bots.add(pid)

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
        status = _wait(self._pid, 1.0)
        self._pid = None if status is not None else self._pid
        if status is None:
            return "exited: closed its connection to the arena"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (over its memory limit?)" if sig in (signal.SIGKILL, signal.SIGSEGV) else ""
            return f"exited: killed by {name}{hint}"
        return f"exited with code {os.WEXITSTATUS(status)}"


# --- inside the bot process ---------------------------------------------------------


def _bot_process(
    code: BotCode,
    options: dict[str, str],
    limits: Limits,
    workdir: str,
    user: tuple[int, int] | None,
    ruleset: int | None,
    requests: int,
    answers: int,
) -> None:
    """Confine this process, load the bot, and serve requests until the pipe closes."""
    try:
        _confine(limits, workdir, user, ruleset, keep=(requests, answers))
        try:
            bot = _load(code, options)
        except _Failed as exc:
            _send(answers, {"error": str(exc)})
            return
        _serve(bot, requests, answers, limits)
    except BaseException:  # nothing may escape a forked child: it would run the worker's code
        try:
            _send(answers, {"error": "crashed: " + _last_line(traceback.format_exc())})
        except BaseException:
            pass
    finally:
        os._exit(0)


def _confine(
    limits: Limits, workdir: str, user: tuple[int, int] | None, ruleset: int | None, keep: tuple[int, int]
) -> None:
    os.setsid()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over the output cap: write errors, not death
    os.chdir(workdir)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(OUTPUT_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    kept = sorted({*keep, *([ruleset] if ruleset is not None else [])})
    low = 3
    for fd in kept:  # close everything inherited but the pipes and the ruleset
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1024)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_kb * 1024,) * 2)
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    sys.stdin = open(0, closefd=False)
    if user is not None:
        os.setgroups([])
        os.setgid(user[1])
        os.setuid(user[0])
    if ruleset is not None:
        landlock.enforce(ruleset)
        os.close(ruleset)
    else:
        landlock.confine(writable=[workdir], readable=_readable_paths())


def _load(code: BotCode, options: dict[str, str]) -> Any:
    """Build the bot: a Bot subclass from the file or entry point, or a ConnectX agent."""
    from arena.plugins import installed_bots, pick_bot_class  # plugins imports this module

    if code.entry_point is not None:
        entry = installed_bots()[code.entry_point]
        assert entry.bot_class is not None
        return entry.bot_class(**options)
    namespace: dict[str, Any] = {"__name__": "arena_sandboxed_bot", "__file__": code.label}
    try:
        exec(compile(code.source or "", code.label, "exec"), namespace)
    except BaseException as exc:
        raise _Failed(f"failed to import: {type(exc).__name__}: {exc}") from None
    try:
        bot_class = pick_bot_class(namespace, code.label, code.class_name, quiet=True)
    except ValueError as exc:
        raise _Failed(str(exc)) from None
    if bot_class is not None:
        try:
            return bot_class(**options)
        except ValueError as exc:  # BotOptionError
            raise _Failed(f"bad option: {exc}") from None
    agent = kaggle.find_agent(namespace)
    if agent is None:
        raise _Failed(f"{code.label} defines no Bot subclass and no agent(observation, configuration)")
    return kaggle.KaggleAgentBot(agent)


class _Failed(Exception):
    pass


def _serve(bot: Any, requests: int, answers: int, limits: Limits) -> None:
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(requests, 65536)
            if not chunk:
                return
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        request = json.loads(line)
        _send(answers, _answer(bot, request, limits))


def _answer(bot: Any, request: dict[str, Any], limits: Limits) -> dict[str, Any]:
    from arena.bot import split_answer

    try:
        if request["op"] == "start":
            rules = Rules(**request["rules"])
            bot.new_game(rules, request["player"], request["seed"])
            bot.sandbox_rules = rules
            return {"ok": True, "kind": getattr(bot, "kind", "bot")}
        board = Board(bot.sandbox_rules)
        for move in request["moves"]:
            board.play(move)
        bot.time_allowed = request.get("time")
        move, info = split_answer(bot.choose_move(board))
    except _Failed as exc:
        return {"error": str(exc)}
    except MemoryError:
        return {"error": f"memory: over the {limits.memory_mb} MB limit"}
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return {"error": f"output: printed more than the {limits.output_kb} KB allowed"}
        return {"error": f"crashed: {type(exc).__name__}: {exc}"[:300]}
    except BaseException as exc:
        return {"error": f"crashed: {type(exc).__name__}: {exc}"[:300]}
    if type(move) is not int:
        shown = repr(move)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return {"not_a_move": f"{shown} ({type(move).__name__})"}
    try:
        json.dumps(info)
    except (TypeError, ValueError):
        info = {"error": "info was not JSON-serialisable"}
    return {"move": move, "info": info}


def _send(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


@lru_cache(maxsize=1)
def _readable_paths() -> list[str]:
    """What a bot may read: the Python installation, the arena's packages, system
    libraries and the devices Python needs. Not the working tree or the database."""
    import arena
    import bots

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {str(Path(arena.__file__).parent), str(Path(bots.__file__).parent)}
    for entry in sys.path:
        if entry and "site-packages" in entry or "dist-packages" in entry:
            paths.add(entry)
    paths |= {"/usr", "/lib", "/lib64", "/etc", "/dev/null", "/dev/urandom", "/proc/self", "/sys/devices/system/cpu"}
    return sorted(p for p in paths if p and os.path.exists(p))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:300]


# --- working directories ---------------------------------------------------------------
#
# Each side of a game (player 0 and 1) has a working directory of its own, kept by
# this process and emptied between bots, with a Landlock ruleset prepared for it
# once: building a ruleset per bot costs a millisecond. Two sides never share one,
# so a bot cannot see files its opponent writes.

_slots: dict[tuple[int, int], tuple[str, int | None]] = {}
_busy: set[str] = set()


def _claim_workdir(slot: int, user: tuple[int, int] | None) -> tuple[str, int | None]:
    """(empty working directory, prepared ruleset or None) for a new bot process."""
    key = (os.getpid(), slot)
    if key not in _slots:
        if not any(pid == os.getpid() for pid, _ in _slots):
            _clean_up_at_exit()
        folder = tempfile.mkdtemp(prefix=f"arena-bot-{slot}-")
        if user is not None:
            os.chown(folder, *user)
        _slots[key] = (folder, landlock.prepare([folder], _readable_paths()))
    folder, ruleset = _slots[key]
    if folder in _busy:  # the same side twice at once (not in a normal game): a fresh one
        fresh = tempfile.mkdtemp(prefix="arena-bot-")
        if user is not None:
            os.chown(fresh, *user)
        _busy.add(fresh)
        return fresh, None
    _empty(folder)
    _busy.add(folder)
    return folder, ruleset


def _release_workdir(folder: str) -> None:
    _busy.discard(folder)
    if folder not in {f for f, _ in _slots.values()}:
        shutil.rmtree(folder, ignore_errors=True)


def _empty(folder: str) -> None:
    """Remove what a previous bot left, keeping the directory (the ruleset names it)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _clean_up_at_exit() -> None:
    """Remove this process's working directories when it exits, worker processes
    included (they leave through multiprocess's own exit path, not atexit)."""
    atexit.register(_remove_workdirs)
    try:
        from multiprocess import util

        util.Finalize(None, _remove_workdirs, exitpriority=0)
    except Exception:
        pass


def _remove_workdirs() -> None:
    _kill_orphans(force=True)  # the last sweep: nothing a bot started outlives the worker
    for (pid, _), (folder, _) in list(_slots.items()):
        if pid == os.getpid():
            shutil.rmtree(folder, ignore_errors=True)


# --- process helpers (referee side) -----------------------------------------------------


@lru_cache(maxsize=1)
def _unprivileged_user() -> tuple[int, int] | None:
    """(uid, gid) of ``nobody`` when running as root and Python is readable by it."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        nobody = pwd.getpwnam("nobody")
    except (KeyError, ImportError):
        return None
    if not _world_readable(Path(sys.base_prefix)) or not _world_readable(Path(sys.prefix)):
        return None
    return nobody.pw_uid, nobody.pw_gid


def _world_readable(path: Path) -> bool:
    """Every folder from / down to ``path`` can be entered by others, and ``path`` read."""
    try:
        for folder in [*reversed(path.resolve().parents), path.resolve()]:
            mode = folder.stat().st_mode
            if not mode & 0o001:
                return False
        return bool(path.resolve().stat().st_mode & 0o004)
    except OSError:
        return False


def _die_with_parent() -> None:
    c = landlock.libc()
    if c is not None:
        pr_set_pdeathsig = 1
        c.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


ORPHAN_SCAN_SECONDS = 0.25
_last_orphan_scan = 0.0
_live_bots: set[int] = set()  # bot processes of this process still in a game: not orphans
_subreaper_pid = 0  # the attribute is per process and not inherited across fork


def _become_subreaper() -> None:
    """Orphans of bot processes get this process as parent, so they can be killed."""
    global _subreaper_pid
    if _subreaper_pid == os.getpid():
        return
    c = landlock.libc()
    if c is not None:
        pr_set_child_subreaper = 36
        c.prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    _subreaper_pid = os.getpid()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_dying: set[int] = set()  # killed bot processes not yet collected


def _reap_dying() -> None:
    for pid in list(_dying):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _dying.discard(pid)


def _reap(pid: int) -> None:
    """Collect a process that was sent SIGKILL (it cannot refuse; this is quick)."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _wait(pid: int, seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        if time.monotonic() > deadline:
            return None
        time.sleep(0.0002)


def _kill_orphans(force: bool = False) -> None:
    """Kill and reap children of this process that were adopted (forked by bots
    that then died, or that left the bot's process group)."""
    global _last_orphan_scan
    try:  # the usual case costs one system call: no children at all
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return
    # Children exist (often just the other side's bot): scanning /proc costs
    # milliseconds, so do it at most a few times a second; an orphan lives that long.
    now = time.monotonic()
    if now - _last_orphan_scan < ORPHAN_SCAN_SECONDS and not force:
        return
    _last_orphan_scan = now
    me = os.getpid()
    pool_children = _pool_children()
    for entry in Path("/proc").iterdir() if Path("/proc").exists() else []:
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in pool_children or pid in _live_bots:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            _wait(pid, 1.0)


def _pool_children() -> set[int]:
    """Children this process started on purpose (a coordinator's worker pool)."""
    try:
        import multiprocess

        return {p.pid for p in multiprocess.active_children() if p.pid}
    except Exception:
        return set()
