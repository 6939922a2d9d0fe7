"""The compiled MCTS tree (bots.mcts_fast) against its pure-Python twin: threats,
playouts, whole searches and games, proofs against the solver, the node pool."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from arena.bot import BotOptionError, split_answer
from arena.engine.game import MIN_SIZE, Board, Rules
from bots.mcts import MctsBot, PythonTree, fast_available, kit_for, resolve_backend
from bots.solver import Solver
from tests.test_mcts import random_position

pytestmark = pytest.mark.skipif(not fast_available(), reason="numba is not importable")

C4 = Rules()
FITTING = [C4, Rules(7, 7, 4, gravity=False), Rules(9, 5, 5), Rules(3, 3, 3, gravity=False), Rules(5, 4, 3),
           Rules(4, 4, 4, gravity=False), Rules(16, 3, 3), Rules(3, 20, 3, gravity=False)]  # fmt: skip


@pytest.fixture(scope="module")
def fast():
    """The compiled module, loaded (or compiled) once for the whole file."""
    from bots import mcts_fast

    for rules in (C4, Rules(3, 3, 3, gravity=False)):
        mcts_fast.warm_up(rules)
    return mcts_fast


@st.composite
def fitting_rules(draw: st.DrawFn) -> Rules:
    width = draw(st.integers(MIN_SIZE, 16))
    height = draw(st.integers(MIN_SIZE, 64 // width - 1))
    connect = draw(st.integers(MIN_SIZE, max(width, height)))
    return Rules(width, height, connect, gravity=draw(st.booleans()))


# --- the pieces agree --------------------------------------------------------------------


@given(rules=fitting_rules(), seed=st.integers(0, 2**32))
def test_threats_agree_with_the_generated_python_function(fast, rules, seed):
    """Threat cells of any set of stones (any cells, not only reachable ones), also
    where a line's shifts reach past 64 bits."""
    kit = kit_for(rules)
    st_, cw, _ = fast._rules_words(rules)
    rng = random.Random(seed)
    for _ in range(20):
        stones = rng.getrandbits(64) & kit.full & rng.getrandbits(64)
        assert int(fast.threats(fast.np.uint64(stones), st_, cw)) == kit.threats(stones), (rules, stones)


@given(
    rules=st.sampled_from(FITTING),
    plies=st.integers(0, 40),
    seed=st.integers(0, 2**32),
    state=st.integers(0, 2**64 - 1),
)
def test_playouts_agree_for_the_same_random_state(fast, rules, plies, seed, state):
    """Same position, same generator state: the same result and the same state after."""
    board = random_position(rules, random.Random(seed), plies)
    assume(not board.is_over())
    kit = kit_for(rules)
    me = board.to_move
    a, o = board.stones(me), board.stones(1 - me)
    wa, wo = kit.threats(a), kit.threats(o)
    want, want_state = kit.playout(a, o, wa, wo, state, lambda: 0.0, math.inf)
    st_, cw, _ = fast._rules_words(rules)
    rng = fast.np.array([state], dtype=fast.np.uint64)
    scratch = fast.np.zeros(64, dtype=fast.np.uint64)
    u = fast.np.uint64
    got = fast.playout(u(a), u(o), u(wa), u(wo), st_, cw, rng, scratch)
    assert (got, int(rng[0])) == (want, want_state)


@given(rules=st.sampled_from(FITTING), plies=st.integers(0, 30), seed=st.integers(0, 2**32))
def test_the_two_trees_grow_alike(fast, rules, plies, seed):
    """Same position, same state, same budget: every root move with the same visits,
    value and proof, and the generator left in the same state."""
    board = random_position(rules, random.Random(seed), plies)
    assume(not board.is_over())
    python = PythonTree(rules, 0.8, seed)
    numba = fast.NumbaTree(rules, 0.8, seed)
    python.set_root(board, reuse=False)
    numba.set_root(board, reuse=False)
    assert numba.think(math.inf, 150) == python.think(math.inf, 150)
    assert numba.root_moves() == python.root_moves()
    assert numba.root_visits() == python.root_visits()
    assert numba.state == python.state


def _game(rules: Rules, backend: str, seed: int) -> list[tuple[int, dict]]:
    bots = [MctsBot(playouts=80, backend=backend), MctsBot(playouts=50, c=1.3, backend=backend)]
    for player, bot in enumerate(bots):
        bot.new_game(rules, player, seed + player)
    board = Board(rules)
    moves = []
    while not board.is_over():
        move, info = split_answer(bots[board.to_move].choose_move(board.copy()))
        assert info["backend"] == backend
        del info["backend"]
        moves.append((move, info))
        board.play(move)
    return moves


