"""The ``arena`` command, end to end through click: happy paths and every user mistake.

A user's mistake must end with exit code 2 and exactly one line of output, starting
"Error: " (no usage block, no traceback); reading commands never create a database.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.engine.game import Rules
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store

QUICK = str(Path(__file__).resolve().parent.parent / "config" / "quick.toml")
BUILTIN = ["random", "neighbour", "greedy", "blocker", "minimax"]
QUICK_BOTS = ["random", "neighbour", "greedy", "blocker", "minimax:depth=2"]
STANDING_FIELDS = [
    "rank", "bot", "games", "wins", "draws", "losses", "score_pct", "elo", "elo_minus",
    "elo_plus", "incremental_elo", "forfeits", "los_next", "group", "bound",
]


# --- helpers -------------------------------------------------------------------------


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def user_error(result, *fragments: str) -> str:
    """Exit 2 and one line 'Error: ...' (containing every fragment); returns the line."""
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1, f"expected one line of error output, got {len(lines)}: {result.output!r}"
    assert lines[0].startswith("Error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def dump(path: str | Path) -> list[str]:
    """Every schema statement and row of a database, to show nothing was written."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def copy_db(source: str | Path, target: str | Path) -> str:
    """A consistent copy of a (WAL) database, via SQLite's backup API."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return str(target)


def standings_json(output: str) -> list[dict]:
    data = json.loads(output)
    assert list(data) == ["selection", "model", "standings"]
    assert set(data["model"]) == {"first_move_elo", "first_move_interval", "draw_rate", "groups"}
    return data["standings"]


def standings_table(output: str) -> list[str]:
    """The standings table printed after the tournament's summary line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["rank", "bot"])
    return lines[start:]


def table_bots(table: list[str]) -> list[str]:
    return [line.split()[1] for line in table[2:] if line.strip()]


def add_future_migration(path: str | Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "insert into _sqlite_migrations (migration_set, name, applied_at) "
        "values ('arena', '9999_from_the_future', '2099-01-01')"
    )
    conn.commit()
    conn.close()


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """A database with two finished tournaments of the quick field: 'quick' and 'q2'."""
    path = str(tmp_path_factory.mktemp("league") / "league.db")
    runner = CliRunner()
    for extra in ([], ["--name", "q2", "--seed", "2"]):
        result = runner.invoke(
            main, ["tournament", "run", QUICK, "--db", path, "--workers", "2", *extra],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
    return path


# --- help ------------------------------------------------------------------------------


def _all_commands(command: click.Command, path: tuple[str, ...] = ()):
    yield path, command
    if isinstance(command, click.Group):  # through click's lookup: arena's commands load lazily
        ctx = click.Context(command)
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _all_commands(sub, (*path, name))


COMMANDS = list(_all_commands(main))


def test_the_walk_finds_every_listed_command():
    paths = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "bots", "match", "tournament", "tournament run", "standings", "games", "show"} <= paths


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) or "arena" for p, _ in COMMANDS])
def test_every_command_has_help(cli, path, command):
    assert (command.help or "").strip(), f"{' '.join(path) or 'arena'} has no help text"
    out = ok(cli(*path, "--help"))
    assert "Usage:" in out
    assert command.help.strip().splitlines()[0][:30] in " ".join(out.split())


# --- bots ------------------------------------------------------------------------------


def test_bots_lists_the_builtin_bots(cli):
    out = ok(cli("bots"))
    rows = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    for name in BUILTIN:
        assert name in rows, out
        assert rows[name].split()[1] == "connectk-arena"
    assert "depth=4" in rows["minimax"]


def test_bots_json(cli):
    entries = json.loads(ok(cli("bots", "--json")))
    by_name = {e["name"]: e for e in entries}
    assert set(BUILTIN) <= set(by_name)
    for entry in entries:
        assert {"name", "source", "description", "options", "error"} <= set(entry)
    for name in BUILTIN:
        entry = by_name[name]
        assert entry["source"].startswith("connectk-arena")
        assert entry["error"] is None
        assert entry["description"]
        assert isinstance(entry["options"], dict)
    assert by_name["minimax"]["options"]["depth"]["default"] == 4


# --- match -----------------------------------------------------------------------------


