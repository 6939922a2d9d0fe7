"""The perfect solver: exact scores on Pons' test sets, agreement with brute force
on small boards, the API's contracts (budgets, no mutation), and the solver bot.

Every search test runs on the pure-Python back end and, when numba is
importable, on the compiled one. The compiled back end checks all 1000 positions
of Test_L3_R1, Test_L2_R1 and Test_L1_R1; the pure one checks all of L3 and L2,
and of L1 every 10th position when numba is there to check them all (all 1000
take pure Python about 25 s; bench/solver.py runs the full sets on both).
"""

from __future__ import annotations

import random
import time
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from arena.bot import Bot, BotOptionError, Choice
from arena.engine.game import Board, Rules
from arena.engine.scores import score_of_win, stones_of_score
from bots.minimax import MinimaxBot
from bots.solver import (
    BACKEND_ENV,
    Solver,
    SolverBot,
    fast_available,
    resolve_backend,
    solve,
    solve_moves,
)
from tests.conftest import FakeClock

PONS = Path(__file__).resolve().parent / "data" / "pons"
C4 = Rules()
BACKENDS = ["python"] + (["numba"] if fast_available() else [])
#: Pure Python checks every ``n``-th position of a set (1: all of them); all of
#: L1 when it is the only back end.
PURE_STRIDE = {"Test_L3_R1": 1, "Test_L2_R1": 1, "Test_L1_R1": 10 if fast_available() else 1}

needs_numba = pytest.mark.skipif(not fast_available(), reason="numba is not importable")


def pons_rows(name: str) -> list[tuple[str, int]]:
    rows = []
    for line in (PONS / name).read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    assert len(rows) == 1000
    return rows


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def solvers():
    """One solver per (rules, back end), shared by the tests of this module."""
    made: dict[tuple[Rules, str], Solver] = {}

    def get(rules: Rules, backend: str) -> Solver:
        if (rules, backend) not in made:
            made[rules, backend] = Solver(rules, backend)
        return made[rules, backend]

    return get


# --- brute force -----------------------------------------------------------------------


def brute(board: Board, memo: dict | None = None) -> int:
    """Exact score by full negamax without pruning (memoised on the position)."""
    memo = {} if memo is None else memo
    key = board.key()
    if key in memo:
        return memo[key]
    legal = board.legal_moves()
    if not legal:
        return 0
    for move in legal:
        if board.is_winning_move(move):
            memo[key] = score_of_win(board.rules, board.ply)
            return memo[key]
    best = None
    for move in legal:
        board.play(move)
        value = -brute(board, memo)
        board.undo()
        if best is None or value > best:
            best = value
    memo[key] = best
    return best


@cache
def brute_of(rules: Rules, history: tuple[int, ...]) -> int:
    """brute() of the position reached by ``history`` (shared by both back ends)."""
    return brute(Board.from_moves(list(history), rules))


def random_position(rules: Rules, rng: random.Random, stones: int) -> Board:
    """A position with ``stones`` random stones and no winner (retries until so)."""
    while True:
        board = Board(rules)
        for _ in range(stones):
            board.play(rng.choice(board.legal_moves()))
            if board.is_over():
                break
        if not board.is_over():
            return board


SMALL = [
    # (rules, stone counts to draw positions from, positions)
    (Rules(4, 4, 3), (0, 10), 40),
    (Rules(5, 4, 4), (6, 14), 30),
    (Rules(3, 3, 3, gravity=False), (0, 6), 40),
    (Rules(4, 4, 3, gravity=False), (7, 13), 30),
    (Rules(3, 3, 3), (0, 6), 20),
    (Rules(5, 3, 3), (3, 11), 30),  # odd number of cells
    (Rules(4, 3, 4), (2, 10), 20),  # only horizontal lines fit
    (Rules(3, 5, 3, gravity=False), (6, 12), 20),  # odd cells, no gravity
]


