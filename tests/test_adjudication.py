"""Adjudication by the solver and balanced openings: a proven result ends a game as
playing it out would, counted alike; off unless asked for; openings proven balanced."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Board, Rules, parse_moves
from arena.engine.openings import OpeningsError, balanced_openings, openings_rng
from arena.engine.solvers import find_solver, prove
from arena.formats.game_files import GameFileError, import_game
from arena.ratings.selection import select
from arena.records import GameSpec, Termination
from arena.referee.adjudication import Adjudicator
from arena.referee.referee import play_game
from arena.store import Store
from arena.tournament.config import ConfigError, load_config, openings_overrides
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import schedule

PONS = Path(__file__).parent / "data" / "pons"
RULES = Rules()
#: The solver bot, by node budget: the same moves whatever the machine's load.
PERFECT = "solver:nodes=2000000"


def pons_positions(name: str, count: int) -> list[tuple[tuple[int, ...], int]]:
    """The first ``count`` positions of one of Pons' sets: (moves, exact score for the side to move)."""
    found = []
    for line in (PONS / name).read_text().splitlines()[:count]:
        moves, score = line.split()
        found.append((tuple(parse_moves(moves, RULES)), int(score)))
    return found


def winner_of(moves: tuple[int, ...], score: int) -> int | None:
    mover = len(moves) % 2
    return None if score == 0 else mover if score > 0 else 1 - mover


@pytest.mark.parametrize(("moves", "score"), pons_positions("Test_L3_R1", 4) + pons_positions("Test_L2_R1", 2))
def test_the_adjudicated_result_is_the_one_perfect_play_reaches(moves, score):
    played = play_game(GameSpec("p", RULES, PERFECT, PERFECT, "p", opening=moves))
    judged = play_game(GameSpec("a", RULES, PERFECT, PERFECT, "a", opening=moves, adjudicate=0))
    assert played.outcome.termination in (Termination.WIN, Termination.DRAW)
    assert judged.outcome.termination == Termination.ADJUDICATED
    assert judged.outcome.winner == played.outcome.winner == winner_of(moves, score)
    assert judged.outcome.result == played.outcome.result
    # Ended where it was proven, the moves so far kept, the proof in the reason.
    assert [m.move for m in judged.moves] == list(moves)
    assert judged.outcome.reason.startswith("solver: ") and f"score {score} " in judged.outcome.reason


def test_a_game_is_adjudicated_only_from_the_stones_asked_for():
    moves, score = pons_positions("Test_L3_R1", 1)[0]
    later = len(moves) + 3
    judged = play_game(GameSpec("a", RULES, PERFECT, PERFECT, "a", opening=moves, adjudicate=later))
    assert judged.outcome.termination == Termination.ADJUDICATED
    assert len(judged.moves) == later
    assert judged.outcome.winner == winner_of(moves, score)
    assert Adjudicator(later).verdict(Board.from_moves(list(moves), RULES)) is None


def test_adjudication_is_deterministic():
    moves, _ = pons_positions("Test_L2_R1", 1)[0]
    spec = GameSpec("a", RULES, "random", "random", "a", opening=moves[:20], seed=7, adjudicate=20)
    first, again = play_game(spec), play_game(spec)
    assert first.outcome == again.outcome
    assert [m.move for m in first.moves] == [m.move for m in again.moves]


def test_without_the_option_no_game_is_adjudicated(tmp_path):
    cfg = load_config(None, {"bots": ["random", "greedy"], "games": 4, "db": str(tmp_path / "a.db"), "workers": 1})
    assert cfg.adjudicate is None and "adjudicate" not in cfg.identity()
    assert all(spec.adjudicate is None for spec in schedule(cfg))
    # From a position the solver proves at once, the game is still played out.
    moves, _ = pons_positions("Test_L3_R1", 1)[0]
    played = play_game(GameSpec("p", RULES, PERFECT, PERFECT, "p", opening=moves))
    assert played.outcome.termination != Termination.ADJUDICATED
    assert Board.from_moves([m.move for m in played.moves], RULES).is_over()


