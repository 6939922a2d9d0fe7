"""Make ``tests/data/releases/<release>-interrupted.db`` with an older release's arena.

Run with that release on the path, from its checkout (for config/quick.toml)::

    git worktree add /tmp/rel-X X
    cd /tmp/rel-X && PYTHONPATH=/tmp/rel-X python /path/to/make_release_db.py OUT.db

It holds what a term's database holds when the arena is upgraded under it:

- tournament ``previous`` (``config/quick.toml --bots random,greedy,minimax:depth=6
  --games 12 --workers 1``) stopped by SIGINT once 5 of its 36 games were stored;
- league ``class`` (random and minimax:depth=4, 2 games a pairing) with account
  ``alice``, her submitted bot ``lefty`` (plays the first legal move), and
  ``arena league run`` stopped by SIGINT once 3 of its games were stored.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

LEAGUE = """bots = ["random", "minimax:depth=4"]
games = 2
seed = 3
[openings]
plies = 2
"""
LEFTY = b'''from arena.bot import Bot


class Lefty(Bot):
    """Plays the first legal move."""

    def choose_move(self, board):
        return board.legal_moves()[0]
'''
ENTER = """
import sys
from arena.league.accounts import add_user
from arena.league.policy import submit_to_league
from arena.league.scheduler import create_league
from arena.store import Store
with Store(sys.argv[1]) as store:
    league = create_league(store, "class", sys.argv[2])
    user, _, _ = add_user(store, "alice")
    submit_to_league(store, league, user, "lefty", open(sys.argv[3], "rb").read(), "lefty.py", "first legal move")
"""


def games_of(db: Path, tournament: str) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("select count(*) from games g join tournaments t on t.id = g.tournament_id "
                                    "where t.name = ?", [tournament]).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def stopped_after(args: list[str], db: Path, tournament: str, games: int) -> None:
    """Run ``python -m arena ARGS`` and stop it by SIGINT once ``games`` of ``tournament`` are stored."""
    process = subprocess.Popen([sys.executable, "-m", "arena", *args], stdout=subprocess.DEVNULL)
    while games_of(db, tournament) < games and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    process.wait(600)


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    folder = out.parent
    stopped_after(["tournament", "run", "config/quick.toml", "--bots", "random,greedy,minimax:depth=6",
                   "--games", "12", "--workers", "1", "--name", "previous", "--db", str(out)], out, "previous", 5)
    (folder / "league.toml").write_text(LEAGUE)
    (folder / "lefty.py").write_bytes(LEFTY)
    subprocess.run([sys.executable, "-c", ENTER, str(out), str(folder / "league.toml"), str(folder / "lefty.py")],
                   check=True)
    stopped_after(["league", "run", "class", "--workers", "1", "--db", str(out)], out, "class", 3)
    conn = sqlite3.connect(out)
    conn.execute("vacuum")
    conn.close()


if __name__ == "__main__":
    main()
