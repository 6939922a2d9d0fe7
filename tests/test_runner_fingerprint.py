"""The same rows for the same seed: a fingerprint of what a tournament stores.

Every game and move column that does not measure time (durations, finish times and
a move's milliseconds are the clock's; whether a move has milliseconds is not) is
hashed in id order, with the pair counts the triggers keep. The fingerprint was
taken before the writer, the workers' messages and the schedule were made faster:
a change to any of them that stores anything else, or in another order, fails here.
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from arena.store import Store
from arena.tournament.config import load_config
from arena.tournament.executors import ProcessExecutor, SerialExecutor
from arena.tournament.runner import run_tournament

#: random against random (the moves' milliseconds), greedy, and minimax (its info on every move).
BOTS = ["random:stream=1", "random:stream=2", "greedy", "minimax:depth=2"]
FINGERPRINT = "56fd74fde5e4efe8c34a15178faf6e686891b804f6b6b78f41a2282b0ec717bb"

GAME_COLUMNS = ("g.id, t.name, g.key, g.pairing, b1.spec, b2.spec, g.opening, g.opening_plies, g.result, g.winner, "
                "g.termination, g.reason, g.plies, g.moves, g.seed, typeof(g.duration), typeof(g.finished_at)")


def fingerprint(db: str) -> str:
    digest = hashlib.sha256()
    with sqlite3.connect(db) as conn:
        for query in (
            f"select {GAME_COLUMNS} from games g join tournaments t on t.id = g.tournament_id "
            "join bots b1 on b1.id = g.first_bot_id join bots b2 on b2.id = g.second_bot_id order by g.id",
            "select game_id, ply, move, typeof(ms), info from moves order by game_id, ply",
            "select tournament_id, first_bot_id, second_bot_id, games, wins, draws, losses, first_forfeits, "
            "second_forfeits, first_game_id, changes from pair_counts order by 1, 2, 3",
        ):
            for row in conn.execute(query):
                digest.update(repr(row).encode())
    return digest.hexdigest()


def play(db: str, executor) -> None:
    config = load_config(None, {"name": "rows", "bots": BOTS, "games": 10, "seed": 11, "db": db})
    try:
        outcome = run_tournament(config, Store(db), executor)
    finally:
        executor.close()
    assert (outcome.played, outcome.interrupted) == (60, False)


@pytest.mark.parametrize("where", ["serial", "one worker process"])
def test_a_tournament_stores_the_same_rows_for_the_same_seed(tmp_path, where):
    # One worker sends its games back in the schedule's order, so the ids are the
    # schedule's too, as in a serial run.
    db = str(tmp_path / "rows.db")
    play(db, SerialExecutor() if where == "serial" else ProcessExecutor(1))
    assert fingerprint(db) == FINGERPRINT
