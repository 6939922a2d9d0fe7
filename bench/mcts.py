"""Speed and strength of the MCTS bot beside OpenSpiel's MCTS, on 7x6 connect 4.

Speed (the default): iterations per second on fixed midgame positions (``--positions``,
50 by default: 10 to 20 random plies from ``--seed``, the game still open and no
immediate win for the side to move). Each position is searched, in turn and in the
same run, by our compiled tree (``NumbaTree``), our pure-Python tree
(``PythonTree``), OpenSpiel's C++ MCTS (``pyspiel.MCTSBot``: UCT, c = 2, one random
rollout per leaf, solving on) and OpenSpiel's Python MCTS
(``open_spiel.python.algorithms.mcts``, the same settings), each with a fixed number
of iterations (``--iterations``, scaled down for the Python searches). A search may
stop early when it proves its root: the iterations counted are those it ran (the
root's visit count in OpenSpiel; "proven" counts the roots proven). The figures are totals over the pass with the
least CPU time of ``--repeat`` passes: process CPU time (every search is
single-threaded) and wall-clock time, and the ratio of each to OpenSpiel's C++ MCTS.

Strength (``--match N``): N games between the mcts bot and OpenSpiel's C++ MCTS, each
thinking ``--move-seconds`` (0.1) per move: ours through its ``seconds`` option, or,
with ``--referee``, through the referee's ``time_allowed`` (the bot then uses 80% of
it less 50 ms); OpenSpiel through its own time limit (``max_wall_clock_time``, its
simulation budget unbounded). Each 2-ply random opening is played twice, each side
taking each colour. Prints wins-draws-losses, the score and its 95% interval.

Run: python bench/mcts.py [--positions 50] [--iterations 20000] [--repeat 3] [--seed 19]
     python bench/mcts.py --match 100 [--move-seconds 0.1] [--referee]

OpenSpiel is needed for its columns (``pip install -r bench/requirements.txt``); it is
never a dependency of the arena.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from arena.engine.game import Board, Rules
from arena.engine.openings import random_openings
from bots.lines import winning_moves
from bots.mcts import MctsBot, PythonTree, fast_available

RULES = Rules()  # 7x6 connect 4: OpenSpiel's connect_four
UCT_C_OPENSPIEL = 2.0
#: The Python searches get this share of --iterations (they are some 20x slower).
PYTHON_SHARE = 0.05


def load_openspiel() -> Any:
    try:
        import pyspiel
    except ImportError:
        print(
            "OpenSpiel is not installed; install the benchmarks' peers with\n"
            "  .venv/bin/pip install -r bench/requirements.txt",
            file=sys.stderr,
        )
        return None
    return pyspiel


def midgame_positions(count: int, seed: int) -> list[Board]:
    """``count`` positions of 10 to 20 random plies, open, with no immediate win for
    the side to move (the same ones for the same seed)."""
    rng = random.Random(seed)
    boards: list[Board] = []
    while len(boards) < count:
        board = Board(RULES)
        for _ in range(rng.randint(10, 20)):
            if board.is_over():
                break
            board.play(rng.choice(board.legal_moves()))
        if not board.is_over() and not winning_moves(board, board.to_move):
            boards.append(board)
    return boards


def spiel_state(pyspiel: Any, board: Board) -> Any:
    state = pyspiel.load_game("connect_four").new_initial_state()
    for move in board.history:
        state.apply_action(move)
    return state


# --- speed ---------------------------------------------------------------------------

#: A searcher: runs a search of the position with an iteration budget, returns the
#: iterations it ran and whether it proved the root's value.
Searcher = Callable[[Board, int], tuple[int, bool]]


def our_searcher(backend: str) -> Searcher:
    def search(board: Board, iterations: int) -> tuple[int, bool]:
        if backend == "numba":
            from bots.mcts_fast import NumbaTree

            tree: Any = NumbaTree(RULES, MctsBot.c.default, 1)
        else:
            tree = PythonTree(RULES, MctsBot.c.default, 1)
        tree.set_root(board, reuse=False)
        done = int(tree.think(math.inf, iterations))
        return done, done < iterations

    return search


def openspiel_cpp_searcher(pyspiel: Any) -> Searcher:
    game = pyspiel.load_game("connect_four")

    def search(board: Board, iterations: int) -> tuple[int, bool]:
        bot = pyspiel.MCTSBot(
            game, pyspiel.RandomRolloutEvaluator(1, 1), UCT_C_OPENSPIEL, iterations, 1000, True, 1, False
        )
        root = bot.mcts_search(spiel_state(pyspiel, board))
        return int(root.explore_count), root.outcome is not None and len(root.outcome) > 0

    return search


def openspiel_python_searcher(pyspiel: Any) -> Searcher:
    import numpy as np
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")

    def search(board: Board, iterations: int) -> tuple[int, bool]:
        rng = np.random.RandomState(1)
        evaluator = mcts.RandomRolloutEvaluator(1, rng)
        bot = mcts.MCTSBot(game, UCT_C_OPENSPIEL, iterations, evaluator, solve=True, random_state=rng)
        root = bot.mcts_search(spiel_state(pyspiel, board))
        return int(root.explore_count), root.outcome is not None

    return search


def print_table(title: str, best: dict[str, list[tuple[float, float, int, bool]]], which: Sequence[int]) -> None:
    """Iterations per second of each search over the positions ``which``, and the
    ratios to OpenSpiel's C++ MCTS."""
    totals = {
        name: (sum(run[i][0] for i in which), sum(run[i][1] for i in which),
               sum(run[i][2] for i in which), sum(run[i][3] for i in which))
        for name, run in best.items()
    }  # fmt: skip
    peer = totals.get("OpenSpiel C++ MCTS")
    header = f"{title + ':':<32}{'proven':>7}{'iterations':>12}{'it/s cpu':>12}{'it/s wall':>12}"
    header += f"{'x C++ cpu':>11}{'x C++ wall':>11}"
    print(header)
    print("-" * len(header))
    for name, (cpu, wall, done, proven) in totals.items():
        if not done:
            continue
        rate_cpu, rate_wall = done / cpu, done / wall
        ratios = ""
        if peer is not None and peer[2]:
            ratios = f"{rate_cpu / (peer[2] / peer[0]):>11.2f}{rate_wall / (peer[2] / peer[1]):>11.2f}"
        print(f"{name:<32}{proven:>7}{done:>12}{rate_cpu:>12,.0f}{rate_wall:>12,.0f}{ratios}")


