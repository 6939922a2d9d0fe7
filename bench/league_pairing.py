"""How fast a league learns its top three, in turn against learning: simulated
leagues (no game played), the same games either way.

Each seed draws the strengths of 10 entrants (Elo, standard deviation 300) and plays
a league of 10 games per pairing (450 games), results drawn from the Elo model by
game key, so both rules play the same games, only in another order. Printed per
seed: the games after which the fit's top three is the true one, in order, for good
("-": not even after all 450), and the mean 95% interval of the top four's
neighbouring differences after 150 games; then the same for learning with
``max_games = 30`` (game pairs beyond the 10 for the close pairings) at a budget of
450 games.

Run: python bench/league_pairing.py [--seeds N] [--entrants N] [--games N]
"""

from __future__ import annotations

import argparse

from arena.league.pairing import LEARN, PairingSettings
from arena.league.simulation import Simulation, simulate, strengths


def cell(simulation: Simulation) -> str:
    found = simulation.right_from()
    return "-" if found is None else str(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--entrants", type=int, default=10)
    parser.add_argument("--games", type=int, default=10, help="per pairing")
    args = parser.parse_args()
    total = args.entrants * (args.entrants - 1) // 2 * args.games
    look = total // 3
    print(f"{args.entrants} entrants, {args.games} games per pairing ({total} games); games to the true top "
          f"three for good, and the top's interval (Elo) after {look} games")
    print(f"{'seed':>4} {'in turn':>8} {'learn':>6} {'learn+':>7}   {'in turn':>8} {'learn':>6} {'learn+':>7}")
    sums = [0, 0, 0]
    for seed in range(1, args.seeds + 1):
        true = strengths(args.entrants, seed, spread=300)
        runs = [simulate(true, PairingSettings(max_games=args.games), args.games, seed),
                simulate(true, PairingSettings(LEARN, max_games=args.games), args.games, seed),
                simulate(true, PairingSettings(LEARN, max_games=3 * args.games), args.games, seed, budget=total)]
        for i, run in enumerate(runs):
            found = run.right_from()
            sums[i] += total if found is None else found
        print(f"{seed:>4} {cell(runs[0]):>8} {cell(runs[1]):>6} {cell(runs[2]):>7}   "
              + " ".join(f"{run.interval_at(look):>{width}.0f}" for run, width in zip(runs, (8, 6, 7))))
    print(f"{'all':>4} {sums[0]:>8} {sums[1]:>6} {sums[2]:>7}   (a top never right counts {total})")


if __name__ == "__main__":
    main()
