"""Behaviour of the built-in bots: targeted positions, then whole games on many rules."""

from __future__ import annotations

import random
from importlib.metadata import entry_points

import pytest

from arena.bot import Bot, BotOptionError, Choice, split_answer
from arena.engine.game import Board, Rules
from bots.blocker import BlockerBot
from bots.greedy import GreedyBot
from bots.lines import landing_bit, lines_for, open_line_length, winning_moves
from bots.minimax import WIN, MinimaxBot, evaluate
from bots.neighbour import NeighbourBot
from bots.random_bot import RandomBot

C4 = Rules()
NO_GRAVITY_8 = Rules(8, 8, 4, gravity=False)
BIG = Rules(15, 15, 5, gravity=False)
ALL_BOTS = [RandomBot, NeighbourBot, GreedyBot, BlockerBot, MinimaxBot]


def answer(bot: Bot, board: Board, seed: int = 0, player: int | None = None) -> int:
    """The move ``bot`` chooses in ``board`` after a fresh new_game(seed)."""
    bot.new_game(board.rules, board.to_move if player is None else player, seed)
    move, _info = split_answer(bot.choose_move(board.copy()))
    assert board.is_legal(move), f"{bot.bot_name()} played illegal {move!r} in {board!r}"
    return move


def answers(bot: Bot, board: Board, seeds: int = 60) -> set[int]:
    return {answer(bot, board, seed) for seed in range(seeds)}


def cells(board: Board, moves: set[int]) -> set[tuple[int, int]]:
    return {board.move_cell(m) for m in moves}


# --- plumbing ------------------------------------------------------------------


def test_entry_points_load_every_bot():
    found = {ep.name: ep.load() for ep in entry_points(group="arena.bots")}
    assert {name: found.get(name) for name in ("random", "neighbour", "greedy", "blocker", "minimax")} == {
        "random": RandomBot,
        "neighbour": NeighbourBot,
        "greedy": GreedyBot,
        "blocker": BlockerBot,
        "minimax": MinimaxBot,
    }
    assert {"solver", "mcts"} <= set(found)  # the stronger bots, tested in their own files
    for cls in ALL_BOTS:
        assert issubclass(cls, Bot)
        assert cls.description() and "\n" not in cls.description()
        assert cls.bot_name() in found


def test_windows_and_dilate():
    lines = lines_for(C4)
    assert len(lines.windows) == 69  # the classic count for 7x6 connect four
    assert lines_for(C4) is lines
    assert len(lines_for(Rules(3, 3, 3, gravity=False)).windows) == 8
    big = lines_for(BIG)
    g = BIG.geometry
    corner = g.cell_bit[0]  # a1
    ball = big.dilate(corner, 2)
    assert ball.bit_count() == 9  # a 3x3 square clipped by the corner
    centre = g.cell_bit[7 * 15 + 7]
    assert big.dilate(centre, 4).bit_count() == 81
    assert big.dilate(g.full, 1) == g.full


# --- random ----------------------------------------------------------------------


def test_random_is_reproducible_and_legal():
    board = Board.from_moves("444444", C4)  # column 4 is full
    bot = RandomBot()
    first = [answer(bot, board, seed) for seed in range(40)]
    again = [answer(bot, board, seed) for seed in range(40)]
    assert first == again
    assert 3 not in first
    assert set(first) == {0, 1, 2, 4, 5, 6}  # uniform enough to reach every column
    # within one game the moves follow the seed too
    bot.new_game(C4, 0, 7)
    seq1 = [bot.choose_move(board) for _ in range(10)]
    bot.new_game(C4, 0, 7)
    assert [bot.choose_move(board) for _ in range(10)] == seq1


