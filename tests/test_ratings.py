"""Elo ratings: the joint fit against known answers and an independent maximiser,
order independence, intervals, likelihood of superiority, incremental Elo."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league.ratings import Fit, Result, elo_difference, fit_ratings, incremental_elo

ELO = 400 / math.log(10)  # Elo per natural-log unit of odds, written out independently
GAP_75 = 400 * math.log10(3)  # 190.848...: the gap at which the stronger scores 75%


def games(first: str, second: str, wins: int = 0, draws: int = 0, losses: int = 0) -> list[Result]:
    """``wins``/``draws``/``losses`` from ``first``'s side, colours alternating."""
    out = []
    for score, count in ((1.0, wins), (0.5, draws), (0.0, losses)):
        for k in range(count):
            if k % 2 == 0:
                out.append(Result(first, second, score))
            else:
                out.append(Result(second, first, 1.0 - score))
    return out


def gap(fit: Fit, a: str, b: str) -> float:
    return fit.ratings[a].elo - fit.ratings[b].elo


# --- two bots, known answers ---------------------------------------------------------


@pytest.mark.parametrize(
    "results",
    [
        games("A", "B", wins=3000, losses=1000),
        games("A", "B", wins=2000, draws=2000),
        games("A", "B", wins=2500, draws=1000, losses=500),
    ],
    ids=["wins-losses", "wins-draws", "mixed"],
)
def test_a_75_percent_score_gives_the_textbook_gap_around_a_mean_of_1500(results):
    fit = fit_ratings(results)
    assert gap(fit, "A", "B") == pytest.approx(GAP_75, abs=1.0)
    assert (fit.ratings["A"].elo + fit.ratings["B"].elo) / 2 == pytest.approx(1500, abs=1e-9)
    assert set(fit.ratings) == {"A", "B"}
    assert fit.ratings["A"].bot == "A"


def test_an_anchor_pins_its_bot_exactly_and_keeps_the_gap():
    results = games("A", "B", wins=3000, losses=1000)
    fit = fit_ratings(results, anchor=("B", 0.0))
    assert fit.ratings["B"].elo == 0.0
    assert fit.ratings["A"].elo == pytest.approx(GAP_75, abs=1.0)
    free = fit_ratings(results)
    assert gap(fit, "A", "B") == pytest.approx(gap(free, "A", "B"), abs=1e-9)
    # The anchor is known exactly; the other bot carries all the uncertainty.
    assert fit.ratings["B"].interval == 0.0
    assert fit.ratings["A"].interval == pytest.approx(2 * free.ratings["A"].interval, rel=1e-6)


def test_anchor_at_another_value_shifts_everyone():
    results = games("A", "B", wins=30, draws=10, losses=12) + games("B", "C", wins=20, losses=20)
    free = fit_ratings(results)
    fit = fit_ratings(results, anchor=("C", 2000.0))
    assert fit.ratings["C"].elo == 2000.0
    for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
        assert gap(fit, a, b) == pytest.approx(gap(free, a, b), abs=1e-9)


def test_an_anchor_naming_an_unknown_bot_raises_naming_it():
    with pytest.raises(ValueError, match="Nobody"):
        fit_ratings(games("A", "B", wins=3, losses=1), anchor=("Nobody", 1500.0))


