"""Cost of the sandbox: sandboxed random vs sandboxed random, against the same
bots in the worker process; games per second per worker and overhead per move.

Run: python bench/sandbox.py [--games N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from arena.config import load_config
from arena.runner import run_tournament
from arena.store import Store


def run(isolate: bool, games: int, db: Path) -> tuple[float, float, int]:
    """(games per second, seconds, moves) for random:stream=1 vs random:stream=2."""
    config = load_config(None, {
        "name": "sandbox", "bots": ["random:stream=1", "random:stream=2"], "games": games,
        "workers": 1, "db": str(db), "seed": 3, "isolate": isolate,
    })
    store = Store(db)
    started = time.perf_counter()
    outcome = run_tournament(config, store)
    seconds = time.perf_counter() - started
    moves = store.db.execute("select count(*) from moves where ms is not null").fetchone()[0]
    store.close()
    return outcome.played / seconds, seconds, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain_rate, plain_seconds, plain_moves = run(False, args.games, Path(tmp, "plain.db"))
        boxed_rate, boxed_seconds, boxed_moves = run(True, args.games, Path(tmp, "boxed.db"))
    per_game = (boxed_seconds - plain_seconds) / args.games
    per_move = (boxed_seconds - plain_seconds) / boxed_moves
    print(f"in-process random vs random, 1 worker: {plain_rate:8,.0f} games/s")
    print(f"sandboxed  random vs random, 1 worker: {boxed_rate:8,.0f} games/s")
    print(f"sandbox overhead: {per_game * 1000:.2f} ms per game (two bot processes), "
          f"{per_move * 1e6:.0f} us per move including start-up")


if __name__ == "__main__":
    main()