@pytest.mark.parametrize("rules", [C4, Rules(5, 5, 4, gravity=False), Rules(6, 5, 3)], ids=Rules.describe)
def test_whole_games_are_the_same_on_both_back_ends(fast, rules):
    """Reused trees included: every move and every figure of its info."""
    for seed in (1, 2):
        assert _game(rules, "numba", seed) == _game(rules, "python", seed)


# --- proofs --------------------------------------------------------------------------------


def test_proven_values_agree_with_the_solver(fast):
    """Wherever the compiled tree proves a position or a move of it, the solver agrees
    (a proven win is a win, a proven loss a loss) on many late midgame positions."""
    rng = random.Random(19)
    solver = Solver(C4)
    proofs = 0
    for _ in range(120):
        board = random_position(C4, rng, rng.randrange(16, 34))
        if board.is_over():
            continue
        tree = fast.NumbaTree(C4, 0.8, rng.getrandbits(64))
        tree.set_root(board, reuse=False)
        tree.think(math.inf, 3000)
        root = float(tree.res[tree.root])  # the reward of the side that moved in; -1 unproven
        if root >= 0.0:
            score = solver.solve(board)
            assert score is not None and (score > 0) == (root == 0.0) and (score < 0) == (root == 1.0), board
            proofs += 1
        for move, _, _, result in tree.root_moves():
            if result is None:
                continue
            after = board.copy()
            after.play(move)
            if after.is_over():
                assert (after.winner is not None) == (result == 1.0)
                continue
            score = solver.solve(after)
            assert score is not None
            # result is the mover's reward; the solver scores for the side to move after it
            assert (score < 0) == (result == 1.0) and (score > 0) == (result == 0.0), (board, move)
            proofs += 1
    assert proofs > 30


# --- the node pool ---------------------------------------------------------------------------


def test_keeping_the_root_subtree_changes_nothing_the_search_sees(fast):
    """A pool copied to the root's subtree searches on exactly as the original."""
    board = Board.from_moves("4453", C4)
    kept, copied = fast.NumbaTree(C4, 0.8, 7), fast.NumbaTree(C4, 0.8, 7)
    for tree in (kept, copied):
        tree.set_root(board, reuse=False)
        tree.think(math.inf, 500)
    board.play(pick(kept))
    board.play(2)
    for tree in (kept, copied):
        assert tree.set_root(board, reuse=True)
    before = copied.nodes
    copied.root = copied._make_room(copied.root)
    assert copied.root == 0 and copied.nodes < before  # rows of other branches dropped
    assert copied.root_moves() == kept.root_moves()
    for tree in (kept, copied):
        tree.think(math.inf, 400)
    assert copied.root_moves() == kept.root_moves()


def pick(tree) -> int:
    return max(tree.root_moves(), key=lambda m: m[1])[0]


def test_a_small_pool_grows_then_stops_the_search_when_the_root_fills_it(fast):
    tree = fast.NumbaTree(C4, 0.8, 3, max_nodes=2000)
    assert len(tree.res) == 2000  # never more rows than max_nodes
    board = Board.from_moves("44", C4)
    tree.set_root(board, reuse=False)
    done = tree.think(math.inf, 100_000)
    assert tree.full and 100 < done < 100_000
    assert len(tree.res) == 2000 and tree.nodes <= 2000
    assert sum(m[1] for m in tree.root_moves()) == done  # every iteration ran through a root move
    roomy = fast.NumbaTree(C4, 0.8, 3)
    roomy.set_root(board, reuse=False)
    assert roomy.think(math.inf, 20_000) == 20_000 and not roomy.full
    assert len(roomy.res) > fast.START_NODES or roomy.nodes <= fast.START_NODES


def test_a_pool_doubles_when_its_root_subtree_needs_it(fast):
    tree = fast.NumbaTree(C4, 0.8, 5)
    tree._allocate(256)  # start small to see it grow
    tree.set_root(Board(C4), reuse=False)
    assert tree.think(math.inf, 3000) == 3000
    assert len(tree.res) >= 2048 and not tree.full


# --- the option ----------------------------------------------------------------------------


def test_backend_option(fast):
    big = Rules(8, 8, 4, gravity=False)  # 72 bits
    assert resolve_backend(C4, "auto") == "numba" and resolve_backend(big, "auto") == "python"
    assert resolve_backend(C4, "python") == "python"
    with pytest.raises(BotOptionError, match="64 bits"):
        MctsBot(backend="numba").new_game(big, 0, 1)
    with pytest.raises(BotOptionError):
        MctsBot(backend="gpu")
    for backend, rules, want in (("auto", C4, "numba"), ("python", C4, "python"), ("auto", big, "python")):
        bot = MctsBot(playouts=30, backend=backend)
        bot.new_game(rules, 0, 1)
        assert bot.choose_move(Board(rules)).info["backend"] == want
