"""Games in and out in bulk: a tournament exported as JSON Lines or PGN-like text
and imported into another database is the same tournament, each game stored once;
a bad game is one line and stores nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine.game import Board, Rules
from arena.formats.game_files import GameFileError, ImportedGame
from arena.formats.many_games import read_games
from arena.formats.pgn import read_pgn, write_pgn
from arena.records import RESULTS, Termination, TimeControl
from arena.store import Store
from tests.test_import_games import one_line_error


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament of three bots, 18 games, with a time control."""
    from click.testing import CliRunner

    from arena.cli.main import main

    db = tmp_path_factory.mktemp("played") / "arena.db"
    result = CliRunner().invoke(main, ["tournament", "run", "--bots", "random,greedy,blocker", "--games", "6",
                                       "--name", "t", "--workers", "1", "--move-seconds", "5", "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


def standings(cli, db: Path, tournament: str) -> list[dict]:
    result = cli("standings", "--tournament", tournament, "--db", db, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return data["standings"] if isinstance(data, dict) else data


def stored(db: Path, tournament: str) -> list[tuple]:
    with Store(db, create=False) as store:
        return [(g.first, g.second, g.result, g.termination, g.moves, g.opening, g.finished_at)
                for g in store.games.all(tournament=tournament)]


@pytest.mark.parametrize("fmt", ["jsonl", "pgn"])
def test_a_tournament_exported_and_imported_into_a_fresh_database_has_the_same_standings(
    cli, played: Path, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / f"t.{fmt}"
    result = cli("export", "--tournament", "t", "--format", fmt, "-o", out, "--db", played)
    assert result.exit_code == 0 and result.output == "", result.output
    fresh = tmp_path / "fresh.db"
    result = cli("import", out, "--tournament", "copy", "--db", fresh)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("18 games imported, 0 already there")
    assert standings(cli, fresh, "copy") == standings(cli, played, "t")
    assert stored(fresh, "copy") == stored(played, "t")
    again = cli("import", out, "--tournament", "copy", "--db", fresh)
    assert again.output.startswith("0 games imported, 18 already there"), again.output
    assert len(stored(fresh, "copy")) == 18


def test_jsonl_keeps_every_move_time_and_the_time_control(cli, played: Path, tmp_path: Path) -> None:
    lines = cli("export", "--tournament", "t", "--db", played).output.splitlines()  # jsonl by default
    assert len(lines) == 18
    first = json.loads(lines[0])
    assert first["tournament"] == "t" and first["time_control"] == {"move_seconds": 5.0, "bank_seconds": 0.0}
    assert first["opening"] and first["moves"].startswith(first["opening"])
    assert any(ply["ms"] is not None for ply in first["plies"])
    with Store(played, create=False) as store:
        game = store.games.get(first["id"])
        assert [p["ms"] for p in first["plies"]] == [m.ms for m in store.games.moves(game.id)]
        assert (first["key"], first["date"], first["seed"]) == (game.key, game.finished_at, game.seed)


def test_the_listing_of_arena_games_json_imports_back(cli, played: Path, tmp_path: Path) -> None:
    listing = cli("games", "--json", "--tournament", "t", "--limit", "100", "--db", played).output
    assert all("rules" in game for game in json.loads(listing))
    (tmp_path / "list.json").write_text(listing)
    fresh = tmp_path / "fresh.db"
    result = cli("import", tmp_path / "list.json", "--db", fresh)
    assert result.output.startswith("18 games imported"), result.output
    assert standings(cli, fresh, "imported") == standings(cli, played, "t")


def test_an_imported_tournament_is_the_default_of_the_tables_and_a_casual_game_is_not(
    cli, played: Path, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    assert cli("export", "--tournament", "t", "-o", out, "--db", played).exit_code == 0
    fresh = tmp_path / "fresh.db"
    assert cli("import", out, "--db", fresh).exit_code == 0
    (tmp_path / "one.txt").write_text("7x6c4 1212121\n")  # one game: stored as a casual game
    assert cli("import", tmp_path / "one.txt", "--db", fresh).exit_code == 0
    shown = cli("standings", "--db", fresh)
    assert shown.exit_code == 0 and shown.output.startswith("Tournament 'imported'"), shown.output


def test_a_listing_without_rules_is_refused_naming_the_command_that_exports_the_games(cli, tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(json.dumps([{"id": 1, "first": "a", "second": "b", "moves": "4453"}]))
    line = one_line_error(cli("import", tmp_path / "old.json", "--db", tmp_path / "a.db"), "without 'rules'")
    assert "arena export --tournament NAME --format jsonl" in line


def test_an_illegal_move_refuses_the_whole_import_naming_the_game_and_its_move(
    cli, played: Path, tmp_path: Path
) -> None:
    lines = cli("export", "--tournament", "t", "--db", played).output.splitlines()
    bad = json.loads(lines[1])
    bad["moves"] = "4444444"
    bad["plies"] = []
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    fresh = tmp_path / "fresh.db"
    one_line_error(cli("import", tmp_path / "bad.jsonl", "--db", fresh), "game 2 (line 2): move 7 ('4') is illegal")
    with Store(fresh) as store:
        assert store.games.count() == 0  # the first game, read before the bad one, is not stored either


def test_a_bad_pgn_game_is_one_line_naming_its_line(cli, tmp_path: Path) -> None:
    text = '[Event "e"]\n[Rules "7x6c4"]\n\n1. 4 4 2. 9 1-0\n'
    (tmp_path / "bad.pgn").write_text(text)
    one_line_error(cli("import", tmp_path / "bad.pgn", "--db", tmp_path / "a.db"), "game at line 1")


def test_games_of_other_rules_are_refused_in_a_tournament_of_one_rules(cli, tmp_path: Path) -> None:
    games = [{"moves": "4453", "key": "a"}, {"moves": "4453", "key": "b", "rules": {"width": 8, "height": 6,
                                                                                     "connect": 4, "gravity": True}}]
    (tmp_path / "mixed.jsonl").write_text("\n".join(json.dumps(g) for g in games) + "\n")
    one_line_error(cli("import", tmp_path / "mixed.jsonl", "--db", tmp_path / "a.db"), "game 2 (line 2) is 8x6")


def test_importing_into_a_played_tournament_is_refused(cli, played: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    cli("export", "--tournament", "t", "-o", out, "--db", played)
    one_line_error(cli("import", out, "--tournament", "t", "--db", played), "was played here, not imported")


@pytest.mark.parametrize(("args", "fragment"), [
    ([], "say which games"),
    (["1", "--all"], "not both"),
    (["--all", "--tournament", "t"], "--all exports every game"),
    (["--tournament", "t", "--format", "json"], "--format json holds one game"),
    (["--tournament", "nope"], "no tournament named 'nope'"),
    (["--bot", "nope"], "no bot 'nope'"),
])
def test_export_mistakes_are_one_line(cli, played: Path, args: list[str], fragment: str) -> None:
    one_line_error(cli("export", *args, "--db", played), fragment)


def test_export_of_a_bot_and_of_all_games(cli, played: Path) -> None:
    every = cli("export", "--all", "--format", "pgn", "--db", played).output
    assert every.count('[Event "t"]') == 18
    mine = [json.loads(line) for line in cli("export", "--bot", "random", "--db", played).output.splitlines()]
    assert len(mine) == 12 and all("random" in g["players"].values() for g in mine)


def test_export_streams_the_games_a_chunk_at_a_time(played: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.store.games import Games

    monkeypatch.setattr(Games, "all", lambda *a, **k: pytest.fail("every game read at once"))
    with Store(played, create=False) as store:
        chunked = [(game.id, [m.move for m in moves]) for game, moves in store.games.stream("t", chunk=4)]
        assert [game_id for game_id, _ in chunked] == sorted(game_id for game_id, _ in chunked)
        assert len(chunked) == 18
        assert all(moves == [m.move for m in store.games.moves(game_id)] for game_id, moves in chunked)


# --- the PGN-like text: any legal game on any rules reads back as written ------------


@st.composite
def games(draw: st.DrawFn) -> ImportedGame:
    gravity = draw(st.booleans())
    width = draw(st.integers(3, 12))
    height = draw(st.integers(3, 8))
    connect = draw(st.integers(3, min(5, max(width, height))))
    scoring = draw(st.sampled_from(["line", "count"]))
    rules = Rules(width, height, connect, gravity=gravity, scoring=scoring)
    board = Board(rules)
    rng = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(0, width * height))):
        if board.is_over():
            break
        board.play(rng.choice(board.legal_moves()))
    moves = list(board.history)
    ms = [draw(st.none() | st.floats(0, 1e6, allow_nan=False)) for _ in moves]
    name = st.text(min_size=1, max_size=20).filter(lambda s: s != "?")
    over = board.is_over()
    result = RESULTS[board.winner] if over else draw(st.none() | st.sampled_from(sorted(RESULTS.values())))
    termination = (Termination.WIN if board.winner is not None else Termination.DRAW) if over else (
        None if result is None else Termination.FORFEIT)
    return ImportedGame(
        rules, moves, players=(draw(name), draw(name)), result=result, termination=termination,
        reason=draw(st.none() | name) if termination == Termination.FORFEIT else None,
        move_info=[None] * len(moves), move_ms=ms, tournament=draw(name), key=draw(name),
        game_id=draw(st.none() | st.integers(0, 10**9)), site=draw(st.none() | name),
        date=draw(st.none() | st.sampled_from(["2025-01-31T12:00:00.123+00:00", "1999-12-31T23:59:59.000+00:00"])),
        opening_plies=draw(st.integers(0, len(moves))),
        time_control=draw(st.none() | st.builds(TimeControl, st.sampled_from([0.5, 1.0, 10.0]),
                                                 st.sampled_from([0.0, 5.0]))),
    )


@given(st.lists(games(), min_size=1, max_size=3))
def test_any_legal_games_on_any_rules_read_back_from_pgn_as_written(written: list[ImportedGame]) -> None:
    text = "\n".join(write_pgn(game) for game in written)
    stream = read_games(text.splitlines(keepends=True))
    read = [game for _, _, game in stream.games]
    assert stream.form == "pgn"
    assert read == written
    assert [game for _, game in read_pgn(enumerate(text.splitlines(), 1))] == written


def test_pgn_moves_are_columns_with_gravity_and_cells_without() -> None:
    columns = ImportedGame(Rules(12, 6, 4), [9, 0, 11], move_ms=[None] * 3, move_info=[None] * 3)
    cells = ImportedGame(Rules(15, 15, 5, gravity=False), [7 * 15 + 7, 8 * 15 + 8], move_ms=[1.5, None],
                         move_info=[None] * 2)
    assert write_pgn(columns).splitlines()[-2] == "1. 10 1 2. 12 *"
    assert write_pgn(cells).splitlines()[-2] == "1. h8 {[%ms 1.5]} i9 *"


def test_a_result_the_moves_contradict_is_refused() -> None:
    text = '[Result "0-1"]\n\n1. 1 2 2. 1 2 3. 1 2 4. 1 0-1\n'
    with pytest.raises(GameFileError, match="contradicts the moves"):
        list(read_games(text.splitlines(keepends=True)).games)


def test_an_import_stores_nothing_when_a_later_batch_holds_a_bad_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.terminal import transfer

    monkeypatch.setattr(transfer, "_BATCH", 1)  # the good game is written before the bad one is read
    text = json.dumps({"moves": "4453", "key": "a"}) + "\n" + json.dumps({"moves": "4444444", "key": "b"}) + "\n"
    with Store(tmp_path / "a.db") as store:
        with pytest.raises(GameFileError, match="game 2"):
            transfer.import_games(store, read_games(text.splitlines(keepends=True)).games, "imported")
        assert store.games.count() == 0
