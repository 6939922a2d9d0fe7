"""Kaggle ConnectX episodes out (`arena export --format kaggle`) and in (`arena import episode.json`).

tests/data/kaggle/ holds episodes kaggle-environments played (``env.toJSON()``): negamax
against random (with the ``info.TeamNames`` a Kaggle download carries, added by hand: a local
run has none), and random against an agent that answered column 9.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.engine.game import Board, Rules
from arena.formats.game_files import GameFileError, ImportedGame
from arena.formats.kaggle_episodes import EpisodeError, episode_of_game, forfeit_status, game_of_episode
from arena.formats.many_games import read_games
from arena.protocol import connectx
from arena.records import Termination
from tests.test_import_games import one_line_error

DATA = Path(__file__).parent / "data" / "kaggle"


def episode(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_an_episode_of_kaggle_environments_is_read_move_by_move():
    data = episode("connectx-episode.json")
    game = game_of_episode(data)
    assert game.players == ("negamax", "random")
    board = game.board()
    assert connectx.grid(board) == data["steps"][-1][0]["observation"]["board"]
    assert game.result == "1-0" and game.termination == Termination.WIN  # rewards [1, -1]
    assert len(game.moves) == len(data["steps"]) - 1
    assert game.rules == Rules() and game.site == "kaggle" and game.key == data["id"]


def test_an_invalid_column_on_kaggle_is_a_forfeit():
    game = game_of_episode(episode("connectx-invalid.json"))
    assert game.players == ("kaggle-agent-1", "kaggle-agent-2")  # a local run names nobody
    assert game.termination == Termination.FORFEIT and game.result == "1-0"
    assert game.reason == "Kaggle status INVALID (action 9)" and len(game.moves) == 1


def played(moves: str, rules: Rules | None = None, **about) -> ImportedGame:
    board = Board.from_moves(moves, rules)
    result = {0: "1-0", 1: "0-1", None: "1/2-1/2"}[board.winner] if board.is_over() else None
    termination = None if result is None else (Termination.DRAW if board.winner is None else Termination.WIN)
    about = {"result": result, "termination": termination, **about}
    return ImportedGame(board.rules, board.history, players=("minimax:depth=4", "solver"), **about)


@pytest.mark.parametrize("moves", ["4455667", "1122334", "", "44444", "121212343434565656777777"])
def test_a_game_goes_out_as_an_episode_and_comes_back_the_same(moves: str):
    game = played(moves)
    back = game_of_episode(json.loads(json.dumps(episode_of_game(game))))
    assert (back.moves, back.result, back.termination, back.players) == (
        game.moves, game.result, game.termination, game.players)


def test_a_drawn_game_and_other_sizes_round_trip():
    board = Board(Rules(4, 4, 3))
    for move in [0, 1, 1, 0, 2, 3, 3, 2, 0, 1, 1, 0, 2, 3, 3, 2]:
        if board.is_over() or not board.is_legal(move):
            break
        board.play(move)
    game = played(board.moves_string(), board.rules)
    data = episode_of_game(game)
    assert data["configuration"]["columns"] == 4 and data["configuration"]["inarow"] == 3
    back = game_of_episode(data)
    assert back.moves == game.moves and back.rules == game.rules and back.result == game.result


def test_a_forfeit_goes_out_with_the_kaggle_status_of_its_reason():
    game = played("4455", result="0-1", termination=Termination.FORFEIT, reason="time: no answer within 1 s")
    data = episode_of_game(game)
    assert data["statuses"] == ["TIMEOUT", "DONE"] and data["rewards"] == [None, 0]
    back = game_of_episode(data)
    assert back.result == "0-1" and back.termination == Termination.FORFEIT and back.moves == game.moves
    assert forfeit_status("illegal move 9") == "INVALID" and forfeit_status("crashed") == "ERROR"


def test_a_game_without_gravity_is_no_episode():
    with pytest.raises(EpisodeError, match="no games without gravity"):
        episode_of_game(played("a1", Rules(gravity=False)))


def test_every_move_of_an_episode_is_checked():
    data = episode("connectx-episode.json")
    mover = 0 if data["steps"][2][0]["status"] == "ACTIVE" else 1
    data["steps"][3][mover]["action"] = 7
    with pytest.raises(EpisodeError, match="step 3: agent . played column 7, which is illegal"):
        game_of_episode(data)
    data = episode("connectx-episode.json")
    data["steps"][2][0]["observation"]["board"][0] = 2
    with pytest.raises(EpisodeError, match="step 2: the board does not show"):
        game_of_episode(data)
    data = episode("connectx-episode.json")
    data["configuration"]["inarow"] = 9
    with pytest.raises(EpisodeError, match="no connect-k game here"):
        game_of_episode(data)
    with pytest.raises(EpisodeError, match="not of Kaggle's 'connectx'"):
        game_of_episode({**episode("connectx-episode.json"), "name": "chess"})


def test_episodes_are_read_as_one_document_or_json_lines():
    text = (DATA / "connectx-episode.json").read_text()
    stream = read_games([json.dumps(json.loads(text), indent=1) + "\n"])
    assert stream.form == "json" and next(stream.games)[2].players == ("negamax", "random")
    lines = [text.strip() + "\n", (DATA / "connectx-invalid.json").read_text().strip() + "\n"]
    stream = read_games(lines)
    assert stream.form == "jsonl"
    assert [g.termination for _, _, g in stream.games] == [Termination.WIN, Termination.FORFEIT]
    with pytest.raises(GameFileError, match="game 1 .line 1.: step 1 must be a list of two"):
        bad = json.loads(text)
        bad["steps"][1] = "nothing"
        list(read_games([json.dumps(bad) + "\n", lines[1]]).games)


def test_arena_exports_kaggle_episodes_and_imports_them_back(cli, tmp_path: Path):
    assert cli("match", "random", "greedy", "--games", "2").exit_code == 0
    exported = cli("export", "--all", "--format", "kaggle")
    assert exported.exit_code == 0
    episodes = [json.loads(line) for line in exported.output.splitlines()]
    assert len(episodes) == 2 and all(e["name"] == "connectx" for e in episodes)
    assert [e["info"]["TeamNames"] for e in episodes] == [["random", "greedy"], ["greedy", "random"]]
    (tmp_path / "episodes.jsonl").write_text(exported.output)
    imported = cli("import", "episodes.jsonl", "--db", "other.db")
    assert imported.exit_code == 0 and imported.output.startswith("2 games imported")
    one = cli("export", "1", "--format", "kaggle")
    (tmp_path / "episode.json").write_text(one.output)
    assert cli("import", "episode.json", "--db", "third.db").output.startswith("Imported as game 1")
    listed = json.loads(cli("games", "--json", "--db", "third.db").output)
    assert listed[0]["moves"] == json.loads(cli("games", "--json").output)[0]["moves"]


def test_a_bad_episode_is_refused_in_one_line(cli, tmp_path: Path):
    data = episode("connectx-episode.json")
    data["configuration"]["columns"] = 2
    (tmp_path / "bad.json").write_text(json.dumps(data))
    one_line_error(cli("import", "bad.json"), "the episode's board is no connect-k game here")
