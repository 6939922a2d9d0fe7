"""Tournaments on a local Dask cluster against the same number of local worker processes.

In one run, for CPU-bound games (minimax depth 5 against depth 4) and each number
of workers: games per second through the local executor (worker processes and
pipes) and through a Dask cluster of as many worker processes (``local:N``: a
scheduler, nannies and workers on this machine, talking TCP on 127.0.0.1), and the
ratio (the target: the cluster at least 0.9x). Then, for cheap games (random
against random), the time the cluster path adds to each game.

Both executors are started before the clock starts (a cluster's start, about a
second, is printed apart): the rates are those of play and storage. Each pairing
of executor and workers is run ``--rounds`` times, alternating, and its best
round counts, so a busy moment of a shared machine does not decide the ratio.

Run: python bench/cluster.py [--cpu-games N] [--cheap-games N] [--workers 1 2 ...] [--rounds R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from arena.store import Store
from arena.tournament.cluster import ClusterExecutor, worker_needs
from arena.tournament.config import load_config
from arena.tournament.execution import Executor
from arena.tournament.executors import ProcessExecutor
from arena.tournament.runner import run_tournament

CPU_PAIR = ["minimax:depth=5", "minimax:depth=4"]
CHEAP_PAIR = ["random:stream=1", "random:stream=2"]


def rate(bots: list[str], games: int, executor: Executor, db: Path) -> float:
    """Games per second of one tournament of ``games`` games between ``bots``."""
    config = load_config(None, {"name": "bench", "bots": bots, "games": games, "db": str(db), "seed": 7})
    store = Store(db)
    started = time.perf_counter()
    outcome = run_tournament(config, store, executor)
    elapsed = time.perf_counter() - started
    store.close()
    assert outcome.played == games and not outcome.interrupted
    return games / elapsed


def best_rates(bots: list[str], games: int, workers: int, rounds: int, folder: Path) -> tuple[float, float, float]:
    """(local games/s, cluster games/s, seconds the cluster took to start), best of ``rounds``."""
    started = time.perf_counter()
    cluster = ClusterExecutor(f"local:{workers}", worker_needs(bots))
    start_seconds = time.perf_counter() - started
    local = ProcessExecutor(workers)
    try:
        here, there = 0.0, 0.0
        for round_ in range(rounds):
            name = f"{bots[0].split(':')[0]}-{workers}-{round_}"
            here = max(here, rate(bots, games, local, folder / f"local-{name}.db"))
            there = max(there, rate(bots, games, cluster, folder / f"cluster-{name}.db"))
    finally:
        local.close()
        cluster.close()
    return here, there, start_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu-games", type=int, default=240, help="minimax depth 5 against depth 4")
    parser.add_argument("--cheap-games", type=int, default=20_000, help="random against random")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        label = f"{CPU_PAIR[0]} vs {CPU_PAIR[1]}"
        cluster_rates = {}
        for workers in args.workers:
            here, there, start = best_rates(CPU_PAIR, args.cpu_games, workers, args.rounds, folder)
            cluster_rates[workers] = there
            print(f"{label}  workers={workers:<2}  local {here:7.1f} games/s   cluster {there:7.1f} games/s   "
                  f"ratio {there / here:.2f}x   (cluster start {start:.1f} s, {args.cpu_games} games)", flush=True)
        if 1 in cluster_rates:
            for workers, there in cluster_rates.items():
                if workers > 1:
                    print(f"cluster speed-up with {workers} workers: {there / cluster_rates[1]:.2f}x")
        here, there, _ = best_rates(CHEAP_PAIR, args.cheap_games, 1, args.rounds, folder)
        overhead_ms = 1000 / there - 1000 / here
        print(f"random vs random  workers=1   local {here:7,.0f} games/s   cluster {there:7,.0f} games/s   "
              f"cluster overhead {overhead_ms:+.3f} ms per game ({args.cheap_games} games)")


if __name__ == "__main__":
    main()
