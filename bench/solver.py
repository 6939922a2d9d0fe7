"""Speed and correctness of the perfect solver on Pascal Pons' test sets.

For each set (Test_L3_R1, Test_L2_R1, Test_L1_R1 from tests/data/pons) it solves
every position with :meth:`bots.solver.Solver.solve`, checks the score against
the file, and prints the mean time and mean node count per position beside Pons'
C++ figures. The transposition table is emptied before each position (as a
fresh solve; ``--keep-table`` keeps it across the set instead). Board parsing is
not timed; the call into the solver, with its Python overhead, is.

Run: python bench/solver.py [--positions N] [--backend python|numba|both]
                            [--sets L3,L2,L1] [--repeat R] [--table-bits B]
     python bench/solver.py --by-stones [--stones 4,6,8,10,12,14] [--count N]
                            [--seed S] [--table-bits B] [--by-score]
     python bench/solver.py --cold MOVES [--repeat R]
     python bench/solver.py --kernels [--stones 10] [--count N] [--seed S]

Timings are means per position over the pass with the least CPU time of
``--repeat`` passes: wall-clock ("us/pos", "x C++") and process CPU time ("cpu
us", "cpu x", steadier when the machine is shared). "x C++" is the ratio to
Pons' figure. Exit status 1 if any score is wrong.

``--by-stones`` measures the early game instead, against BitBully (an
independent C++ solver, a bench-only peer: see bench/requirements.txt) searching
without its opening book. For each number of stones k it draws positions by
random play from ``--seed`` (open, and the side to move cannot win at once),
and solves each one cold, by ours (numba, table emptied) and by BitBully
(``mtdf`` with its table emptied), one after the other in the same run so that
the machine's load falls on both alike. It prints per k the mean and largest
time, positions per second, nodes per second, and the ratio ours/BitBully of
CPU time (above 1: ours is slower). Both give Pons' score for the side to move;
exit status 1 if they disagree on any position. ``--by-score`` adds, per stone
count, the same ratios for the positions of each |score| (0 is a draw), with the
nodes' ratio and each search's nodes per second.

``--kernels`` solves the same random positions (``--stones``, ``--count``
per seed, seeds ``--seed`` to ``--seed`` + 3) cold with the compiled search's
generic kernel and with the one written for 7x6 connect 4 (bots/kernel_c4.py),
the two in turn on each position, twice, in one process: their CPU time, nodes
per second and ratio (the nodes must be the same; exit status 1 if not).

``--cold MOVES`` times ``arena solve MOVES --budget 0`` (the position and each
move, one process from its start) beside a process of BitBully scoring the
same position and moves without its book, alternately ``--repeat`` times; it
prints the best wall time of each and their ratio, and exits 1 if the scores differ.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.engine.game import Board, Rules
from bots.solver import Solver, fast_available

#: Pons' C++ solver (final version), mean per position: microseconds, nodes.
REFERENCE = {
    "Test_L3_R1": (4.57, 51),
    "Test_L2_R1": (37.5, 450),
    "Test_L1_R1": (255.0, 3298),
}
SETS = {"L3": "Test_L3_R1", "L2": "Test_L2_R1", "L1": "Test_L1_R1"}


def data_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "data" / "pons"


def load(name: str, limit: int | None) -> list[tuple[str, int]]:
    rows = []
    for line in (data_dir() / name).read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    return rows[:limit] if limit else rows


def run_set(solver: Solver, rows: list[tuple[str, int]], keep_table: bool) -> tuple[float, float, int, list[str]]:
    """(wall seconds, cpu seconds, nodes, wrong lines) for one pass over ``rows``.

    The whole pass is timed at once (reading the clocks per position would cost
    about as much as the easiest positions); the table reset between positions,
    a counter increment, is inside the timing.
    """
    boards = [Board.from_moves(moves, solver.rules) for moves, _ in rows]
    values: list[int | None] = []
    nodes = 0
    solve, reset, record = solver.solve, solver.reset, values.append
    reset()  # nothing carried over from an earlier pass or set
    c0, w0 = time.process_time(), time.perf_counter()
    for board in boards:
        if not keep_table:
            reset()
        record(solve(board))
        nodes += solver.nodes
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    wrong = [
        f"{moves}: expected {expected}, got {value}"
        for (moves, expected), value in zip(rows, values)
        if value != expected
    ]
    return wall, cpu, nodes, wrong


#: Positions per number of stones when --count is not given: the fewer stones,
#: the longer a cold solve (seconds at 6 stones, most of a minute at 4).
DEFAULT_COUNTS = {4: 2, 6: 6}
DEFAULT_COUNT = 20


def random_positions(stones: int, count: int, seed: int) -> list[str]:
    """``count`` distinct positions (1-based move strings) of ``stones`` random
    moves: none finished, none where the side to move wins at once."""
    rules = Rules()
    rng = random.Random(f"{seed}/{stones}")
    found: list[str] = []
    seen: set[tuple[int, int]] = set()
    while len(found) < count:
        board = Board(rules)
        while board.ply < stones and not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        if board.is_over() or board.ply < stones:
            continue
        if any(board.is_winning_move(m) for m in board.legal_moves()):
            continue
        if board.key() in seen:
            continue
        seen.add(board.key())
        found.append(board.moves_string())
    return found


class BookLessPeer:
    """BitBully's C++ search with no opening book and its table emptied per position."""

    def __init__(self) -> None:
        import bitbully.bitbully_core as core  # type: ignore[import-not-found]  # bench-only peer (AGPL): never the arena's

        self._core = core
        self._solver: Any = core.BitBullyCore()  # no path: no book loaded
        if self._solver.isBookLoaded():
            raise RuntimeError("BitBully loaded an opening book")
        self.nodes = 0

    def board(self, moves: str) -> Any:
        """BitBully's board after ``moves`` (1-based columns)."""
        board = self._core.BoardCore()
        if not board.play("".join(str(int(c) - 1) for c in moves)):
            raise ValueError(f"BitBully rejects {moves}")
        return board

    def forget(self) -> None:
        """Empty the table: a memset of its whole table, which the timings leave
        out (ours empties its table by a counter, no time at all)."""
        self._solver.resetTranspositionTable()

    def search(self, board: Any) -> int:
        """Pons' score of ``board``, searched with whatever the table holds."""
        self._solver.resetNodeCounter()
        value = int(self._solver.mtdf(board, 0))
        self.nodes = int(self._solver.getNodeCounter())
        return value


