"""Cost of the sandbox: sandboxed random vs sandboxed random, against the same
bots in the worker process.

Prints games per second per worker (one worker, then two), the round trip of
one move to a sandboxed bot that is already running, and what is left per game:
starting and ending its two bot processes.

Run: python bench/sandbox.py [--games N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from arena.engine.game import Board, Rules
from arena.league.store import Store
from arena.records import BotCode, Limits
from arena.sandbox.proxy import SandboxedBot
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
    moves = store.move_count(timed_only=True)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
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


if __name__ == "__main__":
    main()