def test_match_json_shape(cli):
    data = json.loads(ok(cli("match", "random", "greedy", "-n", "6", "--seed", "5", "--json")))
    assert {"games", "results"} <= set(data)  # other fields may be added
    assert data["games"] == 6
    assert set(data["results"]) == {"random", "greedy"}
    for tally in data["results"].values():
        assert set(tally) == {"wins", "draws", "losses", "forfeits", "forfeit_reasons"}
        assert tally["wins"] + tally["draws"] + tally["losses"] == 6
        assert (tally["forfeits"], tally["forfeit_reasons"]) == (0, {})
    r, g = data["results"]["random"], data["results"]["greedy"]
    assert (r["wins"], r["draws"], r["losses"]) == (g["losses"], g["draws"], g["wins"])


def test_match_same_seed_same_output(cli):
    # Each in its own database: the same command in one database resumes the match instead
    # (tests/test_match_stored.py); the games and the text are the same but for the file named.
    args = ("match", "random", "neighbour", "-n", "8", "--seed", "11", "--json")
    assert ok(cli(*args, "--db", "a.db")) == ok(cli(*args, "--db", "b.db")).replace("b.db", "a.db")
    table = ("match", "random", "neighbour", "-n", "8", "--seed", "11")
    assert ok(cli(*table, "--db", "c.db")) == ok(cli(*table, "--db", "d.db")).replace("d.db", "c.db")


def test_match_table_names_both_bots(cli):
    out = ok(cli("match", "random", "minimax:depth=2", "-n", "2"))
    lines = out.splitlines()
    assert lines[0] == "2 games, 7x6 connect 4, seed 0"
    assert lines[1].split()[:2] == ["bot", "games"]
    rows = [line.split() for line in lines[3:5]]
    assert sorted(row[0] for row in rows) == ["minimax:depth=2", "random"]
    for row in rows:
        assert row[1] == "2"
        assert int(row[2]) + int(row[3]) + int(row[4]) == 2


@pytest.mark.parametrize(
    "flags,described",
    [
        (["--width", "9", "--height", "7", "--connect", "5"], "9x7 connect 5"),
        (["--width", "3", "--height", "3", "--connect", "3", "--no-gravity"], "3x3 connect 3, no gravity"),
    ],
)
def test_match_rule_flags(cli, flags, described):
    out = ok(cli("match", "random", "greedy", "-n", "4", "--seed", "1", *flags))
    assert out.splitlines()[0] == f"4 games, {described}, seed 1"
    data = json.loads(ok(cli("match", "random", "greedy", "-n", "4", "--seed", "1", *flags, "--json")))
    assert data["games"] == 4


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["nobody", "greedy"], "unknown bot 'nobody'"),
        (["random", "nobody"], "unknown bot 'nobody'"),
        (["minimax:depth=x", "greedy"], "depth"),
        (["minimax:width=3", "greedy"], "width"),
        (["random", "greedy", "--width", "50"], "width"),
        (["random", "greedy", "--connect", "9"], "connect"),
        (["random", "greedy", "-n", "0"], ""),
    ],
    ids=["unknown-a", "unknown-b", "bad-option-value", "unknown-option", "width-50", "connect-9",
         "zero-games"],
)
def test_match_mistakes(cli, args, fragment):
    user_error(cli("match", *args), fragment)


# --- tournament run --------------------------------------------------------------------


def test_tournament_run_and_rerun(cli, db_path):
    first = ok(cli("tournament", "run", QUICK, "--db", db_path, "--workers", "2"))
    assert re.search(r"^Tournament 'quick': 40 games played\b", first, re.M), first
    table = standings_table(first)
    assert sorted(table_bots(table)) == sorted(QUICK_BOTS)
    store = Store(db_path)
    assert len(store.games.all(tournament="quick")) == 40
    store.close()

    second = ok(cli("tournament", "run", QUICK, "--db", db_path, "--workers", "2"))
    assert re.search(r"^Tournament 'quick': 0 games played\b.*40 were already stored", second, re.M), second
    assert standings_table(second) == table
    store = Store(db_path)
    assert len(store.games.all()) == 40
    store.close()