# --- an independent maximiser of the same penalised likelihood -----------------------


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def reference_elo(bots: list[str], results: list[Result]) -> dict[str, float]:
    """Maximise sum_games [s log sig(d) + (1-s) log sig(-d)] + sum_bots [one virtual
    draw against strength 0] by exact line searches (bisection on the directional
    derivative) along each bot's axis and along the all-bots direction, until the
    gradient vanishes. Then convert to Elo with mean 1500."""
    n = len(bots)
    index = {b: i for i, b in enumerate(bots)}
    played = [[0.0] * n for _ in range(n)]
    won = [[0.0] * n for _ in range(n)]
    for r in results:
        i, j = index[r.first], index[r.second]
        played[i][j] += 1
        played[j][i] += 1
        won[i][j] += r.score
        won[j][i] += 1 - r.score

    def gradient(x: list[float]) -> list[float]:
        g = []
        for i in range(n):
            value = 0.5 - _sigmoid(x[i])  # d/dx of 0.5 log sig(x) + 0.5 log sig(-x)
            for j in range(n):
                if played[i][j]:
                    value += won[i][j] - played[i][j] * _sigmoid(x[i] - x[j])
            g.append(value)
        return g

    def line_max(x: list[float], direction: list[float]) -> list[float]:
        def slope(t: float) -> float:
            moved = [a + t * d for a, d in zip(x, direction)]
            return sum(d * g for d, g in zip(direction, gradient(moved)))

        lo, hi = -1.0, 1.0
        while slope(lo) < 0:
            lo *= 2
        while slope(hi) > 0:
            hi *= 2
        for _ in range(100):
            mid = (lo + hi) / 2
            if slope(mid) > 0:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-14:
                break
        t = (lo + hi) / 2
        return [a + t * d for a, d in zip(x, direction)]

    directions = [[1.0 if k == i else 0.0 for k in range(n)] for i in range(n)]
    directions.append([1.0] * n)
    x = [0.0] * n
    for _ in range(20000):
        for direction in directions:
            x = line_max(x, direction)
        if max(abs(g) for g in gradient(x)) < 1e-10:
            break
    else:  # pragma: no cover
        raise AssertionError("reference maximiser did not converge")
    mean = sum(x) / n
    return {b: 1500 + (x[index[b]] - mean) * ELO for b in bots}


@st.composite
def leagues(draw):
    n = draw(st.integers(3, 6))
    bots = [f"bot{i}" for i in range(n)]
    results = []
    for i in range(n):
        for j in range(i + 1, n):
            for _ in range(draw(st.integers(0, 5))):
                first, second = (bots[i], bots[j]) if draw(st.booleans()) else (bots[j], bots[i])
                results.append(Result(first, second, draw(st.sampled_from([0.0, 0.5, 1.0]))))
    return bots, results


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(leagues())
def test_fit_matches_an_independent_maximiser(league):
    bots, results = league
    fit = fit_ratings(results, bots=bots)
    expected = reference_elo(bots, results)
    assert set(fit.ratings) == set(bots)
    for bot in bots:
        assert fit.ratings[bot].elo == pytest.approx(expected[bot], abs=0.01), bot
    assert sum(r.elo for r in fit.ratings.values()) / len(bots) == pytest.approx(1500, abs=1e-6)


def test_reference_maximiser_agrees_on_a_lopsided_league():
    # Strong, weak and unbeaten bots together, with a seeded random league.
    rng = random.Random(7)
    bots = ["a", "b", "c", "d", "e"]
    strength = {"a": 2.0, "b": 1.0, "c": 0.0, "d": -1.0, "e": -3.0}
    results = []
    for i, x in enumerate(bots):
        for y in bots[i + 1 :]:
            for _ in range(rng.randint(2, 12)):
                p = _sigmoid(strength[x] - strength[y])
                u = rng.random()
                score = 1.0 if u < p * 0.9 else 0.5 if u < p else 0.0
                results.append(Result(x, y, score) if rng.random() < 0.5 else Result(y, x, 1 - score))
    fit = fit_ratings(results)
    expected = reference_elo(bots, results)
    for bot in bots:
        assert fit.ratings[bot].elo == pytest.approx(expected[bot], abs=0.01)


# --- order ------------------------------------------------------------------------------


