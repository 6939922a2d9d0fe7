"""The person-facing commands end to end: play through stdin, replay, export and
import, solve and analyse, with what they store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from arena.store import Store, StoredGame


def stored_games(tmp_path: Path, db: str = "arena.db") -> list[StoredGame]:
    return Store(tmp_path / db).games.all()


def test_play_a_full_game_with_bad_input_undo_redo_and_save(cli, tmp_path, monkeypatch):
    # X (the person) plays column 1 four times; the bot (random, seed 1) answers.
    script = "9\nx\n1\nu\nr\ns\n1\n1\n1\n1\n1\n1\nq\n"
    result = cli_input(cli, monkeypatch, script, "play", "random", "--seed", "1")
    out = result.output
    assert result.exit_code == 0, out
    assert "\x1b[" not in out  # no colour when output is not a terminal
    assert out.count("saved as game") == 1
    assert "stored as game" in out or "quit" in out
    games = stored_games(tmp_path)
    assert games and games[-1].first == "human" and games[-1].second == "random"
    assert games[-1].tournament == "casual 7x6c4"


def cli_input(cli, monkeypatch, text, *args):
    from click.testing import CliRunner

    from arena.cli.main import main

    return CliRunner().invoke(main, list(args), input=text, catch_exceptions=False)


def test_two_people_play_to_a_win_and_it_is_stored(cli, tmp_path, monkeypatch):
    result = cli_input(cli, monkeypatch, "4\n5\n4\n5\n4\n5\n4\n", "play")
    assert result.exit_code == 0, result.output
    assert "X wins" in result.output
    game = stored_games(tmp_path)[-1]
    assert (game.first, game.second, game.result, game.moves) == ("human", "human", "1-0", "4545454")


def test_gravity_free_play_uses_cell_names(cli, tmp_path, monkeypatch):
    script = "a1\nb1\nb2\nc1\nc3\n"
    result = cli_input(cli, monkeypatch, script, "play", "--width", "3", "--height", "3", "--connect", "3",
                       "--no-gravity")
    assert "X wins" in result.output
    assert stored_games(tmp_path)[-1].moves == "a1b1b2c1c3"


def test_play_refuses_a_bad_bot_in_one_line(cli):
    result = cli("play", "nobody")
    assert result.exit_code == 2
    assert result.output.startswith("Error: unknown bot 'nobody'") and result.output.count("\n") == 1


@pytest.fixture
def tournament_db(cli, tmp_path):
    config = Path(__file__).parent.parent / "config" / "quick.toml"
    assert cli("tournament", "run", str(config), "--workers", "1").exit_code == 0
    return tmp_path / "arena.db"


def test_replay_steps_through_a_stored_game(cli, tournament_db, monkeypatch):
    result = cli_input(cli, monkeypatch, "n\nn\np\n3\nq\n", "replay", "1")
    assert result.exit_code == 0, result.output
    assert "ply 1/" in result.output and "ply 2/" in result.output and "ply 3/" in result.output
    through = cli("replay", "1", "--delay", "0")
    assert through.exit_code == 0 and "1 2 3 4 5 6 7" in through.output


def test_export_and_import_round_trip(cli, tournament_db, tmp_path):
    line = cli("export", "3").output.strip()
    assert line.startswith("7x6c4 ")
    (tmp_path / "game.txt").write_text(line + "\n")
    # The line is game 3 again (whoever played it): refused here...
    imported = cli("import", str(tmp_path / "game.txt"))
    assert imported.exit_code == 2 and "already stored as game 3" in imported.output
    as_json = cli("export", "3", "--format", "json").output
    (tmp_path / "game.json").write_text(as_json)
    # ...and so is the JSON, which names the players...
    again = cli("import", str(tmp_path / "game.json"))
    assert again.exit_code == 2 and "already stored as game 3" in again.output
    # ...while both are stored in other databases.
    lines_db, other = str(tmp_path / "lines.db"), str(tmp_path / "other.db")
    assert cli("import", str(tmp_path / "game.txt"), "--db", lines_db).exit_code == 0
    assert cli("import", str(tmp_path / "game.json"), "--db", other).exit_code == 0
    original = next(g for g in Store(tournament_db).games.all() if g.id == 3)
    from_line = Store(lines_db).games.all()[0]
    assert from_line.moves == original.moves
    assert (from_line.first, from_line.second) == ("unnamed", "unnamed")  # a move line names no player
    copy = Store(other).games.all()[0]
    assert (copy.first, copy.moves, copy.result) == (original.first, original.moves, original.result)


def test_import_refuses_a_bad_file_and_stores_nothing(cli, tournament_db, tmp_path):
    (tmp_path / "bad.txt").write_text("7x6c4 44444449\n")
    before = len(Store(tournament_db).games.all())
    result = cli("import", str(tmp_path / "bad.txt"))
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert len(Store(tournament_db).games.all()) == before


def test_solve_prints_the_shared_convention(cli):
    # From the shared test set: this position scores -1 for the side to move. No
    # budget: a busy machine or a cold compile cache must not make a value unknown.
    result = cli("solve", "2252576253462244111563365343671351441", "--json", "--budget", "0")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["score"] == -1
    assert set(data["moves"]) == {"6", "7"} and max(data["moves"].values()) == -1
    assert cli("solve", "4444444").exit_code == 2


PONS = Path(__file__).resolve().parent / "data" / "pons" / "Test_L3_R1"


def won_position_and_a_blunder() -> tuple[str, int]:
    """A won position from the shared test set, and a move that throws the win away."""
    from arena.engine.game import Board
    from bots.solver import solve_moves

    for line in PONS.read_text().splitlines():
        moves, score = line.split()
        if int(score) > 0:
            board = Board.from_moves(moves)
            losing = [m for m, v in solve_moves(board).items() if v is not None and v <= 0]
            if losing:
                return moves, losing[0]
    raise AssertionError("no won position with a losing move in the test set")


def test_analyse_marks_a_thrown_away_win_and_is_stored(cli, tmp_path):
    moves, blunder = won_position_and_a_blunder()
    (tmp_path / "game.txt").write_text(f"7x6c4 {moves}{blunder + 1}\n")
    assert cli("import", str(tmp_path / "game.txt")).exit_code == 0
    game_id = stored_games(tmp_path)[-1].id
    result = cli("analyse", str(game_id), "--budget", "0.2")
    assert result.exit_code == 0, result.output
    marked = [line.split() for line in result.output.splitlines() if "lost win" in line]
    # The test positions come from random games, so earlier slips are marked too;
    # the last ply is the one we made, from a proven win to a loss or draw.
    assert marked and marked[-1][0] == str(len(moves) + 1), result.output
    assert "win in" in result.output and "unknown" in result.output  # early plies stay unproven
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        stored = conn.execute("select count(*) from analyses where game_id = ?", [game_id]).fetchone()[0]
    assert stored == len(moves) + 2  # every position, the final one included
    assert "lost win" in cli("show", str(game_id)).output
    summary = cli("analyse", "--tournament", "casual 7x6c4", "--budget", "0.2")
    assert summary.exit_code == 0
    assert "wins let slip" in summary.output


def test_analyse_needs_a_game_or_a_tournament(cli, tournament_db):
    assert cli("analyse").exit_code == 2
    assert cli("analyse", "1", "--tournament", "quick").exit_code == 2
    assert cli("analyse", "999999").exit_code == 2


def test_count_scoring_games_keep_their_rules_through_play_export_and_import(cli, tmp_path, monkeypatch):
    script = "a1\nb1\nc1\na2\nb2\nc2\na3\nb3\nc3\n"  # X: a1 c1 b2 a3 c3 - both diagonals
    first = cli_input(cli, monkeypatch, script, "play", "--width", "3", "--height", "3", "--connect", "3",
                      "--no-gravity", "--scoring", "count")
    assert first.exit_code == 0, first.output
    assert "X wins" in first.output
    cli_input(cli, monkeypatch, "4\n5\n4\n5\n4\n5\n4\n", "play")  # a line-scoring casual game beside it
    games = stored_games(tmp_path)
    assert {g.tournament for g in games} == {"casual 3x3c3nw", "casual 7x6c4"}
    counted = next(g for g in games if g.tournament == "casual 3x3c3nw")
    line = cli("export", str(counted.id)).output.strip()
    assert line == "3x3c3nw a1b1c1a2b2c2a3b3c3"
    (tmp_path / "game.txt").write_text(line)
    assert cli("import", str(tmp_path / "game.txt")).exit_code == 2  # the played game itself: stored already
    (tmp_path / "game.json").write_text(cli("export", str(counted.id), "--format", "json").output)
    assert cli("import", str(tmp_path / "game.json")).exit_code == 2
    for name, file in (("lines.db", "game.txt"), ("other.db", "game.json")):
        assert cli("import", str(tmp_path / file), "--db", str(tmp_path / name)).exit_code == 0
        copy = Store(tmp_path / name).games.all()[0]
        assert (copy.rules, copy.result) == (counted.rules, "1-0")


def test_a_player_the_file_leaves_out_is_stored_as_unnamed(cli, tmp_path):
    game = tmp_path / "game.json"
    game.write_text(json.dumps({"moves": "4453", "players": {"first": None, "second": "random"}}))
    result = cli("import", str(game))
    assert result.exit_code == 0, result.output
    stored = stored_games(tmp_path)[-1]
    assert (stored.first, stored.second) == ("unnamed", "random")
