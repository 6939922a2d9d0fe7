"""The rating fit of large leagues: Newton steps by conjugate gradients on the sparse
information matrix (forced here on small leagues) give what the dense steps give,
the dense step takes over where conjugate gradients do not converge, and a fit holds
about one n-by-n matrix at its peak."""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest

from arena.ratings import fit as ratings
from arena.ratings.fit import Fit, PairCounts, Result, fit_ratings


def league(seed: int, bots: list[str], games: int) -> list[Result]:
    rng = random.Random(seed)
    return [Result(*rng.sample(bots, 2), rng.choice([0.0, 0.5, 1.0, 1.0])) for _ in range(games)]


def ladder(bots: int, games_per_link: int) -> list[Result]:
    """Each bot met only its two neighbours, the higher one scoring about 60%, colours alternating."""
    rng = random.Random(5)
    results = []
    for i in range(bots - 1):
        low, high = f"l{i:03d}", f"l{i + 1:03d}"
        for k in range(games_per_link):
            score = 1.0 if rng.random() < 0.6 else 0.0
            results.append(Result(high, low, score) if k % 2 else Result(low, high, 1.0 - score))
    return results


def fit_both_ways(
    monkeypatch: pytest.MonkeyPatch, results: list[Result], anchor: tuple[str, float] | None = None
) -> tuple[Fit, Fit, list[int]]:
    """The fit with dense Newton steps, then with conjugate gradients from the first bot
    on, and the status of every conjugate-gradient solve (0: converged)."""
    monkeypatch.setattr(ratings, "SPARSE_FROM", 10**9)
    dense = fit_ratings(results, anchor=anchor)
    statuses: list[int] = []
    solve = ratings.cg

    def counted(*args: object, **kwargs: object) -> tuple[np.ndarray, int]:
        step, info = solve(*args, **kwargs)  # type: ignore[arg-type]
        statuses.append(info)
        return step, info

    monkeypatch.setattr(ratings, "cg", counted)
    monkeypatch.setattr(ratings, "SPARSE_FROM", 0)
    return dense, fit_ratings(results, anchor=anchor), statuses


def assert_same_fit(dense: Fit, sparse: Fit) -> None:
    assert list(sparse.ratings) == list(dense.ratings)
    for bot, rating in dense.ratings.items():
        assert sparse.ratings[bot].elo == pytest.approx(rating.elo, abs=1e-9)
        assert sparse.ratings[bot].interval == pytest.approx(rating.interval, abs=1e-9)
        assert (sparse.ratings[bot].group, sparse.ratings[bot].bound) == (rating.group, rating.bound)
    for a in dense.ratings:
        for b in dense.ratings:
            if dense.ratings[a].group == dense.ratings[b].group:
                assert sparse.covariance[a, b] == pytest.approx(dense.covariance[a, b], rel=1e-9, abs=1e-9)
    assert sparse.first_move_elo == pytest.approx(dense.first_move_elo, abs=1e-9)
    assert sparse.first_move_interval == pytest.approx(dense.first_move_interval, abs=1e-9)
    assert sparse.draw_rate == pytest.approx(dense.draw_rate, abs=1e-12)
    assert (sparse.groups, sparse.group_sizes) == (dense.groups, dense.group_sizes)


def test_conjugate_gradients_give_the_dense_fit_of_a_connected_league(monkeypatch):
    dense, sparse, statuses = fit_both_ways(monkeypatch, league(1, [f"b{i}" for i in range(12)], 600))
    assert statuses and set(statuses) == {0}
    assert_same_fit(dense, sparse)


def test_conjugate_gradients_give_the_dense_fit_of_two_groups(monkeypatch):
    results = league(2, ["a", "b", "c", "d", "e"], 80) + league(3, ["v", "w", "x", "y"], 60)
    dense, sparse, statuses = fit_both_ways(monkeypatch, results)
    assert dense.groups == 2 and statuses and set(statuses) == {0}
    assert_same_fit(dense, sparse)


def test_conjugate_gradients_give_the_dense_fit_with_an_anchor(monkeypatch):
    results = league(4, ["a", "b", "c", "d", "e"], 80) + league(5, ["v", "w", "x", "y"], 60)
    dense, sparse, statuses = fit_both_ways(monkeypatch, results, anchor=("w", 2000.0))
    assert sparse.ratings["w"].elo == 2000.0 and sparse.ratings["w"].interval == 0.0
    assert statuses and set(statuses) == {0}
    assert_same_fit(dense, sparse)


def test_a_ladder_where_conjugate_gradients_fail_falls_back_to_the_dense_step(monkeypatch):
    # Two iterations cannot solve a 40-bot ladder's steps: the dense step takes over.
    monkeypatch.setattr(ratings, "CG_ITERATIONS", 2)
    dense, sparse, statuses = fit_both_ways(monkeypatch, ladder(40, 30))
    assert statuses[0] != 0
    assert_same_fit(dense, sparse)


def test_a_ladder_that_conjugate_gradients_solve_gives_the_dense_fit(monkeypatch):
    dense, sparse, statuses = fit_both_ways(monkeypatch, ladder(40, 30))
    assert statuses and set(statuses) == {0}
    assert_same_fit(dense, sparse)


def test_groups_of_one_size_are_numbered_by_their_first_name():
    results = league(6, ["m", "n"], 10) + league(7, ["c", "z"], 10) + league(8, ["q", "r", "s"], 30)
    fit = fit_ratings(results, bots=["idle"])
    assert [fit.ratings[bot].group for bot in ("q", "c", "m", "idle")] == [1, 2, 3, 4]
    assert fit.group_sizes == [3, 2, 2, 1]


def test_a_fit_holds_at_most_two_n_by_n_matrices_at_its_peak():
    # 1200 bots each against 40 others: the covariance is a view of the one matrix the
    # factorisation overwrites, and the centring works in it in place.
    rng = np.random.default_rng(1)
    bots = 1200
    pairs = PairCounts()
    for offset in rng.choice(np.arange(1, bots // 2), 20, replace=False).tolist():
        for i in range(bots):
            wins, draws, losses = rng.multinomial(5, [0.4, 0.3, 0.3]).tolist()
            pairs.add(f"b{i:04d}", f"b{(i + offset) % bots:04d}", wins, draws, losses)
    tracemalloc.start()
    try:
        fit = fit_ratings(pairs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(fit.ratings) == bots
    assert peak < 2 * (bots + 2) ** 2 * 8