def _league(seed: int) -> list[Result]:
    rng = random.Random(seed)
    bots = ["w", "x", "y", "z", "v"]
    return [
        Result(*rng.sample(bots, 2), rng.choice([0.0, 0.5, 1.0])) for _ in range(300)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffling_the_results_changes_nothing(seed):
    results = _league(seed)
    base = fit_ratings(results)
    for k in range(5):
        shuffled = results[:]
        random.Random(100 * seed + k).shuffle(shuffled)
        fit = fit_ratings(shuffled)
        assert set(fit.ratings) == set(base.ratings)
        for bot, rating in base.ratings.items():
            assert fit.ratings[bot].elo == pytest.approx(rating.elo, abs=1e-9)
            assert fit.ratings[bot].interval == pytest.approx(rating.interval, abs=1e-9)
        for a in base.ratings:
            for b in base.ratings:
                assert fit.covariance[a, b] == pytest.approx(base.covariance[a, b], abs=1e-7)
    # Reversing the order is a shuffle too.
    reverse = fit_ratings(results[::-1])
    for bot, rating in base.ratings.items():
        assert reverse.ratings[bot].elo == pytest.approx(rating.elo, abs=1e-9)


def test_incremental_elo_depends_on_order_but_is_reproducible():
    forward = [Result("A", "B", 1.0), Result("B", "A", 1.0)]
    backward = forward[::-1]
    one = incremental_elo(forward)
    two = incremental_elo(backward)
    # A wins then loses: after the win A is favoured, so the loss costs more than it gained.
    assert one["A"] < 1500 < two["A"]
    assert one["A"] != pytest.approx(two["A"], abs=0.1)
    assert one == incremental_elo(forward)
    assert two == incremental_elo(list(backward))
    # Points are conserved in each order.
    assert one["A"] + one["B"] == pytest.approx(3000)
    # Hand-computed: 1508 / 1492, then B's expected score 1/(1+10^(16/400)).
    expected_b = 1 / (1 + 10 ** (16 / 400))
    assert one["A"] == pytest.approx(1508 - 16 * (1 - expected_b))


def test_incremental_elo_with_the_k_and_start_given():
    elo = incremental_elo([Result("A", "B", 0.5)], k=32, start=1000)
    assert elo == {"A": 1000.0, "B": 1000.0}
    elo = incremental_elo([Result("A", "B", 1.0)], k=32, start=1000)
    assert elo == {"A": 1016.0, "B": 984.0}
    assert incremental_elo([]) == {}


def test_joint_fit_does_not_depend_on_the_order_that_moves_incremental_elo():
    forward = games("A", "B", wins=20, losses=20)
    backward = forward[::-1]
    assert fit_ratings(forward).ratings["A"].elo == pytest.approx(1500, abs=1e-9)
    assert fit_ratings(backward).ratings["A"].elo == pytest.approx(1500, abs=1e-9)
    ordered = [Result("A", "B", 1.0)] * 20 + [Result("A", "B", 0.0)] * 20
    assert incremental_elo(ordered)["A"] != pytest.approx(incremental_elo(ordered[::-1])["A"], abs=1)
    assert fit_ratings(ordered).ratings["A"].elo == pytest.approx(
        fit_ratings(ordered[::-1]).ratings["A"].elo, abs=1e-9
    )


# --- extremes and intervals ---------------------------------------------------------------


def test_perfect_and_zero_scores_get_finite_ratings_and_wider_intervals():
    results = []
    for a, b in (("top", "mid1"), ("top", "mid2"), ("top", "bottom"), ("mid1", "bottom"), ("mid2", "bottom")):
        results += games(a, b, wins=10)
    results += games("mid1", "mid2", wins=5, losses=5)
    fit = fit_ratings(results)
    r = fit.ratings
    for bot in r.values():
        assert math.isfinite(bot.elo) and math.isfinite(bot.interval) and bot.interval > 0
    assert r["top"].elo > r["mid1"].elo > r["bottom"].elo
    # Every bot played 30 games; the ones with no mixed results are known less well.
    for extreme in ("top", "bottom"):
        for mixed in ("mid1", "mid2"):
            assert r[extreme].interval > r[mixed].interval
    assert r["top"].elo - 1500 == pytest.approx(1500 - r["bottom"].elo, abs=1e-6)


def test_a_bot_that_only_won_is_finite_even_over_many_games():
    fit = fit_ratings(games("A", "B", wins=1000))
    assert math.isfinite(fit.ratings["A"].elo) and fit.ratings["A"].elo > 1500 + 500
    assert fit.ratings["B"].elo == pytest.approx(3000 - fit.ratings["A"].elo)


def test_intervals_shrink_as_games_grow():
    small = fit_ratings(games("A", "B", wins=30, losses=10))
    large = fit_ratings(games("A", "B", wins=3000, losses=1000))
    huge = fit_ratings(games("A", "B", wins=30000, losses=10000))
    for bot in ("A", "B"):
        assert small.ratings[bot].interval > large.ratings[bot].interval > huge.ratings[bot].interval
    # With the prior negligible, 10x the games gives sqrt(10) narrower intervals.
    ratio = large.ratings["A"].interval / huge.ratings["A"].interval
    assert ratio == pytest.approx(math.sqrt(10), rel=0.01)


@pytest.mark.parametrize("n,p", [(4000, 0.75), (10000, 0.5), (8000, 0.9)])
def test_two_bot_interval_matches_the_analytic_fisher_information(n, p):
    wins = round(n * p)
    fit = fit_ratings(games("A", "B", wins=wins, losses=n - wins))
    # var(difference) = 1 / (n p (1-p)) in natural units; each bot sits half the
    # difference from the mean.
    expected = 1.96 * ELO * math.sqrt(1 / (n * p * (1 - p))) / 2
    for bot in ("A", "B"):
        assert fit.ratings[bot].interval == pytest.approx(expected, rel=0.01)
    var = fit.covariance["A", "A"] + fit.covariance["B", "B"] - 2 * fit.covariance["A", "B"]
    assert var == pytest.approx(ELO**2 / (n * p * (1 - p)), rel=0.01)


# --- likelihood of superiority ------------------------------------------------------------


def test_los_is_a_probability_favouring_the_higher_rated_and_complementary():
    results = _league(11) + games("w", "x", wins=20, losses=5)
    fit = fit_ratings(results)
    bots = list(fit.ratings)
    for a in bots:
        for b in bots:
            if a == b:
                continue
            los = fit.los(a, b)
            assert 0 <= los <= 1
            assert los + fit.los(b, a) == pytest.approx(1, abs=1e-12)
            if fit.ratings[a].elo > fit.ratings[b].elo:
                assert los > 0.5
            elif fit.ratings[a].elo < fit.ratings[b].elo:
                assert los < 0.5


def test_los_is_near_certain_for_a_clear_gap_and_even_for_equal_bots():
    fit = fit_ratings(games("A", "B", wins=3000, losses=1000))
    assert fit.los("A", "B") > 0.999
    assert fit.los("B", "A") < 0.001
    even = fit_ratings(games("A", "B", wins=50, losses=50))
    assert even.los("A", "B") == pytest.approx(0.5, abs=1e-9)
    assert even.los("A", "A") == 0.5


def test_los_matches_the_normal_approximation_from_the_covariance():
    fit = fit_ratings(games("A", "B", wins=52, draws=10, losses=40))
    diff = gap(fit, "A", "B")
    sd = math.sqrt(fit.covariance["A", "A"] + fit.covariance["B", "B"] - 2 * fit.covariance["A", "B"])
    expected = 0.5 * (1 + math.erf(diff / sd / math.sqrt(2)))
    assert fit.los("A", "B") == pytest.approx(expected, abs=1e-12)
    assert 0.5 < fit.los("A", "B") < 1


# --- elo_difference --------------------------------------------------------------------------


def test_elo_difference():
    assert elo_difference(0.75) == pytest.approx(GAP_75, abs=1e-9)
    assert elo_difference(0.75) == pytest.approx(190.8, abs=0.1)
    assert elo_difference(0.25) == pytest.approx(-GAP_75, abs=1e-9)
    assert elo_difference(0.5) == 0
    assert elo_difference(1.0) == math.inf
    assert elo_difference(0.0) == -math.inf
    assert elo_difference(10 / 11) == pytest.approx(400, abs=1e-9)


def test_elo_difference_inverts_the_expected_score():
    for score in (0.01, 0.2, 0.5, 0.64, 0.99):
        d = elo_difference(score)
        assert 1 / (1 + 10 ** (-d / 400)) == pytest.approx(score, abs=1e-12)


# --- edges -------------------------------------------------------------------------------------


def test_no_games_gives_no_ratings():
    fit = fit_ratings([])
    assert fit.ratings == {} and fit.covariance == {}


def test_a_listed_bot_without_games_sits_at_the_mean_with_a_wide_interval():
    fit = fit_ratings(games("a", "b", wins=6, losses=2), bots=["a", "b", "idle"])
    assert list(fit.ratings) == ["a", "b", "idle"]
    assert fit.ratings["idle"].elo == pytest.approx(1500, abs=1e-9)
    assert fit.ratings["idle"].interval > fit.ratings["a"].interval
    assert fit.ratings["a"].elo > 1500 > fit.ratings["b"].elo
