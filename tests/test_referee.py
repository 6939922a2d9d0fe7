"""The referee: results, forfeits for every kind of bad answer, clocks, info."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena.bot import Bot, BotFailure, Choice
from arena.engine.game import Board, Rules
from arena.records import GameSpec, TimeControl
from arena.referee import referee
from arena.referee.referee import play_game
from arena.store.rows import FinishedGame
from tests.conftest import TEST_BOTS

MISBEHAVING = TEST_BOTS / "hostile.py"


def spec(first: str, second: str, **kwargs) -> GameSpec:
    return GameSpec(key="g", rules=kwargs.pop("rules", Rules()), first=first, second=second, pairing="g", **kwargs)


def bad(name: str) -> str:
    return f"{MISBEHAVING}:{name}"


def test_game_ends_with_a_win_and_records_every_ply():
    record = play_game(spec("minimax", "random", seed=3))
    assert record.termination == "win"
    assert record.winner == 0
    assert record.result == "1-0"
    board = Board.from_moves(record.move_list())
    assert board.winner == 0
    assert [m.ply for m in record.moves] == list(range(record.plies))
    assert all(m.ms is not None and m.ms >= 0 for m in record.moves)
    assert all(set(m.info) == {"score", "depth", "nodes"} for m in record.moves[0::2])


def test_a_full_board_without_a_line_is_a_draw():
    # On 3x3 connect 3 without gravity, two blockers that always block end level.
    rules = Rules(3, 3, 3, gravity=False)
    records = [play_game(spec("minimax", "minimax", rules=rules, seed=s)) for s in range(3)]
    assert all(r.termination == "draw" and r.winner is None for r in records)
    assert all(r.result == "1/2-1/2" and r.plies == 9 for r in records)


def test_opening_plies_are_played_first_and_marked():
    record = play_game(spec("random", "random", opening=(3, 3, 2), seed=1))
    assert record.move_list()[:3] == [3, 3, 2]
    assert [m.ms for m in record.moves[:3]] == [None, None, None]
    assert record.moves[3].ms is not None


@pytest.mark.parametrize(
    ("bot", "reason"),
    [
        ("Raises", 'crashed: RuntimeError: "hostile raise" (hostile.py line 16, in choose_move)'),
        ("ReturnsNone", "not a move: None (NoneType)"),
        ("ReturnsString", "not a move: '4' (str)"),
        ("ReturnsFloat", "not a move: 2.5 (float)"),
        ("ReturnsBool", "not a move: True (bool)"),
        ("IllegalColumn", "illegal move: 99 is out of range 0..6"),
        ("FullColumn", "illegal move: 1, column is full"),
    ],
)
@pytest.mark.parametrize("player", [0, 1])
def test_a_bad_answer_forfeits_the_game_to_the_opponent(bot, reason, player):
    bots = [bad(bot), "random"] if player == 0 else ["random", bad(bot)]
    # Column 1 is full from the opening, so FullColumn's first answer is illegal;
    # random cannot win in its single move before the bad bot answers.
    record = play_game(spec(*bots, seed=5, opening=(0,) * 6))
    loser = bots.index(bad(bot))
    assert record.termination == "forfeit"
    assert record.winner == 1 - loser
    assert record.reason == reason


def test_mutating_its_copy_does_not_touch_the_real_board():
    record = play_game(spec(bad("MutatesBoard"), "random", seed=2))
    assert record.termination in ("win", "draw")
    assert Board.from_moves(record.move_list()).is_over()


def test_overrunning_the_move_limit_loses_on_time():
    clock = TimeControl(move_seconds=0.05)
    record = play_game(spec("random", bad("Slow"), time_control=clock))
    assert record.termination == "forfeit"
    assert record.winner == 0
    assert record.reason.startswith("time: ")


def test_the_bank_absorbs_overruns_until_it_is_spent():
    clock = TimeControl(move_seconds=0.05, bank_seconds=0.4)
    record = play_game(spec("random", bad("Slow"), time_control=clock, seed=1))
    slow_moves = [m for m in record.moves if m.ply % 2 == 1]
    # 0.15 s over per move: the bank covers two moves and the third overruns it
    # (random, moving first, cannot have won by then).
    assert record.termination == "forfeit"
    assert record.winner == 0
    assert 1 <= len(slow_moves) <= 2  # two on a quiet machine; a slow sleep spends the bank sooner


def test_unknown_bot_in_a_spec_forfeits_for_that_side():
    record = play_game(spec("random", "no-such-bot"))
    assert record.termination == "forfeit"
    assert record.winner == 0
    assert "unknown bot 'no-such-bot'" in record.reason


def test_info_that_is_not_json_is_replaced_not_fatal():
    record = play_game(spec(bad("BadInfo"), "random", seed=4))
    assert record.termination in ("win", "draw")
    assert record.moves[0].info == {"error": "info was not JSON-serialisable"}


def test_same_spec_same_game():
    first = play_game(spec("greedy", "blocker", seed=11))
    again = play_game(spec("greedy", "blocker", seed=11))
    other = play_game(spec("greedy", "blocker", seed=12))
    assert first.move_list() == again.move_list()
    assert first.move_list() != other.move_list()


def test_a_bot_file_that_no_longer_imports_forfeits_with_the_reason():
    # Configs refuse such a file up front; a game started anyway still ends cleanly.
    record = play_game(spec("random", str(TEST_BOTS / "missing_import.py"), seed=1))
    assert record.termination == "forfeit" and record.winner == 0
    assert record.reason == "failed to import: ModuleNotFoundError: No module named 'no_such_module_for_sure'"


def test_a_cpu_hog_hits_its_processor_limit():
    from arena.records import Limits

    limits = Limits(cpu_seconds=1)
    record = play_game(spec(bad("BusyLoops"), "random", limits=limits, seed=1))
    assert record.termination == "forfeit" and record.winner == 1
    assert record.reason.startswith(("cpu: used its 1 s of processor time", "time:")), record.reason


class _StartLog(Bot):
    """Notes each step of starting a game in a log shared by both players; can fail at any."""

    def __init__(self, log: list[tuple[str, int]], fails_in: str = "", failure: Exception | None = None) -> None:
        super().__init__()
        self.log = log
        self.fails_in = fails_in
        self.failure = failure or BotFailure("sandbox: could not start the bot process")

    def _step(self, name: str) -> None:
        self.log.append((name, self.player))
        if name == self.fails_in:
            raise self.failure

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        self._step("new_game")

    def begin_game(self, rules: Rules, player: int, seed: int) -> None:
        self.player = player
        self._step("begin_game")
        super().begin_game(rules, player, seed)

    def finish_start(self) -> None:
        self._step("finish_start")
        super().finish_start()

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def test_every_bot_begins_its_game_before_any_bot_is_waited_for():
    # No bot is special: a sandboxed bot starts its process in begin_game, so it
    # gets ready while the other bot (by default, in finish_start) does.
    log: list[tuple[str, int]] = []
    record = play_game(spec("x", "y"), bots=(_StartLog(log), _StartLog(log)))
    assert record.termination == "win"
    assert log == [
        ("begin_game", 0), ("begin_game", 1),
        ("finish_start", 0), ("new_game", 0), ("finish_start", 1), ("new_game", 1),
    ]


@pytest.mark.parametrize("step", ["begin_game", "new_game", "finish_start"])
@pytest.mark.parametrize("player", [0, 1])
def test_a_bot_failure_while_starting_forfeits_with_its_reason(step, player):
    log: list[tuple[str, int]] = []
    bots = [_StartLog(log), _StartLog(log)]
    bots[player] = _StartLog(log, fails_in=step, failure=BotFailure("exited with code 3"))
    record = play_game(spec("x", "y"), bots=(bots[0], bots[1]))
    assert (record.termination, record.winner, record.reason) == ("forfeit", 1 - player, "exited with code 3")
    assert record.moves == []


@pytest.mark.parametrize("step", ["begin_game", "new_game", "finish_start"])
def test_a_crash_while_starting_forfeits_as_a_crash_in_new_game(step):
    log: list[tuple[str, int]] = []
    crashing = _StartLog(log, fails_in=step, failure=RuntimeError("no tables"))
    record = play_game(spec("x", "y"), bots=(_StartLog(log), crashing))
    assert (record.termination, record.winner) == ("forfeit", 0)
    assert record.reason.startswith('crashed in new_game: RuntimeError: "no tables" (test_referee.py line ')
    assert record.reason.endswith(", in _step)")  # the innermost frame in the bot's own code


def test_a_bot_failure_while_moving_forfeits_with_its_reason():
    class Leaves(_StartLog):
        def choose_move(self, board: Board) -> int:
            raise BotFailure("exited: killed by SIGKILL (over its memory limit?)")

    log: list[tuple[str, int]] = []
    record = play_game(spec("x", "y"), bots=(Leaves(log), _StartLog(log)))
    assert (record.termination, record.winner) == ("forfeit", 1)
    assert record.reason == "exited: killed by SIGKILL (over its memory limit?)"


def test_the_referee_does_not_import_the_sandboxed_bot():
    # It treats every bot alike, through the Bot contract alone.
    tree = ast.parse(Path(referee.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "arena.sandbox.proxy" not in imported
    assert "SandboxedBot" not in Path(referee.__file__).read_text()


class _Talker(Bot):
    """Prints every move and reports an info on some: what a record keeps beside the moves."""

    name = "talker"

    def choose_move(self, board: Board) -> int | Choice:
        print("at ply", board.ply)
        move = board.legal_moves()[0]
        return move if board.ply % 3 else Choice(move, {"ply": board.ply})


@pytest.mark.parametrize(("first", "second", "opening"), [
    ("minimax", "random", ()),  # infos on one side's moves
    ("random:stream=1", "random:stream=2", (3, 3, 4)),  # no info, an opening
    (bad("FullColumn"), "random", (2,)),  # a forfeit, after moves
    ("talker", "random", ()),  # a log, infos on some moves
])
def test_a_refereed_game_gives_the_rows_of_its_record(first, second, opening):
    # A tournament's worker stores a game from the referee's columns, without making
    # its GameRecord; both ways give the same rows, the timings included.
    bots = (_Talker(), None) if first == "talker" else None
    game = referee.referee_game(spec(first, second, seed=5, opening=opening), bots)
    record = game.record()
    assert [m.ply for m in record.moves] == list(range(len(game.moves)))
    assert [m.ms for m in record.moves][:len(opening)] == [None] * len(opening)
    rows = FinishedGame.of_refereed(game)
    assert rows == FinishedGame.of(record)
    assert type(rows) is FinishedGame
    if first in ("minimax", "talker"):
        assert rows.move_info is not None and rows.move_info.count(None) < len(rows.move_info)
    if first == "talker":
        assert rows.logs is not None
