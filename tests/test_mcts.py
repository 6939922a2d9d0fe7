"""The MCTS bot: threats, tactics, budgets, reproducibility, tree reuse, whole games."""

from __future__ import annotations

import random
import time

import pytest

from arena.bot import BotOptionError, Choice, split_answer
from arena.engine.game import Board, Rules
from bots.lines import winning_moves
from bots.mcts import MctsBot, kit_for
from bots.random_bot import RandomBot
from tests.conftest import FakeClock

C4 = Rules()
NO_GRAVITY_8 = Rules(8, 8, 4, gravity=False)
TINY = Rules(3, 3, 3, gravity=False)
INFO_KEYS = {"playouts", "visits", "win_rate", "reused", "backend"}


def mcts(board: Board, seed: int = 0, **options) -> Choice:
    """The choice of a fresh MctsBot (small playout budget unless told) in ``board``."""
    options.setdefault("playouts", 200)
    bot = MctsBot(**options)
    bot.new_game(board.rules, board.to_move, seed)
    choice = bot.choose_move(board.copy())
    assert isinstance(choice, Choice) and board.is_legal(choice.move), (choice, board)
    assert set(choice.info) == INFO_KEYS
    return choice


def random_position(rules: Rules, rng: random.Random, plies: int) -> Board:
    board = Board(rules)
    for _ in range(plies):
        if board.is_over():
            break
        board.play(rng.choice(board.legal_moves()))
    return board


# --- threat cells ------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [C4, Rules(9, 7, 5), TINY, NO_GRAVITY_8, Rules(5, 4, 3), Rules(4, 9, 4, gravity=False)],
    ids=Rules.describe,
)
def test_threats_match_winning_moves(rules):
    """The generated threat function agrees with bots.lines on every playable cell."""
    kit = kit_for(rules)
    rng = random.Random(rules.describe())
    for _ in range(60):
        board = random_position(rules, rng, rng.randrange(rules.cells))
        if board.is_over():
            continue
        free = kit.playable(board.occupied)
        for player in (0, 1):
            cells = kit.threats(board.stones(player)) & free
            want = winning_moves(board, player)
            got = sorted(kit.move_of(bit) for bit in _bits(cells))
            assert got == want, (board, player)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


# --- tactics -----------------------------------------------------------------------


def test_takes_an_immediate_win():
    board = Board.from_moves("121212", C4)  # X: three in column 1, O threatens column 2
    choice = mcts(board)
    assert choice.move == 0
    assert choice.info["win_rate"] == 1.0
    flat = Board.from_moves("a1h8b1h7c1g8", NO_GRAVITY_8)
    assert mcts(flat).move == 3 * 8 + 0  # d1


def test_blocks_an_immediate_loss():
    assert mcts(Board.from_moves("12121", C4)).move == 0  # vertical
    assert mcts(Board.from_moves("17273", C4)).move == 3  # X X X on the bottom row
    flat = Board.from_moves("a1h8b1h7c1", NO_GRAVITY_8)
    assert mcts(flat).move == 3 * 8 + 0
    tiny = Board.from_moves("a1b2a2", TINY)  # X a1 a2: O must take a3
    assert mcts(tiny).move == 0 * 3 + 2


def test_does_not_play_under_an_opponent_threat():
    # X: c1 b2 c2 e2, O: a1 b1 e1. X threatens d2 (b2 c2 . e2) over an empty d1,
    # so O (to move) playing d1 would let X in at d2.
    board = Board.from_moves("3225315", C4)
    assert not board.is_over() and board.to_move == 1
    kit = kit_for(C4)
    x = board.stones(0)
    assert kit.threats(x) == kit.cell_bits[3 * 6 + 1]  # d2, X's only threat
    assert kit.threats(board.stones(1)) == 0
    for seed in range(3):
        assert mcts(board, seed).move != 3
    # the tree never even tries d1
    bot = MctsBot(playouts=300)
    bot.new_game(C4, 1, 0)
    bot.choose_move(board.copy())
    assert 3 not in {move for move, *_ in bot._tree.root_moves()}


