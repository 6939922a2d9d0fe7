"""Inside a bot process: confine it, load the bot's code, answer the referee.

Runs in the child forked by the spawner (:mod:`arena.sandbox.spawner_process`); nothing
here may return into the spawner's code, so every path ends in ``os._exit``.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C core (no stubs): see _confine
import errno
import importlib
import json
import os
import pickle
import resource
import select
from typing import Any, NamedTuple

from arena.bot import Bot, describe_non_move, split_answer
from arena.engine.game import Board, Rules
from arena.errors import ArenaError
from arena.records import BotCode, Limits
from arena.sandbox import cgroups, connectx, landlock, namespaces, seccomp
from arena.sandbox.answers import MAX_DEPTH
from arena.sandbox.process_control import die_with_parent, drop_capabilities
from arena.sandbox.wire import OUTPUT_NAME, read_message
from arena.text import clip, json_text, nested_deeper_than, printable, quote


class BotFileError(ArenaError):
    """A bot file that defines no bot to play, or several without saying which."""


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


def run_bot_process(confinement: Confinement) -> None:
    """Confine this process, wait for the bot to run, load it, and serve requests on
    its channel (a socket) until the referee closes it.

    The spawner forks bot processes ahead of need: a process confines itself and
    rehearses while an earlier game is still being played, then waits for its
    job (the bot's code, options and limits), the first message on the channel.
    """
    channel = confinement.channel
    try:
        inherited = _address_space()  # what the memory limit comes on top of
        joined = _confine(confinement)
        _rehearse()
        job = read_message(channel)
        if job is None:
            return  # not needed after all
        code, options, limits = job
        _limit(limits, inherited, joined)
        # As the first process of its PID namespace it would ignore the kernel's
        # SIGXCPU (only SIGKILL, a second later, would end it): say why, and leave.
        _signal.signal(_signal.SIGXCPU, lambda signum, frame: _out_of_processor_time(channel, limits))
        try:
            bot = _load(code, options)
        except _Failed as exc:
            _send(channel, {"error": str(exc)})
            return
        _serve(bot, channel, limits)
    except BaseException:  # nothing may escape a forked child: it would run the spawner's code
        try:
            import traceback  # only now: every module the spawner loads costs every bot process

            _send(channel, {"error": "crashed: " + _last_line(traceback.format_exc())})
        except BaseException:
            pass
    finally:
        os._exit(0)


def _confine(c: Confinement) -> cgroups.Joined | None:
    """Everything that does not depend on the bot: its control groups (first, so
    they count all it does), an IPC namespace of its own, a session of its own,
    its folder, its output file, no inherited files, its user, no capabilities,
    and its Landlock domain (prepared by the spawner). Returns the open limit
    files of its groups."""
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
    opened = [fd for fd in (joined or ()) if fd is not None]
    kept = sorted({c.channel, c.lifeline, *opened, *([c.ruleset] if c.ruleset is not None else [])})
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
    if c.ruleset is not None:
        landlock.allow_reading(c.ruleset, "/proc/self")  # this process's own, resolved here
        if not landlock.enforce(c.ruleset):
            raise RuntimeError("sandbox: Landlock could not be enforced")  # never run a bot unconfined
        os.close(c.ruleset)
    # Last: it refuses calls the steps above make (unshare, chmod).
    if c.filter is not None and not seccomp.install(c.filter):
        raise RuntimeError("sandbox: the seccomp filter could not be installed")  # never run a bot unconfined
    return joined


class _Rehearsal:
    """A trivial bot, for the rehearsal."""

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        pass

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def _rehearse() -> None:
    """Go once through what a game does (read a job, start, answer moves) with the
    arena's own trivial bot and no channel. A forked process pays for every page
    it first writes to; paying now, while it waits, keeps that cost out of the
    game. No bot code runs, so nothing of it can reach the bot."""
    pickle.loads(pickle.dumps((BotCode("rehearsal", text=""), {}, Limits())))
    bot = _Rehearsal()
    rules = Rules()
    for request in ({"op": "start", "rules": rules.as_dict(), "player": 0, "seed": 0},
                    {"op": "move", "moves": [3, 3], "time": 1.0}):
        _encode(_answer(bot, json.loads(json.dumps(request)), Limits()))


def _limit(limits: Limits, inherited: int, joined: cgroups.Joined | None) -> None:
    if joined is not None:  # the bot as a whole: all its processes, every kind of memory
        cgroups.apply_limits(joined, limits.memory_mb * 1024 * 1024, limits.processes)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_kb * 1024,) * 2)
    # The limit is on top of what the process inherited from the spawner: the
    # bot itself gets memory_mb.
    memory = inherited + limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


def _out_of_processor_time(channel: int, limits: Limits) -> None:
    try:
        _send(channel, {"error": f"cpu: used its {limits.cpu_seconds} s of processor time for the game"})
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


def _load(code: BotCode, options: dict[str, str]) -> Any:
    """Build the bot: a Bot subclass from the file or entry point, or a ConnectX agent."""
    if code.entry_point is not None:
        return load_installed(code.entry_point)(**options)
    namespace: dict[str, Any] = {"__name__": "arena_sandboxed_bot", "__file__": code.label}
    try:
        exec(compile(code.text or "", code.label, "exec"), namespace)
    except BaseException as exc:
        raise _Failed(f"failed to import: {type(exc).__name__}: {exc}") from None
    try:
        bot_class = pick_bot_class(namespace, code.label, code.class_name, quiet=True)
    except BotFileError as exc:
        raise _Failed(str(exc)) from None
    if bot_class is not None:
        try:
            return bot_class(**options)
        except ValueError as exc:  # BotOptionError
            raise _Failed(f"bad option: {exc}") from None
    agent = connectx.find_agent(namespace)
    if agent is None:
        raise _Failed(f"{code.label} defines no Bot subclass and no agent(observation, configuration)")
    return connectx.KaggleAgentBot(agent)


def load_installed(target: str) -> Any:
    """The class an installed bot's entry point names ("module:Class")."""
    module, _, name = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):  # a class nested in another
        found = getattr(found, part)
    return found


