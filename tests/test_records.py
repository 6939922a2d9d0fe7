"""The shared records: what they import, and the meaning of an outcome."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys

import pytest

from arena.engine.game import Board, Rules
from arena.formats.game_files import import_game
from arena.records import BotCode, GameRecord, GameSpec, Limits, MoveRecord, Outcome, Termination, TimeControl
from arena.store import Store
from arena.terminal.casual import HUMAN, save_game

LEAGUE_MODULES = (
    "arena.store", "arena.ratings.fit", "arena.ratings.standings",
    "arena.ratings.crosstable", "arena.ratings.sprt",
)


def modules_loaded_by(*modules: str) -> set[str]:
    """The modules a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import json, sys\n"
        + "".join(f"import {module}\n" for module in modules)
        + "print(json.dumps(sorted(sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(run.stdout))


def test_league_modules_load_no_sandbox_plugins_referee_or_bots():
    loaded = modules_loaded_by(*LEAGUE_MODULES)
    assert set(LEAGUE_MODULES) <= loaded  # the check below means something
    forbidden = ("arena.sandbox", "arena.players.plugins", "arena.referee", "bots")
    unwanted = sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert unwanted == []


def test_records_import_nothing_of_the_arena_but_the_game():
    loaded = modules_loaded_by("arena.records")
    arena = sorted(m for m in loaded if m == "arena" or m.startswith("arena."))
    assert arena == ["arena", "arena.engine", "arena.engine.game", "arena.errors", "arena.records"]


# --- outcomes -------------------------------------------------------------------------


def test_terminations_are_the_text_stored_in_databases_and_files():
    assert [t.value for t in Termination] == ["win", "draw", "forfeit", "unfinished", "void", "adjudicated"]
    assert Termination("forfeit") is Termination.FORFEIT
    assert json.dumps({"termination": Termination.WIN}) == '{"termination": "win"}'


@pytest.mark.parametrize(
    ("outcome", "result", "scores"),
    [
        (Outcome(0, Termination.WIN), "1-0", (1.0, 0.0)),
        (Outcome(1, Termination.FORFEIT, "crashed"), "0-1", (0.0, 1.0)),
        (Outcome(None, Termination.DRAW), "1/2-1/2", (0.5, 0.5)),
        (Outcome(None, Termination.UNFINISHED), "*", (0.5, 0.5)),
    ],
)
def test_an_outcome_gives_its_result_and_each_players_score(outcome, result, scores):
    assert outcome.result == result
    assert (outcome.score(0), outcome.score(1)) == scores


def test_an_outcome_is_read_back_from_its_result():
    for winner in (0, 1, None):
        outcome = Outcome(winner, Termination.FORFEIT, "time")
        assert Outcome.of_result(outcome.result, Termination.FORFEIT, "time") == outcome
    with pytest.raises(ValueError, match="not the result of a finished game"):
        Outcome.of_result("*", Termination.UNFINISHED)


def test_a_record_answers_from_its_one_outcome():
    spec = GameSpec(key="p0000-o0000-a", rules=Rules(), first="random", second="greedy", pairing="p0000")
    record = GameRecord(spec, Outcome(1, Termination.FORFEIT, "illegal move"))
    assert (record.winner, record.termination, record.reason, record.result) == (1, "forfeit", "illegal move", "0-1")
    assert (record.score(0), record.score(1)) == (0.0, 1.0)


def test_game_records_pickle_compactly_and_come_back_whole():
    spec = GameSpec(key="p0000-o0000-a", rules=Rules(), first="random", second="greedy", pairing="p0000")
    moves = [MoveRecord(0, 3, None), MoveRecord(1, 2, 1.5, {"depth": 4})]
    record = GameRecord(spec, Outcome(0, Termination.WIN), moves, 0.25, 1_700_000_000.0)
    state = record.__getstate__()
    assert all(type(item) is tuple for item in state[4])  # moves as plain tuples, plies implied
    assert not any(isinstance(item, Outcome) for item in state)  # the outcome as its fields
    copy = pickle.loads(pickle.dumps(record))
    assert copy == record
    assert all(type(move) is MoveRecord for move in copy.moves)
    assert copy.outcome.termination is Termination.WIN


def test_game_specs_pickle_as_their_values_and_come_back_whole():
    # Every field away from its default, so that a field the pickle left out shows.
    spec = GameSpec(
        key="p0001-o0002-b", rules=Rules(8, 7, 5, gravity=False), first="a.py", second="greedy",
        pairing="p0001", opening=(9, 17), seed=2**62 + 3, time_control=TimeControl(0.5, 2.0), isolate=True,
        limits=Limits(memory_mb=256, processes=8), submitted=(("a.py", BotCode("a.py", text="x = 1")),),
        failed_start=(("greedy", "timed out"),), adjudicate=12,
    )
    data = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
    assert b"failed_start" not in data  # the values, not a dict of them by name
    copy = pickle.loads(data)
    assert type(copy) is GameSpec
    assert copy == spec
    assert [getattr(copy, name) for name in vars(spec)] == [getattr(spec, name) for name in vars(spec)]
    assert hash(copy) == hash(spec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.seed = 1  # type: ignore[misc]


# --- stored and imported games read back -----------------------------------------------------


def test_an_unfinished_casual_game_reads_back(db_path):
    store = Store(db_path)
    board = Board.from_moves([3, 3, 2], Rules())
    game_id = save_game(store, Rules(), (HUMAN, HUMAN), board, [])
    game = store.games.get(game_id)
    assert (game.result, game.winner, game.termination) == ("*", None, "unfinished")
    assert game.termination == Termination.UNFINISHED


def test_a_casual_game_is_stored_as_a_pairing_of_its_own(db_path):
    store = Store(db_path)
    board = Board.from_moves([3, 3, 2, 2, 1, 1, 0], Rules())
    game_id = save_game(store, Rules(), (HUMAN, "random"), board, [])
    row = store.db["games"].get(game_id)
    assert row["pairing"] == row["key"]  # as stored before pairings had a field: a key without "-"


def test_an_imported_forfeit_is_stored_with_its_winner_and_exported_again(cli, tmp_path):
    document = {"rules": {"width": 7, "height": 6, "connect": 4, "gravity": True}, "moves": "4455",
                "result": "0-1", "termination": "forfeit", "reason": "crashed"}
    (tmp_path / "game.json").write_text(json.dumps(document))
    assert cli("import", str(tmp_path / "game.json")).exit_code == 0
    game = Store(tmp_path / "arena.db").games.all()[-1]
    assert (game.result, game.winner, game.termination, game.reason) == ("0-1", 1, "forfeit", "crashed")
    exported = json.loads(cli("export", str(game.id), "--format", "json").output)
    assert (exported["result"], exported["termination"], exported["reason"]) == ("0-1", "forfeit", "crashed")
    imported = import_game(json.dumps(exported))
    assert imported.termination is Termination.FORFEIT


def test_an_import_of_deeply_nested_json_is_one_line_not_a_traceback(cli, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    result = cli("import", str(deep))
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "nested more than 32 deep" in result.output
    assert "Traceback" not in result.output


def test_a_bad_rules_prefix_is_quoted_clipped_not_whole(cli, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("9x" + "[" * 100_000)  # a file that begins with "[" is read as a listing of games
    result = cli("import", str(junk))
    assert result.exit_code == 2
    assert len(result.output) < 400 and "bad rules prefix '9x[[[" in result.output