def speed(args: argparse.Namespace, pyspiel: Any) -> int:
    boards = midgame_positions(args.positions, args.seed)
    python_iterations = max(1, int(args.iterations * PYTHON_SHARE))
    # (name, searcher, iterations per position)
    entries: list[tuple[str, Searcher, int]] = []
    if fast_available():
        from bots.mcts_fast import warm_up

        warm_up(RULES)  # compiled (or loaded from the cache) before any clock runs
        entries.append(("ours, numba", our_searcher("numba"), args.iterations))
    else:
        print("numba is not importable: no compiled column", file=sys.stderr)
    entries.append(("ours, python", our_searcher("python"), python_iterations))
    if pyspiel is not None:
        entries.append(("OpenSpiel C++ MCTS", openspiel_cpp_searcher(pyspiel), args.iterations))
        if not args.no_openspiel_python:
            entries.append(("OpenSpiel Python MCTS", openspiel_python_searcher(pyspiel), python_iterations))
    print(
        f"{len(boards)} positions of 10-20 random plies (seed {args.seed}), 7x6 connect 4; "
        f"best of {args.repeat} passes by CPU time"
    )
    # name -> per position (cpu, wall, iterations, proven), of the pass with the least CPU time
    best: dict[str, list[tuple[float, float, int, bool]]] = {}
    for _ in range(args.repeat):
        runs: dict[str, list[tuple[float, float, int, bool]]] = {name: [] for name, _, _ in entries}
        for i, board in enumerate(boards):
            # Interleaved: each position by every searcher in turn, the order rotating.
            for k in range(len(entries)):
                name, search, iterations = entries[(i + k) % len(entries)]
                c0, w0 = time.process_time(), time.perf_counter()
                done, proven = search(board, iterations)
                runs[name].append((time.process_time() - c0, time.perf_counter() - w0, done, proven))
        for name, run in runs.items():
            if name not in best or sum(r[0] for r in run) < sum(r[0] for r in best[name]):
                best[name] = run
    print_table("all positions", best, range(len(boards)))
    open_ones = [i for i in range(len(boards)) if not any(run[i][3] for run in best.values())]
    print_table(f"the {len(open_ones)} positions no search proved", best, open_ones)
    if fast_available():
        from bots.mcts_fast import NumbaTree

        tree = NumbaTree(RULES, MctsBot.c.default, 1)
        tree.set_root(boards[0], reuse=False)
        tree.think(math.inf, args.iterations)
        per_row = tree.memory / len(tree.res)
        print(
            f"compiled tree: {tree.nodes} rows after {args.iterations} iterations on the first position, "
            f"{per_row:.0f} bytes a row, a pool of {tree.memory / 2**20:.1f} MiB"
        )
    return 0