def test_an_adjudicated_tournament_counts_its_games_like_played_ones(tmp_path):
    cfg = load_config(None, {"bots": ["random", "greedy"], "games": 6, "db": str(tmp_path / "a.db"),
                             "workers": 1, "adjudicate": "solver:12", "name": "judged"})
    assert cfg.adjudicate == 12 and cfg.identity()["adjudicate"] == "solver:12"
    with Store(tmp_path / "a.db") as store:
        outcome = run_tournament(cfg, store)
        assert outcome.played == 6
        games = store.games.all(tournament="judged", limit=100)
        judged = [g for g in games if g.termination == Termination.ADJUDICATED]
        assert judged, [g.termination for g in games]
        assert all(g.plies >= 12 and g.result in ("1-0", "0-1", "1/2-1/2") for g in judged)
        chosen = select(store, "judged")
        assert chosen.game_count == 6
        counted = sum(sum(wdl) for wdl in chosen.results().pairs.counts.values())
        assert counted == 6
        points = dict.fromkeys(("random", "greedy"), 0.0)
        for g in games:
            first_points = {"1-0": 1.0, "0-1": 0.0}.get(g.result, 0.5)
            points[g.first] += first_points
            points[g.second] += 1 - first_points
        table = chosen.results().pairs.counts
        assert sum(w + d / 2 for (first, _), (w, d, _l) in table.items() if first == "greedy") + sum(
            l_ + d / 2 for (_, second), (_w, d, l_) in table.items() if second == "greedy") == points["greedy"]
        assert store.results.recount() == store.results.pair_counts()
        assert json.loads(store.tournaments.get("judged").config)["adjudicate"] == "solver:12"
        assert "adjudicated by the solver from 12 stones" in chosen.heading()


def test_a_game_file_says_adjudicated_only_before_the_board_decides():
    doc = {"format": "connectk-game", "version": 1, "moves": "4455", "result": "1-0", "termination": "adjudicated"}
    game = import_game(json.dumps(doc))
    assert game.termination == Termination.ADJUDICATED and game.result == "1-0"
    over = {**doc, "moves": "4545454"}
    with pytest.raises(GameFileError, match="adjudicated"):
        import_game(json.dumps(over))


# --- balanced openings -------------------------------------------------------------


def test_balanced_openings_are_proven_balanced_and_deterministic():
    solver = find_solver(RULES)
    drawn = balanced_openings(RULES, 14, 0, 3, openings_rng("t", 5), solver, nodes=300_000)
    again = balanced_openings(RULES, 14, 0, 3, openings_rng("t", 5), solver, nodes=300_000)
    assert drawn == again and len(drawn) == 3 and len({o.moves for o in drawn}) == 3
    for opening in drawn:
        assert len(opening.moves) == 14 and opening.value == 0
        assert solver.solve(Board.from_moves(list(opening.moves), RULES)) == 0  # no budget: the full search
    wide = balanced_openings(RULES, 15, 3, 3, openings_rng("t", 6), solver, nodes=300_000)
    for opening in wide:
        proof = prove(solver, Board.from_moves(list(opening.moves), RULES), 10**9)
        assert proof is not None and abs(opening.value) <= 3
        assert opening.value == -proof.value  # an odd opening: the second player is to move


class SearchOnly:
    """A solver without its book (whose early positions it would answer at once)."""

    def __init__(self, solver: Any) -> None:
        self.solver = solver

    def solve(self, board: Board, nodes: int | None = None) -> int | None:
        return self.solver.solve(board, nodes=nodes)  # type: ignore[no-any-return]


def test_balanced_openings_give_up_in_one_line_when_none_is_proven():
    with pytest.raises(OpeningsError, match="found only 0 of 1 balanced openings"):
        balanced_openings(RULES, 2, 0, 1, random.Random(1), SearchOnly(find_solver(RULES)), nodes=1)


