"""Elo ratings as pure functions of game results.

The model is made for this game, where moving first is an advantage and draws
happen: each bot has a strength r, the first player gets a bonus h, and a game
between strengths a (with the bonus) and b is won, drawn or lost with
probabilities proportional to e^(a/2 - b/2), nu and e^(b/2 - a/2) (Davidson's
draw model, on the logistic Elo scale: with no draws it is Bradley-Terry). The
first-move advantage h and the draw parameter nu are estimated with the
ratings, in one maximum-likelihood fit of all games at once, so the result does
not depend on the order games finished in. Davidson's model is an exponential
family (its statistics are wins minus losses, and draws): its Fisher
information does not depend on the data, so the intervals take a draw for what
it is, a less variable result than a win or a loss.

A bot that won (or lost) every game has no finite maximum; nor do bots that
never met. So:

- bots are rated in *groups* (connected by games played between them); each
  group is centred on its own, and ratings are comparable only inside one;
- each bot plays a small virtual draw (``PRIOR_DRAWS`` in all) spread over the
  opponents it actually met, in proportion to the games it played against
  each (as BayesElo does): it keeps a perfect score finite without pulling a
  ladder's ends towards a fixed centre, and such a bot is flagged as a bound.

Intervals come from the inverse Fisher information, for each bot against its
group's centre; LOS (likelihood of superiority) from the covariance of a pair.

Incremental (K-factor) Elo is offered beside it, computed in the order given,
which callers make the game-key order so that it is reproducible too.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from arena.errors import ArenaError

ELO_PER_NATURAL = 400 / math.log(10)  # 400 * log10 odds, in natural-log units
MEAN_RATING = 1500.0
Z95 = 1.959963984540054
PRIOR_DRAWS = 0.5  # virtual draws of each bot, spread over the opponents it met
# Weak normal priors on the first-move advantage and on log nu, worth a few games:
# without them a pair that always met in the same colours could not tell the
# advantage from the gap, and a league of draws only would send nu to infinity.
PRIOR_FIRST_MOVE_SD = 1000 / ELO_PER_NATURAL
PRIOR_LOG_NU_SD = 5.0


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
    group: int = 1  # bots are comparable only within a group (1 is the largest)
    bound: str | None = None  # ">" for a bot that won every game, "<" for one that lost every game


class Covariance(Mapping[tuple[str, str], float]):
    """The covariance of the centred ratings, in Elo^2, for pairs of bots in the
    same group: a view of the fit's matrix (a dict of every pair would hold n^2
    Python floats, most of the fit's memory in a league of thousands of bots)."""

    def __init__(self, names: list[str], matrix: np.ndarray, groups: np.ndarray) -> None:
        self._index = {name: i for i, name in enumerate(names)}
        self._matrix = matrix
        self._groups = groups

    def __getitem__(self, pair: tuple[str, str]) -> float:
        i, j = self._index[pair[0]], self._index[pair[1]]
        if self._groups[i] != self._groups[j]:
            raise KeyError(pair)  # nothing relates bots of different groups
        return float(self._matrix[i, j])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        names = list(self._index)
        return ((a, b) for a in names for b in names if self._groups[self._index[a]] == self._groups[self._index[b]])

    def __len__(self) -> int:
        return int(sum(count**2 for count in np.bincount(self._groups).tolist()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Covariance):  # the same bits, not just close
            return self._index == other._index and np.array_equal(self._matrix, other._matrix) and np.array_equal(
                self._groups, other._groups)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a dict

    def __repr__(self) -> str:
        digest = hashlib.sha256(self._matrix.tobytes()).hexdigest()[:16]
        return f"Covariance({len(self._index)} bots, matrix sha256 {digest})"


@dataclass
class Fit:
    ratings: dict[str, Rating]
    covariance: Mapping[tuple[str, str], float]  # of the centred ratings within a group, in Elo^2
    first_move_elo: float = 0.0  # the first player's advantage, in Elo
    first_move_interval: float = 0.0
    draw_rate: float = 0.0  # how often two equal bots draw, the first move aside (nu / (2 + nu))
    groups: int = 1
    group_sizes: list[int] = field(default_factory=list)

    def los(self, a: str, b: str) -> float | None:
        """Likelihood of superiority: the probability that ``a`` is stronger than
        ``b``; None when they are in different groups (nothing compares them)."""
        if self.ratings[a].group != self.ratings[b].group:
            return None
        var = self.covariance[a, a] + self.covariance[b, b] - 2 * self.covariance[a, b]
        diff = self.ratings[a].elo - self.ratings[b].elo
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1 + math.erf(diff / math.sqrt(2 * var)))