def test_tournament_run_with_flags(cli, db_path):
    out = ok(cli("tournament", "run", QUICK, "--bots", "random,greedy", "--games", "2", "--name", "t2",
                 "--db", db_path, "--workers", "1"))
    assert re.search(r"^Tournament 't2': 2 games played\b", out, re.M), out
    assert sorted(table_bots(standings_table(out))) == ["greedy", "random"]
    games = json.loads(ok(cli("games", "--db", db_path, "--json")))
    assert len(games) == 2
    assert {g["tournament"] for g in games} == {"t2"}
    assert {(g["first"], g["second"]) for g in games} == {("random", "greedy"), ("greedy", "random")}


def test_tournament_bots_with_options_and_commas(cli, db_path):
    out = ok(cli("tournament", "run", "--bots", "random,minimax:depth=2,greedy", "--games", "2",
                 "--name", "opts", "--db", db_path, "--workers", "1"))
    assert re.search(r"^Tournament 'opts': 6 games played\b", out, re.M), out
    assert sorted(table_bots(standings_table(out))) == ["greedy", "minimax:depth=2", "random"]


TWO_OPTIONS = """
    from arena.bot import Bot, Option


    class Two(Bot):
        \"\"\"Plays the first legal move at or after column `start`.\"\"\"

        options = {"start": Option(0, "first column"), "loud": Option(False, "unused")}

        def choose_move(self, board):
            moves = board.legal_moves()
            later = [m for m in moves if m >= self.start]
            return (later or moves)[0]
"""


def test_tournament_bots_option_list_continues_after_comma(cli, db_path, write_bot):
    path = write_bot("two", TWO_OPTIONS)
    out = ok(cli("tournament", "run", "--bots", f"random,{path}:start=3,loud=true,greedy", "--games", "2",
                 "--name", "opts2", "--db", db_path, "--workers", "1"))
    assert re.search(r"^Tournament 'opts2': 6 games played\b", out, re.M), out
    bots = table_bots(standings_table(out))
    assert sorted(bots) == sorted(["random", "greedy", f"{path}:loud=true,start=3"])
    games = json.loads(ok(cli("games", "--db", db_path, "--json")))
    assert all(g["termination"] != "forfeit" for g in games), games


def test_tournament_honours_arena_db(cli, tmp_path, monkeypatch):
    env_db = tmp_path / "from_env.db"
    monkeypatch.setenv("ARENA_DB", str(env_db))
    out = ok(cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "env",
                 "--workers", "1"))
    assert re.search(r"^Tournament 'env': 2 games played\b", out, re.M), out
    assert env_db.is_file()
    assert not (tmp_path / "arena.db").exists()
    # the reading commands honour it too
    assert len(json.loads(ok(cli("games", "--json")))) == 2
    assert len(standings_json(ok(cli("standings", "--format", "json")))) == 2
    # an explicit --db wins over ARENA_DB
    user_error(cli("games", "--db", str(tmp_path / "explicit.db")), "explicit.db")
    assert not (tmp_path / "explicit.db").exists()


def test_tournament_default_database_is_arena_db_in_cwd(cli, tmp_path):
    out = ok(cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "here",
                 "--workers", "1"))
    assert (tmp_path / "arena.db").is_file(), out
    assert "database arena.db" in out
    assert len(json.loads(ok(cli("games", "--json")))) == 2


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "case",
    ["missing-file", "invalid-toml", "unknown-key", "unknown-section-key", "unknown-bot",
     "games-0", "width-50"],
)
def test_tournament_mistakes_write_nothing(cli, tmp_path, league, case):
    db = copy_db(league, tmp_path / "existing.db")
    before = dump(db)
    bad_toml = _write(tmp_path, "broken.toml", 'name = "x"\nbots = [\n')
    unknown = _write(tmp_path, "unknown.toml", 'name = "x"\nbots = ["random", "greedy"]\ncolour = "red"\n')
    unknown_sub = _write(tmp_path, "sub.toml", 'name = "x"\nbots = ["random", "greedy"]\n[rules]\ndepth = 3\n')
    args, fragments = {
        "missing-file": ([str(tmp_path / "nope.toml")], ["nope.toml"]),
        "invalid-toml": ([bad_toml], ["broken.toml", "TOML"]),
        "unknown-key": ([unknown], ["unknown.toml", "colour"]),
        "unknown-section-key": ([unknown_sub], ["sub.toml", "rules.depth"]),
        "unknown-bot": ([QUICK, "--bots", "random,nobody"], ["nobody"]),
        "games-0": ([QUICK, "--games", "0"], ["games"]),
        "width-50": ([QUICK, "--width", "50"], ["width"]),
    }[case]
    user_error(cli("tournament", "run", *args, "--db", db, "--workers", "1"), *fragments)
    assert dump(db) == before


