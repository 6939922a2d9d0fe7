"""Elo ratings as pure functions of game results.

The main rating is a joint maximum-likelihood fit of the logistic Elo model
(Bradley-Terry, a draw counts half a point) over all games at once, so it does not
depend on the order games finished in. Each bot also plays one virtual draw
against a field of average strength: without it a bot that won (or lost) every
game would have an infinite rating. Intervals come from the curvature of the
likelihood (the inverse Fisher information).

Incremental (K-factor) Elo is offered beside it, computed in the order given,
which callers make the game-key order so that it is reproducible too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError

ELO_PER_NATURAL = 400 / math.log(10)  # 400 * log10 odds, in natural-log units
MEAN_RATING = 1500.0
Z95 = 1.959963984540054
PRIOR_DRAWS = 1.0  # virtual draws of each bot against an average field


class RatingsError(ArenaError):
    """Ratings asked for in a way the games cannot give (an anchor bot that played no game)."""


@dataclass(frozen=True)
class Result:
    """One game: who played first and second, and the first player's score (1, 0.5, 0)."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class Rating:
    bot: str
    elo: float
    interval: float  # half-width of the 95% confidence interval, in Elo


@dataclass
class Fit:
    ratings: dict[str, Rating]
    covariance: dict[tuple[str, str], float]  # of the centred ratings, in Elo^2

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that ``a`` is stronger than ``b``."""
        var = self.covariance[a, a] + self.covariance[b, b] - 2 * self.covariance[a, b]
        diff = self.ratings[a].elo - self.ratings[b].elo
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1 + math.erf(diff / math.sqrt(2 * var)))


def fit_ratings(
    results: Iterable[Result],
    anchor: tuple[str, float] | None = None,
    bots: Sequence[str] | None = None,
) -> Fit:
    """Maximum-likelihood Elo of every bot; the mean is 1500 unless ``anchor`` =
    (bot, rating) pins one bot instead."""
    names, games, scores = _pair_totals(results, bots)
    if anchor is not None and anchor[0] not in names:
        raise RatingsError(f"anchor bot {anchor[0]!r} played no game here; bots: {', '.join(names)}")
    strength = _newton(len(names), games, scores)
    covariance = _invert(_negative_hessian(strength, games))
    reference = _reference_weights(names, anchor)
    offset = MEAN_RATING if anchor is None else anchor[1]
    centre = sum(w * s for w, s in zip(reference, strength))
    n = len(names)
    # Covariance of (r_i - reference point): C' = A C A^T with A = I - 1 w^T.
    row_means = [sum(reference[k] * covariance[i][k] for k in range(n)) for i in range(n)]
    total = sum(reference[k] * row_means[k] for k in range(n))
    centred = {}
    for i in range(n):
        for j in range(n):
            value = covariance[i][j] - row_means[i] - row_means[j] + total
            centred[names[i], names[j]] = value * ELO_PER_NATURAL**2
    ratings = {}
    for i, name in enumerate(names):
        elo = offset + (strength[i] - centre) * ELO_PER_NATURAL
        spread = math.sqrt(max(centred[name, name], 0.0))
        ratings[name] = Rating(name, elo, Z95 * spread)
    return Fit(ratings, centred)


def incremental_elo(
    results: Iterable[Result], k: float = 16.0, start: float = MEAN_RATING
) -> dict[str, float]:
    """Classic sequential Elo, applying ``results`` in the order given."""
    elo: dict[str, float] = defaultdict(lambda: start)
    for r in results:
        expected = 1 / (1 + 10 ** ((elo[r.second] - elo[r.first]) / 400))
        change = k * (r.score - expected)
        elo[r.first] += change
        elo[r.second] -= change
    return dict(elo)


def elo_difference(score: float) -> float:
    """The Elo gap that makes ``score`` (0..1, exclusive) the expected score."""
    if not 0 < score < 1:
        return math.copysign(math.inf, score - 0.5)
    return -400 * math.log10(1 / score - 1)


# --- the fit ----------------------------------------------------------------------


def _pair_totals(
    results: Iterable[Result], bots: Sequence[str] | None
) -> tuple[list[str], list[list[float]], list[list[float]]]:
    """Bot names, games between each pair, and each bot's score against each other."""
    names = list(bots) if bots else []
    index = {name: i for i, name in enumerate(names)}
    pairs: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in results:
        for name in (r.first, r.second):
            if name not in index:
                index[name] = len(names)
                names.append(name)
        pairs[r.first, r.second][0] += 1
        pairs[r.first, r.second][1] += r.score
    n = len(names)
    games = [[0.0] * n for _ in range(n)]
    scores = [[0.0] * n for _ in range(n)]
    for (a, b), (count, score) in pairs.items():
        i, j = index[a], index[b]
        games[i][j] += count
        games[j][i] += count
        scores[i][j] += score
        scores[j][i] += count - score
    return names, games, scores


def _newton(n: int, games: list[list[float]], scores: list[list[float]]) -> list[float]:
    """Strengths (natural-log odds) that maximise the likelihood plus the prior."""
    strength = [0.0] * n
    for _ in range(100):
        gradient = []
        for i in range(n):
            g = PRIOR_DRAWS * (0.5 - _sigmoid(strength[i]))
            for j in range(n):
                if games[i][j]:
                    g += scores[i][j] - games[i][j] * _sigmoid(strength[i] - strength[j])
            gradient.append(g)
        step = _solve(_negative_hessian(strength, games), gradient)
        strength = [s + d for s, d in zip(strength, step)]
        if max((abs(d) for d in step), default=0.0) < 1e-12:
            break
    return strength


def _negative_hessian(strength: list[float], games: list[list[float]]) -> list[list[float]]:
    n = len(strength)
    h = [[0.0] * n for _ in range(n)]
    for i in range(n):
        p0 = _sigmoid(strength[i])
        h[i][i] = PRIOR_DRAWS * p0 * (1 - p0)
        for j in range(n):
            if i != j and games[i][j]:
                p = _sigmoid(strength[i] - strength[j])
                w = games[i][j] * p * (1 - p)
                h[i][i] += w
                h[i][j] -= w
    return h


def _reference_weights(names: list[str], anchor: tuple[str, float] | None) -> list[float]:
    if anchor is None:
        return [1 / len(names)] * len(names) if names else []
    return [1.0 if name == anchor[0] else 0.0 for name in names]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve matrix @ x = vector (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    a = [[*row[:], vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col] / a[col][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


def _invert(matrix: list[list[float]]) -> list[list[float]]:
    n = len(matrix)
    columns = [_solve(matrix, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[columns[c][r] for c in range(n)] for r in range(n)]
