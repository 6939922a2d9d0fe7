"""A database made by an earlier release opens, migrates and resumes.

``tests/data/releases/c85f68a-interrupted.db`` was made by release c85f68a with
``arena tournament run config/quick.toml --bots random,greedy,minimax:depth=6
--games 12 --workers 1 --name previous``, stopped by SIGINT after 5 of its 36 games.

Each later release that changed the schema made one by ``make_release_db.py`` (beside
them): the same interrupted tournament, and a league interrupted with an account and
its submitted bot. 585a2d2 is the last release whose void games' migration was named
0006_void_games (0007_void_games since the private seeds' 0006); 1f58800 has both;
8edae32 is the last release before the league gate's 0012_league_gate (programs'
bots and the pair counts' triggers already in it).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from arena.store.migrations import MIGRATION_NAMES

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "releases" / "c85f68a-interrupted.db"
RUN = ["tournament", "run", str(ROOT / "config" / "quick.toml"), "--bots", "random,greedy,minimax:depth=6",
       "--games", "12", "--workers", "1", "--name", "previous"]
TIMES = {"created_at", "finished_at", "duration", "ms", "applied_at"}
LATER = [ROOT / "tests" / "data" / "releases" / f"{release}-interrupted.db"
         for release in ("585a2d2", "1f58800", "8edae32")]
LEAGUE_TABLES = ("users", "submissions", "leagues", "entries", "audit")


def rows(path: Path) -> dict[str, list[str]]:
    """Every row of the tournament's tables but times and row ids, games by their key."""
    conn = sqlite3.connect(path)
    keys = dict(conn.execute("select id, key from games"))
    specs = dict(conn.execute("select id, spec from bots"))
    found: dict[str, list[str]] = {}
    for table in ("tournaments", "bots", "games", "moves"):
        columns = [c[1] for c in conn.execute(f"pragma table_info({table})") if c[1] not in TIMES | {"seed_secret"}]
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


def columns(path: Path) -> dict[str, list[str]]:
    """The columns of the league's tables in the file as it is."""
    conn = sqlite3.connect(path)
    found = {table: [c[1] for c in conn.execute(f"pragma table_info({table})")] for table in LEAGUE_TABLES}
    conn.close()
    return found


def league_rows(path: Path, kept: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """The league's rows as stored (accounts, submissions with their code, entries), and
    its games by key with their moves: what an upgrade must keep. ``kept``: the columns
    to read (those the release's file had: a later migration may add a column, with its
    default, but never change what was stored)."""
    kept = kept or columns(path)
    conn = sqlite3.connect(path)
    found = {table: sorted(json.dumps([str(v) for v in row]) for row in conn.execute(
                 f"select {', '.join(kept[table])} from {table}"))
             for table in LEAGUE_TABLES}
    found["games"] = sorted(json.dumps(row) for row in conn.execute(
        "select g.key, g.result, g.moves from games g join tournaments t on t.id = g.tournament_id "
        "where t.name = 'class'"))
    conn.close()
    return found


def previous(found: dict[str, list[str]]) -> list[str]:
    """The games of tournament 'previous', the first one in each fixture."""
    return [row for row in found["games"] if json.loads(row)["tournament_id"] == 1]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The tournament as this arena plays it from the start."""
    from click.testing import CliRunner

    from arena.cli.main import main
    path = tmp_path_factory.mktemp("fresh") / "fresh.db"
    played = CliRunner().invoke(main, [*RUN, "--db", str(path)], catch_exceptions=False)
    assert played.exit_code == 0, played.output
    return rows(path)


@pytest.mark.parametrize("fixture", LATER, ids=lambda path: path.name.split("-")[0])
def test_a_later_releases_tournament_and_league_resume_with_nothing_lost(cli, tmp_path, fixture, fresh):
    assert fixture.stat().st_size < 300_000
    old = tmp_path / "old.db"
    shutil.copy(fixture, old)
    before, league_before = rows(old), league_rows(old)
    # stopped part way (the stop lands after 5 games or a few more, as the machine goes)
    assert 5 <= len(previous(before)) < 36 and len(league_before["games"]) >= 1
    assert len(league_before["users"]) == 1 and len(league_before["submissions"]) == 1
    kept = columns(old)

    for reading in (("standings",), ("tournaments",), ("league", "standings", "class"), ("users", "list")):
        shown = cli(*reading, "--db", old)  # read as it is, before any migration
        assert shown.exit_code == 0, (reading, shown.output)
    assert rows(old) == before and league_rows(old) == league_before

    resumed = cli(*RUN, "--db", old)
    assert resumed.exit_code == 0, resumed.output
    after = rows(old)
    assert set(before["games"]) <= set(after["games"]) and set(before["moves"]) <= set(after["moves"])
    assert previous(after) == previous(fresh)  # the same 36 games an uninterrupted run plays
    conn = sqlite3.connect(old)
    applied = [name for (name,) in conn.execute("select name from _sqlite_migrations")]
    conn.close()
    assert sorted(applied) == sorted(MIGRATION_NAMES)

    league = cli("league", "run", "class", "--until-complete", "--workers", "1", "--db", old)
    assert league.exit_code == 0, league.output
    league_after = league_rows(old, kept)
    assert set(league_before["games"]) <= set(league_after["games"]) and len(league_after["games"]) == 6
    for table in ("users", "submissions", "leagues"):
        assert league_after[table] == league_before[table], table
    assert len(league_after["entries"]) == len(league_before["entries"])
    standings = cli("league", "standings", "class", "--db", old)
    assert standings.exit_code == 0 and "lefty@v1" in standings.output, standings.output
    assert sorted(json.loads(t)["status"] for t in rows(old)["tournaments"]) == ["finished", "finished"]
