"""``python -m arena.engine BOT``: any Python bot as a program of the protocol, for
other tools: the handshake, typed options per game, positions checked, prints kept
off stdout, quit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.protocol.messages import Hello, Move, NewGame, Quit, encode
from arena.protocol.program import LocalProgram
from arena.records import BotCode, GameSpec, ProgramFile, TimeControl
from arena.referee.referee import play_game

ROOT = Path(__file__).resolve().parents[1]

BOT = """\
from arena.bot import Bot, Choice, Option

class First(Bot):
    depth = Option(1, "how deep")

    def choose_move(self, board):
        print("thinking at depth", self.depth)
        return Choice(board.legal_moves()[0], {"depth": self.depth})
"""


def run_engine(tmp_path: Path, spec: str, requests: list[object]) -> subprocess.CompletedProcess[bytes]:
    (tmp_path / "mybot.py").write_text(BOT)
    data = b"".join(encode(r) for r in requests)  # type: ignore[arg-type]
    return subprocess.run([sys.executable, "-m", "arena.engine", spec], input=data, cwd=tmp_path,
                          capture_output=True, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def answers(done: subprocess.CompletedProcess[bytes]) -> list[dict[str, object]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_bot_file_answers_the_protocol_with_its_prints_on_stderr(tmp_path: Path) -> None:
    done = run_engine(tmp_path, "mybot.py:depth=2", [
        Hello(), NewGame(Rules(), 0, 1, TimeControl(1.0)), Move((), ), Move((0, 1)),
        NewGame(Rules(width=5, height=4, connect=3, gravity=False), 1, 1, options={"depth": 7}), Move((12,)),
        Quit(), Move(()),
    ])
    assert done.returncode == 0
    hello, ready, first, second, ready_again, third = answers(done)  # nothing after quit
    assert hello["protocol"] == 1 and hello["name"] == "first"
    assert hello["options"] == {"depth": {"type": "int", "default": 1, "help": "how deep"}}
    assert hello["variants"] == [{"width": [3, 40], "height": [3, 40], "connect": [3, 40], "gravity": [True, False],
                                  "scoring": ["line", "count"]}]
    assert ready == ready_again == {"ok": True}
    assert first == {"move": 0, "info": {"depth": 2}}  # the command line's option
    assert second["move"] == 0
    assert third == {"move": 0, "info": {"depth": 7}}  # new_game's option, typed, for that game
    assert done.stderr.decode().splitlines() == ["thinking at depth 2"] * 2 + ["thinking at depth 7"]


@pytest.mark.parametrize(("moves", "why"), [
    ((0,) * 7, "move 7 is not legal"),  # a full column
    ((9,), "move 1 is not legal"),  # off the board
    ((0, 1, 0, 1, 0, 1, 0), "the game is over"),  # won already: no move to make
    ((0, 1, 0, 1, 0, 1, 0, 1), "comes after the game was over"),
])
def test_an_impossible_position_is_answered_with_an_error(tmp_path: Path, moves: tuple[int, ...], why: str) -> None:
    done = run_engine(tmp_path, "mybot.py", [Hello(), NewGame(Rules(), 0, 1), Move(moves), Move(())])
    error, after = answers(done)[2:]
    assert why in str(error["error"]) and error["error"].startswith("impossible position")  # type: ignore[union-attr]
    assert after["move"] == 0  # and it goes on answering


def test_a_bot_that_cannot_be_loaded_says_why_in_its_first_answer(tmp_path: Path) -> None:
    done = run_engine(tmp_path, "mybot.py:Second", [Hello(), Quit()])
    assert done.returncode == 1
    assert answers(done) == [{"error": "bot file 'mybot.py' has no Bot subclass 'Second'; it has: First"}]


def test_an_installed_bot_runs_by_name(tmp_path: Path) -> None:
    done = run_engine(tmp_path, "minimax:depth=1", [Hello(), NewGame(Rules(), 0, 1), Move((3,)), Quit()])
    hello, ready, move = answers(done)
    assert hello["name"] == "minimax" and ready == {"ok": True} and move["info"]["depth"] == 1  # type: ignore[index]


@pytest.mark.parametrize("spec", ["missing.py", "no-such-bot", "minimax:depth"])
def test_a_bot_that_cannot_be_named_is_one_line_and_exit_code_2(tmp_path: Path, spec: str) -> None:
    done = run_engine(tmp_path, spec, [Hello()])
    assert done.returncode == 2 and done.stdout == b""
    assert len(done.stderr.decode().strip().splitlines()) == 1


def test_the_arena_plays_the_client_as_a_program(tmp_path: Path) -> None:
    """The client speaks what the arena's program player expects: a whole game."""
    code = BotCode("engine", program=(sys.executable, "-m", "arena.engine", "mybot.py"),
                   files=(ProgramFile("mybot.py", BOT.encode()),))
    spec = GameSpec("k", Rules(), "engine", "random", "engine-random", seed=5)
    program = LocalProgram(code, {"depth": "3"})
    program.environment = {"PYTHONPATH": str(ROOT)}
    record = play_game(spec, bots=(program, None))
    assert record.termination != "forfeit", record.reason
    assert {move.info["depth"] for move in record.moves[::2]} == {3}  # type: ignore[index]