@pytest.mark.parametrize("rules, stones, count", SMALL, ids=[r.describe() for r, _, _ in SMALL])
def test_agrees_with_brute_force(rules, stones, count, backend, solvers):
    rng = random.Random(f"{rules.describe()} brute")
    solver = solvers(rules, backend)
    for _ in range(count):
        board = random_position(rules, rng, rng.randint(*stones))
        expected = brute_of(rules, tuple(board.history))
        assert solver.solve(board) == expected, board.moves_string()
        # Every move, against brute force on the child.
        moves = solver.solve_moves(board)
        assert set(moves) == set(board.legal_moves())
        for move, value in moves.items():
            child = board.copy()
            child.play(move)
            if child.winner is not None:
                want = score_of_win(rules, board.ply)
            else:
                want = -brute_of(rules, tuple(child.history))
            assert value == want, (board.moves_string(), move)
        assert max(moves.values()) == expected


def test_empty_small_boards(backend, solvers):
    # Whole games: 4x4 connect 3 is a first-player win, tic-tac-toe a draw.
    for rules in (Rules(4, 4, 3), Rules(3, 3, 3, gravity=False), Rules(3, 3, 3)):
        board = Board(rules)
        assert solvers(rules, backend).solve(board) == brute(board.copy()), rules.describe()
    assert solvers(Rules(3, 3, 3, gravity=False), backend).solve(Board(Rules(3, 3, 3, gravity=False))) == 0


@needs_numba
@pytest.mark.parametrize(
    "rules, stones",
    [
        (Rules(6, 5, 4), 14),
        (Rules(5, 5, 4, gravity=False), 14),
        (Rules(7, 6, 5), 24),
        (Rules(8, 7, 4), 40),  # 64 bits exactly
        (Rules(3, 20, 4), 40),  # shifts past 64 bits: the generic line code
        (Rules(4, 15, 5, gravity=False), 50),
    ],
    ids=lambda x: x.describe() if isinstance(x, Rules) else str(x),
)
def test_backends_agree_on_bigger_boards(rules, stones):
    rng = random.Random(f"{rules.describe()} agree")
    pure, fast = Solver(rules, "python"), Solver(rules, "numba")
    for _ in range(6):
        board = random_position(rules, rng, stones)
        assert pure.solve(board) == fast.solve(board), board.moves_string()


# --- Pons' test sets -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["Test_L3_R1", "Test_L2_R1", "Test_L1_R1"])
def test_pons_positions(name, backend, solvers):
    rows = pons_rows(name)
    if backend == "python":
        rows = rows[:: PURE_STRIDE[name]]
    solver = solvers(C4, backend)
    wrong = []
    for moves, expected in rows:
        solver.reset()  # each position on its own, as in the benchmark
        value = solver.solve(Board.from_moves(moves))
        if value != expected:
            wrong.append(f"{moves}: expected {expected}, got {value}")
    assert not wrong, f"{len(wrong)} wrong of {len(rows)}: " + "; ".join(wrong[:5])


def test_pons_positions_with_a_shared_table(backend):
    # Entries of earlier searches are bounds that stay true: keeping the table helps, never misleads.
    solver = Solver(C4, backend)
    rows = pons_rows("Test_L2_R1")[:150] + pons_rows("Test_L1_R1")[:8]
    for moves, expected in rows:
        assert solver.solve(Board.from_moves(moves)) == expected, moves


def test_solve_moves_on_pons_positions(backend, solvers):
    solver = solvers(C4, backend)
    for moves, expected in pons_rows("Test_L3_R1")[:25] + pons_rows("Test_L2_R1")[:5]:
        board = Board.from_moves(moves)
        values = solver.solve_moves(board)
        assert max(values.values()) == expected, moves
        for move, value in values.items():
            child = board.copy()
            child.play(move)
            assert value == -solver.solve(child) or child.winner is not None, (moves, move)


def test_best_move_keeps_the_value(backend, solvers):
    solver = solvers(C4, backend)
    for moves, expected in pons_rows("Test_L3_R1")[100:140]:
        board = Board.from_moves(moves)
        move, value = solver.best_move(board)
        assert value == expected
        assert solver.solve_moves(board)[move] == expected, moves


# --- scores ------------------------------------------------------------------------------


