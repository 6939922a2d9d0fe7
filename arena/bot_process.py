"""Inside a bot process: confine it, load the bot's code, answer the referee.

Runs in the child forked by :class:`arena.sandbox.SandboxedBot`; nothing here may
return into the worker's code, so every path ends in ``os._exit``.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import sys
import traceback
from typing import Any

from arena import kaggle, landlock
from arena.bot import describe_non_move, split_answer
from arena.game import Board, Rules
from arena.processes import die_with_parent, readable_paths
from arena.sandbox import OUTPUT_NAME, BotCode, Limits

def run_bot_process(
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
    die_with_parent()
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
    # The limit is on top of what the process inherited from its worker (which
    # may hold large mappings, numba's for one): the bot itself gets memory_mb.
    memory = _address_space() + limits.memory_mb * 1024 * 1024
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
        landlock.confine(writable=[workdir], readable=readable_paths())


def _address_space() -> int:
    """Bytes of address space this process has mapped now."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


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
        return {"not_a_move": describe_non_move(move)}
    try:
        json.dumps(info)
    except (TypeError, ValueError):
        info = {"error": "info was not JSON-serialisable"}
    return {"move": move, "info": info}


def _send(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:300]
