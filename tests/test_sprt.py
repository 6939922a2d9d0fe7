"""The sequential test of a two-bot match: its exact likelihood ratio, its models,
and `arena match --sprt`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from arena.cli.main import main
from arena.ratings.sprt import (
    ACCEPT_H0,
    ACCEPT_H1,
    CONTINUE,
    NELO_PER_T,
    UNSEEN,
    Outcomes,
    Sprt,
    SprtError,
    elo_with_interval,
    expected_score,
    normalized_elo,
)
from arena.tournament.match import MatchResult, match_specs, paired, play_sprt

# --- an independent maximization: a shrinking grid, no Lagrange multiplier ---------------


def _best_loglik(counts: list[float], rows: list[list[float]], values: list[float]) -> float:
    """max sum n_i log p_i over p >= 0 with sum p = 1 and rows . p = values, by a
    grid over the constraints' null space that moves to its best point and shrinks
    when that point is inside (the objective is concave: a pattern search finds it).
    Outside the simplex a point scores by how far inside it is, which leads the
    grid into a feasible set too thin for its first spacing."""
    a = np.array([[1.0] * len(counts), *rows])
    b = np.array([1.0, *values])
    particular = np.linalg.lstsq(a, b, rcond=None)[0]
    null = np.linalg.svd(a)[2][len(a):]
    n = np.array(counts)
    if len(null) == 0:
        return float(n @ np.log(particular)) if (particular > 0).all() else -math.inf
    centre, half = np.zeros(len(null)), 2.0
    for _ in range(1000):
        axes = [np.linspace(c - half, c + half, 11) for c in centre]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(null))
        p = particular + grid @ null
        ok = (p > 0).all(axis=1)
        score = -1e12 + p.min(axis=1)
        score[ok] = np.log(p[ok]) @ n
        i = int(np.argmax(score))
        at_edge = bool((np.abs(grid[i] - centre) > 0.999 * half).any())
        centre = grid[i]
        if not at_edge:
            half *= 0.6
            if half < 1e-10:
                break
    p = particular + centre @ null
    return float(n @ np.log(p)) if (p > 0).all() else -math.inf


def _brute_llr(test: Sprt, outcomes: Outcomes) -> float:
    counts = [c or UNSEEN for c in outcomes.counts]
    scores = list(outcomes.scores)
    if test.model == "logistic":
        return _best_loglik(counts, [scores], [expected_score(test.elo1)]) - _best_loglik(
            counts, [scores], [expected_score(test.elo0)]
        )

    def with_t(t: float) -> float:
        # For a fixed sd the constraint is linear in p (a mean and a second moment):
        # search the sd on a grid, then golden-section around the best.
        def at(sd: float) -> float:
            mean = 0.5 + t * sd
            return _best_loglik(counts, [scores, [s * s for s in scores]], [mean, sd * sd + mean * mean])

        low, high = 1e-4, 0.5
        for _ in range(3):  # the profile can be a narrow peak: narrow the grid twice
            sds = np.linspace(low, high, 40)
            i = int(np.argmax([at(sd) for sd in sds]))
            low, high = sds[max(i - 2, 0)], sds[min(i + 2, len(sds) - 1)]
        ratio = (math.sqrt(5) - 1) / 2
        for _ in range(45):
            x1, x2 = high - ratio * (high - low), low + ratio * (high - low)
            if at(x1) < at(x2):
                low = x1
            else:
                high = x2
        return at((low + high) / 2)

    per_unit = math.sqrt(2) if outcomes.paired else 1.0
    return with_t(test.elo1 / NELO_PER_T * per_unit) - with_t(test.elo0 / NELO_PER_T * per_unit)


@pytest.mark.parametrize("counts", [(30, 40, 50), (3, 0, 9), (12, 0, 0), (2, 9, 31, 11, 4), (0, 3, 10, 2, 0)])
@pytest.mark.parametrize("model, elo0, elo1", [("logistic", 0, 20), ("logistic", -30, 60), ("normalized", 0, 40),
                                               ("normalized", -50, 30)])
def test_llr_is_the_exact_constrained_maximum(counts, model, elo0, elo1):
    test, outcomes = Sprt(elo0, elo1, model=model), Outcomes(counts)
    assert test.llr(outcomes) == pytest.approx(_brute_llr(test, outcomes), abs=1e-6)


# --- what the exact ratio asks of a sweep ---------------------------------------------------


def test_a_sweep_needs_53_straight_wins_at_elo1_20():
    # Exactly: the likeliest distribution with a 50% score puts half its weight on the
    # (unseen) losses, so each win only weighs log(s1 / s0) = 0.056; 14-0 is far from
    # proof (a normal approximation of the variance accepted H1 there). A match looks
    # after each pair, so a sweep there stops after 54 games.
    test = Sprt(0, 20)
    assert test.llr(Outcomes.games(14, 0, 0)) == pytest.approx(0.7827, abs=1e-4)
    assert test.decision(Outcomes.games(14, 0, 0)) == CONTINUE
    assert test.decision(Outcomes.games(52, 0, 0)) == CONTINUE
    assert test.decision(Outcomes.games(53, 0, 0)) == ACCEPT_H1
    assert test.llr(Outcomes.games(53, 0, 0)) == pytest.approx(53 * math.log(expected_score(20) / 0.5), abs=0.01)


def test_decisions_for_clear_evidence_and_none_for_little():
    test = Sprt(0, 20)
    assert test.decision(Outcomes.games(0, 0, 0)) == CONTINUE and test.llr(Outcomes.games(0, 0, 0)) == 0
    assert test.decision(Outcomes.games(6, 0, 4)) == CONTINUE
    assert test.decision(Outcomes.games(700, 0, 300)) == ACCEPT_H1
    assert test.decision(Outcomes.games(1000, 0, 1000)) == ACCEPT_H0
    assert test.llr(Outcomes.games(600, 0, 400)) > test.llr(Outcomes.games(550, 0, 450))


def test_pairs_with_a_strong_colour_effect_are_more_convincing_than_their_games():
    # Most pairs split 1-1 (whoever moves first wins): counted as games, the scores
    # look like coin flips; counted as pairs, the 1-point pairs carry no noise and
    # the few 2-point pairs stand out.
    pairs = Outcomes.pairs([1.0] * 150 + [2.0] * 30 + [0.0] * 10)
    games = Outcomes.games(150 + 60, 0, 150 + 20)
    assert pairs.games_played == games.games_played == 380
    test = Sprt(0, 20)
    assert test.llr(pairs) > test.bounds[1] > test.llr(games) > 0
    assert test.decision(pairs) == ACCEPT_H1 and test.decision(games) == CONTINUE


def test_normalized_elo_follows_fastchess_for_games_and_pairs():
    games = Outcomes.games(30, 40, 40)
    score = np.array([1.0] * 30 + [0.5] * 40 + [0.0] * 40)
    assert normalized_elo(games) == pytest.approx((score.mean() - 0.5) / score.std() * 800 / math.log(10))
    pair_scores = np.array([0.0] * 3 + [0.25] * 10 + [0.5] * 20 + [0.75] * 12 + [1.0] * 5)
    pairs = Outcomes((3, 10, 20, 12, 5))
    # A pair's variance is half a game's: the game's sd is sqrt(2) times the pair's.
    expected = (pair_scores.mean() - 0.5) / (math.sqrt(2) * pair_scores.std()) * 800 / math.log(10)
    assert normalized_elo(pairs) == pytest.approx(expected)


# --- properties -------------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=300)
models = st.sampled_from(["logistic", "normalized"])
bounds = st.tuples(st.integers(-100, 100), st.integers(1, 100)).map(lambda b: (b[0], b[0] + b[1]))


@given(counts, counts, counts, models, bounds)
def test_llr_grows_with_each_win(wins, draws, losses, model, elos):
    test = Sprt(*elos, model=model)
    assert test.llr(Outcomes.games(wins + 1, draws, losses)) > test.llr(Outcomes.games(wins, draws, losses))


@given(st.tuples(counts, counts, counts, counts, counts), bounds)
def test_llr_grows_with_each_won_pair(pairs, elos):
    # Logistic bounds only: in normalized Elo a 2-0 pair also widens the spread of the
    # pair scores, and next to many even pairs that can cost more than its points gain
    # (pairs (0, 3, 10, 3, 0) at elo0=100, elo1=198: the ratio falls by 5e-4).
    test = Sprt(*elos, model="logistic")
    more = Outcomes((*pairs[:4], pairs[4] + 1))
    assert test.llr(more) > test.llr(Outcomes(pairs))


@given(st.one_of(st.tuples(counts, counts, counts), st.tuples(counts, counts, counts, counts, counts)), models, bounds)
def test_llr_is_the_same_seen_from_either_bot(seen, model, elos):
    # H1 "A is elo1 better" against H0 "A is elo0 better" is, for B, H0 "B is -elo1
    # better" against H1 "B is -elo0 better": the same ratio, turned over.
    elo0, elo1 = elos
    outcomes = Outcomes(seen)
    ours = Sprt(elo0, elo1, model=model).llr(outcomes)
    theirs = Sprt(-elo1, -elo0, model=model).llr(outcomes.swapped())
    assert ours == pytest.approx(-theirs, rel=1e-9, abs=1e-9)


# --- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["elo0=20,elo1=0", "elo0=0,elo1=20,alpha=0.7", "elo0=x", "elo2=3", "junk", "elo0=0,elo1=5,model=bayes",
             "elo0=0,elo1=500,model=normalized", "elo0=nan,elo1=3"]
)
def test_bad_sprt_settings_are_refused(text):
    with pytest.raises(SprtError):
        Sprt.parse(text)


def test_sprt_settings_are_parsed():
    assert Sprt.parse("elo0=-1, elo1=4,model=normalized,alpha=0.1") == Sprt(-1, 4, 0.1, 0.05, "normalized")
    assert Sprt.parse("elo1=10").model == "logistic"


def test_elo_interval_is_finite_and_wide_for_a_sweep():
    elo, low, high = elo_with_interval(10, 0, 0)
    assert 0 < low < elo < high < 2000
    small = elo_with_interval(60, 0, 40)
    big = elo_with_interval(600, 0, 400)
    assert big[2] - big[1] < small[2] - small[1]
    assert big[0] == pytest.approx(70.4, abs=1.5)  # 60% is 70.4 Elo


# --- matches ------------------------------------------------------------------------------------


def test_match_games_come_in_pairs_and_are_tested_as_pairs():
    specs = match_specs("greedy", "random", 6, seed=3)
    assert paired(specs) and paired(specs[:5])
    assert not paired([specs[0], specs[2]])  # same colours: not a pair
    assert not paired([specs[1], specs[2]])  # two openings
    result, _ = play_sprt(specs, ("greedy", "random"), Sprt(0, 20))
    outcomes = result.outcomes()
    assert outcomes.paired and sum(outcomes.counts) == 3
    tally = result.tally()["greedy"]
    assert sum(n * i / 2 for i, n in enumerate(outcomes.counts)) == tally.score


def test_unpaired_games_are_tested_one_by_one():
    specs = match_specs("greedy", "random", 8, seed=3)
    lone = [specs[0], specs[2], specs[4], specs[6]]  # greedy first in every game
    result, decision = play_sprt(lone, ("greedy", "random"), Sprt(0, 20))
    assert decision == CONTINUE
    outcomes = MatchResult(("greedy", "random"), result.records).outcomes()
    assert not outcomes.paired and outcomes.games_played == 4


def test_sprt_match_stops_early_when_one_bot_is_much_stronger():
    specs = match_specs("minimax", "random", 400, seed=1)
    result, decision = play_sprt(specs, ("minimax", "random"), Sprt(0, 100))
    assert decision == ACCEPT_H1
    assert len(result.records) < 60
    assert len(result.records) % 2 == 0


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), prog_name="arena")


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """arena match stores its games (in arena.db by default): in a folder of the test's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)