def test_random_moves_are_those_of_choice_on_a_generator_seeded_as_random_seeds():
    # The bot seeds and draws inline for speed; its moves must stay those of
    # random.Random(seed).choice (or of the "seed:stream" text), game after game
    # with one bot object, so that a tournament resumed by a later release plays
    # the games the earlier one would have. Boards of 7 moves, of fewer (full
    # columns) and of 25 cells (no gravity) exercise draws of 1 to 5 bits.
    for rules, opening in ((C4, ""), (C4, "444444333333"), (Rules(5, 5, 4, gravity=False), "")):
        for stream in (0, 1, 7):
            bot = RandomBot(stream=stream)
            for seed in (0, 1, 12345, 2**47 + 3):
                bot.new_game(rules, seed % 2, seed)
                reference = random.Random(f"{seed}:{stream}" if stream else seed)
                board = Board.from_moves(opening, rules)
                while not board.is_over():
                    move = bot.choose_move(board)
                    assert move == reference.choice(board.legal_moves()), (rules, stream, seed, board.ply)
                    board.play(move)


def test_random_on_a_finished_board_says_so():
    bot = RandomBot()
    bot.new_game(C4, 0, 1)
    with pytest.raises(IndexError):
        bot.choose_move(Board.from_moves("1212121", C4))  # won: no legal move


def test_random_streams_are_different_players():
    board = Board(C4)

    def moves(stream: int, seed: int) -> list[int]:
        bot = RandomBot(stream=stream)
        bot.new_game(C4, 0, seed)
        return [bot.choose_move(board) for _ in range(20)]

    assert moves(0, 5) == moves(0, 5)
    assert len({tuple(moves(stream, 5)) for stream in range(4)}) == 4
    assert moves(1, 5) != moves(1, 6)


def test_a_bots_rng_is_seeded_by_its_game_when_first_used():
    bot = GreedyBot()
    bot.new_game(C4, 0, 42)
    assert bot.rng.random() == random.Random(42).random()
    bot.new_game(C4, 1, 43)  # a new game: a generator of its seed, not the last one's
    assert bot.rng.random() == random.Random(43).random()
    assert RandomBot().rng.random() == random.Random(0).random()  # before any game


def test_random_without_gravity_picks_empty_cells():
    rules = Rules(3, 3, 3, gravity=False)
    board = Board.from_moves("a1b2a2c1", rules)
    moves = answers(RandomBot(), board)
    assert moves == set(board.legal_moves())


# --- neighbour -------------------------------------------------------------------


def test_neighbour_plays_next_to_the_last_column():
    board = Board.from_moves("4", C4)
    assert answers(NeighbourBot(), board) == {2, 3, 4}
    edge = Board.from_moves("41", C4)  # last move in column 1: only 1 and 2
    assert answers(NeighbourBot(), edge) == {0, 1}


def test_neighbour_skips_full_columns_and_falls_back():
    board = Board.from_moves("4" * 6 + "3", C4)  # column 4 full, last move 3
    assert answers(NeighbourBot(), board) == {1, 2}
    walled = Board.from_moves("354" * 6, C4)  # columns 3, 4, 5 full, last move 4
    assert not walled.is_over() and walled.last_move == 3
    assert answers(NeighbourBot(), walled) == {0, 1, 5, 6}
    empty = Board(C4)
    assert answers(NeighbourBot(), empty) == set(range(7))


def test_neighbour_without_gravity_plays_adjacent_cells():
    board = Board.from_moves("d4", NO_GRAVITY_8)
    got = cells(board, answers(NeighbourBot(), board, 120))
    assert got == {(c, r) for c in (2, 3, 4) for r in (2, 3, 4)} - {(3, 3)}
    corner = Board.from_moves("d4a1", NO_GRAVITY_8)
    assert cells(corner, answers(NeighbourBot(), corner)) == {(0, 1), (1, 0), (1, 1)}
    # every neighbour of the corner taken: anywhere
    boxed = Board.from_moves("a2h8b1h7b2a1", NO_GRAVITY_8)
    assert not boxed.is_over()
    moves = answers(NeighbourBot(), boxed, 100)
    assert len(moves) > 20 and moves <= set(boxed.legal_moves())


# --- greedy ----------------------------------------------------------------------


