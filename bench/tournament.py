"""Tournament throughput end to end: scheduling, workers, SQLite with every move.

Prints games per second with 1 and 2 workers for random vs random, the same for a
CPU-bound pairing (minimax vs minimax), and peak memory of the coordinator as the
number of games grows.

Run: python bench/tournament.py [--games N] [--cpu-games N] [--memory-games N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from arena.league.store import Store
from arena.tournament.config import load_config
from arena.tournament.runner import run_tournament


def run(bots: list[str], games: int, workers: int, db: Path, name: str) -> tuple[float, int]:
    """Games per second and the number of moves stored."""
    config = load_config(None, {"name": name, "bots": bots, "games": games, "workers": workers,
                                "db": str(db), "seed": 7})
    store = Store(db)
    started = time.perf_counter()
    outcome = run_tournament(config, store)
    elapsed = time.perf_counter() - started
    moves = store.move_count()
    store.close()
    return outcome.played / elapsed, moves


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20_000, help="random vs random games")
    parser.add_argument("--cpu-games", type=int, default=200, help="minimax vs minimax games")
    parser.add_argument("--cpu-bot", default="minimax:depth=5")
    parser.add_argument("--memory-games", type=int, nargs="*", default=[10_000, 100_000])
    args = parser.parse_args()
    random_pair = ["random:stream=1", "random:stream=2"]
    cpu_pair = [args.cpu_bot, f"{args.cpu_bot.split(':')[0]}:depth=4"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rates = {}
        for label, bots, games in (("random vs random", random_pair, args.games),
                                   (f"{cpu_pair[0]} vs {cpu_pair[1]}", cpu_pair, args.cpu_games)):
            for workers in (1, 2):
                db = folder / f"{len(rates)}.db"
                rate, moves = run(bots, games, workers, db, "bench")
                rates[label, workers] = rate
                print(f"{label:<36} workers={workers}  {rate:>8,.0f} games/s  ({games} games, {moves} moves stored)")
            print(f"{'':<36} speed-up with 2 workers: {rates[label, 2] / rates[label, 1]:.2f}x")
        sys.stdout.flush()
        for games in args.memory_games:
            db = folder / f"mem-{games}.db"
            rate, moves = run(random_pair, games, 2, db, "memory")
            size = db.stat().st_size / 2**20
            print(f"memory: {games:>7} games, {moves} moves, {rate:,.0f} games/s, "
                  f"peak RSS of the coordinator so far {peak_memory_mb():.0f} MB, database {size:.0f} MB")


if __name__ == "__main__":
    main()