def test_sees_a_double_threat():
    # X to move: d1 makes X X X with both a1 and e1 open -- a win in 3 plies.
    board = Board.from_moves("2737", C4)
    assert mcts(board, playouts=600).move == 3


# --- budgets and reproducibility ---------------------------------------------------


def test_same_seed_and_playout_budget_give_the_same_moves():
    board = Board.from_moves("4453", C4)
    first = [mcts(board, seed).move for seed in range(4)]
    assert [mcts(board, seed).move for seed in range(4)] == first
    a, b = mcts(board, 5), mcts(board, 5)
    assert a.info == b.info and a.info["playouts"] == 200
    # whole games between two MCTS bots replay exactly
    assert _self_play(C4, 11) == _self_play(C4, 11)


def _self_play(rules: Rules, seed: int) -> list[int]:
    bots = [MctsBot(playouts=60), MctsBot(playouts=90)]
    for player, bot in enumerate(bots):
        bot.new_game(rules, player, seed + player)
    board = Board(rules)
    while not board.is_over():
        move, _ = split_answer(bots[board.to_move].choose_move(board.copy()))
        board.play(move)
    return board.history


def test_respects_time_allowed(monkeypatch):
    # On a clock that moves 1 ms a read, 5 s of search would take 5000 reads.
    clock = FakeClock(step=0.001)
    monkeypatch.setattr(time, "perf_counter", clock)
    bot = MctsBot(seconds=5.0)
    bot.new_game(C4, 0, 1)
    bot.time_allowed = 0.2
    choice = bot.choose_move(Board(C4))
    assert clock.now <= 0.2  # it stops inside the time it was allowed, not the 5 s it was set
    assert choice.info["playouts"] > 10
    # the time limit also caps a playout budget
    clock.now = 0.0
    bot = MctsBot(playouts=10_000_000)
    bot.new_game(C4, 0, 1)
    bot.time_allowed = 0.2
    choice = bot.choose_move(Board(C4))
    assert clock.now <= 0.2
    assert 10 < choice.info["playouts"] < 10_000_000


def test_seconds_budget(monkeypatch):
    clock = FakeClock(step=0.001)
    monkeypatch.setattr(time, "perf_counter", clock)
    bot = MctsBot(seconds=0.15)
    bot.new_game(C4, 0, 1)
    choice = bot.choose_move(Board.from_moves("44", C4))
    assert 0.1 < clock.now <= 0.15 + 0.01  # uses its budget, and no more than one read over it
    assert choice.info["playouts"] > 10


def test_tree_is_reused_after_the_opponent_reply():
    bot = MctsBot(playouts=300)
    bot.new_game(C4, 0, 3)
    board = Board(C4)
    first = bot.choose_move(board.copy())
    assert first.info["reused"] is False and first.info["visits"] == 300
    board.play(first.move)
    board.play(3)
    second = bot.choose_move(board.copy())
    assert second.info["reused"] is True
    assert second.info["playouts"] == 300
    assert second.info["visits"] > 300  # the kept subtree brought visits along
    # a position that does not follow from the last one: a fresh tree
    other = Board.from_moves("1122", C4)
    third = bot.choose_move(other)
    assert third.info["reused"] is False and third.info["visits"] == 300
    # new_game forgets the tree; reuse=false never keeps one
    bot.new_game(C4, 0, 3)
    assert bot.choose_move(Board(C4)).info["reused"] is False
    plain = MctsBot(playouts=100, reuse=False)
    plain.new_game(C4, 0, 3)
    board = Board(C4)
    board.play(plain.choose_move(board.copy()).move)
    board.play(0)
    assert plain.choose_move(board.copy()).info["reused"] is False


# --- options -----------------------------------------------------------------------


def test_options():
    bot = MctsBot()
    assert bot.playouts == 0 and bot.seconds == 1.0 and bot.c > 0 and bot.reuse is True
    assert MctsBot(playouts="50", seconds="0.5", c="1.2").playouts == 50  # command-line strings
    assert MctsBot(seconds=2).seconds == 2.0
    assert MctsBot.bot_name() == "mcts"
    assert MctsBot.description() and "\n" not in MctsBot.description()
    for bad in (
        {"depth": 3},
        {"playouts": "many"},
        {"playouts": 1.5},
        {"seconds": "soon"},
        {"c": "wide"},
        {"reuse": "perhaps"},
        {"playouts": -1},
        {"seconds": 0},
        {"c": -1.0},
    ):
        with pytest.raises(BotOptionError):
            MctsBot(**bad)


