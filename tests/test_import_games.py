"""Importing games: a game is stored once, and a player the file
does not name is no league entrant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.formats.game_files import import_game
from arena.store import UNNAMED, Store
from arena.terminal.casual import DuplicateGameError, import_into


def games_of(db: Path) -> list[tuple[int, str, str, str, str | None]]:
    with Store(db, create=False) as store:
        return [(g.id, g.tournament, g.first, g.second, g.moves) for g in store.games.all()]


def one_line_error(result, fragment: str) -> str:
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def league(cli, tmp_path: Path) -> Path:
    """A finished tournament: random and greedy, two games."""
    db = tmp_path / "arena.db"
    result = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "q",
                 "--workers", "1", "--db", db)
    assert result.exit_code == 0, result.output
    return db


def standings_rows(cli, db: Path, *args: str) -> dict[str, int]:
    result = cli("standings", "--all", "--db", db, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = data["standings"] if isinstance(data, dict) else data
    return {row["bot"]: row["games"] for row in rows}


def test_reimporting_a_move_line_is_refused_and_stores_nothing(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    (tmp_path / "game.txt").write_text("7x6c4 4453\n")
    first = cli("import", tmp_path / "game.txt", "--db", db)
    assert first.exit_code == 0, first.output
    assert first.output.startswith("Imported as game 1 ")
    before = games_of(db)
    again = cli("import", tmp_path / "game.txt", "--db", db)
    line = one_line_error(again, "already stored as game 1")
    assert "arena show 1" in line
    assert games_of(db) == before
    with Store(db, create=False) as store:
        assert len(store.tournaments.all()) == 1


def test_an_exported_tournament_game_imported_back_is_the_stored_game(cli, league: Path, tmp_path: Path) -> None:
    exported = cli("export", "2", "--format", "json", "--db", league)
    (tmp_path / "game.json").write_text(exported.output)
    before = games_of(league)
    one_line_error(cli("import", tmp_path / "game.json", "--db", league), "already stored as game 2")
    assert games_of(league) == before
    assert standings_rows(cli, league) == {"random": 2, "greedy": 2}  # not 3: the re-import counts nowhere


def test_an_exported_line_of_a_stored_game_is_that_game_whoever_played_it(cli, league: Path, tmp_path: Path) -> None:
    line = cli("export", "2", "--db", league).output.strip()  # names no player
    (tmp_path / "game.txt").write_text(line + "\n")
    before = games_of(league)
    one_line_error(cli("import", tmp_path / "game.txt", "--db", league), "already stored as game 2")
    assert games_of(league) == before


def test_a_move_line_records_unnamed_players_not_people(cli, league: Path, tmp_path: Path) -> None:
    (tmp_path / "game.txt").write_text("7x6c4 1122334\n")  # names no player; not a stored game
    result = cli("import", tmp_path / "game.txt", "--db", league)
    assert result.exit_code == 0, result.output
    game_id, tournament, first, second, _ = games_of(league)[-1]
    assert (tournament, first, second) == ("casual 7x6c4", UNNAMED, UNNAMED)
    assert "human" not in {g[2] for g in games_of(league)} | {g[3] for g in games_of(league)}
    # No league entrant: in no table, whichever games it shows.
    assert standings_rows(cli, league) == {"random": 2, "greedy": 2}
    for command in ("crosstable", "colours"):
        shown = cli(command, "--all", "--db", league)
        assert shown.exit_code == 0 and UNNAMED not in shown.output, shown.output
    # The game itself is stored and can be shown.
    assert cli("show", str(game_id), "--db", league).exit_code == 0


def test_a_known_bot_against_an_unnamed_player_counts_in_no_table(cli, league: Path, tmp_path: Path) -> None:
    document = {"moves": "4455667", "players": {"first": "random", "second": None}}
    (tmp_path / "game.json").write_text(json.dumps(document))
    assert cli("import", tmp_path / "game.json", "--db", league).exit_code == 0
    assert games_of(league)[-1][2:4] == ("random", UNNAMED)
    assert standings_rows(cli, league) == {"random": 2, "greedy": 2}


def test_named_players_of_an_imported_game_still_count(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    document = {"moves": "4455667", "players": {"first": "greedy", "second": "random"}}
    (tmp_path / "game.json").write_text(json.dumps(document))
    assert cli("import", tmp_path / "game.json", "--db", db).exit_code == 0
    assert standings_rows(cli, db) == {"greedy": 1, "random": 1}


def test_same_moves_with_other_players_or_rules_is_another_game(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    (tmp_path / "line.txt").write_text("4453\n")
    named = {"moves": "4453", "players": {"first": "greedy", "second": "random"}}
    swapped = {"moves": "4453", "players": {"first": "random", "second": "greedy"}}
    (tmp_path / "named.json").write_text(json.dumps(named))
    (tmp_path / "swapped.json").write_text(json.dumps(swapped))
    for args in (["line.txt"], ["line.txt", "--rules", "8x7c4"], ["named.json"], ["swapped.json"]):
        result = cli("import", tmp_path / args[0], *args[1:], "--db", db)
        assert result.exit_code == 0, (args, result.output)
    assert len(games_of(db)) == 4
    one_line_error(cli("import", tmp_path / "line.txt", "--rules", "8x7c4", "--db", db), "already stored as game 2")
    one_line_error(cli("import", tmp_path / "swapped.json", "--db", db), "already stored as game 4")
    assert len(games_of(db)) == 4


def test_store_finds_the_same_game_and_import_into_refuses_it(db_path: str) -> None:
    store = Store(db_path)
    game = import_game("7x6c4 4453")
    assert store.games.find(game.rules, game.moves_string, UNNAMED, UNNAMED) is None
    game_id = import_into(store, game)
    assert store.games.find(game.rules, game.moves_string, UNNAMED, UNNAMED) == game_id
    assert store.games.find(Rules(width=8), game.moves_string, UNNAMED, UNNAMED) is None
    assert store.games.find(game.rules, "4454", UNNAMED, UNNAMED) is None
    assert store.games.find(game.rules, game.moves_string, "random", UNNAMED) is None
    with pytest.raises(DuplicateGameError, match=f"already stored as game {game_id}"):
        import_into(store, import_game("4453"))
    assert len(store.games.all()) == 1
