"""Submitting bots: checks, versions, ConnectX agents, and playing them by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.game import Board, parse_moves
from arena.entry.submissions import SubmissionError, submit_file
from arena.protocol.connectx import observation
from arena.store import Store
from tests.conftest import TEST_BOTS

CONNECTX = TEST_BOTS / "connectx_agent.py"
FIRST = """
from arena.bot import Bot

class First(Bot):
    '''Always the first legal move.'''

    def choose_move(self, board):
        return board.legal_moves()[{index}]
"""


def test_observation_is_kaggle_shaped():
    board = Board.from_moves("4453")  # X: 4, 5 / O: 4 (on top of X), 3
    obs = observation(board)
    assert len(obs.board) == 42 and obs.mark == 1
    bottom = obs.board[35:42]  # Kaggle's last row is the bottom
    assert bottom == [0, 0, 2, 1, 1, 0, 0]
    assert obs.board[28:35] == [0, 0, 0, 2, 0, 0, 0]
    assert obs["mark"] == obs.mark


def test_submit_versions_and_old_games_keep_their_version(cli, write_bot, tmp_path):
    path = write_bot("first", FIRST.format(index=0))
    result = cli("submit", path, "--db", "league.db")
    assert result.exit_code == 0, result.output
    assert "Submitted first@v1 (bot" in result.output
    assert "Unchanged: this code is already first@v1" in cli("submit", path, "--db", "league.db").output
    assert cli("tournament", "run", "--bots", "first,random", "--games", "2", "--name", "one",
               "--db", "league.db", "--workers", "1").exit_code == 0
    Path(path).write_text(FIRST.format(index=-1))
    assert "Submitted first@v2" in cli("submit", path, "--db", "league.db").output
    assert cli("tournament", "run", "--bots", "first,random", "--games", "2", "--name", "two",
               "--db", "league.db", "--workers", "1").exit_code == 0
    store = Store(tmp_path / "league.db")
    games = store.games.all(tournament="one")
    assert {g.first for g in games} | {g.second for g in games} == {"first@v1", "random"}
    assert "first@v2" in {g.first for g in store.games.all(tournament="two")}
    bots = {row["spec"]: row for row in store.db["bots"].rows}
    assert bots["first@v1"]["content_hash"] != bots["first@v2"]["content_hash"]
    assert bots["first@v1"]["source"] == "submitted first@v1"
    # an old version can still be entered explicitly
    result = cli("tournament", "run", "--bots", "first@v1,random", "--games", "2", "--name", "three",
                 "--db", "league.db", "--workers", "1")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "Bad Name"], "bad bot name 'Bad Name'"),
        (["--name", "minimax"], "'minimax' is the name of an installed bot"),
    ],
)
def test_bad_names_are_refused(cli, write_bot, args, message):
    path = write_bot("first", FIRST.format(index=0))
    result = cli("submit", path, "--db", "league.db", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_a_broken_bot_is_not_submitted(cli, write_bot, tmp_path):
    path = write_bot("broken", FIRST.format(index=99))
    result = cli("submit", path, "--db", "league.db")
    assert result.exit_code == 2
    assert "was not submitted: answers on the empty board" in result.output
    assert "not a legal move" in result.output or "IndexError" in result.output
    assert Store(tmp_path / "league.db").submissions.all() == []


def test_check_reports_every_step(cli, write_bot):
    good = cli("check", str(CONNECTX))
    assert good.exit_code == 0
    assert "all checks passed (a connectx)" in good.output
    assert good.output.count("  ok  ") == 7
    bad = cli("check", write_bot("broken", FIRST.format(index=99)))
    assert bad.exit_code == 1
    assert "FAIL" in bad.output and "not ready to submit" in bad.output


def test_a_connectx_agent_plays_unchanged_in_a_tournament(cli, tmp_path):
    assert cli("submit", str(CONNECTX), "--db", "league.db", "--name", "kx").exit_code == 0
    result = cli("tournament", "run", "--bots", "kx,random,greedy", "--games", "10",
                 "--name", "kaggle", "--db", "league.db", "--workers", "2")
    assert result.exit_code == 0, result.output
    store = Store(tmp_path / "league.db")
    games = [g for g in store.games.all(tournament="kaggle") if "kx@v1" in (g.first, g.second)]
    assert len(games) == 20
    assert all(g.termination in ("win", "draw") for g in games)
    wins = sum(1 for g in games if (g.winner == 0) == (g.first == "kx@v1") and g.winner is not None)
    assert wins >= 14  # it wins and blocks; random and greedy do not block


def test_submission_library_refuses_missing_files(tmp_path):
    with pytest.raises(SubmissionError, match="does not exist"):
        submit_file(Store(tmp_path / "x.db"), str(tmp_path / "nope.py"))


TWO_BOTS = """
from arena.bot import Bot


