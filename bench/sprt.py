"""How often the match SPRT errs, and how many games it uses: the pentanomial test
(per pair of games on one opening, colours swapped) against the trinomial one
(per game), on simulated matches.

Two kinds of match: independent games (colour makes no difference), and games
with a strong colour effect (whoever moves first wins far more often). Each is
played with the true difference at elo0 (a decision for H1 is an error; alpha
is its nominal rate) and at elo1 (a decision for H0 is an error; beta). Both
tests read the same simulated games, each stopping on its own.

Run: python bench/sprt.py [--runs R] [--elo0 E0 --elo1 E1] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import time

from arena.ratings.sprt import ACCEPT_H0, ACCEPT_H1, CONTINUE, Outcomes, Sprt, expected_score

DRAWS = 0.1  # draw rate of every game
COLOUR = 0.3  # how much moving first adds to the win rate (and takes from the loss rate)
MAX_PAIRS = 20_000


def game_odds(elo: float, colour: float) -> tuple[float, float, float]:
    """(win, draw, loss) of the first bot: ``colour`` is what moving first adds
    to its win rate (negative when it moves second). The mean score is the Elo's."""
    score = expected_score(elo)
    return (score - DRAWS / 2 + colour, DRAWS, 1 - score - DRAWS / 2 - colour)


def play(odds: tuple[float, float, float], rng: random.Random) -> float:
    u = rng.random()
    return 1.0 if u < odds[0] else 0.5 if u < odds[0] + odds[1] else 0.0


def one_match(test: Sprt, elo: float, colour: float, rng: random.Random) -> tuple[tuple[str, int], tuple[str, int]]:
    """Both tests' (decision, games) on one simulated match."""
    first, second = game_odds(elo, colour), game_odds(elo, -colour)
    games = [0, 0, 0]  # losses, draws, wins
    pairs = [0] * 5
    found: dict[str, tuple[str, int]] = {}
    for number in range(1, MAX_PAIRS + 1):
        a, b = play(first, rng), play(second, rng)
        games[round(2 * a)] += 1
        games[round(2 * b)] += 1
        pairs[round(2 * (a + b))] += 1
        for name, outcomes in (("trinomial", Outcomes(tuple(games))), ("pentanomial", Outcomes(tuple(pairs)))):
            if name not in found:
                decision = test.decision(outcomes)
                if decision != CONTINUE:
                    found[name] = (decision, 2 * number)
        if len(found) == 2:
            break
    fallback = (CONTINUE, 2 * MAX_PAIRS)
    return found.get("trinomial", fallback), found.get("pentanomial", fallback)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated matches per line")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=40.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    test = Sprt(args.elo0, args.elo1)
    rng = random.Random(args.seed)
    print(f"SPRT {test.describe()}, {args.runs} simulated matches per line, draw rate {DRAWS:g}")
    print(f"{'games':<26}{'true Elo':>9}{'test':>13}{'errors %':>10}{'nominal %':>11}{'mean games':>12}")
    started = time.perf_counter()
    for kind, colour in (("independent", 0.0), (f"colour effect +-{COLOUR:g}", COLOUR)):
        for elo, wrong, nominal in ((test.elo0, ACCEPT_H1, test.alpha), (test.elo1, ACCEPT_H0, test.beta)):
            results = [one_match(test, elo, colour, rng) for _ in range(args.runs)]
            for index, name in enumerate(("trinomial", "pentanomial")):
                decisions = [r[index] for r in results]
                errors = sum(d == wrong for d, _ in decisions) / args.runs
                mean_games = sum(g for _, g in decisions) / args.runs
                print(f"{kind:<26}{elo:>9g}{name:>13}{100 * errors:>10.1f}{100 * nominal:>11.1f}{mean_games:>12.0f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