def timed(search: Callable[[Any], int | None], board: Any, cpu: list[float], wall: list[float]) -> int | None:
    """``search(board)``, its CPU and wall seconds appended to ``cpu`` and ``wall``."""
    c0, w0 = time.process_time(), time.perf_counter()
    value = search(board)
    wall.append(time.perf_counter() - w0)
    cpu.append(time.process_time() - c0)
    return value


def by_stones(args: argparse.Namespace) -> int:
    """The early-game comparison with BitBully's book-less search (see the module doc)."""
    try:
        peer = BookLessPeer()
    except ImportError:
        print("bitbully is not installed: pip install -r bench/requirements.txt", file=sys.stderr)
        return 2
    if not fast_available():
        print("numba is not importable: the comparison is with the compiled back end", file=sys.stderr)
        return 2
    solver = Solver(Rules(), "numba", table_bits=args.table_bits)
    solver.warm_up()
    print(f"table bits: {args.table_bits or 'default'}; seed {args.seed}")
    print(
        f"{'stones':>6} {'n':>3} {'mean s':>8} {'max s':>8} {'pos/s':>8} {'Mnodes':>7} {'Mn/s':>6}"
        f" | {'bb mean':>8} {'bb max':>8} {'bb pos/s':>8} {'bb Mn':>7} {'bb Mn/s':>7}"
        f" | {'cpu x':>6} {'wall x':>6}"
    )
    failed = False
    for stones in [int(s) for s in args.stones.split(",") if s.strip()]:
        count = args.count or DEFAULT_COUNTS.get(stones, DEFAULT_COUNT)
        ours_cpu: list[float] = []
        ours_wall: list[float] = []
        peer_cpu: list[float] = []
        peer_wall: list[float] = []
        ours_nodes = peer_nodes = 0
        by_score: dict[int, list[float]] = {}  # |score| -> positions, our CPU, theirs, our nodes, theirs
        for moves in random_positions(stones, count, args.seed):
            board, peer_board = Board.from_moves(moves), peer.board(moves)
            solver.reset()
            ours = timed(solver.solve, board, ours_cpu, ours_wall)
            ours_nodes += solver.nodes
            peer.forget()
            theirs = timed(peer.search, peer_board, peer_cpu, peer_wall)
            peer_nodes += peer.nodes
            if ours != theirs:
                print(f"  DISAGREE {moves}: ours {ours}, BitBully {theirs}")
                failed = True
            group = by_score.setdefault(min(abs(theirs or 0), NEAR_ZERO + 1), [0, 0.0, 0.0, 0, 0])
            for k, value in enumerate((1, ours_cpu[-1], peer_cpu[-1], solver.nodes, peer.nodes)):
                group[k] += value
        n = len(ours_cpu)
        oc, pc = sum(ours_cpu), sum(peer_cpu)
        print(
            f"{stones:>6} {n:>3} {oc / n:>8.3f} {max(ours_cpu):>8.3f} {n / oc:>8.1f} "
            f"{ours_nodes / n / 1e6:>7.2f} {ours_nodes / oc / 1e6:>6.2f}"
            f" | {pc / n:>8.3f} {max(peer_cpu):>8.3f} {n / pc:>8.1f} "
            f"{peer_nodes / n / 1e6:>7.2f} {peer_nodes / pc / 1e6:>7.2f}"
            f" | {oc / pc:>6.2f} {sum(ours_wall) / sum(peer_wall):>6.2f}",
            flush=True,
        )
        if args.by_score:
            print_by_score(by_score)
    return 1 if failed else 0


