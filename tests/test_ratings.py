"""Elo ratings: the joint fit (Davidson's draw model with a first-move advantage)
against known answers and an independent maximiser, order independence, groups,
bounds, intervals, likelihood of superiority, incremental Elo."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.ratings.fit import Fit, Result, elo_difference, fit_ratings, incremental_elo

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


def test_a_75_percent_score_without_draws_gives_the_textbook_gap_around_a_mean_of_1500():
    fit = fit_ratings(games("A", "B", wins=3000, losses=1000))
    assert gap(fit, "A", "B") == pytest.approx(GAP_75, abs=1.0)
    assert (fit.ratings["A"].elo + fit.ratings["B"].elo) / 2 == pytest.approx(1500, abs=1e-9)
    assert set(fit.ratings) == {"A", "B"}
    assert fit.ratings["A"].bot == "A"
    assert fit.draw_rate == 0.0 and fit.first_move_elo == pytest.approx(0.0, abs=1.0)


def test_with_draws_the_gap_is_the_odds_of_a_win_against_a_loss():
    # Davidson: P(win) / P(loss) = e^gap whatever the draws, and the draw rate is their share.
    fit = fit_ratings(games("A", "B", wins=2500, draws=1000, losses=500))
    assert gap(fit, "A", "B") == pytest.approx(ELO * math.log(2500 / 500), abs=1.5)
    assert fit.first_move_elo == pytest.approx(0.0, abs=1.0)  # colours alternate: no advantage shows


def test_a_bot_that_never_lost_is_rated_far_above_but_finite():
    fit = fit_ratings(games("A", "B", wins=2000, draws=2000))
    assert 600 < gap(fit, "A", "B") < 3000
    assert fit.ratings["A"].bound is None  # not a perfect score: it drew


def test_the_first_move_advantage_is_estimated_and_kept_out_of_the_ratings():
    # A and B equal, but the first player wins 3 of 4 decisive games.
    results = []
    for k in range(2000):
        first, second = ("A", "B") if k % 2 == 0 else ("B", "A")
        results.append(Result(first, second, 1.0 if k % 4 < 2 else (0.0 if k % 8 in (2, 3) else 0.5)))
    fit = fit_ratings(results)
    assert gap(fit, "A", "B") == pytest.approx(0.0, abs=1e-6)
    assert fit.first_move_elo > 100 and fit.first_move_interval > 0


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


def log_likelihood(bots, results, strength, h, theta):
    """Davidson with a first-move bonus, game by game, plus the virtual draws (0.5 per
    bot, spread over its opponents by games played), written out from the model."""
    played = dict.fromkeys(bots, 0)
    pair_games = {}
    for r in results:
        played[r.first] += 1
        played[r.second] += 1
        pair_games[r.first, r.second] = pair_games.get((r.first, r.second), 0) + 1
    nu = math.exp(theta) if theta is not None else 0.0
    total = 0.0
    for r in results:
        d = strength[r.first] - strength[r.second] + h
        weights = {1.0: math.exp(d / 2), 0.5: nu, 0.0: math.exp(-d / 2)}
        total += math.log(weights[r.score] / sum(weights.values()))
    total -= h**2 / (2 * (1000 / ELO) ** 2)  # the weak priors on the first move and on log nu
    if theta is not None:
        total -= theta**2 / (2 * 5.0**2)
    for (a, b), count in pair_games.items():
        prior = 0.5 * count * (1 / played[a] + 1 / played[b]) / 2
        x = strength[a] - strength[b]
        total += prior * (0.5 * math.log(_sigmoid(x)) + 0.5 * math.log(_sigmoid(-x)))
    return total


def reference_elo(bots: list[str], results: list[Result]) -> dict[str, float]:
    """Maximise :func:`log_likelihood` by golden-section searches on its value along
    each coordinate (strengths, the first-move bonus, the draw parameter) until
    nothing moves; then centre each group of bots that met on 1500."""
    draws = any(r.score == 0.5 for r in results)
    strength = dict.fromkeys(bots, 0.0)
    params = {"h": 0.0, "theta": 0.0 if draws else None}

    def value() -> float:
        return log_likelihood(bots, results, strength, params["h"], params["theta"])

    def search(get, put) -> float:
        start = get()
        lo, hi = start - 4.0, start + 4.0
        g = (math.sqrt(5) - 1) / 2
        for _ in range(80):
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            put(a)
            fa = value()
            put(b)
            fb = value()
            if fa > fb:
                hi = b
            else:
                lo = a
        put((lo + hi) / 2)
        return abs(get() - start)

    for _ in range(200):
        moved = 0.0
        for bot in bots:
            moved = max(moved, search(lambda b=bot: strength[b], lambda v, b=bot: strength.__setitem__(b, v)))
        moved = max(moved, search(lambda: params["h"], lambda v: params.__setitem__("h", v)))
        if draws:
            moved = max(moved, search(lambda: params["theta"], lambda v: params.__setitem__("theta", v)))
        if moved < 1e-7:
            break
    groups = {b: b for b in bots}

    def root(b):
        while groups[b] != b:
            b = groups[b]
        return b

    for r in results:
        groups[root(r.first)] = root(r.second)
    elo = {}
    for b in bots:
        members = [m for m in bots if root(m) == root(b)]
        mean = sum(strength[m] for m in members) / len(members)
        elo[b] = 1500 + (strength[b] - mean) * ELO
    return elo


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


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(leagues())
def test_fit_matches_an_independent_maximiser(league):
    bots, results = league
    fit = fit_ratings(results, bots=bots)
    expected = reference_elo(bots, results)
    assert set(fit.ratings) == set(bots)
    for bot in bots:
        assert fit.ratings[bot].elo == pytest.approx(expected[bot], abs=0.05), bot


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
        assert fit.ratings[bot].elo == pytest.approx(expected[bot], abs=0.05)


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


def test_a_listed_bot_without_games_is_a_group_of_its_own_at_the_mean():
    fit = fit_ratings(games("a", "b", wins=6, losses=2), bots=["a", "b", "idle"])
    assert list(fit.ratings) == ["a", "b", "idle"]
    assert fit.ratings["idle"].elo == pytest.approx(1500, abs=1e-9)
    assert fit.ratings["idle"].group == 2 and fit.ratings["a"].group == fit.ratings["b"].group == 1
    assert fit.los("a", "idle") is None  # nothing compares them
    assert fit.ratings["a"].elo > 1500 > fit.ratings["b"].elo


def test_groups_that_never_met_are_each_centred_and_not_compared():
    results = games("a", "b", wins=30, losses=10) + games("x", "y", wins=10, losses=30) + games("y", "z", wins=5,
                                                                                                  losses=5)
    fit = fit_ratings(results)
    assert fit.groups == 2 and fit.group_sizes == [3, 2]
    assert {fit.ratings[b].group for b in "xyz"} == {1} and {fit.ratings[b].group for b in "ab"} == {2}
    for members in ("xyz", "ab"):
        assert sum(fit.ratings[b].elo for b in members) / len(members) == pytest.approx(1500, abs=1e-9)
    assert fit.los("a", "x") is None and fit.los("x", "y") is not None


def test_a_perfect_score_is_flagged_as_a_bound():
    fit = fit_ratings(games("a", "b", wins=10) + games("b", "c", wins=6, losses=6))
    assert fit.ratings["a"].bound == ">" and fit.ratings["b"].bound is None
    zero = fit_ratings(games("a", "b", losses=10) + games("b", "c", wins=6, losses=6))
    assert zero.ratings["a"].bound == "<"


def test_a_ladder_is_not_squeezed():
    # 20 bots in a chain, 100 games per link, each 100 Elo above the next: the ends stay ~1900 apart.
    rng = random.Random(3)
    results = []
    for i in range(19):
        p = _sigmoid(100 / ELO)
        for k in range(100):
            win = rng.random() < p
            a, b = f"b{i + 1:02d}", f"b{i:02d}"
            results.append(Result(a, b, float(win)) if k % 2 else Result(b, a, float(not win)))
    fit = fit_ratings(results)
    spread = fit.ratings["b19"].elo - fit.ratings["b00"].elo
    assert 0.9 * 1900 < spread < 1.1 * 1900