def test_tournament_config_mistake_creates_no_database(cli, tmp_path):
    user_error(cli("tournament", "run", QUICK, "--bots", "random,nobody"), "nobody")
    assert not (tmp_path / "arena.db").exists()


def test_tournament_rerun_with_other_seed_is_refused(cli, tmp_path, league):
    db = copy_db(league, tmp_path / "existing.db")
    before = dump(db)
    keys_before = [(g.id, g.key, g.moves) for g in Store(db).games.all(tournament="quick")]
    user_error(cli("tournament", "run", QUICK, "--db", db, "--seed", "7", "--workers", "1"),
               "quick", "seed")
    assert dump(db) == before
    store = Store(db)
    assert [(g.id, g.key, g.moves) for g in store.games.all(tournament="quick")] == keys_before
    assert len(keys_before) == 40
    assert store.tournaments.get("quick").seed == 1
    store.close()


# --- games -----------------------------------------------------------------------------


def test_games_lists_games(cli, league):
    out = ok(cli("games", "--db", league))
    lines = out.splitlines()
    assert lines[0].split() == ["id", "tournament", "key", "first", "second", "result", "termination", "plies"]
    assert len(lines) == 2 + 50  # the latest 50 of 80
    every = json.loads(ok(cli("games", "--db", league, "--json", "--limit", "1000")))
    assert len(every) == 80
    assert [int(line.split()[0]) for line in lines[2:]] == [g["id"] for g in every[-50:]]


def test_games_says_how_to_see_more(cli, league):
    result = cli("games", "--db", league, "--json")
    assert len(json.loads(ok(result))) == 50
    assert result.stderr.strip() == "Showing the latest 50 of 80 games: --limit 80 shows them all."
    assert cli("games", "--db", league, "-t", "quick").stderr == ""  # 40 games: all shown


def test_games_bot_name_matches_its_specs(cli, league):
    by_name = json.loads(ok(cli("games", "--db", league, "--bot", "minimax", "--json")))
    by_spec = json.loads(ok(cli("games", "--db", league, "--bot", "minimax:depth=2", "--json")))
    assert len(by_name) == 32 and by_name == by_spec


def test_games_bot_name_matches_submitted_versions(cli, tmp_path):
    db = str(tmp_path / "sub.db")
    with Store(db) as store:
        rules = Rules(width=5, height=4, connect=3)
        identity = {"format": "round-robin", "rules": rules.as_dict()}
        tid = store.tournaments.start("t", "round-robin", identity, identity, 1)
        ids = {"random": store.bots.id_of(BotIdentity("guard@v2", "guard", {}, "submitted guard", "ab" * 32)),
               "greedy": store.bots.id_of(BotIdentity("greedy", "greedy", {}, "builtin"))}
        store.games.record(tid, [play_game(GameSpec("k0", rules, "random", "greedy", pairing="k0"))], ids)
        store.tournaments.set_status(tid, "finished")
    (game,) = json.loads(ok(cli("games", "--db", db, "--bot", "guard", "--json")))
    assert game["first"] == "guard@v2"
    assert json.loads(ok(cli("games", "--db", db, "--bot", "guard@v2", "--json"))) == [game]
    user_error(cli("games", "--db", db, "--bot", "guard@v3"), "guard@v3", "guard@v2")