def test_score_convention():
    assert score_of_win(C4, 0) == 21  # the first stone wins: 22 - 1
    assert score_of_win(C4, 6) == 22 - 4  # the first player's fourth stone
    assert score_of_win(C4, 7) == 22 - 4  # the second player's fourth stone
    assert score_of_win(C4, 41) == 1  # the very last stone
    nine = Rules(3, 3, 3, gravity=False)
    assert score_of_win(nine, 8) == 1  # the first player's fifth and last stone
    assert score_of_win(nine, 4) == 3
    assert stones_of_score(C4, 18) == 4 and stones_of_score(C4, -18) == 4
    assert stones_of_score(C4, 0) is None
    # Immediate wins as the data scores them: 22 - the winner's stone count.
    board = Board.from_moves("121212")
    assert solve(board, backend="python") == 22 - 4


def test_finished_games(backend):
    won = Board.from_moves("1212121")  # the first player has four in column 1
    assert won.winner == 0
    assert Solver(C4, backend).solve(won) == -score_of_win(C4, won.ply - 1) == -18
    rules = Rules(3, 3, 3, gravity=False)
    rng = random.Random(3)
    while True:
        board = Board(rules)
        while not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        if board.is_draw():
            break
    assert Solver(rules, backend).solve(board) == 0


# --- budgets and purity ---------------------------------------------------------------


def test_deadline_and_node_budget_return_none(backend):
    solver = Solver(C4, backend)
    board = Board.from_moves("44")  # far from solvable in a blink
    before = (board.key(), board.history, board.winner)
    assert solver.solve(board, deadline=time.monotonic() - 1) is None
    assert solver.solve(board, nodes=500) is None
    assert solver.nodes <= 501
    values = solver.solve_moves(board, deadline=time.monotonic() + 0.02)
    assert set(values) == set(range(7)) and set(values.values()) == {None}
    assert solver.best_move(board, nodes=100) is None
    assert (board.key(), board.history, board.winner) == before
    # An interrupted search leaves the table sound.
    hard, expected = Board.from_moves("32164625"), 11  # the first line of Test_L1_R1
    assert solver.solve(hard, nodes=50) is None
    assert solver.solve(hard) == expected


def test_a_deadline_stops_the_search_on_the_solvers_clock(backend, monkeypatch):
    # The clock moves 10 ms a read: a search that reads it stops within a few
    # looks; one that ignored the deadline would run into the node budget.
    clock = FakeClock(step=0.01)
    monkeypatch.setattr(time, "monotonic", clock)
    solver = Solver(C4, backend)
    budget = 3_000_000
    assert solver.solve(Board.from_moves("44"), deadline=clock.now + 0.05, nodes=budget) is None
    assert solver.nodes < budget // 10


def test_solve_does_not_touch_the_board(backend):
    board = Board.from_moves("4453")
    snapshot = (board.key(), board.history, board.ply)
    solve(board, nodes=2000, backend=backend)
    solve_moves(board, nodes=2000, backend=backend)
    assert (board.key(), board.history, board.ply) == snapshot


def test_backend_choice(monkeypatch):
    assert resolve_backend(C4, "python") == "python"
    monkeypatch.setenv(BACKEND_ENV, "python")
    assert resolve_backend(C4) == "python"
    assert Solver(C4).backend == "python"
    monkeypatch.setenv(BACKEND_ENV, "auto")
    assert resolve_backend(C4) == ("numba" if fast_available() else "python")
    big = Rules(15, 15, 5, gravity=False)
    assert resolve_backend(big) == "python"  # 240 bits: beyond the compiled back end
    with pytest.raises(ValueError, match="64 bits|not importable"):
        resolve_backend(big, "numba")
    with pytest.raises(ValueError, match="unknown solver backend"):
        resolve_backend(C4, "fortran")


# --- the bot ----------------------------------------------------------------------------


def test_bot_plumbing():
    found = {ep.name: ep for ep in entry_points(group="arena.bots")}
    if "solver" in found:  # the installed metadata may predate the entry point
        assert found["solver"].load() is SolverBot
    assert issubclass(SolverBot, Bot)
    assert SolverBot.bot_name() == "solver"
    assert SolverBot.description() and "\n" not in SolverBot.description()
    assert SolverBot().fallback_depth == 4
    with pytest.raises(BotOptionError):
        SolverBot(fallback_depth=0)
    with pytest.raises(BotOptionError):
        SolverBot(backend="fortran")
    with pytest.raises(BotOptionError):
        SolverBot(seconds=-1.0)


