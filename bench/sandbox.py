"""Cost of the sandbox: sandboxed random vs sandboxed random, against the same
bots in the worker process.

Prints games per second per worker (one worker, then two), the round trip of
one move to a sandboxed bot that is already running, and what is left per game:
starting and ending its two bot processes. Then where the time of one bot
process goes, step by step, measured in a process as small as the spawner: a
plain fork, the fork into a PID namespace, joining its control groups, its IPC
namespace, and the rest of its confinement (Landlock, seccomp, capabilities).

Compare two commits by running each one's copy of this file in its own tree.

Run: python bench/sandbox.py [--games N] [--steps N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from arena.engine.game import Board, Rules
from arena.records import BotCode, Limits
from arena.sandbox.proxy import SandboxedBot
from arena.store import Store
from arena.tournament.config import load_config
from arena.tournament.runner import run_tournament
from bots.random_bot import RandomBot


def tournament(isolate: bool, games: int, workers: int, db: Path) -> tuple[float, int]:
    """(seconds, moves) for random:stream=1 vs random:stream=2."""
    config = load_config(None, {
        "name": "sandbox", "bots": ["random:stream=1", "random:stream=2"], "games": games,
        "workers": workers, "db": str(db), "seed": 3, "isolate": isolate,
    })
    store = Store(db)
    started = time.perf_counter()
    run_tournament(config, store)
    seconds = time.perf_counter() - started
    moves = store.games.move_count(timed_only=True)
    store.close()
    return seconds, moves


def move_round_trip(moves: int) -> tuple[float, float]:
    """(seconds per move sandboxed, in this process): two running bots, answering in turn."""
    board = Board.from_moves("4453")
    boxed = [SandboxedBot(BotCode("random", entry_point="bots.random_bot:RandomBot"), {}, Limits())
             for _ in range(2)]
    plain = [RandomBot(), RandomBot()]
    timings = []
    for pair in (boxed, plain):
        for player, bot in enumerate(pair):
            bot.new_game(Rules(), player, 1)
        started = time.perf_counter()
        for i in range(moves):
            pair[i % 2].choose_move(board)
        timings.append((time.perf_counter() - started) / moves)
    for bot in boxed:
        bot.close()
    return timings[0], timings[1]


# Run in a fresh `python -S -P` that has loaded what the spawner loads: each step
# forks N children that go as far as that step, exit, and are waited for.
STEPS = textwrap.dedent("""
    import os, sys, time
    from arena.sandbox import cgroups, landlock, namespaces, process_control, seccomp, spawner_process
    from arena.sandbox.bot_process import Confinement, _confine

    n = int(sys.argv[1])
    namespaces.enter_spawner_namespaces()
    forks = namespaces.Namespaces(nested=os.geteuid() != 0)
    pool = cgroups.GroupPool()
    filter = seccomp.prepare()
    readable = process_control.readable_paths()

    def timed(make_child, isolated=True, grouped=False):
        started = time.perf_counter()
        for _ in range(n):
            group = pool.take() if grouped else None
            folder = spawner_process._new_folder(spawner_process._root(), "arena-bench-", 0o700)
            pid = forks.fork() if isolated else os.fork()
            if pid == 0:
                try:
                    make_child(group, folder)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
            spawner_process._remove(folder)
            if group is not None:
                pool.give_back(group)
        return (time.perf_counter() - started) / n

    lifeline, _kept = os.pipe()

    def confine(group, folder):
        ruleset = landlock.prepare([folder], readable)
        _confine(Confinement(folder, None, ruleset, os.dup(0), lifeline, group, True, filter))

    results = [
        ("fork, exit, wait", timed(lambda g, f: None, isolated=False)),
        ("+ its own PID namespace", timed(lambda g, f: None)),
        ("+ joining its control groups", timed(lambda g, f: cgroups.join(g), grouped=True)),
        ("+ its own IPC namespace", timed(lambda g, f: (cgroups.join(g), namespaces.make_private_ipc()),
                                          grouped=True)),
        ("+ the rest of its confinement", timed(confine, grouped=True)),
    ]
    pool.shut_down()
    for name, seconds in results:
        print(f"{name}\t{seconds}")
""")


def steps(n: int) -> list[tuple[str, float]]:
    """(step, seconds a bot process costs up to it), from a spawner-sized process."""
    out = subprocess.run([sys.executable, "-S", "-P", "-c", STEPS, str(n)], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])}).stdout
    return [(name, float(seconds)) for name, seconds in (line.split("\t") for line in out.splitlines())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=300, help="bot processes forked for each step")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain_seconds, _ = tournament(False, args.games, 1, Path(tmp, "plain.db"))
        boxed_seconds, boxed_moves = tournament(True, args.games, 1, Path(tmp, "boxed.db"))
        two_seconds, _ = tournament(True, args.games, 2, Path(tmp, "two.db"))
    boxed_move, plain_move = move_round_trip(4000)
    per_game = (boxed_seconds - plain_seconds) / args.games
    moves_per_game = boxed_moves / args.games
    starting = per_game - moves_per_game * (boxed_move - plain_move)
    print(f"in-process random vs random, 1 worker:  {args.games / plain_seconds:8,.0f} games/s")
    print(f"sandboxed  random vs random, 1 worker:  {args.games / boxed_seconds:8,.0f} games/s")
    print(f"sandboxed  random vs random, 2 workers: {args.games / two_seconds:8,.0f} games/s "
          f"({args.games / two_seconds / 2:,.0f} per worker)")
    print(f"one move, bot already running: {boxed_move * 1e6:.0f} us sandboxed, {plain_move * 1e6:.1f} us in-process")
    print(f"sandbox cost per game: {per_game * 1000:.2f} ms = {moves_per_game:.1f} moves x "
          f"{(boxed_move - plain_move) * 1e6:.0f} us + {starting * 1000:.2f} ms to start and end two bot processes")
    try:
        measured = steps(args.steps)
    except (subprocess.CalledProcessError, ImportError) as exc:  # an older tree has no such steps
        print(f"(no step-by-step figures: {exc})")
        return
    print("one bot process, step by step (each line: what it adds):")
    before = 0.0
    for name, seconds in measured:
        print(f"  {name:32s} {(seconds - before) * 1e6:7.0f} us   (total {seconds * 1e6:6.0f} us)")
        before = seconds


if __name__ == "__main__":
    main()