def test_greedy_takes_a_win():
    board = Board.from_moves("121212", C4)  # X: three in column 1; O threatens column 2
    assert answers(GreedyBot(), board, 20) == {0}
    flat = Board.from_moves("a1h8b1h7c1g8", NO_GRAVITY_8)
    assert cells(flat, answers(GreedyBot(), flat, 20)) == {(3, 0)}


def test_greedy_prefers_three_to_two():
    board = Board.from_moves("1727", C4)  # X on 1 and 2; O stacked on 7
    # columns 3 and 4 both make an open window X X X . / X X . X
    assert answers(GreedyBot(), board) == {2, 3}


def test_greedy_ignores_windows_the_opponent_spoils():
    lines = lines_for(C4)
    board = Board.from_moves("12", C4)  # X at a1, O at b1
    own, opp = board.stones(0), board.stones(1)
    # column 1 on top of X: vertical X X . . is open (2); along row 1 O is in the way
    assert open_line_length(lines, own, opp, landing_bit(board, 0)) == 2
    # column 3: every horizontal window through c1 holding a1 also holds b1 (O)
    assert open_line_length(lines, own, opp, landing_bit(board, 2)) == 1
    # O, to move second, prefers making two of its own
    board = Board.from_moves("125", C4)
    moves = answers(GreedyBot(), board)
    assert moves and all(
        open_line_length(lines, board.stones(1), board.stones(0), landing_bit(board, m)) == 2
        for m in moves
    )


def test_greedy_random_when_nothing_to_build():
    assert answers(GreedyBot(), Board(C4)) == set(range(7))


# --- blocker ---------------------------------------------------------------------


def test_blocker_blocks_an_immediate_threat():
    vertical = Board.from_moves("12121", C4)  # X threatens column 1, O to move
    assert answers(BlockerBot(), vertical, 20) == {0}
    horizontal = Board.from_moves("17273", C4)  # X X X on the bottom row
    assert answers(BlockerBot(), horizontal, 20) == {3}
    # with gravity the threat must be playable now: X X X . on row 2 over an empty d1
    floating = Board.from_moves("1122337", C4)  # X: a1 b1 c1 g1, O: a2 b2 c2; O to move
    assert winning_moves(floating, 0) == [3]  # X's d1 is playable...
    assert winning_moves(floating, 1) == []  # ...O's d2 is not, yet
    assert answers(BlockerBot(), floating, 20) == {3}
    flat = Board.from_moves("a1h8b1h7c1", NO_GRAVITY_8)
    assert cells(flat, answers(BlockerBot(), flat, 20)) == {(3, 0)}


def test_blocker_plays_near_its_own_stones():
    board = Board.from_moves("717", C4)  # O's only stone at a1; X on column 7
    assert answers(BlockerBot(), board) == {0, 1, 2, 3}
    rules = Rules(15, 15, 3, gravity=False)  # distance 2 on a big board
    board = Board.from_moves("a1o15", rules)
    got = cells(board, answers(BlockerBot(), board, 150))
    assert got and all(max(c, r) <= 2 for c, r in got)
    assert len(got) > 4
    empty = Board(C4)
    assert answers(BlockerBot(), empty) == set(range(7))


# --- minimax ---------------------------------------------------------------------


def minimax(board: Board, depth: int = 4) -> Choice:
    bot = MinimaxBot(depth=depth)
    bot.new_game(board.rules, board.to_move, 0)
    choice = bot.choose_move(board.copy())
    assert isinstance(choice, Choice) and board.is_legal(choice.move)
    return choice


def test_minimax_takes_an_immediate_win():
    choice = minimax(Board.from_moves("121212", C4))
    assert choice.move == 0
    assert choice.info["score"] == WIN - 1
    flat = minimax(Board.from_moves("a1h8b1h7c1g8", NO_GRAVITY_8))
    assert flat.move == 3 * 8 + 0


def test_minimax_blocks_an_immediate_loss():
    assert minimax(Board.from_moves("12121", C4)).move == 0
    assert minimax(Board.from_moves("17273", C4)).move == 3
    flat = Board.from_moves("a1h8b1h7c1", NO_GRAVITY_8)
    assert minimax(flat).move == 3 * 8 + 0