def test_games_filters_and_json(cli, league):
    quick = json.loads(ok(cli("games", "--db", league, "--tournament", "quick", "--json")))
    assert len(quick) == 40
    assert {g["tournament"] for g in quick} == {"quick"}
    for game in quick:
        assert {"id", "tournament", "key", "first", "second", "result", "termination", "reason",
                "plies", "opening", "moves", "duration", "seed", "finished_at"} <= set(game)
        assert game["result"] in ("1-0", "0-1", "1/2-1/2")
    greedy = json.loads(ok(cli("games", "--db", league, "--bot", "greedy", "--json")))
    assert len(greedy) == 32
    assert all("greedy" in (g["first"], g["second"]) for g in greedy)
    both = json.loads(ok(cli("games", "--db", league, "-t", "q2", "--bot", "minimax:depth=2", "--json")))
    assert len(both) == 16
    assert all(g["tournament"] == "q2" for g in both)
    q2 = json.loads(ok(cli("games", "--db", league, "--tournament", "q2", "--json")))
    limited = json.loads(ok(cli("games", "--db", league, "--limit", "3", "--json")))
    assert [g["id"] for g in limited] == [g["id"] for g in q2[-3:]]  # the latest three
    # a spec no stored game has is a mistake that names the stored bots
    user_error(cli("games", "--db", league, "--bot", "nobody"), "nobody", "greedy", "minimax:depth=2")
    user_error(cli("games", "--db", league, "--bot", "minimax:depth=9"), "minimax:depth=2")


def test_games_unknown_tournament_names_the_known_ones(cli, league):
    user_error(cli("games", "--db", league, "--tournament", "nope"), "nope", "quick", "q2")


def test_games_missing_database_is_not_created(cli, tmp_path):
    missing = tmp_path / "missing.db"
    user_error(cli("games", "--db", str(missing)), "missing.db")
    assert not missing.exists()
    user_error(cli("games"), "arena.db")
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["games", "--limit", "0"], "--limit"),
        (["show", "abc"], "abc"),
        (["standings", "--format", "xml"], "xml"),
        (["games", "--bogus"], "--bogus"),
    ],
    ids=["limit-0", "game-id-not-a-number", "unknown-format", "unknown-flag"],
)
def test_flag_validation_mistakes_are_one_line(cli, league, args, fragment):
    # click's own parameter checks: still a user's mistake, so still one line, exit 2
    user_error(cli(*args, "--db", league), fragment)


# --- show ------------------------------------------------------------------------------


def test_show_prints_players_moves_and_board(cli, league):
    store = Store(league)
    game = next(g for g in store.games.all(tournament="quick", bot="minimax:depth=2") if g.first == "minimax:depth=2")
    moves = store.games.moves(game.id)
    store.close()
    out = ok(cli("show", game.id, "--db", league))
    assert f"X (first): {game.first}" in out
    assert f"O (second): {game.second}" in out
    assert f"Result {game.result}" in out
    assert game.moves in out
    lines = out.splitlines()
    assert lines[-1].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert len(lines[-7:-1]) == 6 and all(len(line.split()) == 7 for line in lines[-7:-1])
    for move in moves:
        who = "opening" if move.ms is None else ("X" if move.ply % 2 == 0 else "O")
        pattern = rf"^\s*{move.ply + 1}\s+{who}\s+{re.escape(move.move)}\b"
        row = [line for line in lines if re.match(pattern, line)]
        assert len(row) == 1, (pattern, out)
        if move.ms is not None:
            shown = row[0].split()[3]
            assert float(shown) == pytest.approx(move.ms, abs=0.006)
        if move.info:
            assert move.info in row[0]
    # minimax logs its search; at least one of its moves has info shown
    assert any('"depth"' in line for line in lines), out
    # the board holds exactly the stones of the game
    stones = "".join(lines[-7:-1]).replace(" ", "").replace(".", "")
    assert len(stones) == game.plies


def test_show_unknown_game(cli, league):
    user_error(cli("show", "99999", "--db", league), "99999")


def test_show_missing_database(cli, tmp_path):
    user_error(cli("show", "1", "--db", str(tmp_path / "missing.db")), "missing.db")
    assert not (tmp_path / "missing.db").exists()


# --- standings -------------------------------------------------------------------------


def test_standings_json_fields(cli, league):
    rows = standings_json(ok(cli("standings", "--db", league, "--tournament", "quick", "--format", "json")))
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5]
    assert sorted(r["bot"] for r in rows) == sorted(QUICK_BOTS)
    for row in rows:
        assert list(row) == STANDING_FIELDS
        assert row["games"] == 16 == row["wins"] + row["draws"] + row["losses"]
        assert row["elo_minus"] > 0 and row["elo_plus"] > 0
    assert [r["los_next"] is None for r in rows] == [False] * 4 + [True]
    assert sorted((r["elo"] for r in rows), reverse=True) == [r["elo"] for r in rows]
    assert abs(sum(r["elo"] for r in rows) / 5 - 1500) < 1