#: --by-score: the positions whose score is at most this far from a draw get a line
#: each; those farther share one.
NEAR_ZERO = 5


def print_by_score(by_score: dict[int, list[float]]) -> None:
    """One line per |score| (the hard positions are those near a draw): positions,
    mean CPU time of each, the ratio of CPU times and of nodes, and the node rates."""
    for score in sorted(by_score):
        n, ours, theirs, ours_nodes, peer_nodes = by_score[score]
        label = f"|score| {'>' if score > NEAR_ZERO else '='} {min(score, NEAR_ZERO)}"
        print(f"  {label:<12} n={int(n):>3}  ours {ours / n * 1e3:7.1f} ms  bb {theirs / n * 1e3:7.1f} ms"
              f"  cpu x {ours / theirs:5.2f}  nodes x {ours_nodes / peer_nodes:5.2f}"
              f"  Mn/s {ours_nodes / ours / 1e6:5.1f} / {peer_nodes / theirs / 1e6:5.1f}")


#: The peer's side of --cold: a fresh process that scores the position after
#: argv[1] (1-based columns) and each of its moves, and prints them as JSON.
PEER_COLD = """
import json, sys
import bitbully.bitbully_core as core
board = core.BoardCore()
assert board.play("".join(str(int(c) - 1) for c in sys.argv[1]))
solver = core.BitBullyCore()
score = solver.mtdf(board, 0)
moves = solver.scoreMoves(board)
print(json.dumps({"score": score, "moves": {str(c + 1): v for c, v in enumerate(moves) if board.isLegalMove(c)}}))
"""


def cold(moves: str, repeat: int) -> int:
    """``arena solve MOVES`` beside BitBully's book-less search, each a fresh process."""
    ours_cmd = [sys.executable, "-m", "arena", "solve", moves, "--budget", "0", "--json"]
    peer_cmd = [sys.executable, "-c", PEER_COLD, moves]
    best = {"ours": float("inf"), "peer": float("inf")}
    answers: dict[str, Any] = {}
    for _ in range(max(1, repeat)):
        for who, cmd in (("ours", ours_cmd), ("peer", peer_cmd)):
            started = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            best[who] = min(best[who], time.perf_counter() - started)
            answers[who] = json.loads(done.stdout)
    print(
        f"arena solve {moves} --budget 0, cold process: ours {best['ours']:.2f} s, "
        f"BitBully without its book {best['peer']:.2f} s, ratio {best['ours'] / best['peer']:.2f}"
    )
    if answers["ours"] != answers["peer"]:
        print(f"  DISAGREE: ours {answers['ours']}, BitBully {answers['peer']}")
        return 1
    return 0