@dataclass
class PairCounts:
    """Results aggregated by (first, second): the fit needs nothing else."""

    counts: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))

    def add(self, first: str, second: str, wins: float, draws: float, losses: float) -> None:
        row = self.counts[first, second]
        row[0] += wins
        row[1] += draws
        row[2] += losses

    def add_game(self, first: str, second: str, score: float) -> None:
        """One game, ``score`` the first player's (1, 0.5 or 0)."""
        self.add(first, second, float(score == 1), float(score == 0.5), float(score == 0))

    @classmethod
    def of(cls, results: Iterable[Result]) -> PairCounts:
        pairs = cls()
        for r in results:
            pairs.add_game(r.first, r.second, r.score)
        return pairs


def fit_ratings(
    results: Iterable[Result] | PairCounts,
    anchor: tuple[str, float] | None = None,
    bots: Sequence[str] | None = None,
) -> Fit:
    """Maximum-likelihood Elo of every bot, with the first-move advantage and the
    draw rate; each group's mean is 1500, unless ``anchor`` = (bot, rating) pins
    one bot (and so its group) instead."""
    pairs = results if isinstance(results, PairCounts) else PairCounts.of(results)
    counts = {key: value for key, value in pairs.counts.items() if sum(value) > 0 and key[0] != key[1]}
    names = sorted({*(bots or ()), *(name for key in counts for name in key)})
    if anchor is not None and anchor[0] not in names:
        raise RatingsError(f"anchor bot {anchor[0]!r} played no game here; bots: {', '.join(names)}")
    if not names:
        return Fit({}, {})
    if not counts:  # listed bots, no game: each a group of its own, at the mean
        return Fit({name: Rating(name, MEAN_RATING, 0.0, group, None) for group, name in enumerate(names, start=1)},
                   {(name, name): 0.0 for name in names}, groups=len(names), group_sizes=[1] * len(names))
    index = {name: i for i, name in enumerate(names)}
    keys = sorted(counts)  # a fixed order: the same games give the same bits
    first = np.array([index[a] for a, _ in keys], dtype=np.int64)
    second = np.array([index[b] for _, b in keys], dtype=np.int64)
    wdl = np.array([counts[k] for k in keys], dtype=float).reshape(-1, 3)
    groups = _groups(len(names), first, second)
    r, h, theta, covariance = _fit(len(names), first, second, wdl, groups)
    return _report(names, r, h, theta, covariance, groups, anchor, first, second, wdl)


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