def test_standings_default_is_latest_tournament(cli, league):
    latest = ok(cli("standings", "--db", league, "--format", "json"))
    assert latest == ok(cli("standings", "--db", league, "-t", "q2", "--format", "json"))


def test_standings_table_and_github(cli, league):
    table = ok(cli("standings", "--db", league, "-t", "quick"))
    assert sorted(table_bots(standings_table(table))) == sorted(QUICK_BOTS)
    github = ok(cli("standings", "--db", league, "-t", "quick", "--format", "github"))
    lines = github.splitlines()
    # A heading, the model's line (first move, draws), then markdown.
    assert lines[1] == "" and lines[2].startswith("first move:") and lines[3].startswith("|")
    assert all(bot in github for bot in QUICK_BOTS)


def test_standings_csv(cli, league):
    out = ok(cli("standings", "--db", league, "-t", "quick", "--format", "csv"))
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == STANDING_FIELDS
    assert len(rows) == 6
    assert sorted(r[1] for r in rows[1:]) == sorted(QUICK_BOTS)


def test_standings_anchor(cli, league):
    rows = standings_json(ok(cli("standings", "--db", league, "-t", "quick", "--format", "json",
                                 "--anchor", "random=0")))
    by_bot = {r["bot"]: r for r in rows}
    assert by_bot["random"]["elo"] == 0
    free = {r["bot"]: r for r in standings_json(ok(cli("standings", "--db", league, "-t", "quick",
                                                        "--format", "json")))}
    shift = free["random"]["elo"]
    for bot, row in by_bot.items():
        assert row["elo"] == pytest.approx(free[bot]["elo"] - shift, abs=0.2)


def test_standings_anchor_shifts_incremental_elo_too(cli, league):
    args = ("standings", "--db", league, "-t", "quick", "--format", "json")
    free = {r["bot"]: r for r in standings_json(ok(cli(*args)))}
    anchored = {r["bot"]: r for r in standings_json(ok(cli(*args, "--anchor", "random=0")))}
    assert anchored["random"]["incremental_elo"] == 0
    shift = free["random"]["incremental_elo"]
    for bot, row in anchored.items():
        assert row["incremental_elo"] == pytest.approx(free[bot]["incremental_elo"] - shift, abs=0.2)


@pytest.mark.parametrize("command, field", [("standings", "standings"), ("crosstable", "crosstable"),
                                            ("colours", "colours")])
def test_every_table_says_what_it_shows(cli, league, command, field):
    heading = "Tournament 'q2' (finished): 40 games, 7x6 connect 4"
    table = ok(cli(command, "--db", league))
    assert table.splitlines()[:2] == [heading, ""]
    assert ok(cli(command, "--db", league, "-t", "quick")).splitlines()[0] == heading.replace("q2", "quick")
    assert ok(cli(command, "--db", league, "--format", "github")).splitlines()[0] == heading
    league_heading = "Whole league: 80 games from 2 tournaments (all finished); rules: 7x6 connect 4"
    assert ok(cli(command, "--db", league, "--all")).splitlines()[0] == league_heading
    data = json.loads(ok(cli(command, "--db", league, "--format", "json")))
    # standings also give the model; colours the first player's score by opening
    assert [key for key in data if key not in ("model", "openings")] == ["selection", field]
    assert data["selection"] == {"tournament": "q2", "whole_league": False, "games": 40, "rules": ["7x6 connect 4"],
                                 "status": "finished", "tournaments": ["q2"]}
    result = cli(command, "--db", league, "--format", "csv")  # the CSV stays pure; the heading on stderr
    assert next(csv.reader(io.StringIO(ok(result))))[0] in ("rank", "bot")
    assert result.stderr.strip() == heading


