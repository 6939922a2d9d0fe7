"""How good and how fast the rating fit is, on leagues simulated from its own model.

Games are drawn from Davidson's draw model with a first-move advantage h: a game
between strengths a (moving first) and b is won, drawn or lost in proportions
e^((a+h-b)/2) : nu : e^(-(a+h-b)/2). Five checks:

1. ladder accuracy: a chain of bots, each link 100 Elo, fitted spread / true spread,
   and / the spread of a plain maximum-likelihood fit (scipy.optimize, no prior);
2. first-move advantage: fitted gaps / true gaps and / plain maximum-likelihood gaps,
   and fitted h, for h up to 300 Elo;
3. calibration: how often the 95% intervals hold the truth, bots and pairs;
4. speed and peak memory of a fit with intervals, 1000, 2000 and 10,000 bots (the last
   skipped where the machine has too little free memory);
5. order independence: the same games shuffled give a bit-identical fit.

Run: python bench/ratings.py [--quick] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import random
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from arena.ratings.fit import ELO_PER_NATURAL, MEAN_RATING, Z95, Fit, PairCounts, Result, fit_ratings

GAP_ELO = 100.0  # each link of the ladder
LADDER_BOTS = 20
BOTS_H = 10  # league of the first-move check
BOTS_CAL = 8  # league of the calibration check
GAMES_PER_PAIR = 20  # round robins: half with each bot moving first
SPREAD_ELO = 150.0  # sd of the true ratings of a calibration league
LARGE_BYTES = 2 * 2**30  # free memory a 10,000-bot fit is tried with: the process peaks near 1.2 GB


def nu_for(draw_rate: float) -> float:
    """The draw parameter that makes two equal bots draw ``draw_rate`` of their games."""
    return 2 * draw_rate / (1 - draw_rate)


def name(i: int) -> str:
    return f"bot{i:05d}"  # zero-padded: sorted names follow the index


def outcomes(
    strength: np.ndarray, first: np.ndarray, second: np.ndarray, games: np.ndarray, h: float, nu: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """[wins, draws, losses] of the first bot on each (first, second) row, strengths in natural-log units."""
    d = strength[first] - strength[second] + h
    odds = np.stack([np.exp(d / 2), np.full_like(d, nu), np.exp(-d / 2)], axis=1)
    return rng.multinomial(games, odds / odds.sum(axis=1, keepdims=True))


def round_robin(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair: each bot meets each other once moving first, once second."""
    first, second = np.nonzero(~np.eye(n, dtype=bool))
    return first, second


def pair_counts(first: np.ndarray, second: np.ndarray, wdl: np.ndarray) -> PairCounts:
    pairs = PairCounts()
    for a, b, (w, d, lo) in zip(first.tolist(), second.tolist(), wdl.tolist()):
        pairs.add(name(a), name(b), w, d, lo)
    return pairs


def centred(fit: Fit, n: int) -> np.ndarray:
    """Fitted ratings in Elo, on their group's mean (all simulated leagues here are one group)."""
    return np.array([fit.ratings[name(i)].elo - MEAN_RATING for i in range(n)])


