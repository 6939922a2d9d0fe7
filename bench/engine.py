"""Random playouts per second on the classic 7x6 board (and a few other rules).

Run: python bench/engine.py [--seconds S]
"""

from __future__ import annotations

import argparse
import random
import time

from arena.engine.game import Board, Rules


def random_playout(rules: Rules, rng: random.Random) -> tuple[int | None, int]:
    """Play one uniformly random game to its end; return (winner, plies)."""
    board = Board(rules)
    choice = rng.choice
    while not board.is_over():
        board.play(choice(board.legal_moves()))
    return board.winner, board.ply


def measure(rules: Rules, seconds: float, seed: int = 1) -> tuple[float, float]:
    """Playouts per second and mean plies per playout over about ``seconds``."""
    rng = random.Random(seed)
    games = plies = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(100):
            plies += random_playout(rules, rng)[1]
        games += 100
    elapsed = time.perf_counter() - start
    return games / elapsed, plies / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    cases = [
        Rules(),
        Rules(9, 7, 4),
        Rules(3, 3, 3, gravity=False),
        Rules(15, 15, 5, gravity=False),
    ]
    for rules in cases:
        rate, mean_plies = measure(rules, args.seconds)
        print(
            f"{rules.describe():<28} {rate:>10,.0f} playouts/s "
            f"{1e6 / rate:>8.1f} us/playout  {mean_plies:5.1f} plies"
        )


if __name__ == "__main__":
    main()