# --- whole games -------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules,games",
    [(C4, 2), (Rules(9, 7, 5), 1), (TINY, 6), (NO_GRAVITY_8, 1), (Rules(40, 3, 3), 1)],
    ids=lambda x: x.describe() if isinstance(x, Rules) else str(x),
)
def test_legal_moves_to_the_end_of_games(rules, games):
    rng = random.Random(rules.describe())
    for game in range(games):
        for side in (0, 1):
            bots = [MctsBot(playouts=40), RandomBot() if game % 2 else MctsBot(playouts=25)]
            if side:
                bots.reverse()
            for player, bot in enumerate(bots):
                bot.new_game(rules, player, rng.randrange(1 << 30))
            board = Board(rules)
            while not board.is_over():
                bot = bots[board.to_move]
                move, info = split_answer(bot.choose_move(board.copy()))
                assert type(move) is int and board.is_legal(move), (bot.name, board)
                if isinstance(bot, MctsBot):
                    assert set(info) == INFO_KEYS
                    assert 0.0 <= info["win_rate"] <= 1.0
                board.play(move)
            assert board.winner is not None or board.is_draw()


def test_big_board_stays_in_time(monkeypatch):
    clock = FakeClock(step=0.001)
    monkeypatch.setattr(time, "perf_counter", clock)
    rules = Rules(40, 40, 40, gravity=False)
    bot = MctsBot(seconds=5.0)
    bot.new_game(rules, 1, 0)
    bot.time_allowed = 0.2
    board = Board.from_moves("t20", rules)
    move = bot.choose_move(board.copy()).move
    assert clock.now <= 0.2
    assert board.is_legal(move)


def test_beats_random():
    score = 0.0
    for game in range(6):
        bots = [MctsBot(playouts=100), RandomBot()]
        if game % 2:
            bots.reverse()
        for player, bot in enumerate(bots):
            bot.new_game(C4, player, game)
        board = Board(C4)
        while not board.is_over():
            move, _ = split_answer(bots[board.to_move].choose_move(board.copy()))
            board.play(move)
        me = game % 2
        score += 1.0 if board.winner == me else 0.5 if board.winner is None else 0.0
    assert score >= 5.5


def test_no_time_at_all_still_gives_a_legal_central_move():
    bot = MctsBot()
    bot.new_game(C4, 0, 0)
    bot._deadline = lambda started: started - 1.0  # the budget is gone before the search
    choice = bot.choose_move(Board(C4))
    assert choice.move == 3 and choice.info["playouts"] == 0
    board = Board.from_moves("44", C4)
    assert board.is_legal(bot.choose_move(board.copy()).move)


def test_a_proven_position_is_kept_and_answered_at_once():
    # X to move wins with d1 (a double threat): the solver proves it, and after
    # O's reply the kept subtree already holds the win.
    board = Board.from_moves("2737", C4)
    bot = MctsBot(playouts=3000)
    bot.new_game(C4, 0, 0)
    first = bot.choose_move(board.copy())
    assert first.move == 3 and first.info["win_rate"] == 1.0
    assert first.info["playouts"] < 3000  # stopped once the root was proven
    board.play(3)
    board.play(0)  # O blocks a1; X wins at e1
    second = bot.choose_move(board.copy())
    assert second.move == 4 and second.info["win_rate"] == 1.0



def test_count_scoring_hands_over_to_the_window_counting_minimax():
    rules = Rules(5, 4, 3, scoring="count")
    board = Board(rules)
    bot = MctsBot(playouts=50)
    bot.new_game(rules, 0, 1)
    while not board.is_over():
        answer = bot.choose_move(board.copy())
        assert answer.info["fallback"].startswith("count scoring")
        board.play(answer.move)
    assert board.is_full()
