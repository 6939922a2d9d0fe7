"""A fresh Dask worker's first game: from the worker's start to its first game's
record, with numba's cache empty (a new machine) and then warm (the machine's next
worker processes), for a tournament of the numba bots.

``dask scheduler`` and one ``dask worker`` process are started here (127.0.0.1);
each run has a numba cache folder of its own (NUMBA_CACHE_DIR), empty for the first
worker and kept for the second. Since workers warm their bots up during their check
(see arena/tournament/cluster.py), a game never waits for numba's compiler inside
its clock; what a fresh machine still pays once is the compile itself.

Run: python bench/cluster_warmup.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.tournament.cluster import ClusterExecutor, worker_needs
from arena.tournament.config import load_config
from arena.tournament.runner import play_games
from arena.tournament.schedule import schedule

BOTS = ["mcts:playouts=200,backend=numba", "solver:nodes=2000"]
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent


def first_game(address: str, cache: Path, folder: Path) -> tuple[float, float]:
    """Seconds from a new worker's start to its admission, and to its first game's record."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with open(folder / "worker.log", "a") as log:
        worker = subprocess.Popen([BIN / "dask", "worker", address, "--nthreads", "1", "--no-nanny", "--host",
                                   "127.0.0.1", "--no-dashboard"], cwd=folder, env=env,
                                  stdout=subprocess.DEVNULL, stderr=log)
    try:
        executor = ClusterExecutor(address, worker_needs(BOTS))
        admitted = time.perf_counter() - started
        games = schedule(load_config(None, {"name": "w", "bots": BOTS, "games": 2, "seed": 3, "db": ":memory:"}))
        try:
            for records in executor.map_unordered(play_games, [games[:1]]):
                if records:
                    break
        finally:
            executor.close()
        return admitted, time.perf_counter() - started
    finally:
        worker.kill()
        worker.wait()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        file = folder / "scheduler.json"
        scheduler = subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                      "--no-dashboard", "--scheduler-file", file],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not file.exists():
                time.sleep(0.1)
            time.sleep(0.5)
            address = json.loads(file.read_text())["address"]
            cache = folder / "numba-cache"
            for label in ("fresh machine (empty numba cache)", "next worker (numba cache warm)"):
                admitted, played = first_game(address, cache, folder)
                print(f"{label}: admitted after {admitted:.1f} s, first game's record after {played:.1f} s")
        finally:
            print((folder / "worker.log").read_text()[-3000:], file=sys.stderr) if "--log" in sys.argv else None
            scheduler.kill()
            scheduler.wait()


if __name__ == "__main__":
    main()