def test_casual_games_never_become_the_default_table(cli, league, tmp_path):
    db = copy_db(league, tmp_path / "casual.db")
    # Named players: an imported game whose players the file leaves out counts in no table at all.
    game = {"moves": "4455667", "players": {"first": "random", "second": "greedy"}}
    (tmp_path / "game.json").write_text(json.dumps(game))
    ok(cli("import", str(tmp_path / "game.json"), "--db", db))
    assert ok(cli("standings", "--db", db)).splitlines()[0].startswith("Tournament 'q2' (finished): 40 games")
    only = tmp_path / "only.db"
    ok(cli("import", str(tmp_path / "game.json"), "--db", str(only)))
    before = dump(only)
    for command in ("standings", "crosstable", "colours"):
        user_error(cli(command, "--db", str(only)), "only casual games", "casual 7x6c4", "--all")
    assert dump(only) == before
    heading = ok(cli("standings", "--db", str(only), "--all")).splitlines()[0]
    assert heading == "Whole league: 1 game from 1 tournament (all finished); rules: 7x6 connect 4"


def test_standings_all_tells_different_code_apart(cli, tmp_path):
    db = str(tmp_path / "two.db")
    bot = tmp_path / "mybot.py"
    hashes = []
    for version, move in enumerate(("0", "1")):
        # two different bots, one after the other in the same file: one name, two codes
        bot.write_text(BOT_SOURCE.format(move=move))
        ok(cli("tournament", "run", QUICK, "--bots", f"{bot},random", "--games", "2", "--name", f"v{version}",
               "--width", "5", "--height", "4", "--connect", "3", "--db", db, "--workers", "1"))
        with Store(db) as store:
            hashes.append(store.db.execute("select content_hash from bots where spec like '%mybot.py'"
                                           " order by id desc").fetchone()[0])
    assert hashes[0] != hashes[1]
    rows = standings_json(ok(cli("standings", "--db", db, "--all", "--format", "json")))
    names = sorted(r["bot"] for r in rows)
    spec = next(n for n in names if n != "random").split("#")[0]
    assert names == sorted(["random", f"{spec}#{hashes[0][:6]}", f"{spec}#{hashes[1][:6]}"])
    assert all(r["games"] == 2 for r in rows if r["bot"] != "random")
    crosstable = json.loads(ok(cli("crosstable", "--db", db, "--all", "--format", "json")))["crosstable"]
    colours = json.loads(ok(cli("colours", "--db", db, "--all", "--format", "json")))["colours"]
    assert sorted(crosstable) == sorted(colours) == names
    # one tournament holds one code: no hash
    assert sorted(r["bot"] for r in standings_json(ok(cli("standings", "--db", db, "--format", "json")))) == \
        sorted(["random", spec])


BOT_SOURCE = """
from arena.bot import Bot


class Mine(Bot):
    def choose_move(self, board):
        moves = board.legal_moves()
        return {move} if {move} in moves else moves[0]
"""


def test_standings_all_sums_tournaments(cli, league):
    per = {}
    for name in ("quick", "q2"):
        for row in standings_json(ok(cli("standings", "--db", league, "-t", name, "--format", "json"))):
            t = per.setdefault(row["bot"], [0, 0, 0, 0])
            for i, key in enumerate(("games", "wins", "draws", "losses")):
                t[i] += row[key]
    rows = standings_json(ok(cli("standings", "--db", league, "--all", "--format", "json")))
    assert len(rows) == 5
    assert sorted(r["bot"] for r in rows) == sorted(QUICK_BOTS)
    for row in rows:
        assert row["games"] == 32
        assert [row["games"], row["wins"], row["draws"], row["losses"]] == per[row["bot"]]


@pytest.mark.parametrize(
    "args,fragments",
    [
        (["--tournament", "quick", "--all"], ["--all"]),
        (["--tournament", "nope"], ["nope", "quick", "q2"]),
        (["--anchor", "random"], ["random"]),
        (["--anchor", "random=x"], ["random=x"]),
        (["--anchor", "=5"], ["=5"]),
        (["--anchor", "nobody=0"], ["nobody"]),
        (["--anchor", "random=nan"], ["random=nan"]),
        (["--anchor", "random=inf"], ["random=inf"]),
    ],
    ids=["tournament-and-all", "unknown-tournament", "anchor-without-rating", "anchor-bad-rating",
         "anchor-without-bot", "anchor-unknown-bot", "anchor-nan", "anchor-inf"],
)
def test_standings_mistakes(cli, league, args, fragments):
    user_error(cli("standings", "--db", league, *args), *fragments)