def test_minimax_sees_forced_wins_and_losses():
    # X: b1 c1 d1 with a1 and e1 both open; O to move cannot stop both
    doomed = Board.from_moves("27374", C4)
    assert minimax(doomed).info["score"] == -(WIN - 2)  # X wins on its next move
    # one move earlier X, to move, makes that double threat with d1: a win in 3 plies
    choice = minimax(Board.from_moves("2737", C4))
    assert choice.move == 3 and choice.info["score"] == WIN - 3
    # a depth-1 search cannot see it yet, but still scores the open three
    shallow = minimax(Board.from_moves("2737", C4), 1)
    assert 0 < shallow.info["score"] < WIN - 3


def test_minimax_reports_score_depth_nodes_and_respects_depth():
    board = Board.from_moves("4453", C4)
    infos = {}
    for depth in (1, 2, 3, 4, 5):
        info = minimax(board, depth).info
        assert set(info) == {"score", "depth", "nodes"}
        assert info["depth"] == depth
        assert isinstance(info["score"], int) and isinstance(info["nodes"], int)
        infos[depth] = info
    assert infos[1]["nodes"] == 1 + len(board.legal_moves())
    nodes = [infos[d]["nodes"] for d in sorted(infos)]
    assert nodes == sorted(nodes) and nodes[0] < nodes[-1]
    assert MinimaxBot().depth == 4
    assert MinimaxBot(depth="2").depth == 2  # as given on a command line
    with pytest.raises(BotOptionError, match="depth=0 must be at least 1"):  # refused, as its help says
        minimax(board, 0)


def test_minimax_is_deterministic_and_central():
    assert minimax(Board(C4)).move == 3
    board = Board.from_moves("4453", C4)
    assert minimax(board).move == minimax(board).move
    assert minimax(Board(Rules(3, 3, 3, gravity=False))).move == 4  # b2


def test_evaluate_scores_windows():
    assert evaluate(Board(C4), 0) == 0
    board = Board.from_moves("1727", C4)  # X a1 b1, O g1 g2
    assert evaluate(board, 0) == 1  # a1-d1 is the only window with both X and no O
    assert evaluate(board, 1) == 1  # g1-g4 for O
    board = Board.from_moves("17273", C4)  # X a1 b1 c1, O g1 g2
    assert evaluate(board, 0) == 100 + 1  # a1-d1 holds three X, b1-e1 two
    assert evaluate(board, 1) == 1 - 80  # O's g1-g4 against X's three
    won = Board.from_moves("1212121", C4)
    # X: a1-a4 full, a2-a5 three, a3-a6 two; O: b1-b4 three, b2-b5 two
    assert evaluate(won, 0) == 100_000 + 100 + 1 - 80
    assert evaluate(won, 1) == -100_000 + 100 + 1 - 80


def _reference(board: Board, depth: int, ply: int) -> int:
    """Plain negamax without pruning, over Board.play/undo and evaluate().

    Without gravity, like the bot, it only looks at cells next to a stone.
    """
    me = board.to_move
    legal = board.legal_moves()
    if not board.rules.gravity and board.occupied:
        near = lines_for(board.rules).dilate(board.occupied, 1)
        legal = [m for m in legal if landing_bit(board, m) & near]
    if any(board.is_winning_move(m) for m in legal):
        return WIN - (ply + 1)
    if not legal:
        return 0
    if depth == 0:
        return evaluate(board, me)
    best = -WIN - 1
    for move in legal:
        board.play(move)
        best = max(best, -_reference(board, depth - 1, ply + 1))
        board.undo()
    return best


@pytest.mark.parametrize(
    "rules", [C4, Rules(5, 4, 3), Rules(4, 4, 3, gravity=False)], ids=Rules.describe
)
def test_minimax_score_matches_plain_negamax(rules):
    rng = random.Random(3)
    checked = 0
    while checked < 15:
        board = Board(rules)
        for _ in range(rng.randrange(1, 12)):
            board.play(rng.choice(board.legal_moves()))
            if board.is_over():
                break
        if board.is_over():
            continue
        for depth in (1, 3):
            assert minimax(board, depth).info["score"] == _reference(board.copy(), depth, 0)
        checked += 1