def plain_ml(n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The same model fitted by plain maximum likelihood, written out apart from the
    arena's fit: no virtual draws, no priors on h or nu, bot 0 held at 0, maximised by
    scipy's BFGS. Centred ratings and h in Elo; None where it does not converge (a
    perfect score has no finite maximum without a prior)."""
    wins, draws, losses = wdl[:, 0], wdl[:, 1], wdl[:, 2]
    games = wdl.sum(axis=1)
    fit_draws = bool(draws.sum() > 0)

    def minus_log_likelihood(params: np.ndarray) -> tuple[float, np.ndarray]:
        strength = np.concatenate([[0.0], params[: n - 1]])
        h, theta = params[n - 1], (params[n] if fit_draws else -np.inf)
        d = strength[first] - strength[second] + h
        log_total = np.logaddexp(np.logaddexp(d / 2, -d / 2), theta)
        value = np.sum(wins * d / 2 - losses * d / 2 - games * log_total)
        p_win, p_loss = np.exp(d / 2 - log_total), np.exp(-d / 2 - log_total)
        by_d = (wins - losses) / 2 - games * (p_win - p_loss) / 2
        by_strength = np.bincount(first, weights=by_d, minlength=n) - np.bincount(second, weights=by_d, minlength=n)
        gradient = [by_strength[1:], np.array([by_d.sum()])]
        if fit_draws:
            value += np.sum(draws * theta)
            gradient.append(np.array([np.sum(draws - games * np.exp(theta - log_total))]))
        # Per game: BFGS's line search loses precision on a sum over thousands of games.
        return -float(value) / games.sum(), -np.concatenate(gradient) / games.sum()

    start = np.zeros(n + 1 if fit_draws else n)
    result = minimize(minus_log_likelihood, start, jac=True, method="BFGS", options={"gtol": 1e-9, "maxiter": 10_000})
    strength = np.concatenate([[0.0], result.x[: n - 1]]) * ELO_PER_NATURAL
    # Converged where the gradient vanished (to a millionth of a game's score), not off to infinity.
    if np.max(np.abs(result.jac)) > 1e-6 or np.ptp(strength) > 20_000:
        return None
    return strength - strength.mean(), float(result.x[n - 1]) * ELO_PER_NATURAL


# --- 1. ladder ------------------------------------------------------------------------


def ladder(runs: int, rng: np.random.Generator) -> None:
    draw_rate = 0.3
    nu = nu_for(draw_rate)
    true_spread = GAP_ELO * (LADDER_BOTS - 1)
    strength = np.arange(LADDER_BOTS) * GAP_ELO / ELO_PER_NATURAL
    links = np.arange(LADDER_BOTS - 1)
    # Colours alternate on each link: half the games with either bot moving first.
    first, second = np.concatenate([links, links + 1]), np.concatenate([links + 1, links])
    print(f"\n1. Ladder: {LADDER_BOTS} bots in a chain, {GAP_ELO:g} Elo per link, games only between neighbours,")
    print(f"   colours alternating, draw rate {draw_rate:.0%} between equal bots, no first-move advantage;")
    print(f"   fitted first-to-last spread / true spread ({true_spread:g} Elo), {runs} ladders each (target >= 0.95),")
    print("   and / the spread of a plain maximum-likelihood fit of the same games (no prior: what the prior costs)")
    print(f"   {'games per link':>16}{'mean':>8}{'sd':>8}{'min':>8}{'max':>8}{'ours / ML':>11}{'sd':>7}")
    for per_link in (40, 100):
        games = np.full(len(first), per_link // 2)
        ratios, to_ml, failed = [], [], 0
        for _ in range(runs):
            wdl = outcomes(strength, first, second, games, 0.0, nu, rng)
            fit = fit_ratings(pair_counts(first, second, wdl))
            spread = fit.ratings[name(LADDER_BOTS - 1)].elo - fit.ratings[name(0)].elo
            ratios.append(spread / true_spread)
            ml = plain_ml(LADDER_BOTS, first, second, wdl)
            if ml is None:
                failed += 1
            else:
                to_ml.append(spread / (ml[0][-1] - ml[0][0]))
        r, m = np.array(ratios), np.array(to_ml)
        print(f"   {per_link:>16}{r.mean():>8.3f}{r.std():>8.3f}{r.min():>8.3f}{r.max():>8.3f}"
              f"{m.mean():>11.4f}{m.std():>7.4f}" + (f"  ({failed} plain ML fits without a maximum)" if failed else ""))


# --- 2. first-move advantage --------------------------------------------------------


def first_move(runs: int, rng: np.random.Generator) -> None:
    draw_rate = 0.3
    nu = nu_for(draw_rate)
    true_elo = (np.arange(BOTS_H) - (BOTS_H - 1) / 2) * GAP_ELO
    strength = true_elo / ELO_PER_NATURAL
    first, second = round_robin(BOTS_H)
    games = np.full(len(first), GAMES_PER_PAIR // 2)
    print(f"\n2. First-move advantage: {BOTS_H} bots {GAP_ELO:g} Elo apart, round robin "
          f"{GAMES_PER_PAIR} games per pair")
    print(f"   (half each way), draw rate {draw_rate:.0%}, {runs} leagues per line; fitted gaps / true gaps is the")
    print("   least-squares slope of fitted on true centred ratings (target 0.95-1.05); fitted h against true h;")
    print("   ours / ML: the slope of fitted on plain maximum-likelihood ratings (no prior), and the ML fit's h")
    print(f"   {'true h':>8}{'gaps ratio':>12}{'sd':>7}{'fitted h':>10}{'sd':>7}{'h in 95% interval':>19}"
          f"{'ours / ML':>11}{'sd':>7}{'ML h':>8}")
    for h_elo in (0.0, 100.0, 200.0, 300.0):
        slopes, hs, covered, to_ml, ml_hs, failed = [], [], 0, [], [], 0
        for _ in range(runs):
            wdl = outcomes(strength, first, second, games, h_elo / ELO_PER_NATURAL, nu, rng)
            fit = fit_ratings(pair_counts(first, second, wdl))
            ours = centred(fit, BOTS_H)
            slopes.append(float(ours @ true_elo / (true_elo @ true_elo)))
            hs.append(fit.first_move_elo)
            covered += abs(fit.first_move_elo - h_elo) <= fit.first_move_interval
            ml = plain_ml(BOTS_H, first, second, wdl)
            if ml is None:
                failed += 1
            else:
                to_ml.append(float(ours @ ml[0] / (ml[0] @ ml[0])))
                ml_hs.append(ml[1])
        s, hh, m = np.array(slopes), np.array(hs), np.array(to_ml)
        print(f"   {h_elo:>8g}{s.mean():>12.3f}{s.std():>7.3f}{hh.mean():>10.1f}{hh.std():>7.1f}"
              f"{100 * covered / runs:>18.1f}%{m.mean():>11.4f}{m.std():>7.4f}{np.mean(ml_hs):>8.1f}"
              + (f"  ({failed} plain ML fits without a maximum)" if failed else ""))


# --- 3. calibration -----------------------------------------------------------------


def calibration(runs: int, rng: np.random.Generator) -> None:
    first, second = round_robin(BOTS_CAL)
    games = np.full(len(first), GAMES_PER_PAIR // 2)
    upper = np.triu_indices(BOTS_CAL, k=1)
    print(f"\n3. Calibration: {runs} leagues per row, {BOTS_CAL} bots with true ratings "
          f"~ N(0, {SPREAD_ELO:g} Elo) drawn")
    print(f"   per league, round robin {GAMES_PER_PAIR} games per pair (half each way). Bot: the true rating less its")
    print("   league's mean inside elo +/- interval; pair: the true gap inside gap +/- 1.96 sd from the covariance.")
    print("   Target 93.5-96.5%; the Monte Carlo sd of a bot figure is about "
          f"{100 * math.sqrt(0.95 * 0.05 / (runs * BOTS_CAL)):.1f} points, more as bots in a league share errors.")
    print(f"   {'draw rate':>10}{'true h':>8}{'fitted draws':>14}{'bot cover':>11}{'pair cover':>12}")
    for draw_rate in (0.0, 0.3, 0.6):
        for h_elo in (0.0, 100.0, 300.0):
            bot_hits = pair_hits = 0
            draws_seen = []
            for _ in range(runs):
                true_elo = rng.normal(0.0, SPREAD_ELO, BOTS_CAL)
                wdl = outcomes(true_elo / ELO_PER_NATURAL, first, second, games, h_elo / ELO_PER_NATURAL,
                               nu_for(draw_rate), rng)
                fit = fit_ratings(pair_counts(first, second, wdl))
                draws_seen.append(fit.draw_rate)
                elo = centred(fit, BOTS_CAL)
                half = np.array([fit.ratings[name(i)].interval for i in range(BOTS_CAL)])
                bot_hits += int(np.sum(np.abs(elo - (true_elo - true_elo.mean())) <= half))
                cov = np.array([[fit.covariance[name(i), name(j)] for j in range(BOTS_CAL)] for i in range(BOTS_CAL)])
                var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
                gap_error = (elo[:, None] - elo[None, :]) - (true_elo[:, None] - true_elo[None, :])
                pair_hits += int(np.sum((np.abs(gap_error) <= Z95 * np.sqrt(np.maximum(var, 0.0)))[upper]))
            bots, pairs = runs * BOTS_CAL, runs * len(upper[0])
            print(f"   {draw_rate:>10.0%}{h_elo:>8g}{np.mean(draws_seen):>14.1%}"
                  f"{100 * bot_hits / bots:>10.1f}%{100 * pair_hits / pairs:>11.1f}%")


# --- 4. speed -------------------------------------------------------------------------


def random_league(n: int, opponents: int | None, games: int | None, rng: np.random.Generator) -> PairCounts:
    """Either ``games`` games between random pairs, or each bot against ``opponents``
    others (a fixed set of offsets around a circle, so every bot plays as many), 10 games
    each pair; true ratings ~ N(0, 200 Elo), first mover +50 Elo, 30% draws between equals."""
    strength = rng.normal(0.0, 200.0, n) / ELO_PER_NATURAL
    if games is not None:
        a = rng.integers(0, n, games)
        b = (a + rng.integers(1, n, games)) % n
        keys, count = np.unique(a * n + b, return_counts=True)
        first, second = keys // n, keys % n
    else:
        assert opponents is not None
        offsets = rng.choice(np.arange(1, n // 2), opponents // 2, replace=False)
        first = np.repeat(np.arange(n), len(offsets))
        second = (first + np.tile(offsets, n)) % n
        # Both colours of each pairing: 5 games each way.
        first, second = np.concatenate([first, second]), np.concatenate([second, first])
        count = np.full(len(first), 5)
    return pair_counts(first, second, outcomes(strength, first, second, count, 50 / ELO_PER_NATURAL,
                                               nu_for(0.3), rng))


def timed(fit: Callable[[], Fit]) -> tuple[float, int]:
    """Seconds of one fit, then peak bytes it allocates, traced in a second run
    (tracing slows the fit, so the two are taken apart)."""
    started = time.perf_counter()
    fit()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    fit()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def speed(rng: np.random.Generator) -> None:
    print("\n4. Speed: a fit with intervals and covariance, from PairCounts (games already aggregated);")
    print("   true ratings ~ N(0, 200 Elo). Seconds of one fit (target < 2 s for 1000 bots, < 30 s for 10,000),")
    print("   and the peak memory it allocates (tracemalloc, numpy included, in a second run).")
    print(f"   {'bots':>6}{'games':>11}{'pairings':>10}{'seconds':>9}{'peak MB':>9}{'peak / one (n+2)^2 matrix':>28}")
    cases: list[tuple[int, int | None, int | None]] = [(1000, None, 100_000), (2000, 50, None), (10_000, 50, None)]
    for n, opponents, games in cases:
        label = "random" if games is not None else f"{opponents} each"
        free = available_bytes()
        if n > 2000 and (free is None or free < LARGE_BYTES):
            shown = "unknown" if free is None else f"{free / 2**30:.1f} GB"
            print(f"   {n:>6}{'':>11}{label:>10}  skipped: it needs {LARGE_BYTES / 2**30:.0f} GB free, {shown} is")
            continue
        pairs = random_league(n, opponents, games, rng)
        seconds, peak = timed(partial(fit_ratings, pairs))
        total = int(sum(sum(row) for row in pairs.counts.values()))
        per_cell = peak / ((n + 2) ** 2 * 8)
        print(f"   {n:>6}{total:>11,}{label:>10}{seconds:>9.2f}{peak / 2**20:>9.0f}{per_cell:>28.1f}")


# --- 5. order independence ----------------------------------------------------------


def order(rng: np.random.Generator, seed: int) -> None:
    n = 100
    pairs = random_league(n, None, 5_000, rng)
    results = [Result(a, b, score) for (a, b), row in sorted(pairs.counts.items())
               for score, count in zip((1.0, 0.5, 0.0), row) for _ in range(int(count))]
    reference = fit_ratings(results)
    shuffler = random.Random(seed)
    for _ in range(3):
        shuffler.shuffle(results)
        fit = fit_ratings(results)
        # repr writes every float exactly (and tells -0.0 from 0.0): equal text, equal bits.
        assert fit == reference and repr(fit) == repr(reference), "a shuffled order changed the fit"
    assert repr(fit_ratings(PairCounts.of(results))) == repr(reference), "PairCounts changed the fit"
    print(f"\n5. Order independence: {len(results):,} games of {n} bots fitted in 3 shuffled orders and from")
    print("   PairCounts give a bit-identical Fit: ok")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="about 50 leagues per setting instead of 500")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    runs = 50 if args.quick else 500
    print(f"Rating fit on simulated leagues, seed {args.seed}, {runs} leagues per calibration setting")
    started = time.perf_counter()
    ladder(50 if args.quick else 200, rng)
    first_move(50 if args.quick else 200, rng)
    calibration(runs, rng)
    speed(rng)
    order(rng, args.seed)
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
