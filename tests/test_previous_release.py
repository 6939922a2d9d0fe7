"""A database made by the previous release opens, migrates and resumes.

``tests/data/releases/c85f68a-interrupted.db`` was made by release c85f68a with
``arena tournament run config/quick.toml --bots random,greedy,minimax:depth=6
--games 12 --workers 1 --name previous``, stopped by SIGINT after 5 of its 36 games.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "releases" / "c85f68a-interrupted.db"
RUN = ["tournament", "run", str(ROOT / "config" / "quick.toml"), "--bots", "random,greedy,minimax:depth=6",
       "--games", "12", "--workers", "1", "--name", "previous"]
TIMES = {"created_at", "finished_at", "duration", "ms", "applied_at"}


def rows(path: Path) -> dict[str, list[str]]:
    """Every row of the tournament's tables but times and row ids, games by their key."""
    conn = sqlite3.connect(path)
    keys = dict(conn.execute("select id, key from games"))
    specs = dict(conn.execute("select id, spec from bots"))
    found: dict[str, list[str]] = {}
    for table in ("tournaments", "bots", "games", "moves"):
        columns = [c[1] for c in conn.execute(f"pragma table_info({table})") if c[1] not in TIMES]
        for values in conn.execute(f"select {', '.join(columns)} from {table}"):
            row = dict(zip(columns, values))
            row.pop("id", None)
            if table == "games":
                row["first_bot_id"], row["second_bot_id"] = specs[row["first_bot_id"]], specs[row["second_bot_id"]]
            if table == "moves":
                row["game_id"] = keys[row["game_id"]]
            if table == "tournaments":
                row["config"] = json.loads(row["config"]) | {"db": "-"}
            found.setdefault(table, []).append(json.dumps(row, sort_keys=True))
    conn.close()
    return {table: sorted(found_rows) for table, found_rows in found.items()}


def test_the_previous_releases_interrupted_tournament_resumes_to_the_same_games(cli, tmp_path):
    old = tmp_path / "old.db"
    shutil.copy(FIXTURE, old)
    before = rows(old)
    assert len(before["games"]) == 5 and '"status": "interrupted"' in before["tournaments"][0]

    shown = cli("standings", "--db", old)  # read as it is, before any migration
    assert shown.exit_code == 0, shown.output
    assert rows(old) == before

    resumed = cli(*RUN, "--db", old)
    assert resumed.exit_code == 0, resumed.output
    after = rows(old)
    assert set(before["games"]) <= set(after["games"]) and len(after["games"]) == 36
    assert set(before["moves"]) <= set(after["moves"])

    fresh = cli(*RUN, "--db", tmp_path / "fresh.db")
    assert fresh.exit_code == 0, fresh.output
    expected = rows(tmp_path / "fresh.db")
    for table in ("bots", "games", "moves"):
        assert after[table] == expected[table], table
    assert [json.loads(t)["status"] for t in after["tournaments"]] == ["finished"]
