"""Knockout tournaments played: the command end to end (byes, a champion, every
match's games stored, the bracket in the terminal, JSON and CSV), resuming to the
games of an uninterrupted run, level matches through extra pairs to the decider,
seeding by the database's ratings kept with the tournament, the solver's verdict,
and settings refused in one line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.engine.game import Board, Rules, format_moves
from arena.engine.solvers import find_solver
from arena.ratings import knockout_record
from arena.ratings.knockout_record import SEEDING_ORDER, stored_bracket
from arena.ratings.verdict import value_lost, verdict
from arena.store import Store
from arena.tournament.config import load_config
from arena.tournament.executors import SerialExecutor
from arena.tournament.knockout import KNOCKOUT, seeded
from arena.tournament.runner import run_tournament
from tests.interruptions import interrupted_then_resumed

FIVE = ["random", "random:stream=2", "random:stream=3", "random:stream=4", "random:stream=5"]
# The same deterministic bot under two specs: every game of theirs is mirrored by the
# other of its pair, so their matches are always level.
TWINS = ["minimax:depth=2", "minimax:depth=02"]


def _run(args: Sequence[str]):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _json(db: str, name: str) -> dict:
    result = _run(["standings", "--db", db, "--tournament", name, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _stored(db: str, name: str) -> dict[str, tuple]:
    with Store(db) as store:
        return {g.key: (g.first, g.second, g.result, g.seed, g.moves) for g in store.games.all(tournament=name)}


def test_the_command_plays_a_five_bot_knockout_with_byes_to_a_champion(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    args = ["tournament", "run", "--format", "knockout", "--bots", ",".join(FIVE), "--decider", "coin",
            "--workers", "1", "--db", db, "--name", "cup"]
    result = _run(args)
    assert result.exit_code == 0, result.output
    assert "Knockout: 5 entrants, 3 rounds;" in result.output and "champion: " in result.output
    assert result.output.count("(bye)") == 3  # 8 places, 5 entrants
    assert "first move:" in result.output  # the Elo table under the bracket
    bracket = _json(db, "cup")["bracket"]
    assert bracket["champion"] is not None
    matches = [m for matches in bracket["rounds"] for m in matches]
    assert [m["bye"] for m in matches].count(True) == 3
    assert all(m["winner"] is not None for m in matches)
    played = [m for m in matches if not m["bye"]]
    assert len(played) == 4  # n - 1 matches, less the byes
    stored = _stored(db, "cup")
    keys = [game["key"] for m in played for game in m["games"]]
    assert sorted(keys) == sorted(stored)  # every match's games stored, and nothing else
    for m in played:
        assert len(m["games"]) == 2 * m["pairs_played"] >= 2
        assert {m["top"]["name"], m["bottom"]["name"]} == {stored[g["key"]][0] for g in m["games"]}
    csv = _run(["standings", "--db", db, "--tournament", "cup", "--format", "csv"]).stdout.splitlines()
    assert csv[0] == "round,match,top,bottom,top_points,bottom_points,winner,decided_by,coin"
    assert len(csv) == 1 + 7 and csv[-1].startswith("3,r3-m01,")
    again = _run(args)
    assert "0 games played" in again.output and "champion: " in again.output


def _config(db: str, **overrides: object):
    values = {"name": "k", "format": "knockout", "games": 2, "bots": FIVE, "seed": 3, "db": db,
              "decider": "coin", "extra_pairs": 2, **overrides}
    return load_config(None, values)


@pytest.mark.parametrize("stop_after", [1, 3, 6])
def test_an_interrupted_knockout_resumes_to_the_uninterrupted_games(tmp_path: Path, stop_after: int) -> None:
    whole, broken = str(tmp_path / "whole.db"), str(tmp_path / "broken.db")
    outcome = run_tournament(_config(whole), Store(whole), SerialExecutor())
    assert not outcome.interrupted and outcome.played >= 8

    first, second = interrupted_then_resumed(_config(broken), Store(broken), stop_after)
    assert first.interrupted and first.played == stop_after
    assert not second.interrupted and second.already_stored + second.played == outcome.played
    assert _stored(whole, "k") == _stored(broken, "k")
    with Store(whole) as done:
        assert KNOCKOUT.next_round(seeded(_config(whole), done), done.games.all(tournament="k")) is None


def test_a_level_match_plays_its_extra_pairs_then_the_coin_decides_and_says_so(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    result = _run(["tournament", "run", "--format", "knockout", "--bots", ",".join(TWINS), "--decider", "coin",
                   "--extra-pairs", "2", "--workers", "1", "--db", db, "--name", "twins"])
    assert result.exit_code == 0, result.output
    assert "6 games played" in result.output  # one pair, then both extra pairs: level throughout
    final = _json(db, "twins")["bracket"]["rounds"][0][0]
    assert final["pairs_played"] == 3 and final["points"][0] == final["points"][1]
    assert final["decided_by"] == "coin" and final["coin"] in ("heads", "tails")
    assert final["winner"]["name"] == TWINS[0 if final["coin"] == "heads" else 1]
    assert "c won by a coin" in result.output
    assert {key[:-2] for key in _stored(db, "twins")} == {"r1-m01-o00", "r1-m01-o01", "r1-m01-o02"}


def test_a_level_match_goes_to_the_solver_s_verdict_which_is_recorded(tmp_path: Path, monkeypatch) -> None:
    asked: list[tuple[str, str, int]] = []

    def judged(upper: str, lower: str, rules: Rules, games: Sequence[object], nodes: int) -> str:
        asked.append((upper, lower, len(games)))
        return lower

    monkeypatch.setattr(knockout_record, "verdict", judged)
    db = str(tmp_path / "k.db")
    config = load_config(None, {"name": "s", "format": "knockout", "bots": TWINS, "db": db, "extra_pairs": 1,
                                "decider": "solver"})
    assert config.identity()["knockout"]["decider"] == "solver"
    outcome = run_tournament(config, Store(db), SerialExecutor())
    assert outcome.played == 4
    with Store(db) as store:
        bracket = stored_bracket(store, store.tournaments.check("s"))
    assert bracket is not None and bracket.final.decided_by == "solver" and bracket.final.coin is None
    assert bracket.champion is not None and bracket.champion.name == TWINS[1]
    assert asked and set(asked) == {(TWINS[0], TWINS[1], 4)}  # the match's four games, each time asked


def test_the_solver_s_verdict_goes_to_who_gave_away_less() -> None:
    rules = Rules(width=4, height=4, connect=3)
    solver = find_solver(rules)

    def game(first: str, second: str, careless: int) -> object:
        """A game the solver's best move at every ply but those of player ``careless``
        (0 first, 1 second), who plays the worst it can."""
        board = Board(rules)
        while not board.is_over():
            values = solver.solve_moves(board)
            pick = min if board.ply % 2 == careless else max
            board.play(pick(values, key=lambda move: (values[move] if values[move] is not None else 0, -move)))
        return _Game(first, second, format_moves(board.history, rules), 0)

    games = [game("perfect", "careless", 1), game("careless", "perfect", 0)]
    lost = value_lost(rules, games)
    assert lost["perfect"] == (0, 0) and lost["careless"] > (0, 0)
    assert verdict("careless", "perfect", rules, games) == "perfect"
    mirrored = [game("a", "b", 2), game("b", "a", 2)]  # both perfect: nothing given away
    assert verdict("a", "b", rules, mirrored) is None


class _Game:
    def __init__(self, first: str, second: str, moves: str, opening_plies: int) -> None:
        self.first, self.second, self.moves, self.opening_plies = first, second, moves, opening_plies


def test_seeding_by_rating_uses_the_database_s_elo_and_is_kept_with_the_tournament(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    prior = _run(["tournament", "run", "--bots", "minimax:depth=2,random", "--games", "8", "--workers", "1",
                  "--db", db, "--name", "before"])
    assert prior.exit_code == 0, prior.output
    listed = ["random", "greedy", "minimax:depth=2", "blocker"]
    args = ["tournament", "run", "--format", "knockout", "--seeding", "rating", "--decider", "coin", "--bots",
            ",".join(listed), "--workers", "1", "--db", db, "--name", "rated"]
    assert _run(args).exit_code == 0
    expected = ["minimax:depth=2", "random", "greedy", "blocker"]  # rated by Elo, then the unrated as listed
    with Store(db) as store:
        tournament = store.tournaments.check("rated")
        assert json.loads(tournament.config)[SEEDING_ORDER] == expected
        bracket = stored_bracket(store, tournament)
        assert bracket is not None and [e.name for e in bracket.entrants] == expected
    # Ratings change (random now beats everyone it meets): the stored seeding stays.
    later = _run(["tournament", "run", "--bots", "random,greedy,blocker,minimax:depth=2", "--games", "2",
                  "--workers", "1", "--db", db, "--name", "after"])
    assert later.exit_code == 0
    with Store(db) as store:
        config = load_config(None, {"name": "rated", "format": "knockout", "seeding": "rating", "decider": "coin",
                                    "bots": listed, "db": db})
        assert seeded(config, store).seeds == tuple(expected)
    assert "0 games played" in _run(args).output


def test_seeding_by_rating_in_an_empty_database_is_the_listed_order(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    config = load_config(None, {"name": "e", "format": "knockout", "seeding": "rating", "decider": "coin",
                                "bots": FIVE[:3], "db": db})
    with Store(db) as store:
        assert seeded(config, store).seeds == tuple(FIVE[:3])


def test_the_decider_defaults_to_the_solver_for_connect_four_only() -> None:
    assert load_config(None, {"format": "knockout", "bots": FIVE}).knockout.decider == "solver"
    small = load_config(None, {"format": "knockout", "bots": FIVE, "rules.width": 5})
    assert small.knockout.decider == "coin"
    assert "knockout" not in load_config(None, {"bots": FIVE}).identity()


@pytest.mark.parametrize(("args", "message"), [
    (["--bots", "random"], "a knockout needs at least two bots, got 1"),
    (["--games", "3"], "games (per match) must be even in a knockout"),
    (["--games", "0"], "games (per pairing) must be at least 1, got 0"),
    (["--extra-pairs", "-1"], "extra_pairs must be 0 or more"),
    (["--challengers", "greedy"], "challengers are for format = \"gauntlet\"; a knockout uses bots only"),
], ids=["one bot", "odd games", "no games", "negative extra pairs", "challengers"])
def test_bad_knockout_settings_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    bots = [] if "--bots" in args else ["--bots", ",".join(FIVE)]
    result = _run(["tournament", "run", "--format", "knockout", *bots, "--db", str(tmp_path / "a.db"), *args])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "a.db").exists()


@pytest.mark.parametrize(("lines", "message"), [
    ('decider = "dice"', "decider must be solver or coin, got 'dice'"),
    ('seeding = "alphabetical"', "seeding must be listed or rating, got 'alphabetical'"),
    ('format = "round-robin"\nextra_pairs = 2', "extra_pairs is for format = \"knockout\""),
], ids=["unknown decider", "unknown seeding", "knockout key elsewhere"])
def test_bad_knockout_files_are_one_line_and_exit_2(tmp_path: Path, lines: str, message: str) -> None:
    definition = tmp_path / "cup.toml"
    head = "" if "format" in lines else 'format = "knockout"\n'
    definition.write_text(f'{head}{lines}\nbots = ["random", "greedy", "blocker"]\n')
    result = _run(["tournament", "run", str(definition), "--db", str(tmp_path / "a.db")])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1