def ask(bot: SolverBot, board: Board) -> Choice:
    bot.new_game(board.rules, board.to_move, 0)
    choice = bot.choose_move(board.copy())
    assert isinstance(choice, Choice) and board.is_legal(choice.move)
    return choice


def test_bot_plays_the_proven_value(backend, solvers):
    bot = SolverBot(backend=backend, seconds=5.0)
    solver = solvers(C4, backend)
    for moves, expected in pons_rows("Test_L3_R1")[:15] + pons_rows("Test_L2_R1")[:5]:
        board = Board.from_moves(moves)
        choice = ask(bot, board)
        assert choice.info["solved"] is True
        assert choice.info["score"] == expected
        assert set(choice.info) >= {"score", "solved", "nodes", "depth"}
        assert solver.solve_moves(board)[choice.move] == expected, moves


def test_bot_never_lets_a_won_position_go(backend):
    """From proven wins, the bot wins against minimax, and against itself it
    wins exactly when the score says (the quickest win against the slowest loss)."""
    rows = [r for r in pons_rows("Test_L3_R1")[:60] + pons_rows("Test_L2_R1")[:6] if r[1] > 0][:8]
    for moves, score in rows:
        start = Board.from_moves(moves)
        winner_side = start.to_move
        for opponent in (MinimaxBot(depth=2), SolverBot(backend=backend, seconds=5.0)):
            me = SolverBot(backend=backend, seconds=5.0)
            board = start.copy()
            players = {winner_side: me, 1 - winner_side: opponent}
            for side, bot in players.items():
                bot.new_game(C4, side, 1)
            while not board.is_over():
                answer = players[board.to_move].choose_move(board.copy())
                board.play(answer.move if isinstance(answer, Choice) else answer)
            assert board.winner == winner_side, (moves, opponent.bot_name(), board.moves_string())
            if isinstance(opponent, SolverBot):
                stones = (board.ply + 1) // 2 if winner_side == 0 else board.ply // 2
                assert stones == stones_of_score(C4, score), (moves, board.moves_string())


def test_bot_solves_small_games_from_the_start(backend):
    rules = Rules(4, 4, 3)
    value = brute(Board(rules))
    bots = (SolverBot(backend=backend), SolverBot(backend=backend))
    board = Board(rules)
    for side, bot in enumerate(bots):
        bot.new_game(rules, side, side)
    while not board.is_over():
        choice = bots[board.to_move].choose_move(board.copy())
        assert choice.info["solved"] is True
        board.play(choice.move)
    assert value > 0 and board.winner == 0
    assert (board.ply + 1) // 2 == stones_of_score(rules, value)


def test_bot_falls_back_to_minimax_when_out_of_time(backend):
    # Without its book: "4" is one of the book's positions.
    bot = SolverBot(backend=backend, seconds=0.05, fallback="minimax", fallback_depth=3, book=False)
    board = Board.from_moves("4")
    choice = ask(bot, board)
    info = choice.info
    assert info["solved"] is False
    assert info["depth"] == 3
    assert "minimax" in info["fallback"]
    assert isinstance(info["score"], int) and info["nodes"] > 0


def test_bot_falls_back_to_mcts_by_default(backend):
    """Out of time, MCTS plays: for the time left by the clock, or for its playouts
    with a node budget (the same move and info on every run)."""
    board = Board.from_moves("4")
    timed = ask(SolverBot(backend=backend, seconds=0.1, book=False), board)
    assert timed.info["solved"] is False
    assert timed.info["fallback"].startswith("mcts ") and timed.info["playouts"] > 0
    assert 0.0 <= timed.info["win_rate"] <= 1.0
    runs = [ask(SolverBot(backend=backend, nodes=2000, fallback_playouts=300, book=False), board) for _ in range(2)]
    assert runs[0].info["playouts"] == 300
    assert runs[0].move == runs[1].move and runs[0].info == runs[1].info
    with pytest.raises(BotOptionError, match="fallback='alphazero'"):
        SolverBot(fallback="alphazero")
    with pytest.raises(BotOptionError, match="fallback_playouts=0"):
        SolverBot(fallback_playouts=0)


