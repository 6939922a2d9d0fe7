"""`arena standings` end to end on large databases: seconds and peak memory of the command.

Builds databases of synthetic finished games (50 bots, random pairings and results,
no moves: a table reads none) with 10,000 to 1,000,000 games, then runs the
commands a user runs, each in its own process, and reports wall time and the
process's peak resident memory (ru_maxrss of the child, as /usr/bin/time -v does):

- ``arena standings --all`` (games counted in SQL, the incremental Elo streamed);
- ``arena crosstable --all``;
- for comparison, the same table built from every game row loaded into memory
  (``standings(store.games.all())``, what the command did before).

Run: python bench/standings.py [--games 10000,100000,1000000] [--bots 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.engine.game import Rules
from arena.store import BotIdentity, Store

LOADED = (
    "import sys; from arena.store import Store; from arena.ratings.standings import standings, "
    "render_standings; s = Store(sys.argv[1], read_only=True); print(render_standings(standings(s.games.all())))"
)


def build(path: Path, games: int, bots: int, seed: int = 1) -> None:
    """A database of ``games`` finished games between ``bots`` bots in 10 tournaments.

    Rows go in with one prepared statement in large transactions: the store's own
    path records every move of every game, which a million-game fixture does not need."""
    rng = random.Random(seed)
    store = Store(path)
    rules = Rules().as_dict()
    ids = [store.bots.id_of(BotIdentity(f"bot{i:03d}", f"bot{i:03d}", {}, "bench", f"{i:064x}")) for i in range(bots)]
    strength = [rng.gauss(0, 1) for _ in range(bots)]
    per_tournament = -(-games // 10)
    conn = store.db.conn
    for t in range(10):
        name = f"t{t}"
        identity = {"format": "round-robin", "rules": rules, "name": name}
        tid = store.tournaments.start(name, "round-robin", identity, identity, t)
        rows = []
        for i in range(min(per_tournament, games - t * per_tournament)):
            a, b = rng.sample(range(bots), 2)
            p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 2))
            r = rng.random()
            winner = None if r < 0.1 else (0 if r < 0.1 + 0.9 * p else 1)
            termination = "draw" if winner is None else ("forfeit" if r > 0.99 else "win")
            result = "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")
            rows.append((tid, f"g{i:07d}", f"p{i}", ids[a], ids[b], result, winner, termination, 20))
        with conn:
            conn.executemany(
                "insert into games (tournament_id, key, pairing, first_bot_id, second_bot_id, result, winner, "
                "termination, plies) values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        store.tournaments.set_status(tid, "finished")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="10000,100000,1000000")
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--keep", type=Path, help="build the databases here and keep them")
    args = parser.parse_args()
    sizes = [int(size) for size in args.games.split(",")]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-bench-standings-"))
    folder.mkdir(parents=True, exist_ok=True)
    arena = [str(Path(sys.executable).with_name("arena"))]  # the command installed with the package
    print(f"{args.bots} bots; each command in its own process; peak = the process's max resident set")
    print(f"{'games':>10} {'command':<34}{'seconds':>9}{'peak MB':>9}{'peak vs loaded':>16}")
    for games in sizes:
        db = folder / f"standings-{games}.db"
        if not db.exists():
            started = time.perf_counter()
            build(db, games, args.bots)
            print(f"{games:>10,} (database built in {time.perf_counter() - started:.1f} s, "
                  f"{db.stat().st_size / 2**20:.0f} MB)")
        loaded = run([sys.executable, "-c", LOADED, str(db)])
        for label, command in (("arena standings --all", [*arena, "standings", "--all", "--db", str(db)]),
                               ("arena crosstable --all", [*arena, "crosstable", "--all", "--db", str(db)])):
            seconds, peak = run(command)
            print(f"{games:>10,} {label:<34}{seconds:>9.2f}{peak:>9.0f}{peak / loaded[1]:>15.2f}x")
        print(f"{games:>10,} {'every row loaded (old way)':<34}{loaded[0]:>9.2f}{loaded[1]:>9.0f}{1:>15.2f}x")
    if args.keep is None:
        for db in folder.glob("standings-*.db*"):
            db.unlink()
        folder.rmdir()


def run(command: list[str]) -> tuple[float, float]:
    """Seconds and peak resident MB of one command, run to its end."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    err = process.stderr.read().decode() if process.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed ({code}): {err.strip()[-500:]}")
    return seconds, usage.ru_maxrss / 1024  # wait4 gives the child's own peak, in kilobytes on Linux


if __name__ == "__main__":
    main()