def kernels(args: argparse.Namespace) -> int:
    """The generic kernel and the one written for 7x6 connect 4, side by side."""
    import numpy as np

    from bots import kernel_c4, solver_fast

    solver = Solver(Rules(), "numba", table_bits=args.table_bits)
    solver.warm_up()
    core = solver.core
    assert isinstance(core, solver_fast.NumbaCore)
    core.st[solver_fast.BUDGET] = -1  # no budget: every search to its end
    searches = {"generic": solver_fast._search, "written for 7x6": kernel_c4._search}
    cpu = dict.fromkeys(searches, 0.0)
    nodes = dict.fromkeys(searches, 0)
    stones = [int(part) for part in args.stones.split(",")]
    count = args.count or 40
    positions = [moves for k in stones for seed in range(args.seed, args.seed + 4)
                 for moves in random_positions(k, count, seed)]
    for number, moves in enumerate(positions):
        board = Board.from_moves(moves)
        cur, mask = board.key()
        seen = set()
        for turn in range(2):  # each first once: the machine's drift falls on both
            for name in list(searches)[:: 1 if (number + turn) % 2 == 0 else -1]:
                core.reset()
                started = time.process_time()
                searches[name](np.uint64(cur), np.uint64(mask), board.ply, 0, 0, 2, core.tt, core.st, core.cw,
                               core.buf, solver_fast.NO_DEADLINE)
                cpu[name] += time.process_time() - started
                nodes[name] += int(core.st[solver_fast.NODES])
                seen.add(int(core.st[solver_fast.NODES]))
        if len(seen) != 1:
            print(f"{moves}: the kernels searched {sorted(seen)} nodes", file=sys.stderr)
            return 1
    print(f"{len(positions)} positions of {args.stones} stones, each solved cold twice by each kernel:")
    for name in searches:
        print(f"  {name:<16} {cpu[name]:8.2f} s CPU  {nodes[name] / cpu[name] / 1e6:6.2f} M nodes/s")
    print(f"  written for 7x6 / generic: {cpu['written for 7x6'] / cpu['generic']:.3f}x the CPU time")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=0, help="positions per set (0: all 1000)")
    parser.add_argument("--sets", default="L3,L2,L1", help="comma-separated: L3, L2, L1")
    parser.add_argument("--backend", default="both", choices=["python", "numba", "both"])
    parser.add_argument("--repeat", type=int, default=1, help="passes per set; the best is shown")
    parser.add_argument("--table-bits", type=int, default=None, help="numba table size, log2 entries")
    parser.add_argument("--keep-table", action="store_true", help="do not empty the table between positions")
    parser.add_argument("--by-stones", action="store_true", help="early-game positions, ours beside BitBully")
    parser.add_argument("--stones", default=None,
                        help="stone counts to draw (--by-stones: 4,6,8,10,12,14; --kernels: 10)")
    parser.add_argument(
        "--count", type=int, default=0, help="--by-stones: positions per stone count (0: 20, fewer below 8)"
    )
    parser.add_argument("--seed", type=int, default=1, help="--by-stones: seed of the random positions")
    parser.add_argument("--by-score", action="store_true",
                        help="--by-stones: also a line per |score| of the positions (near a draw: the hard ones)")
    parser.add_argument("--cold", metavar="MOVES", help="time arena solve MOVES beside BitBully, fresh processes")
    parser.add_argument("--kernels", action="store_true",
                        help="the generic compiled kernel beside the one written for 7x6, same positions")
    args = parser.parse_args(argv)
    if args.kernels:
        if not fast_available():
            print("numba is not importable: there is no compiled kernel to measure", file=sys.stderr)
            return 2
        args.stones = args.stones or "10"
        return kernels(args)
    if args.cold:
        return cold(args.cold, args.repeat)
    if args.by_stones:
        args.stones = args.stones or "4,6,8,10,12,14"
        return by_stones(args)

    if not data_dir().is_dir():
        print(f"no test data in {data_dir()}", file=sys.stderr)
        return 2
    backends = ["python", "numba"] if args.backend == "both" else [args.backend]
    if "numba" in backends and not fast_available():
        print("numba is not importable: skipping the compiled back end", file=sys.stderr)
        backends.remove("numba")
    names = [SETS[s.strip().upper()] for s in args.sets.split(",") if s.strip()]
    failed = False
    print(
        f"{'backend':<7} {'set':<11} {'n':>5} {'us/pos':>10} {'cpu us':>10} {'nodes':>8} "
        f"{'cpu/node':>8} {'C++ us':>7} {'C++ nodes':>9} {'x C++':>7} {'cpu x':>7}"
    )
    for backend in backends:
        started = time.perf_counter()
        solver = Solver(Rules(), backend, table_bits=args.table_bits if backend == "numba" else None)
        solver.warm_up()
        setup = time.perf_counter() - started
        for name in names:
            rows = load(name, args.positions or None)
            best = None
            for _ in range(max(1, args.repeat)):
                result = run_set(solver, rows, args.keep_table)
                if best is None or result[1] < best[1]:
                    best = result
            assert best is not None  # at least one pass
            wall, cpu, nodes, wrong = best
            n = len(rows)
            us, cpu_us, mean_nodes = wall / n * 1e6, cpu / n * 1e6, nodes / n
            ref_us, ref_nodes = REFERENCE[name]
            print(
                f"{backend:<7} {name:<11} {n:>5} {us:>10.1f} {cpu_us:>10.1f} {mean_nodes:>8.1f} "
                f"{cpu_us / max(mean_nodes, 1):>8.3f} {ref_us:>7.2f} {ref_nodes:>9} "
                f"{us / ref_us:>7.2f} {cpu_us / ref_us:>7.2f}"
            )
            for line in wrong[:5]:
                print(f"  WRONG {line}")
            failed |= bool(wrong)
        print(f"{backend:<7} (set-up and warm-up: {setup:.2f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