def test_bot_with_a_node_budget_plays_the_same_move_whatever_the_clock(backend):
    """nodes=N searches N nodes, never the clock: the same move, info and fallback
    on any machine (a slow clock-bound search would stop elsewhere)."""
    with pytest.raises(BotOptionError, match="nodes=-1"):
        SolverBot(nodes=-1)
    board = Board.from_moves("4")
    choices = []
    for _ in range(2):
        bot = SolverBot(backend=backend, nodes=2000, fallback="minimax", fallback_depth=3, book=False)
        bot.time_allowed = 1e-9  # ignored when a node budget is set
        choices.append(ask(bot, board))
    assert choices[0].move == choices[1].move and choices[0].info == choices[1].info
    info = choices[0].info
    assert info["solved"] is False and info["fallback"] == "minimax depth 3: not solved in 2000 nodes"
    solved = ask(SolverBot(backend=backend, nodes=10**7), Board.from_moves("4455"  "4455" "33"))
    assert solved.info["solved"] is True


def test_bot_uses_time_allowed():
    bot = SolverBot(book=False)
    bot.new_game(C4, 1, 0)
    bot.time_allowed = 0.05
    assert bot.budget() == 0.05
    choice = bot.choose_move(Board.from_moves("4"))
    assert choice.info["solved"] is False
    bot.time_allowed = None
    assert bot.budget() == 1.0
    assert SolverBot(seconds=2.5).budget() == 2.5


def test_bot_on_boards_beyond_the_compiled_back_end():
    rules = Rules(9, 9, 4, gravity=False)  # 90 bits: pure Python, never solved in time
    bot = SolverBot(seconds=0.1, fallback_depth=2)
    board = Board.from_moves("e5", rules)
    choice = ask(bot, board)
    assert choice.info["solved"] is False and choice.info["backend"] == "python"


def test_count_scoring_is_not_solved_but_played():
    try:
        rules = Rules(5, 4, 3, scoring="count")
    except TypeError:
        pytest.skip("this arena has no count scoring")
    with pytest.raises(ValueError, match="line scoring"):
        Solver(rules)
    choice = ask(SolverBot(fallback_depth=2), Board.from_moves("3", rules))
    assert choice.info["solved"] is False and "line scoring" in choice.info["fallback"]


def test_deep_searches_fit_the_recursion_limit_without_changing_it(monkeypatch):
    # A search dives one frame per stone to come: past 1000 here, Python's default
    # limit. The limit was raised once, when the first search core was made; a
    # search must not touch it (another thread may be deep in a search of its own).
    import sys

    rules = Rules(32, 32, 32)
    solver = Solver(rules, "python")
    calls = []
    monkeypatch.setattr(sys, "setrecursionlimit", calls.append)
    assert solver.solve(Board(rules), nodes=rules.cells + 50) is None  # out of nodes, not of stack
    assert solver.nodes > rules.cells  # it dived to the last stone
    assert calls == []


def test_two_solver_bots_searching_at_once_count_their_own_nodes(backend):
    """Each bot has its own solver: a search in another thread (or by the other
    bot) never adds to its node count nor fills its table."""
    import threading

    positions = open_positions(Rules(6, 5, 4), count=6, plies=8)

    def counts(bot: SolverBot, boards: list[Board]) -> list[int]:
        return [ask(bot, board).info["nodes"] for board in boards]

    alone = [counts(SolverBot(backend=backend, seconds=30.0), positions[i::2]) for i in (0, 1)]
    together: list[list[int]] = [[], []]
    start = threading.Barrier(2)

    def play(i: int) -> None:
        bot = SolverBot(backend=backend, seconds=30.0)
        start.wait()
        together[i] = counts(bot, positions[i::2])

    threads = [threading.Thread(target=play, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone


def open_positions(rules: Rules, count: int, plies: int) -> list[Board]:
    """``count`` games still open after ``plies`` random moves (always the same ones)."""
    rng = random.Random(7)
    boards: list[Board] = []
    while len(boards) < count:
        board = Board(rules)
        for _ in range(plies):
            board.play(rng.choice(board.legal_moves()))
            if board.is_over():
                break
        if not board.is_over():
            boards.append(board)
    return boards


def test_listing_the_solver_plug_in_leaves_the_recursion_limit_alone():
    import subprocess
    import sys

    probe = "import sys; before = sys.getrecursionlimit(); import bots.solver; print(before == sys.getrecursionlimit())"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "True\n"
