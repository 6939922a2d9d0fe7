"""`arena export-bot SPEC --kaggle OUT`: a bot as one Kaggle ConnectX main.py.

The exported file is run as Kaggle runs it, in a process of its own started with ``python -I``
from a folder holding only it, where importing the arena, the bots or numba is refused
(tests/kaggle_driver.py), and played through the arena's own ConnectX adapter
(:class:`arena.protocol.connectx.KaggleAgentBot`). tests/test_kaggle_environments.py plays it
in kaggle-environments itself, where that is installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bot import Bot, Limit, split_answer
from arena.engine.game import Board, Rules
from arena.entry.kaggle_submission import SubmissionError, build_submission, export_submission
from arena.protocol import connectx
from arena.protocol.connectx import KaggleAgentBot
from arena.protocol.kaggle_agent import ConnectXPlayer, PositionError, board_of_grid
from arena.records import TimeControl
from bots.random_bot import RandomBot
from tests.test_import_games import one_line_error

DRIVER = Path(__file__).with_name("kaggle_driver.py")
#: The solver with node budgets: the same moves however loaded the machine is.
SOLVER = "solver:nodes=3000,fallback_playouts=200"
#: A second a move, and a bank: Kaggle's configuration for the games below.
CLOCK = TimeControl(1.0, 10.0)


class KaggleProcess:
    """An exported main.py in a process of its own, asked for moves as Kaggle asks."""

    def __init__(self, main: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", str(DRIVER), main.name], cwd=main.parent, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.answers: list[dict[str, Any]] = []

    def __call__(self, observation: Any, configuration: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"observation": observation, "configuration": configuration}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the exported file stopped: {self.process.communicate()[1]}")
        answer = json.loads(line)
        self.answers.append(answer)
        return answer["action"]

    def close(self) -> str:
        """Stop it; what it wrote on stderr."""
        return self.process.communicate(timeout=60)[1]


def exported(tmp_path: Path, spec: str, name: str = "main.py") -> Path:
    folder = tmp_path / spec.split(":")[0].replace(".py", "")
    folder.mkdir(exist_ok=True)
    export_submission(spec, folder / name)
    return folder / name


def play(bots: list[Bot], seed: int = 0, rules: Rules | None = None) -> Board:
    """A game between ``bots`` (first, second), each move checked; the final board."""
    board = Board(rules)
    for side, bot in enumerate(bots):
        if isinstance(bot, KaggleAgentBot):
            bot.time_control = CLOCK
        bot.new_game(board.rules, side, seed + side)
    limit = Limit(CLOCK.move_seconds, CLOCK.bank_seconds)
    while not board.is_over():
        bot = bots[board.to_move]
        answer = bot.choose_move(board.copy(), limit) if isinstance(bot, KaggleAgentBot) else bot.choose_move(
            board.copy())
        board.play_checked(split_answer(answer)[0])
    return board


def test_the_exported_solver_plays_alone_from_its_bundle_with_its_book_and_wins_as_first(tmp_path: Path):
    kaggle = KaggleProcess(exported(tmp_path, SOLVER))
    try:
        for seed in range(2):
            assert play([KaggleAgentBot(kaggle), RandomBot()], seed).winner == 0
        assert play([RandomBot(), KaggleAgentBot(kaggle)], 5).is_over()
    finally:
        errors = kaggle.close()
    answers = kaggle.answers
    assert errors == ""  # no move fell back on a column with room after an error
    assert {a["type"] for a in answers} == {"int"} and {a["agent"] for a in answers} == {"agent"}
    assert not any(a["numba"] for a in answers)
    assert answers[0]["info"]["book"] is True  # the book came in the file
    backends = {a["info"]["backend"] for a in answers if "backend" in a["info"]}
    assert backends == {"python"}


def test_the_exported_minimax_plays_both_sides(tmp_path: Path):
    kaggle = KaggleProcess(exported(tmp_path, "minimax:depth=2"))
    try:
        first = play([KaggleAgentBot(kaggle), RandomBot()], 3)
        second = play([RandomBot(), KaggleAgentBot(kaggle)], 4)
    finally:
        errors = kaggle.close()
    assert first.is_over() and second.is_over() and errors == ""
    assert len(kaggle.answers) == (first.ply + 1) // 2 + second.ply // 2


def test_a_bot_file_goes_to_kaggle_with_the_arena_modules_it_imports(tmp_path: Path):
    bot_file = tmp_path / "centre.py"
    bot_file.write_text(
        "from arena.bot import Bot\n"
        "from bots.lines import winning_moves\n\n"
        "class Centre(Bot):\n"
        "    def choose_move(self, board):\n"
        "        wins = winning_moves(board, board.to_move)\n"
        "        return wins[0] if wins else board.centre_order(board.legal_moves())[0]\n")
    main = tmp_path / "main.py"
    export_submission(str(bot_file), main)
    kaggle = KaggleProcess(main)
    try:
        board = play([RandomBot(), KaggleAgentBot(kaggle)], 1)
    finally:
        errors = kaggle.close()
    assert board.is_over() and errors == ""
    assert "bots.lines" in build_submission(str(bot_file)).modules


def test_the_solver_carries_its_book_compressed_and_minimax_carries_none():
    solver, minimax = build_submission("solver"), build_submission("minimax")
    assert solver.data == ("bots/data/book-7x6-4.bin",) and minimax.data == ()
    book = Path(__file__).parents[1] / "bots" / "data" / "book-7x6-4.bin"
    assert solver.size < book.stat().st_size  # compressed, base64 and every module included
    assert not {"bots.solver_fast", "bots.mcts_fast", "bots.bitboard"} & set(solver.modules)
    assert solver.settings["options"] == {"backend": "python"}


def test_a_tar_gz_holds_main_py_alone(tmp_path: Path):
    written = export_submission("minimax", tmp_path / "submission.tar.gz")
    with tarfile.open(written.path) as archive:
        assert archive.getnames() == ["main.py"]
        member = archive.extractfile("main.py")
        assert member is not None and member.read().decode() == written.submission.text
    assert written.size < written.main_size


def test_export_bot_writes_and_reports_the_size(cli, tmp_path: Path):
    result = cli("export-bot", "minimax:depth=3", "--kaggle", "main.py")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Wrote main.py (") and "KiB" in result.output
    assert "'depth': '3'" in (tmp_path / "main.py").read_text()


def test_export_bot_never_replaces_a_file_without_force(cli, tmp_path: Path):
    (tmp_path / "main.py").write_text("mine\n")
    one_line_error(cli("export-bot", "random", "--kaggle", "main.py"), "exists already: give --force")
    assert (tmp_path / "main.py").read_text() == "mine\n"
    assert cli("export-bot", "random", "--kaggle", "main.py", "--force").exit_code == 0
    assert "def agent(observation, configuration)" in (tmp_path / "main.py").read_text()


@pytest.mark.parametrize(("args", "fragment"), [
    (["random", "--kaggle", "bot.txt"], "give a .py file (main.py) or a .tar.gz archive"),
    (["random", "--kaggle", "missing/main.py"], "its folder does not exist"),
    (["random", "--kaggle", "main.py", "--no-gravity"], "Kaggle's ConnectX has no games without gravity"),
    (["random", "--kaggle", "main.py", "--scoring", "count"], "no count scoring"),
    (["solver:backend=numba", "--kaggle", "main.py"], "backend=numba cannot go to Kaggle"),
    (["minimax:depth=deep", "--kaggle", "main.py"], "must be int"),
    (["nobody", "--kaggle", "main.py"], "unknown bot 'nobody'"),
    (["absent.py", "--kaggle", "main.py"], "does not exist"),
])
def test_export_bot_refuses_in_one_line(cli, tmp_path: Path, args: list[str], fragment: str):
    one_line_error(cli("export-bot", *args), fragment)
    assert not (tmp_path / "main.py").exists()


def test_a_bot_file_needing_more_than_the_standard_library_is_refused(cli, tmp_path: Path):
    (tmp_path / "heavy.py").write_text("import requests\nfrom arena.bot import Bot\n\nclass Heavy(Bot):\n    pass\n")
    one_line_error(cli("export-bot", "heavy.py", "--kaggle", "main.py"),
                   "kaggle_bot imports requests, which is neither Python's standard library nor numpy")
    (tmp_path / "agent.py").write_text("def agent(observation, configuration):\n    return 3\n")
    one_line_error(cli("export-bot", "agent.py", "--kaggle", "main.py"), "is a Kaggle submission as it is")
    (tmp_path / "broken.py").write_text("class Broken(\n")
    one_line_error(cli("export-bot", "broken.py", "--kaggle", "main.py"), "does not parse")


def test_export_refuses_rules_kaggle_has_not():
    with pytest.raises(SubmissionError, match="no games without gravity"):
        build_submission("random", Rules(gravity=False))


# --- the position and the clock ----------------------------------------------------------


@st.composite
def open_games(draw: st.DrawFn) -> Board:
    rules = Rules(draw(st.integers(4, 8)), draw(st.integers(4, 7)), 4)
    board = Board(rules)
    for choice in draw(st.lists(st.integers(0, 100), max_size=rules.cells)):
        moves = [m for m in board.legal_moves() if not board.is_winning_move(m)]
        if not moves:
            break
        board.play(moves[choice % len(moves)])
    return board


@settings(max_examples=60, deadline=None)
@given(open_games())
def test_a_grid_is_rebuilt_as_the_same_position(board: Board):
    rebuilt = board_of_grid(connectx.grid(board), board.rules)
    assert rebuilt.key() == board.key() and rebuilt.ply == board.ply


@pytest.mark.parametrize(("grid", "why"), [
    ([0] * 41, "41 cells"),
    ([0] * 28 + [1] + [0] * 13, "floats"),  # a stone on the second row from the bottom, nothing under it
    ([0] * 35 + [1, 1, 0, 0, 0, 0, 0], "do not alternate"),
    ([0] * 35 + [3, 0, 0, 0, 0, 0, 0], "unknown mark"),
])
def test_a_grid_no_game_reaches_is_refused(grid: list[int], why: str):
    with pytest.raises(PositionError, match=why):
        board_of_grid(grid, Rules())


def test_the_player_keeps_the_true_move_order_from_turn_to_turn():
    player = ConnectXPlayer(RandomBot())
    board = Board()
    configuration = connectx.configuration(board.rules, None)
    opponent = [3, 3, 2, 6, 0]
    for reply in opponent:
        board.play(player(connectx.observation(board), configuration))
        board.play(reply if board.is_legal(reply) else board.legal_moves()[0])
    assert player.board is not None and player.board.history == board.history[:-1]


def test_the_move_time_stays_inside_act_timeout_and_draws_little_on_the_overage():
    player = ConnectXPlayer(RandomBot())
    for act in (0.5, 2, 10):
        limit = player.limit({"remainingOverageTime": 60}, {"actTimeout": act}, 0.0)
        assert limit.time_allowed is not None and limit.time_allowed < act
    spent = player.limit({"remainingOverageTime": 60}, {"actTimeout": 2}, 1.0)
    fresh = player.limit({"remainingOverageTime": 60}, {"actTimeout": 2}, 0.0)
    assert spent.move_seconds is not None and fresh.move_seconds is not None
    assert spent.move_seconds == pytest.approx(fresh.move_seconds - 1.0)
    assert player.limit({"remainingOverageTime": 0}, {"actTimeout": 2}, 0.0).bank_seconds == 0


class Crashing(Bot):
    def choose_move(self, board: Board) -> int:
        raise RuntimeError("lost my way")


def test_a_bot_that_fails_plays_a_column_with_room_and_says_why(capsys: pytest.CaptureFixture[str]):
    board = Board.from_moves("4444")
    answer = ConnectXPlayer(Crashing())(connectx.observation(board), connectx.configuration(board.rules, None))
    assert board.is_legal(answer)
    assert "RuntimeError: lost my way" in capsys.readouterr().err