# --- strength --------------------------------------------------------------------------


def play_game(pyspiel: Any, opening: tuple[int, ...], ours_first: bool, seed: int, args: argparse.Namespace) -> float:
    """One game from ``opening``; our score (1, 0.5 or 0)."""
    ours_player = 0 if ours_first else 1
    if args.referee:
        ours = MctsBot(seconds=3600.0)
    else:
        ours = MctsBot(seconds=args.move_seconds)
    ours.new_game(RULES, ours_player, seed)
    game = pyspiel.load_game("connect_four")
    theirs = pyspiel.MCTSBot(
        game, pyspiel.RandomRolloutEvaluator(1, seed), UCT_C_OPENSPIEL, 10**9, 1000, True, seed, False,
        pyspiel.ChildSelectionPolicy.UCT, args.move_seconds,
    )  # fmt: skip
    board = Board(RULES)
    state = game.new_initial_state()
    for move in opening:
        board.play(move)
        state.apply_action(move)
    while not board.is_over():
        if board.to_move == ours_player:
            if args.referee:
                ours.time_allowed = args.move_seconds
            move = ours.choose_move(board.copy()).move
        else:
            move = int(theirs.step(state))
        board.play(move)
        state.apply_action(move)
    if board.winner is None:
        return 0.5
    return 1.0 if board.winner == ours_player else 0.0


def match(args: argparse.Namespace, pyspiel: Any) -> int:
    if pyspiel is None:
        return 2
    openings = random_openings(RULES, 2, (args.match + 1) // 2, random.Random(args.seed))
    how = "its time_allowed (80% less 50 ms)" if args.referee else "its seconds option"
    print(
        f"{args.match} games, {args.move_seconds} s per move: mcts ({how}) vs OpenSpiel C++ MCTS "
        f"(max_wall_clock_time, uct_c {UCT_C_OPENSPIEL}, one random rollout, solve), "
        f"{len(openings)} random 2-ply openings, each played with both colours"
    )
    scores: list[float] = []
    started = time.perf_counter()
    for i in range(args.match):
        opening = openings[i // 2]
        ours_first = i % 2 == 0
        scores.append(play_game(pyspiel, opening, ours_first, args.seed * 1000 + i, args))
        if (i + 1) % 10 == 0:
            print(f"  {i + 1} games: {_summary(scores)} ({time.perf_counter() - started:.0f} s)", flush=True)
    print(_summary(scores))
    return 0


def _summary(scores: list[float]) -> str:
    n = len(scores)
    wins, draws = scores.count(1.0), scores.count(0.5)
    mean = sum(scores) / n
    spread = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * spread / math.sqrt(n)
    return (
        f"mcts {wins}-{draws}-{n - wins - draws} (W-D-L), score {100 * mean:.1f}% "
        f"(95% interval {100 * max(0.0, mean - half):.1f}-{100 * min(1.0, mean + half):.1f}%)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=50, help="midgame positions (speed)")
    parser.add_argument("--iterations", type=int, default=20000, help="iterations per position (speed)")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the one with the least CPU time counts")
    parser.add_argument("--seed", type=int, default=19, help="positions and openings")
    parser.add_argument("--no-openspiel-python", action="store_true", help="leave OpenSpiel's Python MCTS out")
    parser.add_argument("--match", type=int, default=0, help="play this many games against OpenSpiel C++ MCTS")
    parser.add_argument("--move-seconds", type=float, default=0.1, help="thinking time per move (match)")
    parser.add_argument("--referee", action="store_true", help="give ours the time as the referee does")
    args = parser.parse_args(argv)
    pyspiel = load_openspiel()
    if args.match:
        return match(args, pyspiel)
    return speed(args, pyspiel)


if __name__ == "__main__":
    sys.exit(main())