@pytest.mark.parametrize("text", ["balanced", "balanced:x", "balanced:10:1:2", "balanced:-1", "file:", "ten", "2:3"])
def test_a_bad_openings_spec_is_refused(text):
    with pytest.raises(ConfigError, match="bad --openings"):
        openings_overrides(text)


def test_openings_specs():
    assert openings_overrides("4") == {"openings.plies": 4}
    assert openings_overrides("balanced:10:2") == {"openings.plies": 10, "openings.balanced": True,
                                                   "openings.margin": 2}
    assert openings_overrides("file:lines.txt") == {"openings.file": "lines.txt"}


@pytest.mark.parametrize(("args", "says"), [
    (("tournament", "run", "--bots", "random,greedy", "--openings", "balanced:x"), "bad --openings 'balanced:x'"),
    (("tournament", "run", "--bots", "random,greedy", "--openings", "balanced:10", "--width", "8"),
     "balanced openings are drawn for 7x6 connect 4 only"),
    (("tournament", "run", "--bots", "random,greedy", "--openings", "balanced:10", "--private-seeds"),
     "balanced openings are drawn from the public seed"),
    (("tournament", "run", "--bots", "random,greedy", "--adjudicate", "oracle"), "adjudicate must be solver"),
    (("tournament", "run", "--bots", "random,greedy", "--adjudicate", "solver:x"), "got 'solver:x'"),
    (("tournament", "run", "--bots", "random,greedy", "--adjudicate", "solver", "--scoring", "count"),
     "the solver"),
    (("openings", "--plies", "10", "--out", "suite.txt", "--height", "7"), "7x6 connect 4 only"),
])
def test_bad_specs_are_one_line_and_exit_2(cli, tmp_path, args, says):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0 and says in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "arena.db").exists()


def test_a_suite_written_by_arena_openings_is_played_and_reported_by_opening(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("arena.engine.openings.BALANCED_NODES", 300_000)
    wrote = cli("openings", "--plies", "14", "--count", "2", "--seed", "3", "--out", "suite.txt")
    assert wrote.exit_code == 0, wrote.output
    lines = [line for line in (tmp_path / "suite.txt").read_text().splitlines() if not line.startswith("#")]
    assert len(lines) == 2 and all(line.endswith("# value 0") for line in lines)
    again = cli("openings", "--plies", "14", "--count", "2", "--seed", "3", "--out", "-")
    assert [line for line in again.output.splitlines() if not line.startswith("#")] == lines
    ran = cli("tournament", "run", "--bots", "random,greedy", "--games", "4", "--workers", "1",
              "--openings", "file:suite.txt", "--name", "suite")
    assert ran.exit_code == 0, ran.output
    shown = cli("colours", "--tournament", "suite")
    assert shown.exit_code == 0, shown.output
    for line in lines:
        moves = line.split()[0]
        row = next(r for r in shown.output.splitlines() if r.startswith(moves))
        assert row.split()[1:3] == ["0", "2"], row  # its value, its games
    document = json.loads(cli("colours", "--tournament", "suite", "--format", "json").output)
    assert sorted(o["opening"] for o in document["openings"]) == sorted(line.split()[0] for line in lines)
    assert sum(o["games"] for o in document["openings"]) == 4 and {o["value"] for o in document["openings"]} == {0}


def test_a_tournament_with_balanced_openings_plays_drawn_openings_from_its_seed(tmp_path, monkeypatch):
    monkeypatch.setattr("arena.engine.openings.BALANCED_NODES", 300_000)
    settings = {"bots": ["random", "greedy"], "games": 4, "db": str(tmp_path / "a.db"), "seed": 9,
                **openings_overrides("balanced:14")}
    cfg = load_config(None, settings)
    assert len(cfg.opening_lines) == 2 and cfg.opening_values == (0, 0)
    assert cfg.identity()["openings"]["balanced"] == {"margin": 0}
    assert load_config(None, settings).opening_lines == cfg.opening_lines
    assert {spec.opening for spec in schedule(cfg)} == set(cfg.opening_lines)
    other = load_config(None, {**settings, "seed": 10})
    assert other.opening_lines != cfg.opening_lines