def pick_bot_class(
    namespace: dict[str, Any], label: str, class_name: str | None, quiet: bool = False
) -> type[Bot] | None:
    """The Bot subclass a file defines (the one named, or its only one).

    With ``quiet``, a file with no Bot subclass gives None (it may hold a ConnectX agent).
    """
    module = namespace.get("__name__")
    candidates = {
        obj.__name__: obj
        for obj in namespace.values()
        if isinstance(obj, type) and issubclass(obj, Bot) and obj is not Bot and obj.__module__ == module
    }
    if class_name is not None:
        if class_name not in candidates:
            raise BotFileError(
                f"bot file {label!r} has no Bot subclass {class_name!r}; "
                f"it has: {', '.join(sorted(candidates)) or 'none'}"
            )
        return candidates[class_name]
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    if not candidates:
        if quiet:
            return None
        raise BotFileError(f"bot file {label!r} defines no subclass of arena.bot.Bot; see the README's bot example")
    raise BotFileError(
        f"bot file {label!r} defines several bots ({', '.join(sorted(candidates))}); pick one with {label}:ClassName"
    )


class _Failed(Exception):
    pass


def _serve(bot: Any, channel: int, limits: Limits) -> None:
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(channel, 65536)
            if not chunk:
                return
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        request = json.loads(line)
        _send(channel, _answer(bot, request, limits))


def _answer(bot: Any, request: dict[str, Any], limits: Limits) -> dict[str, Any]:
    try:
        if request["op"] == "start":
            rules = Rules(**request["rules"])
            bot.new_game(rules, request["player"], request["seed"])
            bot.sandbox_rules = rules
            # Known from the class, not asked of the bot: a Bot may have an attribute
            # (an option, even) named kind, and the kind is stored with a submission.
            return {"ok": True, "kind": "connectx" if isinstance(bot, connectx.KaggleAgentBot) else "bot"}
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
        return {"error": _crashed(exc)}
    except BaseException as exc:
        return {"error": _crashed(exc)}
    if type(move) is not int:
        return {"not_a_move": describe_non_move(move)}
    try:
        text = json_text(info)  # as _encode will write it: NaN and infinities as null
    except Exception:  # not JSON (an object, a circular structure, too deep to write...)
        info = {"error": "info was not JSON-serialisable"}
    else:
        if nested_deeper_than(text.encode(), MAX_DEPTH - 1):  # the answer around it is one level more
            info = {"error": f"info nested more than {MAX_DEPTH - 1} deep"}
    return {"move": move, "info": info}


def _crashed(exc: BaseException) -> str:
    """The reason of a bot that raised: the exception's type, then its message
    quoted, so that a message such as "the opponent crashed" reads as the bot's words."""
    try:
        message = str(exc)
    except Exception:  # the bot's own __str__ may raise too
        message = "(its message could not be read)"
    kind = printable(clip(type(exc).__name__, 60))  # a bot can name a class anything, escapes too
    return f"crashed: {kind}: {quote(message, 200)}" if message else f"crashed: {kind}"


def _send(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, _encode(message))


def _encode(message: dict[str, Any]) -> bytes:
    return json_text(message).encode() + b"\n"


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:300]
