"""Games stored per second: synthetic finished games of 20 moves each, written
through the store's own write path into a new database file, as a tournament's
writer writes them (a batch of games per transaction, every move a row).

Two figures: the writer alone (``store.games.record_finished``: the games already turned
into rows where they were played, as workers send them), and the same games from
GameRecords (``store.games.record``: the rows made by the writer too).

Run: python bench/store.py [--games N] [--batch N] [--repeats R]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.engine.game import Board, Rules
from arena.records import GameRecord, GameSpec, MoveRecord, Outcome, Termination
from arena.store import BotIdentity, FinishedGame, Store

PLIES = 20


def synthetic_games(count: int, seed: int = 1) -> list[GameRecord]:
    """``count`` games of 20 legal random plies, each ply timed, some with a bot's info."""
    rng = random.Random(seed)
    rules = Rules()
    games = []
    for number in range(count):
        board = Board(rules)
        moves = []
        while len(moves) < PLIES:
            move = rng.choice(board.legal_moves())
            board.play(move)
            info = {"depth": 3, "score": rng.random()} if len(moves) % 5 == 4 else None
            moves.append(MoveRecord(len(moves), move, rng.random(), info))
            if board.is_over():  # a game over early starts again: every game has 20 plies
                board, moves = Board(rules), []
        key = f"p{number % 7:04d}-o{number:07d}-a"
        spec = GameSpec(key, rules, "random:stream=1", "random:stream=2", key[:5], (), number)
        games.append(GameRecord(spec, Outcome(None, Termination.DRAW), moves, 0.01, time.time()))
    return games


def writes_per_second(folder: Path, name: str, batch: int, write: Callable[[Store, int, dict[str, int], int], None],
                      count: int) -> tuple[float, float]:
    """Games per second (of process time, and of wall clock) of ``write`` storing
    ``count`` games in batches, with the file's creation left out."""
    with Store(folder / f"{name}.db") as store:
        specs = ["random:stream=1", "random:stream=2"]
        identities = [BotIdentity(spec, "random", {}, "bench") for spec in specs]
        tournament = store.tournaments.start(name, "round-robin", {"rules": vars(Rules())}, {}, 1, identities)
        bot_ids = {spec: store.bots.id_of(identity) for spec, identity in zip(specs, identities)}
        started, cpu = time.perf_counter(), time.process_time()
        for first in range(0, count, batch):
            write(store, tournament, bot_ids, first)
        rates = count / (time.process_time() - cpu), count / (time.perf_counter() - started)
        assert store.games.move_count() == count * PLIES
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=250, help="games per transaction")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records = synthetic_games(args.games)
    finished = [FinishedGame.of(record) for record in records]
    size = args.batch

    def rows(store: Store, tournament: int, bot_ids: dict[str, int], first: int) -> None:
        store.games.record_finished(tournament, finished[first:first + size], bot_ids)

    def from_records(store: Store, tournament: int, bot_ids: dict[str, int], first: int) -> None:
        store.games.record(tournament, records[first:first + size], bot_ids)

    best = {"rows": (0.0, 0.0), "records": (0.0, 0.0)}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for name, write in (("rows", rows), ("records", from_records)):
                cpu, wall = writes_per_second(Path(tmp), f"{name}-{repeat}", size, write, args.games)
                best[name] = (max(best[name][0], cpu), max(best[name][1], wall))
    print(f"{args.games:,} games of {PLIES} plies, {size} per transaction, best of {args.repeats}:")
    for name, label in (("rows", "the writer (rows made where the games were played)"),
                        ("records", "from GameRecords (rows made by the writer too)")):
        cpu, wall = best[name]
        print(f"  {label:<50} {cpu:>9,.0f} games/s of CPU time, {wall:>9,.0f} of wall clock"
              f"  ({cpu * PLIES:,.0f} move rows/s)")


if __name__ == "__main__":
    main()