def test_standings_empty_database(cli, tmp_path):
    path = tmp_path / "empty.db"
    Store(path).close()
    user_error(cli("standings", "--db", str(path)), "empty.db")
    user_error(cli("standings", "--db", str(path), "--all"), "empty.db")


def test_standings_missing_database_is_not_created(cli, tmp_path):
    user_error(cli("standings", "--db", str(tmp_path / "missing.db")), "missing.db")
    assert not (tmp_path / "missing.db").exists()


# --- databases the arena cannot read ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["games"], ["standings"], ["standings", "--all"], ["show", "1"],
     ["tournament", "run", QUICK, "--workers", "1"]],
    ids=["games", "standings", "standings-all", "show", "tournament-run"],
)
def test_database_from_a_newer_version(cli, tmp_path, league, command):
    db = copy_db(league, tmp_path / "newer.db")
    add_future_migration(db)
    before = dump(db)
    user_error(cli(*command, "--db", db), "newer version")
    assert dump(db) == before


@pytest.mark.parametrize(
    "command",
    [["games"], ["standings"], ["show", "1"], ["tournament", "run", QUICK, "--workers", "1"]],
    ids=["games", "standings", "show", "tournament-run"],
)
@pytest.mark.parametrize("content", ["text", "binary"])
def test_file_that_is_not_a_database(cli, tmp_path, command, content):
    path = tmp_path / "notes.db"
    if content == "text":
        path.write_text("These are my notes, not a database.\n" * 40)
    else:
        path.write_bytes(bytes(range(256)) * 16)
    before = path.read_bytes()
    user_error(cli(*command, "--db", str(path)), "not an arena database")
    assert path.read_bytes() == before


def test_a_league_of_only_unnamed_players_says_so_truly(cli, tmp_path):
    (tmp_path / "game.txt").write_text("7x6c4 4455667\n")  # a finished game; a move line names no player
    ok(cli("import", str(tmp_path / "game.txt")))
    user_error(cli("standings", "--all"), "holds 1 finished game with a player its file did not name")


def test_the_tournament_command_starts_without_importing_scipy():
    # scipy takes longer to import than thousands of short games take to play: only
    # the fit of the final standings needs it.
    import subprocess
    import sys

    code = "import sys, arena.cli.tournament; print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert found.strip() == "[]"


# --- arena tournaments --------------------------------------------------------------------


def test_tournaments_lists_each_with_its_status_games_and_bots(cli, tmp_path):
    quick = str(Path(__file__).resolve().parent.parent / "config" / "quick.toml")
    assert cli("tournament", "run", quick, "--workers", "1").exit_code == 0
    assert cli("tournament", "run", quick, "--workers", "1", "--name", "again", "--seed", "2").exit_code == 0
    table = cli("tournaments")
    assert table.exit_code == 0
    lines = table.output.splitlines()
    assert lines[0].split()[:5] == ["name", "status", "format", "rules", "games"]
    assert [line.split()[0] for line in lines[2:]] == ["again", "quick"]  # newest first
    assert "finished  round-robin  7x6 connect 4       40  random, neighbour" in lines[3]
    data = json.loads(cli("tournaments", "--format", "json").output)
    assert [t["name"] for t in data] == ["again", "quick"] and data[0]["settings"]["seed"] == 2
    assert data[1]["games"] == 40 and data[1]["bots"][0] == "random" and "db" not in data[1]["settings"]
    rows = cli("tournaments", "--format", "csv").output.splitlines()
    assert rows[0] == "name,status,format,rules,games,bots,created_at,finished_at"
    assert rows[2].startswith("quick,finished,round-robin,7x6 connect 4,40,random neighbour greedy")


def test_tournaments_of_an_empty_or_missing_database(cli, tmp_path):
    missing = cli("tournaments", "--db", tmp_path / "none.db")
    assert missing.exit_code == 2 and missing.output.count("\n") == 1 and "does not exist" in missing.output
    from arena.store import Store

    Store(tmp_path / "empty.db").close()
    empty = cli("tournaments", "--db", tmp_path / "empty.db")
    assert empty.exit_code == 0 and "No tournaments" in empty.output
    assert json.loads(cli("tournaments", "--db", tmp_path / "empty.db", "--format", "json").output) == []
