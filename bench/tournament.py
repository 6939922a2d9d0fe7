"""Tournament throughput as the user sees it: the whole ``arena tournament run``
command, from start to exit, beside a bare Python bitboard playout loop.

For random vs random the command (run as a subprocess, with its database in a
temporary folder) is timed with 1 and 2 workers, interleaved with the bare loop in
the same run, and the ratio is printed: the part of the command's time that goes
to playing rather than to refereeing, shipping and storing games (each repeat's
ratio is over the bare loop timed just before and just after the command's runs).
The commands keep their compiled modules, as a user's Python does after a first
run (an untimed one here), even where PYTHONDONTWRITEBYTECODE is set. Then the same
for a CPU-bound pairing (minimax vs minimax), and the peak resident memory of the
command (os.wait4's ru_maxrss: the coordinator, or a worker if one ever grew
larger) at a few sizes.

With ``--baseline DIR`` (a checkout of another revision: ``git worktree add DIR
REV``) every run of the command is also made with DIR's code, interleaved with
this one's, and each rate and the CPU a game took (the command and its workers)
is printed beside the baseline's: on a shared machine only runs side by side say
what a change did.

Run: python bench/tournament.py [--games N] [--repeats R] [--cpu-games N]
                                [--memory-games N ...] [--million] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ARENA = Path(sys.executable).with_name("arena")
RANDOM_PAIR = "random:stream=1,random:stream=2"


def bare_playouts(games: int, seed: int = 1) -> float:
    """Random 7x6 connect-four games per second of a bare bitboard loop: no
    referee, no bots, no storing (best case for Python playing random games)."""
    choice = random.Random(seed).choice
    started = time.perf_counter()
    for _ in range(games):
        heights = [7 * column for column in range(7)]  # next free bit of each column
        stones = [0, 0]
        columns = list(range(7))
        player = 0
        for _ply in range(42):
            column = choice(columns)
            mine = stones[player] | 1 << heights[column]
            stones[player] = mine
            heights[column] += 1
            if heights[column] == 7 * column + 6:
                columns.remove(column)
            if any((pair := mine & mine >> step) & pair >> 2 * step for step in (1, 6, 7, 8)):
                break
            player ^= 1
    return games / (time.perf_counter() - started)


@dataclass
class CommandRun:
    seconds: float  # wall clock, start to exit
    cpu_seconds: float  # user + system of the command and its workers
    peak_mb: float  # ru_maxrss: the largest of the command's processes


def run_command(bots: str, games: int, workers: int, db: Path, code: Path | None = None) -> CommandRun:
    """Run ``arena tournament run`` to its end (with the arena and bots of the
    checkout ``code``, if given); what it took."""
    command = [str(ARENA), "tournament", "run", "--bots", bots, "--games", str(games),
               "--workers", str(workers), "--db", str(db), "--seed", "7", "--name", "bench"]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    # Compiled modules are kept (under the run's folder), as a user's Python keeps them
    # after their first run: a machine set to write none compiles the arena at every start.
    environment["PYTHONPYCACHEPREFIX"] = str(db.parent / "bytecode")
    if code is not None:
        environment["PYTHONPATH"] = str(code)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.returncode:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}): {errors[-2000:]}")
    return CommandRun(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def compare(folder: Path, games: int, repeats: int, baseline: Path | None = None) -> None:
    """The command with 1 and 2 workers and the bare loop, interleaved; best of
    ``repeats``, with the range of every repeat (the machine may be shared). Each
    repeat's ratio is the command's rate over the mean of the bare loop's just
    before and just after it. With
    ``baseline``, each run of the command is followed (then preceded, turn about)
    by the same run with the baseline's code."""
    codes: list[Path | None] = [None] if baseline is None else [None, baseline]
    for code in codes:  # a first run of each, untimed: it compiles what the timed runs import
        run_command(RANDOM_PAIR, 20, 1, folder / "warm-up.db", code)
        (folder / "warm-up.db").unlink()
    rates: dict[int, list[float]] = {0: []}  # games/s by workers; 0 is the bare loop
    ratios: dict[tuple[int, Path | None], list[float]] = {}
    runs: dict[tuple[int, Path | None], list[CommandRun]] = {}
    for repeat in range(repeats):
        for workers in (1, 2):
            # The bare loop just before the command's runs and just after them: this
            # machine's speed can swing by half within seconds, so one short loop
            # before a run of many seconds is a poor reference.
            before = bare_playouts(games // 4, seed=repeat)
            done: list[tuple[Path | None, CommandRun]] = []
            for code in codes if repeat % 2 == 0 else codes[::-1]:
                db = folder / f"rate-{repeat}-{workers}.db"
                done.append((code, run_command(RANDOM_PAIR, games, workers, db, code)))
                db.unlink()
            after = bare_playouts(games // 4, seed=repeat)
            rates[0] += [before, after]
            for code, run in done:
                runs.setdefault((workers, code), []).append(run)
                ratios.setdefault((workers, code), []).append(games / run.seconds / ((before + after) / 2))
    print(f"random vs random, {games:,} games, best of {repeats} (range of the repeats):")
    print(f"  bare bitboard playout loop         {max(rates[0]):>8,.0f} games/s ({_range(rates[0], '.0f')})")
    for workers in (1, 2):
        for code in codes:
            done = [games / run.seconds for run in runs[workers, code]]
            cpu = [run.cpu_seconds / games * 1e6 for run in runs[workers, code]]
            label = f"arena tournament run, {workers} worker(s)" if code is None else f"  baseline {code}"
            each = _range(ratios[workers, code], '.2f')
            print(f"  {label:<34} {max(done):>8,.0f} games/s ({_range(done, '.0f')})   "
                  f"{max(done) / max(rates[0]):.2f}x the bare loop (each repeat: {each}x); "
                  f"CPU {_range(cpu, '.0f')} us a game")
        if baseline is not None:
            ours, theirs = runs[workers, None], runs[workers, baseline]
            faster = [b.seconds / a.seconds for a, b in zip(ours, theirs)]
            print(f"    this code against the baseline, run by run: {_range(faster, '.2f')}x the games/s, "
                  f"{_range([a.cpu_seconds / b.cpu_seconds for a, b in zip(ours, theirs)], '.2f')}x the CPU")
    sys.stdout.flush()


def _range(values: list[float], form: str) -> str:
    return f"{min(values):,{form}}-{max(values):,{form}}"


def cpu_bound(folder: Path, bot: str, games: int) -> None:
    """A pairing whose games cost far more than storing them: workers should scale."""
    bots = f"{bot},{bot.split(':')[0]}:depth=4"
    rates = {}
    for workers in (1, 2):
        run = run_command(bots, games, workers, folder / f"cpu-{workers}.db")
        rates[workers] = games / run.seconds
        print(f"{bots} ({games} games), {workers} worker(s): {rates[workers]:,.1f} games/s")
    print(f"  speed-up with 2 workers: {rates[2] / rates[1]:.2f}x")
    sys.stdout.flush()


def memory(folder: Path, sizes: list[int]) -> None:
    """Peak resident memory of the whole command as the tournament grows."""
    for games in sizes:
        db = folder / f"memory-{games}.db"
        run = run_command(RANDOM_PAIR, games, 1, db)
        size = db.stat().st_size / 2**20
        print(f"memory: {games:>9,} games in {run.seconds:6.1f} s ({games / run.seconds:,.0f} games/s), "
              f"peak RSS {run.peak_mb:.0f} MB, database {size:.0f} MB")
        db.unlink()
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20_000, help="random vs random games")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-games", type=int, default=200, help="minimax vs minimax games (0: skip)")
    parser.add_argument("--cpu-bot", default="minimax:depth=5")
    parser.add_argument("--memory-games", type=int, nargs="*", default=[20_000, 100_000])
    parser.add_argument("--million", action="store_true", help="also measure memory at 1,000,000 games")
    parser.add_argument("--baseline", type=Path, help="a checkout of another revision, run beside this one")
    args = parser.parse_args()
    if args.baseline is not None and not (args.baseline / "arena" / "__init__.py").is_file():
        print(f"--baseline {args.baseline}: no arena package there; give a checkout (git worktree add DIR REV)",
              file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        compare(folder, args.games, args.repeats, args.baseline)
        if args.cpu_games:
            cpu_bound(folder, args.cpu_bot, args.cpu_games)
        memory(folder, args.memory_games + ([1_000_000] if args.million else []))


if __name__ == "__main__":
    main()