def test_sprt_without_games_plays_until_the_test_decides(in_tmp):
    result = _run("match", "greedy", "random", "--sprt", "elo0=0,elo1=20", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    sprt = data["sprt"]
    assert sprt["decision"] == ACCEPT_H1 and sprt["model"] == "logistic"
    assert data["games"] > 10  # far past the 10 games of a match without a test
    assert sum(sprt["pentanomial"]) == data["games"] // 2
    assert sprt["llr"] >= sprt["bounds"][1]
    assert data["elo_difference"]["sequential"] is True


def test_sprt_text_says_the_estimate_comes_from_a_sequential_test(in_tmp):
    result = _run("match", "greedy", "random", "-n", "4", "--sprt", "elo0=0,elo1=5,model=normalized")
    assert result.exit_code == 0, result.output
    assert "(sequential test: biased)" in result.output
    assert "SPRT (pentanomial, normalized Elo) elo0=0 elo1=5" in result.output
    assert "undecided after 4 games" in result.output
    assert "Game pairs by greedy's points:" in result.output
    plain = _run("match", "greedy", "random", "-n", "2")
    assert "sequential" not in plain.output


def test_bad_sprt_is_one_line(in_tmp):
    result = _run("match", "greedy", "random", "--sprt", "elo0=0,elo1=5,model=bayesian")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.splitlines() == ["Error: SPRT model must be logistic or normalized, got 'bayesian'"]