class Leftmost(Bot):
    def choose_move(self, board):
        return board.legal_moves()[0]


class Rightmost(Bot):
    def choose_move(self, board):
        return board.legal_moves()[-1]
"""


def test_one_bot_of_a_file_with_several_is_checked_submitted_and_played(cli, write_bot, tmp_path):
    path = write_bot("pair", TWO_BOTS)
    whole = cli("check", path)
    assert whole.exit_code == 1 and f"pick one with {path}:ClassName" in whole.output
    assert cli("check", f"{path}:Rightmost").exit_code == 0
    refused = cli("submit", path, "--db", "league.db")
    assert refused.exit_code == 2 and "defines several bots" in refused.output
    result = cli("submit", f"{path}:Rightmost", "--db", "league.db")
    assert result.exit_code == 0, result.output
    assert "Submitted rightmost@v1" in result.output
    left = cli("submit", f"{path}:Leftmost", "--db", "league.db", "--name", "lefty")
    assert "Submitted lefty@v1" in left.output
    # the same file under the same name with another class is another version
    assert "Submitted lefty@v2" in cli("submit", f"{path}:Rightmost", "--db", "league.db", "--name", "lefty").output
    run = cli("tournament", "run", "--bots", "rightmost,lefty@v1", "--games", "2", "--name", "pair",
              "--db", "league.db", "--workers", "1")
    assert run.exit_code == 0, run.output
    store = Store(tmp_path / "league.db")
    games = store.games.all(tournament="pair")
    assert len(games) == 2
    for game in games:  # each played its own class: the rightmost or the leftmost column
        assert {game.first, game.second} == {"rightmost@v1", "lefty@v1"}
        board = Board()
        for row in store.games.moves(game.id):
            (move,) = parse_moves(row.move, board.rules)
            if row.ms is not None:
                mover = game.first if board.to_move == 0 else game.second
                legal = board.legal_moves()
                assert move == (legal[-1] if mover == "rightmost@v1" else legal[0])
            board.play(move)


def test_submit_takes_no_options(cli, write_bot):
    path = write_bot("pair", TWO_BOTS)
    result = cli("submit", f"{path}:Leftmost:depth=3", "--db", "league.db")
    assert result.exit_code == 2
    assert "options are given when the bot plays" in result.output


def test_the_checks_refuse_a_bot_that_does_not_answer_in_time(write_bot):
    from arena.entry.checks import check_code
    from arena.records import BotCode

    source = "import time\nfrom arena.bot import Bot\n\n\nclass Sleepy(Bot):\n" \
             "    def choose_move(self, board):\n        time.sleep(30)\n        return board.legal_moves()[0]\n"
    report = check_code(BotCode(label="sleepy.py", text=source), seconds=0.5)
    assert not report.passed and "answers on the empty board" in report.first_failure()
    assert "time" in report.first_failure()


def test_a_bot_file_with_a_byte_order_mark_is_submitted_and_played(cli, tmp_path):
    """Editors on Windows write UTF-8 with a byte-order mark first: the arena reads it as
    Python does, and the mark is no part of the code (nor of its hash)."""
    from arena.players.plugins import file_code, file_identity, parse_spec
    from arena.text import content_hash

    source = FIRST.format(index=0)
    path = tmp_path / "marked.py"
    path.write_bytes(b"\xef\xbb\xbf" + source.encode())
    assert cli("check", str(path)).exit_code == 0
    result = cli("submit", str(path), "--db", "league.db")
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "league.db", read_only=True) as store:
        stored = store.submissions.get("marked")
    assert stored.source == source and stored.content_hash == content_hash(source)
    assert file_code(parse_spec(str(path))).text == source
    assert file_identity(str(path))[1] == content_hash(source)
    played = cli("tournament", "run", "--bots", f"{path},random", "--games", "2", "--name", "file",
                 "--db", "league.db", "--workers", "1")
    assert played.exit_code == 0, played.output
    with Store(tmp_path / "league.db", read_only=True) as store:
        games = store.games.all(tournament="file")
    assert len(games) == 2 and all(g.termination in ("win", "draw") for g in games)
