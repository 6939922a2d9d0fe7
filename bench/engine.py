"""Random playouts per second on the classic 7x6 board, beside OpenSpiel's C++ engine.

Three loops play uniformly random 7x6 Connect Four games to the end, interleaved
round by round in this one process so that a busy machine slows them alike:

- ours: the public API, as a bot author writes it (``Board``, ``is_over``,
  ``legal_moves``, ``play``), a fresh board per playout;
- OpenSpiel: its C++ ``connect_four`` called from Python the same way, a fresh
  state per playout (installed by ``pip install -r bench/requirements.txt``);
- bare: a 25-line Python bitboard loop with no API at all, the ceiling of pure
  Python for the same work.

Each figure is the best round, in process CPU time (the loops are single-threaded)
and in wall time; the ratios compare figures of the same run. The other rules the
arena plays (larger boards, no gravity) are measured through our engine alone.

Run: python bench/engine.py [--rounds N] [--playouts N] [--seconds S]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from arena.engine.game import Board, Rules

INSTALL_PEERS = "pip install -r bench/requirements.txt"


def our_playouts(count: int, rng: random.Random, rules: Rules) -> int:
    """``count`` random games through the public API; the plies played."""
    plies = 0
    for _ in range(count):
        board = Board(rules)
        while not board.is_over():
            board.play(rng.choice(board.legal_moves()))
        plies += board.ply
    return plies


def openspiel_playouts(count: int, rng: random.Random, game: Any) -> int:
    """``count`` random games through OpenSpiel's Python binding; the plies played."""
    plies = 0
    for _ in range(count):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        plies += state.move_number()
    return plies


def bare_playouts(count: int, rng: random.Random, _: object = None) -> int:
    """``count`` random 7x6 games on a bare bitboard, no objects; the plies played."""
    plies = 0
    choice = rng.choice
    for _ in range(count):
        to_move = mask = 0
        free = [0, 1, 2, 3, 4, 5, 6]  # the columns with room left
        ply = 0
        while free:
            column = choice(free)
            bit = (mask + (1 << 7 * column)) & (0b111111 << 7 * column)
            if bit >> 5 & 0x40810204081:  # the column's top cell: it is full now
                free.remove(column)
            to_move, mask = to_move ^ mask, mask | bit
            stones = to_move ^ mask  # the stones of the side that just moved
            ply += 1
            if ply >= 7 and (  # four in a row: vertical, horizontal, both diagonals
                (m := stones & stones >> 1) & m >> 2
                or (m := stones & stones >> 7) & m >> 14
                or (m := stones & stones >> 6) & m >> 12
                or (m := stones & stones >> 8) & m >> 16
            ):
                break
        plies += ply
    return plies


Loop = Callable[[int, random.Random, Any], int]


def interleaved(
    loops: dict[str, tuple[Loop, Any]], rounds: int, playouts: int, seed: int = 1
) -> dict[str, tuple[float, float, float]]:
    """Best playouts/s (CPU, wall) and mean plies of each loop, round by round."""
    best = dict.fromkeys(loops, (0.0, 0.0, 0.0))
    for round_ in range(rounds):
        for name, (loop, context) in loops.items():
            rng = random.Random(seed + round_)  # the same seed for every loop of a round
            cpu, wall = time.process_time(), time.perf_counter()
            plies = loop(playouts, rng, context)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            old_cpu, old_wall, _ = best[name]
            best[name] = (
                max(old_cpu, playouts / max(cpu, 1e-9)),
                max(old_wall, playouts / wall),
                plies / playouts,
            )
    return best


def connect_four_race(rounds: int, playouts: int) -> None:
    loops: dict[str, tuple[Loop, Any]] = {"ours (Board)": (our_playouts, Rules())}
    try:
        import pyspiel
    except ImportError:
        print(f"OpenSpiel is not installed; to compare with it: {INSTALL_PEERS}")
    else:
        loops["OpenSpiel (C++)"] = (openspiel_playouts, pyspiel.load_game("connect_four"))
    loops["bare Python loop"] = (bare_playouts, None)
    best = interleaved(loops, rounds, playouts)
    print(f"7x6 connect 4, random playouts: best of {rounds} rounds of {playouts:,}, interleaved")
    print(f"{'':<18} {'playouts/s (CPU)':>17} {'(wall)':>10} {'us/playout':>11} {'plies':>6}")
    for name, (cpu, wall, plies) in best.items():
        print(f"{name:<18} {cpu:>17,.0f} {wall:>10,.0f} {1e6 / cpu:>11.1f} {plies:>6.1f}")
    ours_cpu, ours_wall, _ = best["ours (Board)"]
    for name in ("OpenSpiel (C++)", "bare Python loop"):
        if name in best:
            cpu, wall, _ = best[name]
            print(f"ours / {name:<18} {ours_cpu / cpu:5.2f}x CPU  {ours_wall / wall:5.2f}x wall")


def other_rules(seconds: float) -> None:
    cases = [
        Rules(9, 7, 4),
        Rules(3, 3, 3, gravity=False),
        Rules(15, 15, 5, gravity=False),
    ]
    print("\nother rules, ours alone:")
    for rules in cases:
        rng = random.Random(1)
        games = plies = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            plies += our_playouts(20, rng, rules)
            games += 20
        rate = games / (time.process_time() - start)
        print(
            f"{rules.describe():<28} {rate:>10,.0f} playouts/s "
            f"{1e6 / rate:>8.1f} us/playout  {plies / games:5.1f} plies"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds of the 7x6 race")
    parser.add_argument("--playouts", type=int, default=3000, help="playouts per loop per round")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per other rules")
    args = parser.parse_args()
    connect_four_race(args.rounds, args.playouts)
    other_rules(args.seconds)


if __name__ == "__main__":
    main()
