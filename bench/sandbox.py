"""Cost of the sandbox: sandboxed random vs sandboxed random, against the same
bots in the worker process.

Prints games per second per worker (one worker, then two), the round trip of
one move to a sandboxed bot that is already running, and what is left per game:
starting and ending its two bot processes. Then where the time of one bot
process goes, step by step, measured in a process as small as the spawner: a
plain fork, the fork into a PID namespace, joining its control groups, its IPC
namespace, and the rest of its confinement (Landlock, seccomp, capabilities).

Compare with another commit in one run: ``--against REV`` checks REV out in a
temporary worktree and measures both trees in turn, round after round (old, new,
new, old, ...), so that both see the same machine; it prints the medians side by
side with their ratios.

Run: python bench/sandbox.py [--games N] [--steps N] [--against REV --rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


# Run in each tree with that tree first on the path: what both an older and this
# tree offer (the store moved between them), printed as JSON.
MEASURE = textwrap.dedent("""
    import json, sys, tempfile, time
    from pathlib import Path
    try:
        from arena.league.store import Store  # before the store had a room of its own
    except ImportError:
        from arena.store import Store
    from arena.engine.game import Board, Rules
    from arena.records import BotCode, Limits
    from arena.sandbox.proxy import SandboxedBot
    from arena.tournament.config import load_config
    from arena.tournament.runner import run_tournament

    games, moves = int(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(None, {"name": "sandbox", "bots": ["random:stream=1", "random:stream=2"],
                                    "games": games, "workers": 1, "db": str(Path(tmp, "a.db")), "seed": 3,
                                    "isolate": True})
        store = Store(Path(tmp, "a.db"))
        started = time.perf_counter()
        run_tournament(config, store)
        seconds = time.perf_counter() - started
        store.close()
    board = Board.from_moves("4453")
    boxed = [SandboxedBot(BotCode("random", entry_point="bots.random_bot:RandomBot"), {}, Limits())
             for _ in range(2)]
    for player, bot in enumerate(boxed):
        bot.new_game(Rules(), player, 1)
    started = time.perf_counter()
    for i in range(moves):
        boxed[i % 2].choose_move(board)
    move = (time.perf_counter() - started) / moves
    for bot in boxed:
        bot.close()
    print(json.dumps({"games_per_second": games / seconds, "move_us": move * 1e6}))
""")


def measure(tree: Path, games: int, moves: int) -> dict[str, float]:
    ran = subprocess.run([sys.executable, "-c", MEASURE, str(games), str(moves)], capture_output=True, text=True,
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    if ran.returncode:
        raise SystemExit(f"measuring {tree} failed:\n{ran.stderr}")
    return json.loads(ran.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def compare(against: str, rounds: int, games: int, moves: int) -> None:
    """Both trees measured in turn, ``rounds`` times each; medians and ratios."""
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp, "old")
        subprocess.run(["git", "-C", str(here), "worktree", "add", "--detach", "-q", str(old), against], check=True)
        try:
            runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
            for number in range(rounds):
                order = [("old", old), ("new", here)] if number % 2 == 0 else [("new", here), ("old", old)]
                for label, tree in order:
                    runs[label].append(measure(tree, games, moves))
        finally:
            subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force", str(old)], check=False)
    print(f"{against} (old) against this tree (new), {rounds} rounds interleaved, medians:")
    for key, label, better in (("games_per_second", "sandboxed games/s, 1 worker", "higher"),
                               ("move_us", "one move's round trip, us", "lower")):
        old_value = statistics.median(r[key] for r in runs["old"])
        new_value = statistics.median(r[key] for r in runs["new"])
        print(f"  {label:30s} old {old_value:9.1f}   new {new_value:9.1f}   new/old {new_value / old_value:5.2f}"
              f"  ({better} is better)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=300, help="bot processes forked for each step")
    parser.add_argument("--against", metavar="REV", help="compare with this commit, measured in turn in one run")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --against")
    parser.add_argument("--moves", type=int, default=4000, help="moves timed for the round trip")
    args = parser.parse_args()
    if args.against:
        compare(args.against, args.rounds, args.games, args.moves)
        return
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