def _groups(n: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Each bot's group, numbered from 1 by size (largest first), then by first name."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(first.tolist(), second.tolist()):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [root(i) for i in range(n)]
    members: dict[int, list[int]] = defaultdict(list)
    for i, ro in enumerate(roots):
        members[ro].append(i)
    order = sorted(members.values(), key=lambda m: (-len(m), m[0]))
    labels = np.zeros(n, dtype=np.int64)
    for number, m in enumerate(order, start=1):
        labels[m] = number
    return labels


def _fit(
    n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, float, float, np.ndarray]:
    """Strengths (natural-log units), first-move advantage h, log nu, and the
    covariance of (strengths, h), each group's first bot held at 0 (the fit
    fixes only differences within a group)."""
    games = wdl.sum(axis=1)
    fit_draws = bool(wdl[:, 1].sum() > 0)  # with no draw at all nu is 0: Bradley-Terry
    # The prior: PRIOR_DRAWS virtual draws per bot, spread over its opponents by games played.
    played = np.bincount(first, weights=games, minlength=n) + np.bincount(second, weights=games, minlength=n)
    prior = PRIOR_DRAWS * games * (1 / played[first] + 1 / played[second]) / 2
    held = {int(np.flatnonzero(groups == g)[0]) for g in range(1, int(groups.max()) + 1)}
    keep = np.array([i for i in range(n) if i not in held] + [n] + ([n + 1] if fit_draws else []), dtype=np.int64)
    x = np.zeros(n + 2)  # strengths, h, theta = log nu
    if fit_draws:
        share = wdl[:, 1].sum() / games.sum()
        x[n + 1] = math.log(2 * share / (1 - share)) if share < 1 else 5.0
    for _ in range(100):
        gradient, information = _derivatives(x, n, first, second, wdl, prior, fit_draws)
        step = np.linalg.solve(information[np.ix_(keep, keep)], gradient[keep])
        # Damped where it would overshoot: a strength can run far before the prior holds it.
        step *= min(1.0, 3.0 / float(np.max(np.abs(step), initial=1e-300)))
        x[keep] += step
        if float(np.max(np.abs(step), initial=0.0)) < 1e-11:
            break
    _, information = _derivatives(x, n, first, second, wdl, prior, fit_draws)
    inverse = np.linalg.inv(information[np.ix_(keep, keep)])
    covariance = np.zeros((n + 2, n + 2))
    covariance[np.ix_(keep, keep)] = inverse
    theta = float(x[n + 1]) if fit_draws else -math.inf
    return x[:n].copy(), float(x[n]), theta, covariance[: n + 1, : n + 1]


def _derivatives(
    x: np.ndarray, n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray, prior: np.ndarray,
    fit_draws: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-likelihood plus prior, and its negative Hessian (the
    Fisher information: Davidson's model is an exponential family), over
    (strengths, h, theta)."""
    wins, draws, losses = wdl[:, 0], wdl[:, 1], wdl[:, 2]
    games = wins + draws + losses
    d = x[first] - x[second] + x[n]
    nu = math.exp(x[n + 1]) if fit_draws else 0.0
    up, down = np.exp(np.clip(d / 2, -300, 300)), np.exp(np.clip(-d / 2, -300, 300))
    total = up + down + nu
    p_win, p_loss, p_draw = up / total, down / total, nu / total
    # The model's statistics: (wins - losses) / 2 for d, draws for theta.
    g_d = (wins - losses) / 2 - games * (p_win - p_loss) / 2
    i_dd = games * (p_win + p_loss - (p_win - p_loss) ** 2) / 4
    i_dt = -games * (p_win - p_loss) / 2 * p_draw
    i_tt = games * p_draw * (1 - p_draw)
    # The prior: neutral virtual draws (no first move), logistic.
    s = 1 / (1 + np.exp(-np.clip(x[first] - x[second], -300, 300)))
    g_p, i_p = prior * (0.5 - s), prior * s * (1 - s)
    gradient = np.zeros(n + 2)
    np.add.at(gradient, first, g_d + g_p)
    np.add.at(gradient, second, -(g_d + g_p))
    gradient[n] = g_d.sum() - x[n] / PRIOR_FIRST_MOVE_SD**2
    information = np.zeros((n + 2, n + 2))
    w = i_dd + i_p
    np.add.at(information, (first, first), w)
    np.add.at(information, (second, second), w)
    np.add.at(information, (first, second), -w)
    np.add.at(information, (second, first), -w)
    # h moves d like the first player's strength; the prior has no h.
    information[:n, n] = np.bincount(first, weights=i_dd, minlength=n) - np.bincount(second, weights=i_dd, minlength=n)
    information[n, :n] = information[:n, n]
    information[n, n] = i_dd.sum() + 1 / PRIOR_FIRST_MOVE_SD**2
    if fit_draws:
        gradient[n + 1] = (draws - games * p_draw).sum() - x[n + 1] / PRIOR_LOG_NU_SD**2
        information[:n, n + 1] = (np.bincount(first, weights=i_dt, minlength=n)
                                  - np.bincount(second, weights=i_dt, minlength=n))
        information[n, n + 1] = i_dt.sum()
        information[n + 1, : n + 1] = information[: n + 1, n + 1]
        information[n + 1, n + 1] = i_tt.sum() + 1 / PRIOR_LOG_NU_SD**2
    return gradient, information


def _report(
    names: list[str], r: np.ndarray, h: float, theta: float, covariance: np.ndarray, groups: np.ndarray,
    anchor: tuple[str, float] | None, first: np.ndarray, second: np.ndarray, wdl: np.ndarray,
) -> Fit:
    n = len(names)
    # Each group centred on its own: on its mean, or on the anchor in the anchor's group.
    # reference[g] holds group g's weights (a row of W in centred = (I - W) r, where
    # every bot's row is its group's): worked out group by group, in O(n^2), not as
    # the n-by-n products (I - W) C (I - W)^T, which cost O(n^3).
    count = int(groups.max())
    reference = np.zeros((count, n))
    anchored = names.index(anchor[0]) if anchor is not None else None
    offsets = np.full(n, MEAN_RATING)
    for g in range(1, count + 1):
        members = np.flatnonzero(groups == g)
        if anchored is not None and groups[anchored] == g:
            reference[g - 1, anchored] = 1.0
            offsets[members] = anchor[1]  # type: ignore[index]
        else:
            reference[g - 1, members] = 1.0 / len(members)
    own = groups - 1
    centred = r - (reference @ r)[own]
    c = covariance[:n, :n]
    means = reference @ c  # row g: W_g C
    between = means @ reference.T  # W_g C W_h^T
    strength_cov = (c - means[own, :] - means[own, :].T + between[np.ix_(own, own)]) * ELO_PER_NATURAL**2
    scores = _scores(n, first, second, wdl)
    ratings = {}
    for i, name in enumerate(names):
        bound = None
        if scores[i][1] > 0 and scores[i][0] == scores[i][1]:
            bound = ">"
        elif scores[i][1] > 0 and scores[i][0] == 0:
            bound = "<"
        ratings[name] = Rating(name, float(offsets[i] + centred[i] * ELO_PER_NATURAL),
                               Z95 * math.sqrt(max(float(strength_cov[i, i]), 0.0)), int(groups[i]), bound)
    pairs = Covariance(names, strength_cov, groups)
    nu = math.exp(theta) if math.isfinite(theta) else 0.0
    sizes = np.bincount(groups, minlength=int(groups.max()) + 1)[1:].tolist()
    return Fit(ratings, pairs, first_move_elo=h * ELO_PER_NATURAL,
               first_move_interval=Z95 * math.sqrt(max(float(covariance[n, n]), 0.0)) * ELO_PER_NATURAL,
               draw_rate=nu / (2 + nu), groups=len(sizes), group_sizes=sizes)


def _scores(n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray) -> list[tuple[float, float]]:
    """(points, games) of each bot."""
    points = np.bincount(first, weights=wdl[:, 0] + wdl[:, 1] / 2, minlength=n) + np.bincount(
        second, weights=wdl[:, 2] + wdl[:, 1] / 2, minlength=n)
    games = np.bincount(first, weights=wdl.sum(axis=1), minlength=n) + np.bincount(
        second, weights=wdl.sum(axis=1), minlength=n)
    return list(zip(points.tolist(), games.tolist()))
