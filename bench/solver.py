"""Speed and correctness of the perfect solver on Pascal Pons' test sets.

For each set (Test_L3_R1, Test_L2_R1, Test_L1_R1 from tests/data/pons) it solves
every position with :meth:`bots.solver.Solver.solve`, checks the score against
the file, and prints the mean time and mean node count per position beside Pons'
C++ figures. The transposition table is emptied before each position (as a
fresh solve; ``--keep-table`` keeps it across the set instead). Board parsing is
not timed; the call into the solver, with its Python overhead, is.

Run: python bench/solver.py [--positions N] [--backend python|numba|both]
                            [--sets L3,L2,L1] [--repeat R] [--table-bits B]

Timings are means per position over the pass with the least CPU time of
``--repeat`` passes: wall-clock ("us/pos", "x C++") and process CPU time ("cpu
us", "cpu x", steadier when the machine is shared). "x C++" is the ratio to
Pons' figure. Exit status 1 if any score is wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

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


def run_set(solver: Solver, rows, keep_table: bool) -> tuple[float, float, int, list[str]]:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=0, help="positions per set (0: all 1000)")
    parser.add_argument("--sets", default="L3,L2,L1", help="comma-separated: L3, L2, L1")
    parser.add_argument("--backend", default="both", choices=["python", "numba", "both"])
    parser.add_argument("--repeat", type=int, default=1, help="passes per set; the best is shown")
    parser.add_argument("--table-bits", type=int, default=None, help="numba table size, log2 entries")
    parser.add_argument("--keep-table", action="store_true", help="do not empty the table between positions")
    args = parser.parse_args(argv)

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