# --- whole games -----------------------------------------------------------------

GAME_RULES = [
    (C4, 15),
    (Rules(9, 7, 5), 6),
    (Rules(3, 3, 3, gravity=False), 20),
    (NO_GRAVITY_8, 6),
    (BIG, 2),
    (Rules(40, 3, 3), 2),
]


@pytest.mark.parametrize("rules,games", GAME_RULES, ids=lambda x: x.describe() if isinstance(x, Rules) else str(x))
@pytest.mark.parametrize("cls", ALL_BOTS, ids=lambda c: c.name)
def test_bots_play_legal_moves_to_the_end(cls, rules, games):
    rng = random.Random(f"{cls.name}/{rules.describe()}")
    for game in range(games):
        for side in (0, 1):
            other_cls = ALL_BOTS[(game + side) % len(ALL_BOTS)]
            bots = [cls(), other_cls(depth=2) if other_cls is MinimaxBot else other_cls()]
            if side:
                bots.reverse()
            for player, bot in enumerate(bots):
                bot.new_game(rules, player, rng.randrange(1 << 30))
            board = Board(rules)
            while not board.is_over():
                bot = bots[board.to_move]
                move, info = split_answer(bot.choose_move(board.copy()))
                assert type(move) is int and board.is_legal(move), (bot.name, board)
                assert isinstance(info, dict)
                board.play(move)
            assert board.winner is not None or board.is_draw()



def test_greedy_prefers_the_move_completing_two_windows_under_count_scoring():
    from arena.engine.game import Board, Rules
    from bots.greedy import GreedyBot

    rules = Rules(7, 6, 4, gravity=False, scoring="count")
    board = Board(rules)
    # X holds a1 b1 d1 e1 (c1 completes two fours) and g1 g2 g3 (g4 completes one).
    x_cells = [(0, 0), (1, 0), (3, 0), (4, 0), (6, 0), (6, 1), (6, 2)]
    o_cells = [(0, 5), (2, 5), (4, 5), (6, 5), (1, 3), (3, 3), (5, 3)]
    for (xc, xr), (oc, orow) in zip(x_cells, o_cells):
        board.play(board.cell_move(xc, xr))
        board.play(board.cell_move(oc, orow))
    bot = GreedyBot()
    bot.new_game(rules, 0, 1)
    assert bot.choose_move(board.copy()) == board.cell_move(2, 0)


def test_minimax_plays_count_scoring_to_the_full_board():
    from arena.bot import split_answer
    from arena.engine.game import Board, Rules
    from bots.minimax import MinimaxBot

    rules = Rules(4, 4, 3, scoring="count")
    board = Board(rules)
    bots = [MinimaxBot(depth=3), MinimaxBot(depth=1)]
    for player, bot in enumerate(bots):
        bot.new_game(rules, player, 1)
    while not board.is_over():
        move, info = split_answer(bots[board.to_move].choose_move(board.copy()))
        assert board.is_legal(move) and {"score", "depth", "nodes"} <= set(info)
        board.play(move)
    assert board.is_full()


def test_two_minimax_bots_searching_at_once_count_their_own_nodes():
    """Each search counts its own nodes: bots searching in two threads at once
    report what each reports alone."""
    import threading

    rng = random.Random(3)
    boards = []
    for _ in range(6):
        board = Board()
        for _ in range(6):
            board.play(rng.choice(board.legal_moves()))
        boards.append(board)
    alone = [[MinimaxBot(depth=depth).choose_move(b).info["nodes"] for b in boards] for depth in (4, 5)]
    together: list[list[int]] = [[], []]
    start = threading.Barrier(2)

    def search(i: int, depth: int) -> None:
        bot = MinimaxBot(depth=depth)
        start.wait()
        together[i] = [bot.choose_move(b).info["nodes"] for b in boards]

    threads = [threading.Thread(target=search, args=(i, depth)) for i, depth in enumerate((4, 5))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone
